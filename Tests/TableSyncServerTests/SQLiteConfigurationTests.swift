import Foundation
import GRDB
import Testing
import TestSupport
@testable import TableSyncServer

#if os(Linux)
import Glibc

/// How the server's SQLite connections are set up (``SQLiteRecordRepository/configuration()``).
@Suite struct SQLiteConfigurationTests {
    /// The nice value of the calling thread (Linux gives each thread its own; 0 names the caller).
    static func threadNice() -> Int32 {
        getpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0)
    }

    // Stands for the server under attack: with GRDB's default the reads ran at nice -2, ahead of the threads that
    // parse and answer small requests.
    @Test("reads and writes run at the priority of the process's other threads, not above them")
    func statementsRunAtTheServersPriority() async throws {
        let directory = TemporaryDirectory()
        let pool = try DatabasePool(
            path: directory.file("records.sqlite"), configuration: SQLiteRecordRepository.configuration())
        let processNice = getpriority(__priority_which_t(PRIO_PROCESS.rawValue), id_t(getpid()))
        let readNice = try await pool.read { _ in Self.threadNice() }
        let writeNice = try await pool.write { _ in Self.threadNice() }
        #expect(readNice == processNice && writeNice == processNice, "read \(readNice), write \(writeNice)")
    }
}
#endif
