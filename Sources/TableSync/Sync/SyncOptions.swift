import Foundation
import Logging

/// How a pull walks the server's pages.
package enum PullPaging: String, Sendable, CaseIterable {
    /// Keyset paging when the server is a TableSync server (it advertises extensions), the SDKs' way otherwise.
    case automatic
    /// `$orderby=updatedAt,id` with the cursor `(updatedAt, id)`: never skips or repeats a row.
    case keyset
    /// The Azure SDKs' `updatedAt ge T` with `$skip`, for servers that offer nothing more.
    case greaterOrEqualWithSkip = "ge-skip"
}

/// A step of a long push or pull, for progress displays.
public enum SyncProgress: Sendable, Equatable {
    /// `settled` of the push's `total` operations are settled (applied, refused or settled by policy); never above
    /// `total`.
    case pushed(settled: Int, total: Int)
    /// A page of `table` was made durable; `records` so far in this pull, of `total` when the server counted the
    /// records to pull (its answer to `$count=true` in v3, `$inlinecount=allpages` in v2, on the first page).
    case pulledPage(table: String, page: Int, records: Int, total: Int?)
}

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
    /// Let a pull remove, or a push delete on the server, more than half of a table's records.
    public var allowMassDelete: Bool
    /// Push from a git `HEAD` that is behind the commit of the store's last sync (a checkout of history, a reset),
    /// which is otherwise refused (``GitStateRefused``).
    package var allowOlderHead: Bool
    /// Where `TABLESYNC_TOKEN` is looked up.
    package var environment: [String: String]
    /// How pulls page.
    package var paging: PullPaging
    /// Remove local records that no longer match the pulled query's filter.
    public var evict: Bool
    /// Called after each durable step.
    public var progress: (@Sendable (SyncProgress) -> Void)?
    /// Push in batches when the server offers the batch extension; `false` (`--no-batch`) sends one request
    /// per operation.
    public var batch: Bool
    /// The most operations in one batch (the server's own limit, when lower, wins).
    package var batchMaxOperations: Int
    /// The most bytes of encoded operations in one batch, before compression (the server's limit, when lower, wins).
    package var batchMaxBytes: Int
    /// The zlib level (1 fastest … 9 smallest) of batch bodies sent to a server that accepts gzip requests;
    /// `nil` sends them uncompressed.
    package var compressionLevel: Int32?
    /// Where the run logs each request (method, path, status, bytes, time, attempt), each pulled page and each
    /// pushed batch, at debug level; tokens are never logged. The default logs nothing.
    public var logger: Logger
    /// What carries requests; `nil` is the platform's (``PlatformTransport``). Set by the benchmarks to compare
    /// transports on the same run.
    package var transport: (any HTTPTransport)?
    /// Which record files the push's scan for hand edits looks at: every one, unless `watch` knows from its file
    /// events which changed (``ScanScope``).
    package var scanScope: ScanScope = .everything

    /// The default of ``logger``: one that logs nothing, as a library's logger does until its user gives one.
    public static let silentLogger = Logger(label: "tablesync", factory: { _ in SwiftLogNoOpLogHandler() })
    /// The default of ``batchMaxOperations``.
    package static let defaultBatchMaxOperations = 500
    /// The default of ``batchMaxBytes``: 1 MiB.
    package static let defaultBatchMaxBytes = 1 << 20
    /// The default of ``compressionLevel``: 6, the level whose smaller bodies cost less than a batch's round trip
    /// (docs/sync.md, "Batches").
    package static let defaultCompressionLevel: Int32 = 6

    /// Options for a push, pull or sync; every argument has the default that suits cron.
    public init(
        conflictPolicy: StoreSettings.ConflictPolicy? = nil, timeout: Double = 30,
        retryPolicy: RetryPolicy = RetryPolicy(), pageSize: Int? = nil, allowMassDelete: Bool = false,
        evict: Bool = false, progress: (@Sendable (SyncProgress) -> Void)? = nil, batch: Bool = true,
        logger: Logger = SyncOptions.silentLogger
    ) {
        self.logger = logger
        self.conflictPolicy = conflictPolicy
        self.timeout = timeout
        self.retryPolicy = retryPolicy
        self.pageSize = pageSize
        self.allowMassDelete = allowMassDelete
        self.allowOlderHead = false
        self.environment = ProcessInfo.processInfo.environment
        self.paging = .automatic
        self.evict = evict
        self.progress = progress
        self.batch = batch
        self.batchMaxOperations = Self.defaultBatchMaxOperations
        self.batchMaxBytes = Self.defaultBatchMaxBytes
        self.compressionLevel = Self.defaultCompressionLevel
    }
}

extension SyncOptions {
    /// These options with `change` made: how the command line, the benchmarks and the tests set the tuning that the
    /// public initializer leaves at its default (paging, batch limits, compression, the environment).
    package func with(_ change: (inout SyncOptions) -> Void) -> SyncOptions {
        var options = self
        change(&options)
        return options
    }
}
