import Foundation

/// How a push, pull or sync talks to the server; the defaults suit cron.
public struct SyncOptions: Sendable {
    /// Overrides the store's conflict policy for this run.
    public var conflictPolicy: StoreSettings.ConflictPolicy?
    /// Seconds before a request without an answer fails.
    public var timeout: Double
    /// When to retry a failed request.
    public var retryPolicy: RetryPolicy
    /// Records per pull request (`nil`: as many as the server allows, up to 1,000).
    public var pageSize: Int?
    /// Let a pull remove more than half of a table's local records.
    public var allowMassDelete: Bool
    /// Where `TABLESYNC_TOKEN` is looked up.
    public var environment: [String: String]

    public init(conflictPolicy: StoreSettings.ConflictPolicy? = nil, timeout: Double = 30, retryPolicy: RetryPolicy = RetryPolicy(),
                pageSize: Int? = nil, allowMassDelete: Bool = false,
                environment: [String: String] = ProcessInfo.processInfo.environment) {
        self.conflictPolicy = conflictPolicy
        self.timeout = timeout
        self.retryPolicy = retryPolicy
        self.pageSize = pageSize
        self.allowMassDelete = allowMassDelete
        self.environment = environment
    }
}
