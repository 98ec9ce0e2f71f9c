import HTTPTypes
import Hummingbird
import SyncProtocol

extension TableRoutes {
    /// `POST /batch` (``ProtocolExtension/batch``): applies each operation of a ``BatchRequest`` as its single
    /// request would be applied, through the same plans, and answers one ``BatchResult`` per operation in order.
    ///
    /// With `"return": "minimal"`, a record written as sent comes back as its system properties only
    /// (``BatchEnvelope``).
    ///
    /// The operations run in one database transaction, so a batch costs one commit, but each is decided on its
    /// own: a refused operation (409, 412, 404, 400, a value the database cannot store, …) changes nothing and the
    /// others go on. The batch as a whole is refused only when its envelope is malformed (400), it is too large
    /// (413: more than `maxOperations` operations, or a body above the size limit), or the database fails (503 when
    /// busy or slow, 500 for a fault; nothing applied), or an operation needs credentials the request lacks (401, so
    /// that the client renews its token and sends the batch again). Each operation's table grants access on its own
    /// (``AccessRule``): a role missing or a write not offered refuses that operation alone (403, 405).
    func batch(_ request: Request, _ context: TableRequestContext, maxOperations: Int) async throws -> Response {
        let version = try context.version()
        let batch: BatchRequest
        do {
            batch = try BatchRequest.parse(try await readBody(request))
        } catch let error as BatchEnvelopeError {
            throw ProtocolError.badRequest(error.message)
        }
        guard batch.operations.count <= maxOperations else {
            throw ProtocolError(
                status: .contentTooLarge,
                message:
                    """
                    the batch holds \(batch.operations.count) operations, more than this server's limit of \
                    \(maxOperations) per request
                    """
            )
        }
        var results = [BatchResult?](repeating: nil, count: batch.operations.count)
        var planned: [(index: Int, plan: PlannedWrite)] = []
        planned.reserveCapacity(batch.operations.count)
        for (index, operation) in batch.operations.enumerated() {
            do throws(ProtocolError) {
                planned.append((index, try plan(operation, version: version, identity: context.identity)))
            } catch {
                if error.status == .unauthorized { throw error }
                results[index] = Self.result(error)
            }
        }
        let outcomes = try await repository.write(planned.map(\.plan.write))
        for ((index, plan), outcome) in zip(planned, outcomes) {
            do {
                let answer = try plan.answer(try outcome.get())
                if batch.minimalAnswers, let record = answer.record, Self.holdsExactly(plan.sent, record) {
                    results[index] = BatchResult(
                        status: Int(answer.status.code), body: nil, systemProperties: record.systemProperties)
                } else {
                    results[index] = BatchResult(status: Int(answer.status.code), body: answer.record?.json())
                }
            } catch {
                guard
                    let refusal = ProtocolError.refusal(
                        for: error, during: .write(table: plan.write.table, id: plan.write.id))
                else {
                    throw error
                }
                results[index] = Self.result(refusal)
            }
        }
        return writer.json(BatchResponse(results: results.compactMap { $0 }).json, status: .ok, request: request)
    }

    /// Whether `record`, as written, holds exactly the properties `sent` (a merge can keep others), so that a
    /// minimal answer (its system properties) tells the client the whole record.
    static func holdsExactly(_ sent: [String: JSONValue]?, _ record: StoredRecord) -> Bool {
        guard let sent, !record.deleted else { return false }
        return sent == record.properties
    }

    /// The plan of the single request that `operation` stands for, sent by `identity`.
    private func plan(
        _ operation: BatchOperation, version: ProtocolVersion, identity: RequestIdentity?
    ) throws(ProtocolError) -> PlannedWrite {
        let table = try ServedTables(byName: tables, checksCredentials: checksCredentials)
            .table(named: operation.table, identity: identity)
        let scope = try AccessRule.scope(
            of: table, for: .write, identity: identity, checksCredentials: checksCredentials)
        let preconditions = operation.version.map(RecordPreconditions.init(version:)) ?? RecordPreconditions()
        let body = operation.item ?? .null
        switch operation.kind {
        case .insert:
            return try Self.planInsert(table: table, scope: scope, body: body)
        case .replace, .merge:
            return try Self.planUpdate(
                table: table, scope: scope, id: try Self.recordID(operation), body: body,
                preconditions: preconditions,
                version: version, merge: operation.kind == .merge, includeDeleted: false)
        case .delete:
            return Self.planDelete(
                table: table, scope: scope, id: try Self.recordID(operation), preconditions: preconditions,
                version: version)
        }
    }

    private static func recordID(_ operation: BatchOperation) throws(ProtocolError) -> String {
        guard let id = operation.id else { throw ProtocolError.badRequest("the operation has no record id") }
        if let problem = RecordID.problem(with: id) {
            throw ProtocolError.badRequest("id '\(id)' is not allowed: \(problem)")
        }
        return id
    }

    /// The result of a refused operation: the status and body its single request would have got.
    private static func result(_ error: ProtocolError) -> BatchResult {
        BatchResult(status: Int(error.status.code), body: error.body)
    }
}
