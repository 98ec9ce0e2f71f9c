import SyncProtocol

/// Git's merge driver for a store's files (`tablesync merge-file %O %A %B %P`, set up by `tablesync git-setup`):
/// merges one file of a store from its base and the two sides, by what the file is.
///
/// - `tables/<table>/<id>.json`: property by property (``RecordMerge``);
/// - `queries.json`: query by query, keeping the older watermark (``QueriesMerge``);
/// - anything else, or a side that does not parse: only a change on one side is taken; changes on both sides
///   are left between conflict markers.
///
/// What cannot be settled is written between git's conflict markers, which `tablesync status` reports with both
/// sides; `journal.jsonl` is not merged here but by git's union merge (loading the journal folds what it joins).
public enum StoreFileMerge {
    /// The merge driver's name in `.gitattributes` and git config (`merge.tablesync.driver`).
    public static let driverName = "tablesync"

    /// The store's `.gitattributes` lines: the journal by git's union merge (its lines are independent
    /// operations, and loading folds what the union joins), record files and `queries.json` by this driver.
    public static let gitAttributeLines = [
        "journal.jsonl merge=union",
        "queries.json merge=\(driverName)",
        "tables/** merge=\(driverName)",
    ]

    /// The merged file.
    public struct Result: Sendable, Equatable {
        /// The merged bytes, with conflict markers where ``conflicts`` is not empty.
        public var bytes: [UInt8]
        /// What both sides changed differently: property names, query ids, or the whole file (`"*"`).
        public var conflicts: [String]
    }

    /// Merges `ours` and `theirs` from `base` (empty when the file is new on both sides) for the file at `path`
    /// (relative to the repository; only its last components matter).
    public static func merge(path: String, base: [UInt8], ours: [UInt8], theirs: [UInt8]) -> Result {
        if ours == theirs || base == theirs { return Result(bytes: ours, conflicts: []) }
        if base == ours { return Result(bytes: theirs, conflicts: []) }
        let components = path.split(separator: "/").map(String.init)
        if components.last == "queries.json", let merged = mergeQueries(base: base, ours: ours, theirs: theirs) {
            return merged
        }
        if components.count >= 3, components[components.count - 3] == "tables", components.last?.hasSuffix(".json") == true,
           let merged = mergeRecord(base: base, ours: ours, theirs: theirs) {
            return merged
        }
        let text = ConflictMarkers.render(ours: String(decoding: ours, as: UTF8.self), theirs: String(decoding: theirs, as: UTF8.self))
        return Result(bytes: Array(text.utf8), conflicts: ["*"])
    }

    private static func mergeRecord(base: [UInt8], ours: [UInt8], theirs: [UInt8]) -> Result? {
        func object(_ bytes: [UInt8]) -> [String: JSONValue]? { (try? JSONParser.parse(bytes))?.objectValue }
        guard let mine = object(ours), let other = object(theirs) else { return nil }
        let original = base.isEmpty ? nil : object(base)
        if !base.isEmpty && original == nil { return nil }
        let merged = RecordMerge.merge(base: original, ours: mine, theirs: other)
        if merged.conflicts.isEmpty { return Result(bytes: RecordFile.encode(merged.ours), conflicts: []) }
        let text = ConflictMarkers.render(ours: CanonicalJSON.string(.object(merged.ours)), theirs: CanonicalJSON.string(.object(merged.theirs)))
        return Result(bytes: Array(text.utf8), conflicts: merged.conflicts)
    }

    private static func mergeQueries(base: [UInt8], ours: [UInt8], theirs: [UInt8]) -> Result? {
        func registry(_ bytes: [UInt8]) -> QueryRegistry? { try? QueryRegistry.load(from: bytes, file: "queries.json") }
        guard let mine = registry(ours), let other = registry(theirs) else { return nil }
        let original = base.isEmpty ? nil : registry(base)
        if !base.isEmpty && original == nil { return nil }
        let merged = QueriesMerge.merge(base: original, ours: mine, theirs: other)
        if merged.conflicts.isEmpty { return Result(bytes: CanonicalJSON.encode(merged.ours.json), conflicts: []) }
        let text = ConflictMarkers.render(ours: CanonicalJSON.string(merged.ours.json), theirs: CanonicalJSON.string(merged.theirs.json))
        return Result(bytes: Array(text.utf8), conflicts: merged.conflicts)
    }
}
