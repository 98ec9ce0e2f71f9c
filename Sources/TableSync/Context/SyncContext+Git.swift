import SyncProtocol

/// The store's git repository, as the context's scans, pushes and commits see it.
extension SyncContext {
    /// The git work tree the store lives in, looked up once per context; `nil` outside git.
    package func gitRepository() -> GitRepository? {
        if let known = gitLookup { return known }
        let found = GitRepository.containing(store: layout.root)
        gitLookup = .some(found)
        return found
    }

    /// What `HEAD` says of the store's tables now, when the store is in git.
    func gitBaseline() throws -> GitBaseline? {
        guard let repository = gitRepository() else { return nil }
        return try GitBaseline.read(repository: repository, layout: layout, tables: settings.tables)
    }

    /// Remembers the commit `HEAD` names now as the one of the store's last sync (``GitState/syncedHead``): a
    /// later `HEAD` behind it is refused (``GitGuard``). A push, pull or sync does it when it ends; `sync --commit`
    /// again after its commit.
    package func recordSyncedHead() throws {
        guard let repository = gitRepository() else { return }
        let head = try repository.run(["rev-parse", "-q", "--verify", "HEAD"], allowing: [1]).text
        guard GitObjectName.isValid(head) else { return }
        var state = GitState.load(layout: layout)
        guard state.syncedHead != head else { return }
        state.syncedHead = head
        try state.save(layout: layout)
    }

    /// Runs `operation` (a push, a pull, a sync), then remembers `HEAD` as the last sync's commit, whether the
    /// operation succeeds or fails: what it sent was sent from this commit.
    func recordingSyncedHead<Result: Sendable>(_ operation: () async throws -> Result) async throws -> Result {
        do {
            let result = try await operation()
            try recordSyncedHead()
            return result
        } catch {
            try? recordSyncedHead()
            throw error
        }
    }
}
