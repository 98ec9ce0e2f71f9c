import SyncProtocol
import TableSyncStorage

/// What a store remembers of git between runs, in the machine-local cache (`.tablesync/git.json`):
///
/// - `syncedHead`: the commit `HEAD` named when the last push, pull or sync ended (after its commit, with
///   `--commit`). A later `HEAD` that is an ancestor of it is a checkout of history or a reset: its files and
///   journal are older than what the store has sent (``GitGuard``).
/// - `trees`: per table, the tree of `tables/<table>/` in `HEAD` whose record files the last push reconciled with
///   the stat index, or the store's own commit added only files the index or the journal knows
///   (``SyncContext/recordStoreCommit()``). When `HEAD`'s tree is still that one, no file git brought can have
///   been deleted unseen, and the scan asks git nothing more (``GitBaseline``).
///
/// - `purged`: the tables whose index `purge` emptied on purpose. An empty index otherwise means a lost cache, and
///   the scan lists the table's whole tree in `HEAD` to find files deleted meanwhile; after a purge, the files
///   `HEAD` still has are the purged records, no deletes, and only files added since the tree reconciled are looked
///   for.
///
/// Losing it (a lost cache, a fresh clone) costs one listing of each table's tree in `HEAD`, and no history check
/// until the next run ends.
struct GitState: Equatable, Sendable {
    var syncedHead: String?
    var trees: [String: String] = [:]
    var purged: Set<String> = []

    /// The state in `layout`'s cache; empty when there is none or it does not parse (it is a cache).
    static func load(layout: StoreLayout) -> GitState {
        guard let bytes = try? FileSystem.readFile(layout.gitStateFile), let value = try? JSONParser.parse(bytes) else {
            return GitState()
        }
        var state = GitState(syncedHead: value["syncedHead"]?.stringValue)
        for (table, tree) in value["trees"]?.objectValue ?? [:] {
            if let tree = tree.stringValue { state.trees[table] = tree }
        }
        state.purged = Set((value["purged"]?.arrayValue ?? []).compactMap(\.stringValue))
        return state
    }

    /// Writes the state durably.
    func save(layout: StoreLayout) throws {
        var members: [String: JSONValue] = ["trees": .object(trees.mapValues(JSONValue.string))]
        if let syncedHead { members["syncedHead"] = .string(syncedHead) }
        if !purged.isEmpty { members["purged"] = .array(purged.sorted().map(JSONValue.string)) }
        var batch = DurableFileBatch()
        batch.write(CanonicalJSON.encode(.object(members)), to: layout.gitStateFile)
        try batch.commit(temporaryDirectory: layout.temporaryDirectory)
    }
}
