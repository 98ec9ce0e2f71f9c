import Foundation
import SyncProtocol
import Testing
import TestSupport
@testable import TableSync

/// The `tablesync` executable, run as cron would run it.
@Suite struct CommandLineTests {
    let tablesync = builtProduct("tablesync")

    @Test func initInsertStatusAndExitCodes() async throws {
        let directory = TemporaryDirectory()
        let store = directory.file("store")
        #expect(try await runProgram(tablesync, ["-C", store, "init", "--remote", "http://127.0.0.1:9", "--table", "todo"]).status == 0)
        let inserted = try await runProgram(tablesync, ["-C", store, "insert", "todo", #"{"id": "a", "text": "Buy milk"}"#, "--json"])
        #expect(inserted.status == 0)
        #expect(try JSONParser.parse(inserted.stdout)["id"] == "a")
        let status = try await runProgram(tablesync, ["-C", store, "status", "--json"])
        #expect(status.status == 0)
        #expect(try JSONParser.parse(status.stdout)["pending"]?.arrayValue?.count == 1)
        #expect(try await runProgram(tablesync, ["-C", store, "insert", "todo", "{not json"]).status == 2)
        #expect(try await runProgram(tablesync, ["-C", store, "insert", "nope", "{}"]).status == 2)
        #expect(try await runProgram(tablesync, ["-C", directory.path, "status"]).status == 7, "not a store")
        try directory.write("store/tables/todo/b.json", "{\"id\": 1}")
        let broken = try await runProgram(tablesync, ["-C", store, "verify"])
        #expect(broken.status == 7)
        #expect(broken.stdout.contains("tables/todo/b.json"))
        let query = try await runProgram(tablesync, ["-C", store, "query", "todo", "--filter", "text eq 'Buy milk'"])
        #expect(query.status == 0)
        #expect(try JSONParser.parse(query.stdout).arrayValue?.count == 1)
    }

    @Test func aSecondWriterExitsLockedAtOnce() async throws {
        let directory = TemporaryDirectory()
        let store = directory.file("store")
        _ = try await runProgram(tablesync, ["-C", store, "init", "--remote", "http://127.0.0.1:9", "--table", "todo"])
        let holder = try SyncContext(directory: store, purpose: "holding for a test")
        let started = Date()
        let second = try await runProgram(tablesync, ["-C", store, "insert", "todo", "{}"])
        #expect(second.status == 6)
        #expect(second.stderr.contains("locked") && second.stderr.contains("holding for a test"))
        #expect(Date().timeIntervalSince(started) < 10, "the second run does not wait for the lock")
        #expect(try await runProgram(tablesync, ["-C", store, "status"]).status == 0, "status needs no lock")
        await holder.close()
        #expect(try await runProgram(tablesync, ["-C", store, "insert", "todo", "{}"]).status == 0)
    }

    @Test func aWriterKilledMidWriteLeavesTheOldOrTheNewFile() async throws {
        let directory = TemporaryDirectory()
        let store = directory.file("store")
        _ = try await runProgram(tablesync, ["-C", store, "init", "--remote", "http://127.0.0.1:9", "--table", "todo"])
        let big = String(repeating: "x", count: 2_000_000)
        let versions = ["old", "new"].map { #"{"id": "a", "body": "\#($0)\#(big)"}"# }
        let versionFiles = try versions.enumerated().map { index, text in
            try directory.write("version\(index).json", text)
            return directory.file("version\(index).json")
        }
        #expect(try await runProgram(tablesync, ["-C", store, "insert", "todo", versions[0].replacingOccurrences(of: big, with: "")]).status == 0)
        #expect(try await runProgram(tablesync, ["-C", store, "update", "todo", "-"], input: versionFiles[0]).status == 0)
        let expected = try versions.map { try CanonicalJSON.encode(JSONParser.parse($0)) }
        var generator = SeededGenerator(seed: 5)
        var killed = 0
        for round in 0..<12 {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: tablesync)
            process.arguments = ["-C", store, "update", "todo", "-"]
            process.standardInput = FileHandle(forReadingAtPath: versionFiles[(round + 1) % 2])
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            try await Task.sleep(for: .milliseconds(Int.random(in: 0...40, using: &generator)))
            if process.isRunning {
                kill(process.processIdentifier, SIGKILL)
                killed += 1
            }
            process.waitUntilExit()
            let bytes = Array(try Data(contentsOf: URL(fileURLWithPath: directory.file("store/tables/todo/a.json"))))
            #expect(expected.contains(bytes), "round \(round): the record file is torn (\(bytes.count) bytes)")
            let verify = try await runProgram(tablesync, ["-C", store, "verify", "--json"])
            #expect(verify.status == 0, "round \(round): \(verify.stdout)")
        }
        #expect(killed > 0, "at least one run was killed mid-way")
    }
}
