import Dispatch
import Foundation
import Synchronization

/// The cores this process may use, read once: Foundation reads two cgroup files each time it is asked, and a pull or
/// push asks once per page or batch.
package let activeCores = ProcessInfo.processInfo.activeProcessorCount

/// `elements.map(transform)`, run on as many threads as the machine has cores, in contiguous slices of at least
/// `minimumSlice` elements (fewer elements run on the caller's thread alone). For blocking per-item work such as
/// reading and parsing files. Results keep their order.
///
/// The closures are `@Sendable` and the values `Sendable`, so the compiler checks that no thread touches what
/// another changes. The one thing it cannot check is the output: every thread writes its own slots of one
/// buffer, which is read only after `concurrentPerform` has returned (it returns when every iteration is done).
package func concurrentMap<Element: Sendable, Mapped: Sendable>(
    _ elements: [Element], minimumSlice: Int = 64,
    _ transform: @Sendable (Element) -> Mapped
) -> [Mapped] {
    let slices = min(activeCores, elements.count / max(1, minimumSlice))
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

/// Runs `background` on another thread while the calling thread runs `foreground`, and returns both results once
/// both are done; an error of either is rethrown then (the foreground's first). For two independent pieces of
/// blocking work, such as listing a directory while its index is read.
func concurrently<Background: Sendable, Foreground>(
    _ background: @Sendable () throws -> Background, whileRunning foreground: () throws -> Foreground
) throws -> (background: Background, foreground: Foreground) {
    let slot = ResultSlot<Background>()
    return try withoutActuallyEscaping(background) { background in
        // The thread is waited for before `background` goes away.
        let done = DispatchGroup()
        DispatchQueue.global().async(group: done) { slot.store(Result { try background() }) }
        let foregroundResult = Result { try foreground() }
        done.wait()
        let foreground = try foregroundResult.get()
        return (try slot.take().get(), foreground)
    }
}

/// Where ``concurrently(_:whileRunning:)``'s other thread leaves its result.
private final class ResultSlot<Value: Sendable>: Sendable {
    private let result = Mutex<Result<Value, any Error>?>(nil)

    func store(_ value: Result<Value, any Error>) { result.withLock { $0 = value } }

    /// The result stored; called only after the storing thread finished.
    func take() -> Result<Value, any Error> {
        guard let stored = result.withLock({ $0 }) else { preconditionFailure("taken before the thread finished") }
        return stored
    }
}

/// Maps `0..<count` with `transform` in chunks of `chunkSize` on the other cores while the calling thread passes
/// the results to `consume` chunk by chunk, in order. While the chunk the caller needs is not mapped yet, the
/// caller maps the next chunk nobody has taken (that very chunk, when nobody has), and waits only when every
/// chunk is taken (a chunk is a fraction of a millisecond of work). So the caller's own work overlaps the mapping
/// and no core sits idle, on two cores as on many: the scan takes a table's `stat`s this way while it walks them beside
/// the index. When `consume`
/// throws, no further chunk is started and the error is rethrown once the other threads have stopped.
func pipelinedMap<Mapped: Sendable>(
    count: Int, chunkSize: Int = 256, _ transform: @Sendable (Int) -> Mapped,
    consume: (_ range: Range<Int>, _ results: UnsafeBufferPointer<Mapped>) throws -> Void
) throws {
    let chunks = (count + chunkSize - 1) / chunkSize
    guard chunks > 0 else { return }
    @Sendable func range(_ chunk: Int) -> Range<Int> { chunk * chunkSize..<min(count, (chunk + 1) * chunkSize) }
    let results = UnsafeMutableBufferPointer<Mapped>.allocate(capacity: count)
    let board = ChunkBoard(chunks: chunks)
    defer {
        for chunk in 0..<chunks where board.isMapped(chunk) {
            let chunkRange = range(chunk)
            UnsafeMutableBufferPointer(rebasing: results[chunkRange]).deinitialize()
        }
        results.deallocate()
    }
    let output = DisjointSlots(results)
    try withoutActuallyEscaping(transform) { transform in
        @Sendable func map(_ chunk: Int) {
            for index in range(chunk) { output.initialize(index, to: transform(index)) }
            board.finish(chunk)
        }
        // The helpers run on Dispatch's threads and are waited for before `transform` and the buffer go away.
        let helpers = DispatchGroup()
        for _ in 0..<min(activeCores, chunks) - 1 {
            DispatchQueue.global().async(group: helpers) {
                while let chunk = board.takeNext() { map(chunk) }
            }
        }
        defer {
            board.stop()
            helpers.wait()
        }
        for chunk in 0..<chunks {
            // While the chunk is not ready, the caller maps the next one nobody has taken (this one, when nobody has).
            while !board.isMapped(chunk) {
                if let next = board.takeNext() { map(next) } else { sched_yield() }
            }
            let chunkRange = range(chunk)
            try consume(chunkRange, UnsafeBufferPointer(rebasing: results[chunkRange]))
        }
    }
}

/// Which chunks of a ``pipelinedMap(count:chunkSize:_:consume:)`` are taken and which are mapped, shared by its
/// threads. Chunks are taken in order, so "taken" is one number.
private final class ChunkBoard: Sendable {
    private struct State {
        var nextToTake = 0
        var mapped: [Bool]
        var stopped = false
    }
    private let state: Mutex<State>

    init(chunks: Int) { state = Mutex(State(mapped: Array(repeating: false, count: chunks))) }

    /// The next chunk nobody has taken, now taken; `nil` when none is left or the consumer stopped.
    func takeNext() -> Int? {
        state.withLock { state in
            guard !state.stopped, state.nextToTake < state.mapped.count else { return nil }
            defer { state.nextToTake += 1 }
            return state.nextToTake
        }
    }

    func finish(_ chunk: Int) { state.withLock { $0.mapped[chunk] = true } }
    func isMapped(_ chunk: Int) -> Bool { state.withLock { $0.mapped[chunk] } }
    func stop() { state.withLock { $0.stopped = true } }
}

/// A buffer whose slots different threads write, each slot by exactly one thread, read only after its writer
/// finished (``concurrentMap(_:minimumSlice:_:)``: after every thread; ``pipelinedMap(count:chunkSize:_:consume:)``:
/// after the chunk is marked mapped, under a lock): the one promise they make that the compiler cannot check.
private struct DisjointSlots<Value>: @unchecked Sendable {
    private let buffer: UnsafeMutableBufferPointer<Value>

    init(_ buffer: UnsafeMutableBufferPointer<Value>) { self.buffer = buffer }

    /// Initializes the uninitialized slot `index`.
    func initialize(_ index: Int, to value: Value) { buffer.initializeElement(at: index, to: value) }
}
