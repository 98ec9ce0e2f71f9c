import Foundation
import Testing
@testable import TableSync

/// The library's way to run `git` and a token command (and the tests' way to run the executables): posix_spawn,
/// both outputs read at once, the input given as bytes, a time limit, and no descriptor of this process leaked.
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
}
