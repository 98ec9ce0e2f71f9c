import Foundation

/// Runs `body`, a call that blocks its thread for a while (a wait for a child process, a read of a pipe that only
/// ends with the child), on a new thread of its own, and returns what it returns.
///
/// Not on `DispatchQueue.global()`: on Linux, Dispatch's global queues and the cooperative pool of Swift's tasks share
/// one set of threads, as many as the machine has cores, and a thread blocked there is made up for only by
/// libdispatch's monitor, which adds one thread a second. A call blocked there stalls every task of the process for
/// seconds: in a process running several syncs or servers (a test run, an app), their answers come late.
package func runOnThreadOfItsOwn<Value: Sendable, Failure: Error>(
    _ body: @escaping @Sendable () throws(Failure) -> Value
) async throws(Failure) -> Value {
    let result: Result<Value, Failure> = await withCheckedContinuation { continuation in
        Thread {
            continuation.resume(returning: Result { () throws(Failure) -> Value in try body() })
        }.start()
    }
    return try result.get()
}
