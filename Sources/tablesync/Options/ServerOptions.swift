import ArgumentParser
import Logging
import TableSync

/// Options of the commands that talk to the server: `push`, `pull` and `sync`.
struct ServerOptions: ParsableArguments {
    @Option(
        help:
            """
            What push does when the server's copy changed, for this run only (default: \"conflictPolicy\" in \
            tablesync.json).
            """
    )
    var conflictPolicy: StoreSettings.ConflictPolicy?

    @Option(
        help: ArgumentHelp(
            """
            Seconds one request may take, from connecting to the last byte of its answer, before it fails (and is \
            retried).
            """,
            valueName: "SECONDS"))
    var timeout: Double = 30

    @Option(
        help:
            """
            Attempts per request, at least 1: retries with backoff on connection failures, timeouts, 429 and 5xx; when \
            all fail the run exits 4 and nothing is lost.
            """
    )
    var attempts: Int = 5

    @Flag(
        help:
            """
            Print no progress on standard error. Without it a terminal shows one line rewritten in place, and a log \
            (cron, systemd) gets a timestamped line per page or batch; results and errors are printed either way.
            """
    )
    var quiet = false

    @Flag(
        help:
            """
            Log each request (method, path, status, bytes, milliseconds, attempt), each pulled page and each pushed \
            batch on standard error, with progress as log lines; tokens are never logged.
            """
    )
    var verbose = false

    @Flag(name: .customLong("no-batch"), help: "Push one request per operation even when the server offers batches.")
    var noBatch = false

    @Flag(help: "Allow a pull to remove, or a push to delete on the server, more than half of a table's records.")
    var allowMassDelete = false

    @Flag(
        help: ArgumentHelp(
            """
            Push from a git HEAD behind the commit of the store's last sync (a checkout of history, a reset), refused \
            otherwise (exit 9).
            """,
            discussion: "Old server copies are then brought up to date from the server and only real edits go out."))
    var allowOlderHead = false

    func validate() throws {
        guard attempts >= 1 else { throw ValidationError("--attempts must be at least 1") }
    }

    /// The library's options for this run.
    func syncOptions(pageSize: Int? = nil, evict: Bool = false) -> SyncOptions {
        SyncOptions(
            conflictPolicy: conflictPolicy, timeout: timeout, retryPolicy: RetryPolicy(maximumAttempts: attempts),
            pageSize: pageSize, allowMassDelete: allowMassDelete, evict: evict,
            progress: (verbose ? ProgressDisplay.logLines : ProgressDisplay.standardError).reporter(quiet: quiet),
            batch: !noBatch, logger: logger
        ).with { $0.allowOlderHead = allowOlderHead }
    }

    /// The run's logger: on standard error at debug level with `--verbose`, at info otherwise (the library logs
    /// nothing above debug, so nothing shows).
    private var logger: Logger {
        var logger = Logger(label: "tablesync", factory: { StreamLogHandler.standardError(label: $0) })
        logger.logLevel = verbose ? .debug : .info
        return logger
    }
}
