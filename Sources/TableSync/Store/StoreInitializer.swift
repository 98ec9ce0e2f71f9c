import SyncProtocol
import TableSyncStorage

/// Creates a new store directory (DESIGN §2): settings, queries (one pulling each table, unless asked not to),
/// an empty journal, `tables/`, the machine-local `.tablesync/` cache (which ignores itself in git) and the store's
/// `.gitattributes`.
enum StoreInitializer {
    /// The store's `.gitattributes` (``StoreFileMerge/gitAttributeLines``). Without the driver's git config a
    /// clone merges record files and `queries.json` as text.
    static let gitAttributes =
        "# Written by tablesync: how git merges this store's files (each clone runs `tablesync git-setup` once).\n"
        + StoreFileMerge.gitAttributeLines.joined(separator: "\n") + "\n"

    /// Creates the store; with `queryPerTable`, `queries.json` gets one query per table, named after it, that
    /// pulls the whole table.
    static func initialize(layout: StoreLayout, settings: StoreSettings, queryPerTable: Bool) throws {
        try settings.validate()
        if FileSystem.exists(layout.settingsFile) { throw StoreError.alreadyInitialized(path: layout.root) }
        try FileSystem.createDirectory(layout.root)
        try FileSystem.createDirectory(layout.temporaryDirectory)
        try FileSystem.createDirectory(layout.indexDirectory)
        for table in settings.tables { try FileSystem.createDirectory(layout.tableDirectory(table)) }
        var batch = DurableFileBatch()
        batch.write(CacheDirectory.gitignore, to: layout.cacheDirectory + "/.gitignore")
        batch.write(Array(gitAttributes.utf8), to: layout.root + "/.gitattributes")
        var queries = QueryRegistry()
        if queryPerTable {
            for table in settings.tables { queries.queries[table] = PullQuery(id: table, table: table) }
        }
        batch.write(CanonicalJSON.encode(queries.json), to: layout.queriesFile)
        batch.write([], to: layout.journalFile)
        // Written last: a directory with tablesync.json is a store.
        try batch.commit(temporaryDirectory: layout.temporaryDirectory)
        var settingsBatch = DurableFileBatch()
        settingsBatch.write(CanonicalJSON.encode(settings.json), to: layout.settingsFile)
        try settingsBatch.commit(temporaryDirectory: layout.temporaryDirectory)
    }
}
