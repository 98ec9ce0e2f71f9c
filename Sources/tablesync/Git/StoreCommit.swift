import TableSync

/// The commit of the store's own files that `sync --commit` makes after its sync, and `watch --commit` after a quiet
/// period: only the store's paths, never a file the sync could not read (one holding conflict markers, a broken
/// record) nor an editor's leftover, and the commit then counts as the store's last sync.
enum StoreCommit {
    /// Commits the store's files with the message `message` makes of the paths the commit changes, leaving out
    /// `leftOut` (store-relative paths of files the sync could not read, and leftovers); returns the commit's subject,
    /// or `nil` when nothing changed.
    /// - Throws: ``CommitFailed`` when git has no identity to commit with; what git or the store throws.
    static func commit(
        context: SyncContext, repository: GitRepository, message: ([String]) -> String, excluding leftOut: [String]
    ) async throws -> String? {
        if let problem = repository.commitIdentityProblem() { throw CommitFailed(reason: problem) }
        guard
            let made = try repository.commitStore(
                paths: StoreLayout.versionedPaths, excluding: leftOut, message: message)
        else { return nil }
        try await context.recordStoreCommit()
        return String(made.prefix { $0 != "\n" })
    }
}

/// The sync was done but its commit could not be made.
struct CommitFailed: Error, CustomStringConvertible {
    var reason: String
    var description: String { reason }
}
