import Dispatch
import Foundation

/// `elements.map(transform)`, run on as many threads as the machine has cores, in contiguous slices of at least
/// `minimumSlice` elements (fewer elements run on the caller's thread alone). For blocking per-item work such as
/// reading and parsing files. Results keep their order.
///
/// The closures are `@Sendable` and the values `Sendable`, so the compiler checks that no thread touches what
/// another changes. The one thing it cannot check is the output: every thread writes its own slots of one
/// buffer, which is read only after `concurrentPerform` has returned (it returns when every iteration is done).
func concurrentMap<Element: Sendable, Mapped: Sendable>(_ elements: [Element], minimumSlice: Int = 64,
                                                        _ transform: @Sendable (Element) -> Mapped) -> [Mapped] {
    let slices = min(ProcessInfo.processInfo.activeProcessorCount, elements.count / max(1, minimumSlice))
    guard slices > 1 else { return elements.map(transform) }
    return [Mapped](unsafeUninitializedCapacity: elements.count) { buffer, initialized in
        let output = DisjointSlots(buffer)
        DispatchQueue.concurrentPerform(iterations: slices) { slice in
            let start = elements.count * slice / slices
            let end = elements.count * (slice + 1) / slices
            for index in start..<end { output.initialize(index, to: transform(elements[index])) }
        }
        initialized = elements.count
    }
}

/// `elements.map(transform)` on every core while `alongside` runs: the elements are cut into chunks of
/// `chunkSize` that free threads take in turn, so the thread that ran `alongside` turns to the chunks when it is
/// done and neither core waits for the other. The scan takes the `stat`s of a table's files this way while the
/// table's index is parsed. Results keep their order.
func concurrentMap<Element: Sendable, Mapped: Sendable, Other: Sendable>(
    _ elements: [Element], chunkSize: Int = 256, alongside: @Sendable () throws -> Other,
    _ transform: @Sendable (Element) -> Mapped
) throws -> (mapped: [Mapped], other: Other) {
    let chunks = (elements.count + chunkSize - 1) / chunkSize
    var other: Result<Other, any Error> = .failure(CancellationError())
    let mapped = withUnsafeMutablePointer(to: &other) { otherPointer in
        [Mapped](unsafeUninitializedCapacity: elements.count) { buffer, initialized in
            let output = DisjointSlots(buffer)
            let otherSlot = DisjointSlots(UnsafeMutableBufferPointer(start: otherPointer, count: 1))
            // Iterations are taken in order by whichever thread is free: 0 first, then the chunks.
            DispatchQueue.concurrentPerform(iterations: chunks + 1) { iteration in
                guard iteration > 0 else {
                    otherSlot.replace(0, with: Result { try alongside() })
                    return
                }
                let start = (iteration - 1) * chunkSize
                for index in start..<min(start + chunkSize, elements.count) { output.initialize(index, to: transform(elements[index])) }
            }
            initialized = elements.count
        }
    }
    return (mapped, try other.get())
}

/// A buffer whose slots different threads write, each slot by exactly one thread, read only after every writer
/// finished: the one promise ``concurrentMap(_:minimumSlice:_:)`` makes that the compiler cannot check.
private struct DisjointSlots<Value>: @unchecked Sendable {
    private let base: UnsafeMutablePointer<Value>

    init(_ buffer: UnsafeMutableBufferPointer<Value>) { base = buffer.baseAddress! }

    /// Initializes the uninitialized slot `index`.
    func initialize(_ index: Int, to value: Value) { (base + index).initialize(to: value) }

    /// Replaces the initialized value of slot `index`.
    func replace(_ index: Int, with value: Value) { base[index] = value }
}
