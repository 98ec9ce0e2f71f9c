import SyncProtocol
import TableSyncStorage

/// Creates a new store directory (DESIGN §2): settings, queries (one pulling each table, unless asked not to),
/// an empty journal, `tables/`, the machine-local `.tablesync/` cache (which ignores itself in git) and the store's
/// `.gitattributes` and `.gitignore` (``StoreGitFiles``).
enum StoreInitializer {
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
        batch.write(Array(StoreGitFiles.initialAttributes.utf8), to: layout.root + "/" + StoreLayout.attributesFileName)
        batch.write(Array(StoreGitFiles.initialIgnore.utf8), to: layout.root + "/" + StoreLayout.ignoreFileName)
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
