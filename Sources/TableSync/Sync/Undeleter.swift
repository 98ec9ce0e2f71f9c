import SyncProtocol
import TableSyncStorage

/// Brings back, before a push sends its operations, the records whose conflict a person settled by keeping the
/// local side although the server keeps them as deleted (``PendingOperation/undelete``): one
/// `POST /tables/{table}/{id}` each, on the deleted record's version (any version when the operation names none:
/// a record `restore` brings back). The operation then goes out as an update on the version the server gives the
/// record back with, or as an insert when the server has no copy at all (404); a record the server cannot bring
/// back becomes a conflict again, with the reason.
struct Undeleter {
    let store: any PushingStore
    let connection: ServerConnection

    /// Sends the undeletes of `operations`; returns, by sequence number, the operation to push in its place
    /// (`nil`: it waits on a conflict now).
    func undelete(_ operations: [PendingOperation], report: inout PushReport) async throws -> [Int64: PendingOperation?]
    {
        var outcome: [Int64: PendingOperation?] = [:]
        for operation in operations where operation.undelete {
            let client = try await connection.client(table: operation.table)
            let response = try await client.undelete(
                table: operation.table, id: operation.id, baseVersion: operation.baseVersion)
            let server = (try? JSONParser.parse(response.body)).flatMap {
                try? ServerRecord(validating: $0, requireUpdatedAt: false)
            }
            switch response.status {
            case 200..<300:
                guard let version = server?.version else {
                    throw SyncError.malformedResponse(
                        url: client.http.baseURL + TablePath.record(table: operation.table, id: operation.id),
                        reason: "the record brought back has no version")
                }
                var revived = operation
                revived.undelete = false
                revived.baseVersion = version
                try await store.replaceOperation(revived)
                outcome[operation.sequence] = revived
            case 404:
                // The server has no copy at all (gone for good, or never had it): the content goes in anew.
                var inserted = operation
                inserted.undelete = false
                inserted.kind = .insert
                inserted.baseVersion = nil
                try await store.replaceOperation(inserted)
                outcome[operation.sequence] = inserted
            case 401, 403:
                throw SyncError.authenticationRefused(
                    status: response.status, message: TableClient.errorMessage(response))
            default:
                let local = (try? store.recordFiles.load(table: operation.table, id: operation.id)).flatMap { $0 }.map {
                    ServerRecord.content($0.record)
                }
                let reason =
                    [409, 410, 412].contains(response.status)
                    ? """
                    the record could not be brought back: the server's copy changed since it was deleted, or is \
                    gone for good (\(TableClient.errorMessage(response) ?? "HTTP \(response.status)"))
                    """
                    : """
                    the server does not bring deleted records back (HTTP \(response.status)); take the server's \
                    side or discard the record
                    """
                try await store.writeConflict(
                    ConflictRecord(
                        operation: operation, local: local, server: server, status: response.status, reason: reason))
                if [409, 410, 412].contains(response.status) {
                    report.conflicts.append(operation.key)
                } else {
                    report.rejected.append(operation.key)
                }
                outcome[operation.sequence] = .some(nil)
            }
        }
        return outcome
    }
}
