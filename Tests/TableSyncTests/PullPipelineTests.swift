import Foundation
import SyncProtocol
import Synchronization
import Testing
import TestSupport
@testable import TableSync
@testable import TableSyncStorage

/// The pull's pipeline: how a page is sorted, the order its commits keep while the next page is staged, and what a
/// pull that fails midway leaves behind.
@Suite struct PullPipelineTests {
    @Test(
        """
        a page sorts its records: pending ones kept, deleted ones removed, those leaving the query evicted, the rest \
        written
        """
    )
    func pageChangesSortRecords() throws {
        let records = try [
            ["id": "mine", "text": "a", "deleted": false],
            ["id": "gone", "deleted": true],
            ["id": "left", "text": "b", "complete": true, "deleted": false],
            ["id": "kept", "text": "c", "complete": false, "deleted": false],
            ["id": "also-gone", "complete": false, "deleted": true]
        ].map(ServerRecord.init)
        let filter = try FilterParser.parse("complete eq false")
        let evicting = PageChanges(records, pendingIDs: ["mine"], evictFilter: filter)
        #expect(evicting.keptLocal == 1)
        #expect(evicting.removals == ["gone", "also-gone"])
        #expect(evicting.evictions == ["left"])
        #expect(evicting.writes.map(\.id) == ["kept"])
        let plain = PageChanges(records, pendingIDs: [], evictFilter: nil)
        #expect(plain.keptLocal == 0 && plain.evictions.isEmpty)
        #expect(plain.writes.map(\.id) == ["mine", "left", "kept"])
    }

    /// What the steps of a ``CommitSequence`` did, in the order they did it.
    final class StepLog: Sendable {
        private let entries = Mutex<[String]>([])
        func note(_ entry: String) { entries.withLock { $0.append(entry) } }
        var all: [String] { entries.withLock { $0 } }

        /// Returns once `entry` is noted, or after five seconds.
        func wait(for entry: String) async throws {
            for _ in 0..<500 where !all.contains(entry) { try await Task.sleep(for: .milliseconds(10)) }
        }
    }

    struct StepFailed: Error, Equatable { let step: Int }

    /// A step's staging: notes "dropped N" when it goes without a commit having claimed it, as ``StagedSpares``
    /// gives its spares back.
    final class Staging: Sendable {
        let number: Int
        let log: StepLog
        let claimed = Atomic<Bool>(false)
        init(_ number: Int, log: StepLog) {
            self.number = number
            self.log = log
        }
        deinit { if !claimed.load(ordering: .relaxed) { log.note("dropped \(number)") } }
    }

    /// Appends step `number`: staging notes itself (and fails when asked); the commit waits for `waitingFor` to be
    /// noted, if given, notes the previous step's output, and fails when asked.
    static func append(
        _ number: Int, to sequence: inout CommitSequence<Int>, log: StepLog, waitingFor: String? = nil,
        failStaging: Bool = false, failCommit: Bool = false
    ) async throws -> Int? {
        try await sequence.append(
            stage: {
                if failStaging { throw StepFailed(step: number) }
                log.note("stage \(number)")
                return Staging(number, log: log)
            },
            commit: { staged, previous in
                staged.claimed.store(true, ordering: .relaxed)
                if let waitingFor { try await log.wait(for: waitingFor) }
                if failCommit { throw StepFailed(step: staged.number) }
                log.note("commit \(staged.number) after \(previous.map(String.init) ?? "none")")
                return staged.number
            })
    }

    @Test("steps commit in order, each after the one before, while the next is staged")
    func stepsCommitInOrder() async throws {
        let log = StepLog()
        var sequence = CommitSequence<Int>()
        #expect(try await Self.append(1, to: &sequence, log: log) == nil)
        // Step 2's commit waits until step 3 is staged: were staging to wait for the commit before, it would not be.
        #expect(try await Self.append(2, to: &sequence, log: log, waitingFor: "stage 3") == 1)
        #expect(try await Self.append(3, to: &sequence, log: log) == 2)
        #expect(try await sequence.finish() == 3)
        let entries = log.all
        #expect(
            entries.filter { $0.hasPrefix("commit") } == ["commit 1 after none", "commit 2 after 1", "commit 3 after 2"]
        )
        #expect(try #require(entries.firstIndex(of: "stage 3")) < #require(entries.firstIndex(of: "commit 2 after 1")))
        #expect(!entries.contains { $0.hasPrefix("dropped") })
    }

    @Test("a failed commit stops every later step: their staging is dropped, and its failure is the one reported")
    func failedCommitStopsLaterSteps() async throws {
        let log = StepLog()
        var sequence = CommitSequence<Int>()
        _ = try await Self.append(1, to: &sequence, log: log)
        _ = try await Self.append(2, to: &sequence, log: log, waitingFor: "stage 3", failCommit: true)
        // The append of step 3 waits for step 2, and reports its failure.
        await #expect(throws: StepFailed(step: 2)) { _ = try await Self.append(3, to: &sequence, log: log) }
        await #expect(throws: StepFailed(step: 2)) { _ = try await sequence.finish() }
        await sequence.settle()
        #expect(log.all.filter { $0.hasPrefix("commit") } == ["commit 1 after none"])
        #expect(log.all.contains("dropped 3"))
        #expect(!log.all.contains("dropped 2"), "a commit that started owns what it staged")
    }

    @Test("a failed staging commits nothing of its step and stops the later ones; the steps before it are made")
    func failedStagingStopsItsStep() async throws {
        let log = StepLog()
        var sequence = CommitSequence<Int>()
        _ = try await Self.append(1, to: &sequence, log: log)
        _ = try await Self.append(2, to: &sequence, log: log, failStaging: true)
        await #expect(throws: StepFailed(step: 2)) { _ = try await Self.append(3, to: &sequence, log: log) }
        await sequence.settle()
        #expect(log.all.filter { $0.hasPrefix("commit") } == ["commit 1 after none"])
        #expect(log.all.contains("dropped 3"))
        #expect(!log.all.contains("stage 2"))
    }

    static func stamp(_ index: Int) -> String { "2024-01-01T00:00:0\(index).000Z" }

    /// Record `index` as a server sends it.
    static func record(_ index: Int) -> String {
        #"{"id":"r\#(index)","text":"t\#(index)","createdAt":"\#(stamp(index))","updatedAt":"\#(stamp(index))","#
            + #""version":"v\#(index)","deleted":false}"#
    }

    @Test("a pull that fails on its third page has made the first two durable, watermark included, before it returns")
    func failedPullKeepsCommittedPages() async throws {
        // A server without extensions (so the SDKs' paging) whose third page is a 500: pages 1 and 2 are committed
        // while
        // the next is fetched and staged, so the failure arrives while page 2 may still be in flight.
        let server = try HostileServer { request in
            guard request.method == "GET", request.target.contains("/tables/todo") else {
                return .json(#"{"error":"no"}"#, status: 404, extensions: false)
            }
            // Each page asks for what follows the last record's updatedAt.
            let target = request.target.removingPercentEncoding ?? request.target
            let first = target.contains(Self.stamp(5)) ? 6 : target.contains(Self.stamp(2)) ? 3 : 0
            if first == 6 { return .json(#"{"error":"the database is down"}"#, status: 500, extensions: false) }
            let items = (first..<(first + 3)).map(Self.record).joined(separator: ",")
            return .json("{\"items\":[\(items)],\"nextLink\":\"/tables/todo?more\"}", extensions: false)
        }
        defer { server.stop() }
        let directory = TemporaryDirectory()
        let context = try SyncContext.initialize(
            directory: directory.file("store"),
            settings: StoreSettings(remote: server.baseURL, apiVersion: 3, tables: ["todo"]))
        var options = SyncOptions(retryPolicy: .none)
        options.pageSize = 3
        await #expect(throws: SyncError.self) {
            _ = try await context.pull(table: "todo", queryID: "all", options: options)
        }
        for index in 0..<6 {
            #expect(
                try await context.table("todo").read(id: "r\(index)")?["text"] == .string("t\(index)"),
                "record r\(index)")
        }
        let query = try #require(try await context.queries().queries["all"])
        #expect(query.updatedAt == Self.stamp(5), "the watermark stands after page 2")
        await context.close()
    }
}
