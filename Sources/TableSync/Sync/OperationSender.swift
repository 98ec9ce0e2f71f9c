import SyncProtocol
import TableSyncStorage

/// One operation as it goes to the server: the journal entry, the content sent, and the version it applies on.
struct OutgoingOperation: Sendable {
    var operation: PendingOperation { didSet { batchMember = nil } }
    /// The record's content as read from its file (`nil` for a delete).
    var sent: [String: JSONValue]? { didSet { batchMember = nil } }
    /// The file's bytes as read (hash and `stat`), so the write-back never overwrites a newer edit.
    var sentFile: SentFile?
    /// The version the change applies on (`If-Match`); `nil` for an insert.
    var baseVersion: String? { didSet { batchMember = nil } }
    /// The operation as a member of a batch request, once encoded (``encodeBatchMember(apiVersion:)``): the push
    /// sizes its batches by these bytes and sends them as they are. Any change to what it is made of drops it.
    private(set) var batchMember: [UInt8]?

    init(operation: PendingOperation, sent: [String: JSONValue]?, sentFile: SentFile?, baseVersion: String?) {
        self.operation = operation
        self.sent = sent
        self.sentFile = sentFile
        self.baseVersion = baseVersion
    }

    /// Encodes ``batchMember`` for a server speaking `apiVersion`.
    mutating func encodeBatchMember(apiVersion: Int) {
        batchMember = batchMemberBytes(apiVersion: apiVersion)
    }

    /// ``batchMember``, or the operation encoded as one now.
    func batchMemberBytes(apiVersion: Int) -> [UInt8] {
        batchMember
            ?? CanonicalJSON.encode(BatchSender.batchOperation(self, apiVersion: apiVersion).json, style: .compact)
    }
}

/// How operations reach the server. Both ways answer with the outcome of each operation, classified by the
/// same ``PushOutcome/classify(kind:sent:status:body:fallbackMessage:notFoundStatuses:)``, so the push
/// reconciles them with one code path.
protocol OperationSender: Sendable {
    /// The outcome of each of `operations`, in order, and what went over the wire. Throws ``SyncError`` when the
    /// link fails or the server refuses the request as a whole; the operations may or may not have been applied.
    func send(_ operations: [OutgoingOperation]) async throws -> (outcomes: [PushOutcome], traffic: WireTraffic)
}

/// The table protocol as every server speaks it: one request per operation.
struct SingleRequestSender: OperationSender {
    let client: TableClient

    func send(_ operations: [OutgoingOperation]) async throws -> (outcomes: [PushOutcome], traffic: WireTraffic) {
        var outcomes: [PushOutcome] = []
        var traffic = WireTraffic()
        for outgoing in operations {
            let operation = outgoing.operation
            let response: HTTPResponse
            var body: [UInt8] = []
            switch operation.kind {
            case .insert:
                body = CanonicalJSON.encode(.object(outgoing.sent ?? [:]), style: .compact)
                response = try await client.insert(table: operation.table, body: body)
            case .update:
                body = CanonicalJSON.encode(.object(outgoing.sent ?? [:]), style: .compact)
                response = try await client.update(
                    table: operation.table, id: operation.id, body: body, baseVersion: outgoing.baseVersion)
            case .delete:
                response = try await client.delete(
                    table: operation.table, id: operation.id, baseVersion: outgoing.baseVersion)
            }
            traffic += WireTraffic(requests: 1, bytesSent: body.count, bytesReceived: response.wireBodySize)
            outcomes.append(PushOutcome.classify(kind: operation.kind, sent: outgoing.sent, response: response))
        }
        return (outcomes, traffic)
    }
}

/// The batch extension: all operations in one `POST /batch`, gzip-compressed when the server accepts it.
struct BatchSender: OperationSender {
    let client: TableClient
    /// The zlib level for request bodies; `nil` sends them uncompressed.
    let gzipLevel: Int32?
    /// Whether to ask for minimal answers (the server offers ``ProtocolExtension/batchMinimalAnswers``).
    var minimalAnswers = false

    func send(_ operations: [OutgoingOperation]) async throws -> (outcomes: [PushOutcome], traffic: WireTraffic) {
        let members = operations.map { $0.batchMemberBytes(apiVersion: client.apiVersion) }
        let response: BatchResponse
        let traffic: WireTraffic
        do {
            (response, traffic) = try await client.batch(
                encodedOperations: members, minimalAnswers: minimalAnswers, gzipLevel: gzipLevel)
        } catch let refused as BatchRefused {
            let message = refused.message ?? "the batch was refused as a whole"
            return (
                operations.map { _ in .serverFault(status: refused.status, message: message) }, WireTraffic(requests: 1)
            )
        }
        var outcomes: [PushOutcome] = []
        outcomes.reserveCapacity(operations.count)
        for (outgoing, result) in zip(operations, response.results) {
            outcomes.append(
                PushOutcome.classify(
                    kind: outgoing.operation.kind, sent: outgoing.sent, status: result.status,
                    body: result.body(sent: outgoing.sent)))
        }
        return (outcomes, traffic)
    }

    /// The batch operation standing for the single request the operation would make: an update merges in v2
    /// (PATCH) and replaces in v3 (PUT).
    static func batchOperation(_ outgoing: OutgoingOperation, apiVersion: Int) -> BatchOperation {
        let operation = outgoing.operation
        switch operation.kind {
        case .insert:
            return BatchOperation(kind: .insert, table: operation.table, item: .object(outgoing.sent ?? [:]))
        case .update:
            return BatchOperation(
                kind: apiVersion == 2 ? .merge : .replace, table: operation.table, id: operation.id,
                version: outgoing.baseVersion, item: .object(outgoing.sent ?? [:]))
        case .delete:
            return BatchOperation(
                kind: .delete, table: operation.table, id: operation.id, version: outgoing.baseVersion)
        }
    }
}
