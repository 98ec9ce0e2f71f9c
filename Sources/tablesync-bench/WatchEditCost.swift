#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import SyncProtocol
import TestSupport

/// W4: the processor time `tablesync watch` spends on a hand edit in a store of the main table's size (its run that
/// pushes the edit, the events of the files that run wrote, and the pull the change feed wakes), against the
/// processor time of `tablesync push` carrying the same kind of edit in the same store: one scan of the table.
extension BenchmarkSuite {
    static let watchCostTable = "watched"

    mutating func measureWatchEditCost() async throws {
        let count = configuration.records
        let edits = configuration.watchCostEdits
        let database = work + "/watch-cost.sqlite"
        progress("W4: seeding a server with \(count) records")
        try await ServerSeeder.seed(database: database, tables: [(Self.watchCostTable, count)], dataSet: dataSet)
        let server = try ServerProcess(
            executable: configuration.binaries + "/tablesync-server", database: "sqlite:" + database,
            tables: [Self.watchCostTable], logFile: work + "/watch-cost-server.log",
            options: ["--max-change-wait", String(configuration.changeWait)])
        defer { server.stopWaiting() }
        let store = work + "/watch-cost"
        progress("W4: pulling \(count) records into \(store)")
        try freshStore(store, remote: server.baseURL, table: Self.watchCostTable)
        try expect(
            try tablesync(["-C", store, "pull", Self.watchCostTable, "--json"]), member: "written", equals: count)

        var quantity: Int64 = 8_000_000
        var watchPerEdit: [Double] = []
        var pushPerEdit: [Double] = []
        for run in 1...runs {
            progress("W4 run \(run)/\(runs): \(edits) hand edits under tablesync watch")
            watchPerEdit.append(try watchProcessorTimePerEdit(store: store, edits: edits, quantity: &quantity))
            progress("W4 run \(run)/\(runs): \(edits) hand edits, each carried by tablesync push")
            var pushSeconds = 0.0
            for edit in 0..<edits {
                quantity += 1
                _ = try editByHand(store: store, table: Self.watchCostTable, index: edit, quantity: quantity)
                let push = try tablesync(["-C", store, "push", "--json"])
                try expect(push, member: "applied", equals: 1)
                pushSeconds += push.processorSeconds
            }
            pushPerEdit.append(pushSeconds / Double(edits))
        }
        let watch = Sample(watchPerEdit.map { $0 * 1_000 })
        let push = Sample(pushPerEdit.map { $0 * 1_000 })
        results.rows.append(
            ResultRow(
                id: "W4", what: "hand edit under tablesync watch, \(count) records: processor time per edit",
                unit: "ms", value: watch, baselineName: "tablesync push of the same edit (one scan of the table)",
                baseline: push, target: "≤ 1× (at most one scan)", met: watch.median <= push.median))
        results.notes.append(
            """
            W4: \(edits) hand edits a run (a record file rewritten in place, one property changed), each waited for \
            until the watch wrote the server's answer back and then spent under \
            \(Self.idleProcessorSeconds * 1_000) ms of processor time in \(Self.idleSeconds) s (its runs for the \
            events of its own writes and for the change feed's pull included); the baseline, the same number of \
            edits each pushed by `tablesync push` (wait4)
            """)
    }

    /// Starts a watch on `store`, makes `edits` hand edits under it one after another, and returns its processor
    /// time per edit (seconds); the watch is stopped after.
    private func watchProcessorTimePerEdit(store: String, edits: Int, quantity: inout Int64) throws -> Double {
        let watch = try WatchProcess(executable: configuration.binaries + "/tablesync", store: store)
        try watch.waitForStart()
        try waitUntilIdle(watch)
        let before = try watch.processorSeconds()
        for edit in 0..<edits {
            quantity += 1
            try editAndWaitForWriteBack(store: store, index: edit, quantity: quantity)
            // The run's own files' events and the pull the feed wakes come after the write-back.
            try waitUntilIdle(watch)
        }
        let perEdit = (try watch.processorSeconds() - before) / Double(edits)
        let stopped = try watch.stop()
        guard stopped.exitStatus == 0 else {
            throw BenchError(what: "W4", detail: "the watch ended with exit \(stopped.exitStatus)")
        }
        return perEdit
    }

    /// How long the watch's processor time must stand (almost) still for it to count as idle.
    private static let idleSeconds = 1.0
    /// What an idle watch may spend in ``idleSeconds`` (its event loops' wake-ups), in seconds.
    private static let idleProcessorSeconds = 0.002

    /// Waits until `watch` has spent at most ``idleProcessorSeconds`` in the last ``idleSeconds``.
    private func waitUntilIdle(_ watch: WatchProcess, seconds: Double = 60) throws {
        let deadline = Clock.now() + seconds
        var samples: [(at: Double, processor: Double)] = [(Clock.now(), try watch.processorSeconds())]
        while true {
            usleep(100_000)
            let now = Clock.now()
            samples.append((now, try watch.processorSeconds()))
            samples.removeAll { now - $0.at > Self.idleSeconds + 0.05 }
            if let first = samples.first, now - first.at >= Self.idleSeconds - 0.05,
                samples[samples.count - 1].processor - first.processor <= Self.idleProcessorSeconds
            {
                return
            }
            guard now < deadline else {
                throw BenchError(what: "W4", detail: "the watch was still busy \(Int(seconds)) s after an edit")
            }
        }
    }

    /// Edits record `index`, then waits until the file names a new version: the watch pushed it and wrote the
    /// server's answer back.
    private func editAndWaitForWriteBack(store: String, index: Int, quantity: Int64, seconds: Double = 30) throws {
        let path = recordPath(store: store, table: Self.watchCostTable, index: index)
        func version() -> String? {
            FileManager.default.contents(atPath: path).flatMap { try? JSONParser.parse(Array($0)) }?["version"]?
                .stringValue
        }
        let before = version()
        _ = try editByHand(store: store, table: Self.watchCostTable, index: index, quantity: quantity)
        let deadline = Clock.now() + seconds
        while version() == before {
            guard Clock.now() < deadline else {
                throw BenchError(what: "W4", detail: "\(path) was not written back \(Int(seconds)) s after its edit")
            }
            usleep(5_000)
        }
    }
}
