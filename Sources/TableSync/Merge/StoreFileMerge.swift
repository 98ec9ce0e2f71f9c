import SyncProtocol
import TableSyncStorage

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
package enum StoreFileMerge {
    /// The merge driver's name in `.gitattributes` and git config (`merge.tablesync.driver`).
    package static let driverName = "tablesync"

    /// The store's `.gitattributes` lines: the journal, the acknowledgements and the synced trees by git's union
    /// merge (their lines are independent, and loading folds what the union joins), record files and `queries.json`
    /// by this driver.
    package static let gitAttributeLines = [
        "journal.jsonl merge=union",
        "sent.jsonl merge=union",
        SyncedTrees.attributeLine,
        "queries.json merge=\(driverName)",
        "tables/** merge=\(driverName)"
    ]

    /// The merged file.
    package struct Result: Sendable, Equatable {
        /// The merged bytes, with conflict markers where ``conflicts`` is not empty.
        package var bytes: [UInt8]
        /// What both sides changed differently: property names, query ids, or the whole file (`"*"`).
        package var conflicts: [String]
        /// Why the file was not merged at all, when git handed over files of different records.
        package var refusal: String?
    }

    /// Merges `ours` and `theirs` from `base` (empty when the file is new on both sides) for the file at `path`
    /// (relative to the repository; only its last components matter).
    package static func merge(path: String, base: [UInt8], ours: [UInt8], theirs: [UInt8]) -> Result {
        if ours == theirs || base == theirs { return Result(bytes: ours, conflicts: [], refusal: nil) }
        if base == ours { return Result(bytes: theirs, conflicts: [], refusal: nil) }
        let components = path.split(separator: "/").map(String.init)
        if components.last == "queries.json", let merged = mergeQueries(base: base, ours: ours, theirs: theirs) {
            return merged
        }
        if components.count >= 3, components[components.count - 3] == "tables",
            components.last?.hasSuffix(".json") == true,
            let merged = mergeRecord(path: path, base: base, ours: ours, theirs: theirs)
        {
            return merged
        }
        let text = ConflictMarkers.render(
            ours: String(decoding: ours, as: UTF8.self), theirs: String(decoding: theirs, as: UTF8.self))
        return Result(bytes: Array(text.utf8), conflicts: ["*"], refusal: nil)
    }

    private static func mergeRecord(path: String, base: [UInt8], ours: [UInt8], theirs: [UInt8]) -> Result? {
        func object(_ bytes: [UInt8]) -> [String: JSONValue]? {
            (try? JSONParser.parse(RecordFile.jsonText(bytes).text))?.objectValue
        }
        guard let mine = object(ours), let other = object(theirs) else { return nil }
        let original = base.isEmpty ? nil : object(base)
        if !base.isEmpty && original == nil { return nil }
        // Git's rename detection pairs files whose contents look alike (merge-ort does so whatever `merge.renames`
        // says); two record files are never one record, and merging them would carry one record's change into the
        // other.
        let fileName = String(path.split(separator: "/").last ?? "")
        let named = RecordFileName.id(forFileName: fileName)
        func id(_ record: [String: JSONValue]) -> String { record[SystemProperty.id]?.stringValue ?? named ?? "" }
        if Set([original, mine, other].compactMap { $0 }.map(id)).count > 1 {
            let text = ConflictMarkers.render(
                ours: String(decoding: ours, as: UTF8.self), theirs: String(decoding: theirs, as: UTF8.self))
            let directory = path.split(separator: "/").dropLast().joined(separator: "/")
            let others = Set([original, mine, other].compactMap { $0 }.map(id)).subtracting([named ?? ""]).sorted()
            let otherFiles = others.map {
                (directory.isEmpty ? "" : directory + "/") + RecordFileName.fileName(for: $0)
            }
            return Result(
                bytes: Array(text.utf8), conflicts: [SystemProperty.id],
                refusal: """
                    git paired the files of different records as one renamed file (ours is record "\(id(mine))", \
                    theirs is \
                    record "\(id(other))"); merging them would carry one record's change into the other, so the file \
                    is left \
                    conflicted. Settle them as separate records: keep \(path) as the side that holds record \
                    "\(named ?? "")" has it (git checkout --ours or --theirs -- \(path)), bring back \
                    \(otherFiles.joined(separator: ", ")) from the commit that changed it if it is to stay \
                    (git checkout <commit> -- <file>), and git add them
                    """)
        }
        let merged = RecordMerge.merge(
            base: original, ours: mine, theirs: other,
            oursIntact: SyncedMark.isIntact(mine, bytes: ours))
        if merged.conflicts.isEmpty {
            return Result(bytes: RecordFile.encode(merged.ours), conflicts: [], refusal: nil)
        }
        let text = ConflictMarkers.render(
            ours: CanonicalJSON.string(.object(merged.ours)), theirs: CanonicalJSON.string(.object(merged.theirs)))
        return Result(bytes: Array(text.utf8), conflicts: merged.conflicts, refusal: nil)
    }

    private static func mergeQueries(base: [UInt8], ours: [UInt8], theirs: [UInt8]) -> Result? {
        func registry(_ bytes: [UInt8]) -> QueryRegistry? { try? QueryRegistry.load(from: bytes, file: "queries.json") }
        guard let mine = registry(ours), let other = registry(theirs) else { return nil }
        let original = base.isEmpty ? nil : registry(base)
        if !base.isEmpty && original == nil { return nil }
        let merged = QueriesMerge.merge(base: original, ours: mine, theirs: other)
        if merged.conflicts.isEmpty {
            return Result(bytes: CanonicalJSON.encode(merged.ours.json), conflicts: [], refusal: nil)
        }
        let text = ConflictMarkers.render(
            ours: CanonicalJSON.string(merged.ours.json), theirs: CanonicalJSON.string(merged.theirs.json))
        return Result(bytes: Array(text.utf8), conflicts: merged.conflicts, refusal: nil)
    }
}
