import ArgumentParser
import SyncProtocol
import TableSync

/// Options shared by the commands that talk to the server.
struct ServerOptions: ParsableArguments {
    @Option(help: "Conflict policy for this run: manual, server-wins or client-wins (default: tablesync.json).")
    var conflictPolicy: String?

    @Option(help: "Seconds before a request without an answer fails.")
    var timeout: Double = 30

    @Option(help: "Attempts per request on connection failures, timeouts, 429 and 5xx.")
    var attempts: Int = 5

    @Flag(help: "Print no progress on standard error.")
    var quiet = false

    @Flag(name: .customLong("no-batch"), help: "Push one request per operation even when the server offers batches.")
    var noBatch = false

    func syncOptions(pageSize: Int? = nil, allowMassDelete: Bool = false, evict: Bool = false) throws -> SyncOptions {
        var policy: StoreSettings.ConflictPolicy?
        if let conflictPolicy {
            guard let parsed = StoreSettings.ConflictPolicy(rawValue: conflictPolicy) else {
                throw ValidationError("--conflict-policy must be one of manual, server-wins, client-wins")
            }
            policy = parsed
        }
        guard attempts >= 1 else { throw ValidationError("--attempts must be at least 1") }
        if let pageSize, pageSize < 1 { throw ValidationError("--page-size must be at least 1") }
        return SyncOptions(conflictPolicy: policy, timeout: timeout, retryPolicy: RetryPolicy(maximumAttempts: attempts),
                           pageSize: pageSize, allowMassDelete: allowMassDelete, evict: evict,
                           progress: ProgressDisplay.reporter(quiet: quiet), batch: !noBatch)
    }
}
