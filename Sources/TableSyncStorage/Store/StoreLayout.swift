/// Where everything lives in a store directory (DESIGN §2). The only place that spells these paths.
package struct StoreLayout: Sendable, Equatable {
    /// The store's root directory, absolute.
    package let root: String

    /// The layout of the store at `root` (a trailing slash is dropped).
    package init(root: String) {
        var root = root
        while root.count > 1 && root.hasSuffix("/") { root.removeLast() }
        self.root = root
    }

    /// Settings edited by people: `tablesync.json`.
    package var settingsFile: String { root + "/" + Self.settingsFileName }
    /// Query ids and their watermarks: `queries.json`.
    package var queriesFile: String { root + "/" + Self.queriesFileName }
    /// Pending operations: `journal.jsonl`.
    package var journalFile: String { root + "/" + Self.journalFileName }
    /// Acknowledgements of operations sent that travelled through git: `sent.jsonl` (``Acknowledgements``).
    package var acknowledgementsFile: String { root + "/" + Self.acknowledgementsFileName }
    /// The ids of every operation this clone sent (``Acknowledgements``).
    package var localAcknowledgementsFile: String { cacheDirectory + "/sent" }
    /// The hashes of the record files whose content the server applied (machine-local).
    package var appliedFilesFile: String { cacheDirectory + "/applied-files" }
    /// `tables/`.
    package var tablesDirectory: String { root + "/tables" }
    /// The committed trees of tables found wholly synced (``SyncedTrees``).
    package var syncedTreesFile: String { root + "/" + Self.syncedTreesFileName }
    /// `conflicts/`.
    package var conflictsDirectory: String { root + "/conflicts" }
    /// `.tablesync/`, the machine-local cache that git ignores.
    package var cacheDirectory: String { root + "/" + Self.cacheDirectoryName }
    /// Where temporary files are written before they are renamed into place.
    package var temporaryDirectory: String { cacheDirectory + "/tmp" }
    /// Spare files that record writes write over instead of creating files (``SpareFiles``).
    package var sparesDirectory: String { cacheDirectory + "/spares" }
    /// The lock file held by the run that writes to the store.
    var lockFile: String { cacheDirectory + "/lock" }
    /// The lock a running `tablesync watch` holds for its whole life, so that a second one on the store is refused.
    package var watchLockFile: String { cacheDirectory + "/watch.lock" }
    /// The stat index of each table's files as last synced.
    package var indexDirectory: String { cacheDirectory + "/index" }
    /// Machine-local counters (the next journal sequence number).
    package var stateFile: String { cacheDirectory + "/state.json" }
    /// Journal lines settled during a push whose journal is not rewritten yet (docs/store.md, the settled log).
    package var settledFile: String { cacheDirectory + "/settled.jsonl" }
    /// The protocol version learned from the server when `tablesync.json` pins none.
    package var learnedProtocolFile: String { cacheDirectory + "/protocol.json" }
    /// What the store remembers of git between runs (``GitState``).
    package var gitStateFile: String { cacheDirectory + "/git.json" }
    /// What a synced write is about to record in the index; present only while it runs.
    package var intentFile: String { cacheDirectory + "/intent" }

    /// `tables/<table>/`.
    package func tableDirectory(_ table: String) -> String { tablesDirectory + "/" + table }
    /// The record file of `id` in `table`.
    package func recordFile(table: String, id: String) -> String {
        tableDirectory(table) + "/" + RecordFileName.fileName(for: id)
    }
    /// `conflicts/<table>/`.
    package func conflictDirectory(_ table: String) -> String { conflictsDirectory + "/" + table }
    /// The stat index file of `table`.
    func indexFile(_ table: String) -> String { indexDirectory + "/" + table + ".index" }

    /// `path` relative to the root, for messages.
    package func relative(_ path: String) -> String {
        path.hasPrefix(root + "/") ? String(path.dropFirst(root.count + 1)) : path
    }

    /// The settings file's name.
    package static let settingsFileName = "tablesync.json"
    /// The queries file's name.
    package static let queriesFileName = "queries.json"
    /// The journal file's name.
    package static let journalFileName = "journal.jsonl"
    /// The committed acknowledgements' file name.
    package static let acknowledgementsFileName = "sent.jsonl"
    /// The synced trees' file name.
    package static let syncedTreesFileName = "synced-trees.jsonl"
    /// The machine-local cache's directory name.
    package static let cacheDirectoryName = ".tablesync"

    /// What of a store belongs in version control, relative to its root: everything but `.tablesync/`.
    package static let versionedPaths = [
        settingsFileName, queriesFileName, journalFileName, acknowledgementsFileName, syncedTreesFileName, "tables",
        "conflicts", attributesFileName, ignoreFileName
    ]

    /// The store's `.gitattributes`: how git merges its files.
    package static let attributesFileName = ".gitattributes"
    /// The store's `.gitignore`: what editors and merge tools leave beside record files.
    package static let ignoreFileName = ".gitignore"
}
