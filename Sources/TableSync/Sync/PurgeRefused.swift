import SyncProtocol
import TableSyncStorage

/// A purge was refused because local changes would be lost.
public struct PurgeRefused: CategorizedError, Equatable {
    /// The table the purge was for.
    package let table: String
    /// Operations and hand edits not pushed yet.
    package let pendingChanges: Int
    /// Always ``FailureKind/usage``.
    public var kind: FailureKind { .usage }
    /// The refusal, with how to proceed.
    public var description: String {
        """
        table \(table) has \(pendingChanges) local change(s) not pushed yet; push first, or force the purge to drop \
        them.
        """
    }
}
