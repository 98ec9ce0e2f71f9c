import Dispatch
import Foundation

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

/// `elements.map(transform)` on every core while `alongside` runs: the elements are cut into chunks of
/// `chunkSize` that free threads take in turn, so the thread that ran `alongside` turns to the chunks when it is
/// done and neither core waits for the other. The scan takes the `stat`s of a table's files this way while the
/// table's index is parsed. Results keep their order; neither closure may change anything the other touches.
func concurrentMap<Element, Mapped, Other>(_ elements: [Element], chunkSize: Int = 256, alongside: () throws -> Other,
                                           _ transform: (Element) -> Mapped) throws -> (mapped: [Mapped], other: Other) {
    let chunks = (elements.count + chunkSize - 1) / chunkSize
    return try withoutActuallyEscaping(transform) { transform in
        try withoutActuallyEscaping(alongside) { alongside in
            nonisolated(unsafe) let run = transform
            nonisolated(unsafe) let runAlongside = alongside
            nonisolated(unsafe) let input = elements
            // Written by the thread that takes iteration 0, read after every thread finished.
            nonisolated(unsafe) var other: Result<Other, any Error>?
            let mapped = [Mapped](unsafeUninitializedCapacity: elements.count) { buffer, initialized in
                // Each slot is written by exactly one thread; the buffer is read after all threads finished.
                nonisolated(unsafe) let output = buffer
                // Iterations are taken in order by whichever thread is free: 0 first, then the chunks.
                DispatchQueue.concurrentPerform(iterations: chunks + 1) { iteration in
                    guard iteration > 0 else {
                        other = Result { try runAlongside() }
                        return
                    }
                    let start = (iteration - 1) * chunkSize
                    for index in start..<min(start + chunkSize, input.count) {
                        (output.baseAddress! + index).initialize(to: run(input[index]))
                    }
                }
                initialized = elements.count
            }
            return (mapped, try other!.get())
        }
    }
}
