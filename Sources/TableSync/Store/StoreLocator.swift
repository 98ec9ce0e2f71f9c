/// Finds the store a command is about: the given directory or, like git, the nearest parent holding
/// `tablesync.json`.
enum StoreLocator {
    /// The root of the store containing `directory`, or ``StoreError/notAStore(path:)``.
    static func locate(from directory: String) throws -> StoreLayout {
        var candidate = absolute(directory)
        while true {
            let layout = StoreLayout(root: candidate)
            if FileSystem.exists(layout.settingsFile) { return layout }
            let parent = FileSystem.parentDirectory(of: candidate)
            if parent == candidate || candidate == "/" { throw StoreError.notAStore(path: absolute(directory)) }
            candidate = parent
        }
    }

    /// `path` made absolute against the current directory, without `.` components.
    static func absolute(_ path: String) -> String {
        var full = path
        if !path.hasPrefix("/") {
            full = currentDirectory() + "/" + path
        }
        var parts: [Substring] = []
        for part in full.split(separator: "/") {
            switch part {
            case ".": continue
            case "..": if !parts.isEmpty { parts.removeLast() }
            default: parts.append(part)
            }
        }
        return "/" + parts.joined(separator: "/")
    }

    private static func currentDirectory() -> String {
        var buffer = [CChar](repeating: 0, count: 4096)
        guard getcwd(&buffer, buffer.count) != nil else { return "/" }
        let bytes = buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }
        return String(decoding: bytes, as: UTF8.self)
    }
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
import TableSyncStorage
#endif
