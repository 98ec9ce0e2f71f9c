import Logging
import SyncProtocol
import TableSyncStorage

/// What the `server-wins` policy drops, said where a person looking for a lost edit finds it: one warning per record,
/// with the record's key and the content that was not sent, so that nothing leaves the store without a trace.
enum ConflictPolicyLog {
    /// Logs that the local change of `key` (`content`, `nil` for a delete) gave way to the server's copy.
    static func droppedLocal(_ key: RecordKey, content: [String: JSONValue]?, logger: Logger) {
        let dropped = content.map { CanonicalJSON.string(.object($0), style: .compact) } ?? "a delete"
        logger.warning(
            "server-wins: the server's copy of \(key) replaced the local change, which was not sent: \(dropped)")
    }
}
