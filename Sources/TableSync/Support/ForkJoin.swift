import Dispatch
import Foundation

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

/// `elements.map(transform)`, run on as many threads as the machine has cores, in contiguous slices of at least
/// `minimumSlice` elements (fewer elements run on the caller's thread alone). For blocking per-item work such as
/// reading and parsing files; `transform` must change nothing shared. Results keep their order.
func concurrentMap<Element, Mapped>(_ elements: [Element], minimumSlice: Int = 64, _ transform: (Element) -> Mapped) -> [Mapped] {
    let slices = min(ProcessInfo.processInfo.activeProcessorCount, elements.count / max(1, minimumSlice))
    guard slices > 1 else { return elements.map(transform) }
    return withoutActuallyEscaping(transform) { transform in
        nonisolated(unsafe) let run = transform
        nonisolated(unsafe) let input = elements
        return [Mapped](unsafeUninitializedCapacity: elements.count) { buffer, initialized in
            // Each slot is written by exactly one thread; the buffer is read after all threads finished.
            nonisolated(unsafe) let output = buffer
            DispatchQueue.concurrentPerform(iterations: slices) { slice in
                let start = input.count * slice / slices
                let end = input.count * (slice + 1) / slices
                for index in start..<end {
                    (output.baseAddress! + index).initialize(to: run(input[index]))
                }
            }
            initialized = elements.count
        }
    }
}
