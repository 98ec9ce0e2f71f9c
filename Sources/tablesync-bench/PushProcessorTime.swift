import Foundation
import SyncProtocol
import TestSupport

/// C1: the processor time `tablesync push` spends on each hand edit, this build against another build of
/// `tablesync` (`scripts/bench.sh push-cpu DIR`), on the same server and the same edits. The two builds take turns
/// run by run, each on a store of its own, so that drift on a shared machine hits both alike; what is compared is
/// the client's own user and system time (`wait4`), which a busy neighbour slows far less than it slows the clock.
/// Each push starts with the page cache written out (`sync`), so that none of them meets others' unwritten data.
extension BenchmarkSuite {
    mutating func measurePushProcessorTime(baseline: String) async throws {
        let count = configuration.pushRecords
        let database = work + "/server.sqlite"
        progress("C1: seeding the server with \(configuration.smallRecords) records")
        // A table for each build, so that neither push meets the other's versions.
        let builds = [
            (name: "baseline", binaries: baseline, table: "baseline"),
            (name: "this build", binaries: configuration.binaries, table: "current")
        ]
        try await ServerSeeder.seed(
            database: database, tables: builds.map { ($0.table, configuration.smallRecords) }, dataSet: dataSet)
        let server = try ServerProcess(
            executable: configuration.binaries + "/tablesync-server", database: "sqlite:" + database,
            tables: builds.map(\.table), logFile: work + "/server.log")
        defer { server.stopWaiting() }
        for build in builds {
            let store = work + "/" + build.table
            try discard(store)
            try ChildProcess.run(
                build.binaries + "/tablesync", ["-C", store, "init", "--remote", server.baseURL, "--table", build.table]
            )
            let pull = try ChildProcess.run(build.binaries + "/tablesync", ["-C", store, "pull", build.table, "--json"])
            try expect(pull, member: "written", equals: configuration.smallRecords)
        }
        var perUpdate: [String: [Double]] = [:]
        var rates: [String: [Double]] = [:]
        var quantity: Int64 = 7_000_000
        for run in 1...runs {
            for build in builds {
                progress("C1 run \(run)/\(runs): push of \(count) hand edits, \(build.name)")
                quantity += 1
                let value = quantity
                let store = work + "/" + build.table
                _ = try editRecords(store: store, table: build.table, indexes: 0..<count) {
                    $0["quantity"] = .integer(value)
                }
                // The edits (and a build just before) written out first: a push that found much unwritten data
                // would sync file by file (DurabilityPlan), whichever build's turn it is.
                sync()
                let push = try ChildProcess.run(build.binaries + "/tablesync", ["-C", store, "push", "--json"])
                try expect(push, member: "applied", equals: count)
                perUpdate[build.name, default: []].append(push.processorSeconds / Double(count) * 1_000_000)
                rates[build.name, default: []].append(Double(count) / push.seconds)
            }
        }
        let current = Sample(perUpdate["this build"] ?? [])
        let before = Sample(perUpdate["baseline"] ?? [])
        results.rows.append(
            ResultRow(
                id: "C1", what: "push \(count) hand edits, batched: processor time of tablesync per update",
                unit: "µs", value: current, baselineName: "the baseline build", baseline: before,
                target: "≤ 0.7×", met: current.median / before.median <= 0.7))
        results.rows.append(
            ResultRow(
                id: "C1", what: "push \(count) hand edits, batched", unit: "ops/s",
                value: Sample(rates["this build"] ?? []), baselineName: "the baseline build",
                baseline: Sample(rates["baseline"] ?? []), target: nil, met: nil))
        results.notes.append(
            "C1: the baseline build's binaries from \(baseline); load average at the end: \(Machine.loadAverage())")
    }
}
