import ArgumentParser
import Foundation
import SyncProtocol
import TableSync

/// `tablesync-bench`: TableSync's benchmarks, each figure beside a baseline measured in the same run
/// (`make bench`, `make bench-smoke`; see scripts/bench.sh).
@main
struct BenchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tablesync-bench",
        abstract: "TableSync's benchmarks, each figure beside a baseline measured in the same run.",
        subcommands: [
            RunCommand.self, ServerPagesCommand.self, StockPullCommand.self, MarkdownCommand.self,
            DirtyWriterCommand.self
        ],
        defaultSubcommand: RunCommand.self
    )
}

/// `tablesync-bench run`: every benchmark, printed as one table and written as JSON.
struct RunCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "Run every benchmark against the release binaries in --bin and print the table."
    )

    @Option(help: "Directory holding the release binaries tablesync and tablesync-server.") var bin: String
    @Option(help: "A scratch directory (emptied first) for the server's database and the stores.") var work: String
    @Option(help: "Where to write the results as JSON.") var output: String
    @Option(help: "Records in the main table (P1, P2, P3, P5, P6, P7).") var records = 100_000
    @Option(help: "Records in the small table, the second point of the memory curve (P4).") var smallRecords = 10_000
    @Option(help: "Updates pushed (P3), at most --small-records.") var pushRecords = 10_000
    @Option(help: "Updates pushed over the slow link (P3).") var slowLinkPushRecords = 1_000
    @Option(help: "One-way delay of the slow link in milliseconds (P3).") var slowLinkDelayMs = 5.0
    @Option(help: "Records changed on the server before an incremental pull (P7).") var changedRecords = 1_000
    @Option(help: "Files edited by hand before status (P2).") var editedFiles = 100
    @Option(help: "Hand edits synced on a quiet and on a busy disk (P9).") var busyDiskEdits = 100
    @Option(help: "Megabytes the busy neighbour rewrites without syncing (P9).") var busyDiskMegabytes = 4096
    @Option(help: "Runs of each benchmark.") var runs = 3
    @Flag(help: "Run A1 (the cost of checking a JWT) alone.")
    var authOnly = false
    @Option(
        help: "Run C1 alone: the push's processor time per update against the tablesync binaries in this directory.")
    var pushProcessorBaseline: String?
    @Option(help: "Hand edits carried from one watched store to another (W1).") var watchEdits = 200
    @Option(help: "The same edits carried by tablesync push, then sync (W1's baseline).") var watchCommandEdits = 40
    @Option(help: "Hand edits under a watch of the main table, and carried by tablesync push (W4).")
    var watchCostEdits = 20
    @Option(help: "Seconds an idle watch is measured (W2).") var idleWatchSeconds = 120.0
    @Option(help: "Change feed requests left waiting on the server (W3).") var feedWaits = 1_000
    @Option(help: "The server's --max-change-wait for W1 and W2, in seconds (1 … 30).") var changeWait = 30
    @Flag(help: "Run W1–W4 (live sync) alone.")
    var watchOnly = false
    @Flag(
        help: "Run the git-native paths alone: P2 (status), P8 (a sync without its cache), P10 (a clone's first sync).")
    var gitOnly = false

    func validate() throws {
        guard records >= 10, runs >= 1 else {
            throw ValidationError("--records must be at least 10 and --runs at least 1")
        }
        guard smallRecords >= 1, smallRecords <= records else {
            throw ValidationError("--small-records must be 1 … --records")
        }
        guard pushRecords >= 1, pushRecords <= smallRecords, pushRecords * 2 <= records, editedFiles >= 1,
            editedFiles <= records
        else {
            throw ValidationError(
                "--push-records must be 1 … --small-records and at most half of --records, --edited-files 1 … --records"
            )
        }
        guard slowLinkPushRecords >= 1, slowLinkPushRecords <= smallRecords, slowLinkDelayMs >= 0 else {
            throw ValidationError(
                "--slow-link-push-records must be 1 … --small-records, --slow-link-delay-ms at least 0")
        }
        guard busyDiskEdits >= 3, busyDiskMegabytes >= 16 else {
            throw ValidationError(
                "--busy-disk-edits must be at least 3 (fewer never use syncfs), --busy-disk-megabytes at least 16")
        }
        guard changedRecords >= 1, changedRecords * runs <= records else {
            throw ValidationError("--changed-records × --runs must be at most --records")
        }
        guard watchEdits >= 1, watchCommandEdits >= 1, watchCostEdits >= 1, watchCostEdits <= records,
            idleWatchSeconds >= 1, feedWaits >= 1,
            (1...30).contains(changeWait)
        else {
            throw ValidationError(
                """
                --watch-edits, --watch-command-edits, --feed-waits and --idle-watch-seconds must be at least 1, \
                --watch-cost-edits 1 … --records, --change-wait 1 … 30
                """)
        }
    }

    func run() async throws {
        let configuration = BenchmarkSuite.Configuration(
            binaries: bin, work: work, records: records, smallRecords: smallRecords, pushRecords: pushRecords,
            slowLinkPushRecords: slowLinkPushRecords, slowLinkDelay: slowLinkDelayMs / 1_000,
            changedRecords: changedRecords, editedFiles: editedFiles, busyDiskEdits: busyDiskEdits,
            busyDiskMegabytes: busyDiskMegabytes, runs: runs, authOnly: authOnly,
            pushProcessorBaseline: pushProcessorBaseline, watchEdits: watchEdits, watchCommandEdits: watchCommandEdits,
            watchCostEdits: watchCostEdits,
            idleWatchSeconds: idleWatchSeconds, feedWaits: feedWaits, changeWait: changeWait, watchOnly: watchOnly,
            gitOnly: gitOnly)
        var suite = BenchmarkSuite(configuration: configuration)
        let table = try await suite.run()
        print(table.text())
        try Data(table.json()).write(to: URL(fileURLWithPath: output))
        print("\nwritten to \(output)")
    }
}

/// `tablesync-bench stock-pull`: a pull the way the Azure SDKs page (`updatedAt ge T` with `$skip`, 50 records
/// a page), through the TableSync library; run as a child process so it is timed like `tablesync pull`.
struct StockPullCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "stock-pull",
        abstract: "Pull TABLE into STORE with the Azure SDKs' paging (ge + $skip, page size 50).",
        shouldDisplay: false
    )

    @Option(name: .customShort("C"), help: "The store.") var store: String
    @Argument(help: "The table.") var table: String
    @Option(help: "The query id.") var queryID: String

    func run() async throws {
        let context = try SyncContext(directory: store, purpose: "tablesync-bench stock-pull")
        let options = SyncOptions(pageSize: 50).with { $0.paging = .greaterOrEqualWithSkip }
        let report = try await context.pull(table: table, queryID: queryID, options: options)
        print("written \(report.written) pages \(report.pages)")
    }
}

/// `tablesync-bench markdown`: a results file as the Markdown table that README and docs/bench.md show.
struct MarkdownCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "markdown",
        abstract: "Print a results file (bench-results/latest.json) as a Markdown table."
    )

    @Argument(help: "The results file written by tablesync-bench run.") var results = "bench-results/latest.json"

    func run() async throws {
        let bytes = try Data(contentsOf: URL(fileURLWithPath: results))
        let json = try JSONParser.parse(Array(bytes))
        // Results of a benchmark run say their data set's size; others (make stress's attack mix) have none.
        let size = [
            json["records"]?.integerValue.map { "\($0) records" }, json["runs"]?.integerValue.map { "\($0) runs each" }
        ].compactMap { $0 }
        let head = [json["machine"]?.stringValue ?? "", size.joined(separator: ", "), json["date"]?.stringValue ?? ""]
        print(head.filter { !$0.isEmpty }.joined(separator: "; ") + "\n")
        print(ResultTable.markdown(json))
        for note in json["notes"]?.arrayValue ?? [] { print("\nnote: \(note.stringValue ?? "")") }
    }
}
