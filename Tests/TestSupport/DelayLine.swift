import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One direction of a link with latency: bytes handed in are written out `delay` seconds later by the monotonic
/// clock, in order, by a thread of its own.
final class DelayLine: @unchecked Sendable {
    private let delay: Double
    private let destination: Int32
    private let condition = NSCondition()
    // Guarded by `condition`.
    private var queue: [(due: ContinuousClock.Instant, bytes: [UInt8])] = []
    private var closed = false
    private var drained = false

    init(delay: Double, destination: Int32) {
        self.delay = delay
        self.destination = destination
        Thread { [self] in run() }.start()
    }

    func send(_ bytes: [UInt8]) {
        condition.lock()
        queue.append((ContinuousClock.now + .seconds(delay), bytes))
        condition.signal()
        condition.unlock()
    }

    /// Waits until everything handed in is written.
    func finish() {
        condition.lock()
        closed = true
        condition.broadcast()
        while !drained { condition.wait() }
        condition.unlock()
    }

    private func run() {
        var alive = true
        while true {
            condition.lock()
            while queue.isEmpty && !closed { condition.wait() }
            if queue.isEmpty {
                drained = true
                condition.broadcast()
                condition.unlock()
                return
            }
            let (due, bytes) = queue.removeFirst()
            condition.unlock()
            let wait = due - ContinuousClock.now
            if wait > .zero { usleep(useconds_t(wait / .microseconds(1))) }
            if alive { alive = LoopbackSocket.sendAll(destination, bytes) }
        }
    }
}
