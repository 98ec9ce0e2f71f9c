import TableSyncStorage
/// Durable steps made in order, each on a task of its own, so that the caller prepares the next step while one is
/// being made: a push's checkpoints, a pull's pages.
///
/// A step is *staged* at once (its files written into spares, say), beside the step before it, and *committed*
/// once that step has ended. A step whose staging failed, or whose previous step failed, is not committed: its
/// staging is dropped (a staged value gives back what it holds when it goes: ``StagedSpares``) and it throws the
/// earlier failure. So steps commit in order, a failure stops every later step, and
/// awaiting the last step awaits them all.
struct CommitSequence<Output: Sendable> {
    private var last: Task<Output, any Error>?

    /// Starts a step: `stage()` now, then `commit(staged, output of the previous step)` once the previous step has
    /// ended well. `stage` undoes its own work when it throws.
    /// Returns the previous step's output once that step has ended (`nil` for the first), or throws its failure.
    mutating func append<Staged: Sendable>(
        stage: @escaping @Sendable () throws -> Staged,
        commit: @escaping @Sendable (Staged, Output?) async throws -> Output
    ) async throws -> Output? {
        let previous = last
        last = Task {
            let staged = Result { try stage() }
            // Awaited whatever happened to the staging, so that awaiting this step awaits every earlier one.
            let before = try await previous?.value
            return try await commit(try staged.get(), before)
        }
        return try await previous?.value
    }

    /// The last step's output once every step has ended (`nil` when there was none), or the first failure.
    func finish() async throws -> Output? {
        try await last?.value
    }

    /// Returns once every step has ended, ignoring failures: after an error, no step goes on behind the caller.
    func settle() async {
        _ = try? await last?.value
    }
}
