import Dispatch

/// Runs two independent pieces of blocking work (file-system calls, parsing) on two threads at once and
/// returns both results: a scan lists a table directory while its index is parsed. Each closure must touch
/// nothing the other one touches; the caller's thread waits for both.
func inParallel<First, Second>(_ first: () throws -> First, _ second: () throws -> Second) throws -> (First, Second) {
    try withoutActuallyEscaping(first) { first in
        try withoutActuallyEscaping(second) { second in
            // Each result is written by one thread and read after both threads finished.
            nonisolated(unsafe) let runFirst = first
            nonisolated(unsafe) let runSecond = second
            nonisolated(unsafe) var firstResult: Result<First, any Error>?
            nonisolated(unsafe) var secondResult: Result<Second, any Error>?
            DispatchQueue.concurrentPerform(iterations: 2) { part in
                if part == 0 {
                    firstResult = Result { try runFirst() }
                } else {
                    secondResult = Result { try runSecond() }
                }
            }
            return (try firstResult!.get(), try secondResult!.get())
        }
    }
}
