import SyncProtocol
import TableSyncStorage

/// The conflict files of a store, `conflicts/<Table>/<record file name>`: one ``ConflictRecord`` per record whose
/// operation the server refused, until a person or a policy settles it.
struct ConflictStore: Sendable {
    let layout: StoreLayout

    /// The file of the conflict on `key`.
    func path(_ key: RecordKey) -> String {
        layout.conflictDirectory(key.table) + "/" + RecordFileName.fileName(for: key.id)
    }

    /// Writes `conflict` durably, replacing an earlier one on the same record.
    func write(_ conflict: ConflictRecord) throws {
        try FileSystem.createDirectory(layout.conflictDirectory(conflict.key.table))
        var batch = DurableFileBatch()
        batch.write(CanonicalJSON.encode(conflict.json), to: path(conflict.key))
        try batch.commit(temporaryDirectory: layout.temporaryDirectory)
    }

    /// Removes the conflict on `key` (and its table's directory once empty).
    func remove(_ key: RecordKey) throws {
        var batch = DurableFileBatch()
        batch.remove(path(key))
        try batch.commit(temporaryDirectory: layout.temporaryDirectory)
        FileSystem.removeEmptyDirectory(layout.conflictDirectory(key.table))
    }

    /// The records with a conflict file.
    func keys() throws -> [RecordKey] {
        var keys: [RecordKey] = []
        for (table, status) in try FileSystem.listDirectory(layout.conflictsDirectory) where status.isDirectory {
            for (name, _) in try FileSystem.listDirectory(layout.conflictDirectory(table)) {
                if let id = RecordFileName.id(forFileName: name) { keys.append(RecordKey(table: table, id: id)) }
            }
        }
        return keys.sorted()
    }

    /// Every conflict, by table and id.
    func all() throws -> [ConflictRecord] {
        try keys().map { key in
            let file = path(key)
            let relative = layout.relative(file)
            do {
                return try ConflictRecord(json: try JSONParser.parse(try FileSystem.readFile(file)), file: relative)
            } catch let error as JSONParseError {
                throw StoreError.invalidJSONFile(file: relative, error: error)
            }
        }
    }
}
