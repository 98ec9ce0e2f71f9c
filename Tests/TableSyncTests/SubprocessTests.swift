import Foundation
import Testing
@testable import TableSync

/// The library's way to run `git` and a token command (and the tests' and benchmarks' way to run the executables):
/// posix_spawn, both outputs read at once, the input given as bytes, a time limit, no descriptor of this process
/// leaked; and children that run beside this process, signalled and waited for.
@Suite struct SubprocessTests {
    @Test("bytes go in, both outputs come back whole however large, and the exit status is the child's")
    func inputAndOutputs() throws {
        let input = Array(String(repeating: "line of input\n", count: 50_000).utf8)
        let run = try Subprocess.run(
            "/bin/sh", ["-c", "cat; head -c 300000 /dev/zero >&2; exit 3"], input: .bytes(input))
        #expect(run.status == 3 && !run.killed)
        #expect(run.output == input, "700 KB through standard input and output")
        #expect(run.errors.count == 300_000, "standard error read beside standard output, never stuck")
    }

    @Test("the child gets only its three standard descriptors, every signal at its default, and this environment")
    func cleanChild() throws {
        let open = try Subprocess.run("/bin/sh", ["-c", "ls /proc/self/fd"])
        // `ls` lists its own directory's descriptor besides 0, 1 and 2.
        let descriptors = String(decoding: open.output, as: UTF8.self).split(separator: "\n").compactMap { Int($0) }
        #expect(descriptors.filter { $0 > 2 }.count <= 1, "leaked: \(descriptors)")
        let environment = try Subprocess.run(
            "/bin/sh", ["-c", "printf %s \"$SUBPROCESS_TEST\""], environment: ["SUBPROCESS_TEST": "given"])
        #expect(String(decoding: environment.output, as: UTF8.self) == "given")
    }

    @Test("a child past its time limit is killed, and a signal is told apart from an exit")
    func timeLimit() throws {
        let started = ContinuousClock.now
        let run = try Subprocess.run("/bin/sh", ["-c", "exec sleep 30"], timeout: .milliseconds(300))
        #expect(run.killed && run.status == SIGKILL)
        #expect(ContinuousClock.now - started < .seconds(20), "killed at the limit, not after the 30 s sleep")
        // A grandchild that keeps the output open does not hold the call past the limit either.
        let heldOpen = ContinuousClock.now
        let orphaning = try Subprocess.run(
            "/bin/sh", ["-c", "echo before; sleep 30 & wait"], timeout: .milliseconds(300))
        #expect(orphaning.killed && String(decoding: orphaning.output, as: UTF8.self) == "before\n")
        #expect(ContinuousClock.now - heldOpen < .seconds(20), "the call ends at the limit, not with the grandchild")
        #expect(throws: Subprocess.StartFailure.self) { try Subprocess.run("/nonexistent/program", []) }
    }

    @Test("a started child writes to a pipe, starts in the directory given, and its end is told once it is reaped")
    func startedChild() async throws {
        let child = try Subprocess.start(
            "/bin/sh", ["-c", "pwd; echo to-errors >&2; exit 4"], directory: "/tmp", output: .pipe,
            errors: .standardOutput)
        let printed = try #require(child.standardOutput).readDataToEndOfFile()
        #expect(String(decoding: printed, as: UTF8.self) == "/tmp\nto-errors\n")
        let ended = await child.waitForExit()
        #expect(ended.status == 4 && !ended.killed && ended.shellStatus == 4)
        #expect(!child.isRunning && child.waitUntilExit() == ended, "reaped once, told every time")
    }

    @Test("a started child is signalled: SIGTERM ends it, and its status is the signal's")
    func signalledChild() async throws {
        let directory = FileManager.default.temporaryDirectory.path + "/subprocess-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let log = directory + "/log"
        let child = try Subprocess.start(
            "/bin/sh", ["-c", "echo out; echo err >&2; exec sleep 30"], output: .file(log), errors: .standardOutput)
        let deadline = ContinuousClock.now + .seconds(20)
        while (try? String(contentsOfFile: log, encoding: .utf8)) != "out\nerr\n", ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(10))
        }
        #expect(child.isRunning)
        child.terminate()
        let ended = await child.waitForExit()
        #expect(ended.killed && ended.status == SIGTERM && ended.shellStatus == 128 + SIGTERM)
        #expect(try String(contentsOfFile: log, encoding: .utf8) == "out\nerr\n", "one file, one offset")
        child.send(SIGKILL)
        #expect(child.waitUntilExit() == ended, "a signal after the end goes nowhere")
    }
}
