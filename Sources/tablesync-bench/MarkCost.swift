import Foundation
import SyncProtocol
import TableSync

/// What the synced marks (`"@synced"` in every record file written from the server) cost git: the objects a commit
/// of a set of changed record files adds, with the files as they are and with their marks taken out (what the same
/// files would cost without a base committed in them). Each side is a repository of its own holding only those
/// files, so that the tree of the whole table, which every commit rewrites either way, does not drown the difference.
enum MarkCost {
    /// Kilobytes git added: as loose objects (zlib, one each) and in a pack made again with `repack -adf` (deltas).
    struct Size {
        var loose: Double
        var packed: Double
    }

    /// The growth with the marks and without them.
    struct Growth {
        var marked: Size
        var unmarked: Size
    }

    /// The record files `names` of `table` in `store`, as they are now.
    static func files(store: String, table: String, names: [String]) throws -> [(name: String, bytes: [UInt8])] {
        try names.map { name in
            let path = "\(store)/tables/\(table)/\(name)"
            guard let bytes = FileManager.default.contents(atPath: path) else {
                throw BenchError(what: "mark cost", detail: "cannot read \(path)")
            }
            return (name, Array(bytes))
        }
    }

    /// Commits `before`, then `after`, in a repository under `scratch`, with marks and without; the growth of the
    /// second commit each way.
    static func growth(
        before: [(name: String, bytes: [UInt8])], after: [(name: String, bytes: [UInt8])], scratch: String,
        identity: [String]
    ) throws -> Growth {
        let marked = try measure(before: before, after: after, directory: scratch + "/marked", identity: identity)
        let unmarked = try measure(
            before: try unmarkedFiles(before), after: try unmarkedFiles(after), directory: scratch + "/unmarked",
            identity: identity)
        try ChildProcess.run("/bin/rm", ["-rf", scratch])
        return Growth(marked: marked, unmarked: unmarked)
    }

    /// The files with their `"@synced"` property taken out, written canonically as before.
    private static func unmarkedFiles(
        _ files: [(name: String, bytes: [UInt8])]
    ) throws -> [(name: String, bytes: [UInt8])] {
        try files.map { file in
            guard var record = try JSONParser.parse(file.bytes).objectValue else {
                throw BenchError(what: "mark cost", detail: "\(file.name) is no record")
            }
            record[SyncedMark.property] = nil
            return (file.name, CanonicalJSON.encode(.object(record)))
        }
    }

    private static func measure(
        before: [(name: String, bytes: [UInt8])], after: [(name: String, bytes: [UInt8])], directory: String,
        identity: [String]
    ) throws -> Size {
        try ChildProcess.run("/bin/rm", ["-rf", directory])
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        func git(_ arguments: [String]) throws -> String {
            try ChildProcess.run("/usr/bin/env", ["git", "-C", directory, "-c", "gc.auto=0"] + arguments).standardOutput
        }
        func write(_ files: [(name: String, bytes: [UInt8])]) throws {
            for file in files { try Data(file.bytes).write(to: URL(fileURLWithPath: directory + "/" + file.name)) }
        }
        func kilobytes(_ field: String) throws -> Double {
            let line = try git(["count-objects", "-v"]).split(separator: "\n").first { $0.hasPrefix(field + ": ") }
            return Double(line?.split(separator: " ").last ?? "") ?? 0
        }
        _ = try git(["init", "-q"])
        try write(before)
        _ = try git(["add", "-A"])
        _ = try git(identity + ["commit", "-q", "-m", "before"])
        _ = try git(["repack", "-adfq"])
        let packedBefore = try kilobytes("size-pack")
        try write(after)
        _ = try git(["add", "-A"])
        _ = try git(identity + ["commit", "-q", "-m", "after"])
        let loose = try kilobytes("size")
        _ = try git(["repack", "-adfq"])
        return Size(loose: loose, packed: try kilobytes("size-pack") - packedBefore)
    }
}
