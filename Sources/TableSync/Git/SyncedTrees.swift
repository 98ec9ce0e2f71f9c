import SyncProtocol
import TableSyncStorage

/// `synced-trees.jsonl`, committed with the store: per table, the tree of `tables/<table>/` (git's id, as a commit of
/// those files names it) in which every file is a copy of the server's record as the store synced it. One JSON
/// object a line, `{"table":"todo","tree":"<id>"}`.
///
/// A push, pull or sync of a store in git writes it when it ends (``SyncContext/recordSyncedTrees()``), from the
/// stat index: the tree its entries' bytes make (``StatIndex/syncedTreeID()``). A scan without its index (a clone,
/// a lost `.tablesync/`) whose table, as git's index stages it, makes one of these trees takes git's word for the
/// files whose `stat` git vouches for (``GitIndexFile``) instead of reading them.
///
/// A tree id names the bytes of every file in it, so a line vouches for exactly the files that were synced: an edit,
/// a merge, a checkout of another commit all make another tree, and the line then says nothing. The store's
/// `.gitattributes` merges the file by union: lines from both sides of a merge are each true of their own tree.
enum SyncedTrees {
    /// The `.gitattributes` line that merges the file by union.
    static let attributeLine = "\(StoreLayout.syncedTreesFileName) merge=union"

    /// The trees the file names, by table; none when there is no file. A line that is not one this version
    /// writes (a conflict marker, a damaged line) is passed over: it vouches for nothing.
    static func load(layout: StoreLayout) -> [String: Set<String>] {
        guard let bytes = try? FileSystem.readFile(layout.syncedTreesFile) else { return [:] }
        var trees: [String: Set<String>] = [:]
        for line in bytes.split(separator: UInt8(ascii: "\n")) {
            guard let object = try? JSONParser.parse(Array(line)), let table = object["table"]?.stringValue,
                let tree = object["tree"]?.stringValue, GitObjectName.isValid(tree)
            else { continue }
            trees[table, default: []].insert(tree)
        }
        return trees
    }

    /// The file's bytes for `trees`, by table, in table then tree order.
    static func encode(_ trees: [String: Set<String>]) -> [UInt8] {
        var bytes: [UInt8] = []
        for (table, tree) in trees.flatMap({ table, trees in trees.map { (table, $0) } }).sorted(by: <) {
            let line = JSONValue.object(["table": .string(table), "tree": .string(tree)])
            CanonicalJSON.append(line, style: .compact, to: &bytes)
            bytes.append(UInt8(ascii: "\n"))
        }
        return bytes
    }

    /// Writes the file for `trees` when it holds anything else, durably; removes it when `trees` is empty. The
    /// store's `.gitattributes`, when there is one, gains the union line it lacks.
    static func save(_ trees: [String: Set<String>], layout: StoreLayout) throws {
        let bytes = encode(trees)
        let path = layout.syncedTreesFile
        if (try? FileSystem.readFile(path)) == bytes || (bytes.isEmpty && !FileSystem.exists(path)) { return }
        if bytes.isEmpty {
            try FileSystem.removeFile(path)
            return
        }
        let attributes = layout.root + "/" + StoreLayout.attributesFileName
        if FileSystem.exists(attributes) {
            _ = try StoreGitFiles.addMissingLines([attributeLine], header: "", toFileAt: attributes)
        }
        var batch = DurableFileBatch()
        batch.write(bytes, to: path)
        try batch.commit(temporaryDirectory: layout.temporaryDirectory)
    }
}
