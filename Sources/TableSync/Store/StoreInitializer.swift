import SyncProtocol

/// Creates a new store directory (DESIGN §2): settings, empty queries and journal, `tables/`, the
/// machine-local `.tablesync/` cache (which ignores itself in git) and a suggested `.gitattributes`.
enum StoreInitializer {
    /// The `.gitattributes` suggestion: the journal is a list of independent lines, so git's union merge
    /// joins two branches' pending operations (loading folds duplicates per record).
    static let gitAttributes = """
        # Suggested by TableSync: pending operations from two branches are joined line by line.
        journal.jsonl merge=union

        """

    static func initialize(layout: StoreLayout, settings: StoreSettings) throws {
        try settings.validate()
        if FileSystem.exists(layout.settingsFile) { throw StoreError.alreadyInitialized(path: layout.root) }
        try FileSystem.createDirectory(layout.root)
        try FileSystem.createDirectory(layout.temporaryDirectory)
        try FileSystem.createDirectory(layout.indexDirectory)
        for table in settings.tables { try FileSystem.createDirectory(layout.tableDirectory(table)) }
        var batch = DurableFileBatch()
        batch.write(Array("*\n".utf8), to: layout.cacheDirectory + "/.gitignore")
        batch.write(Array(gitAttributes.utf8), to: layout.root + "/.gitattributes")
        batch.write(CanonicalJSON.encode(QueryRegistry().json), to: layout.queriesFile)
        batch.write([], to: layout.journalFile)
        // Written last: a directory with tablesync.json is a store.
        try batch.commit(temporaryDirectory: layout.temporaryDirectory)
        var settingsBatch = DurableFileBatch()
        settingsBatch.write(CanonicalJSON.encode(settings.json), to: layout.settingsFile)
        try settingsBatch.commit(temporaryDirectory: layout.temporaryDirectory)
    }
}
