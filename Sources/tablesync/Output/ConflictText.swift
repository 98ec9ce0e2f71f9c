import SyncProtocol
import TableSync

/// How `tablesync conflicts` shows one conflict in text: a line naming the record, what was refused and why, then
/// the two sides as a property-by-property diff, the server's copy (`-`) against the local one (`+`), as
/// `git diff` would show the change the local copy makes to the server's.
enum ConflictText {
    /// The longest value shown; a longer one is cut and ends with `…` (`conflicts --json` has it whole).
    static let longestValue = 120

    /// The lines for `conflict`, the first unindented.
    static func lines(for conflict: ConflictRecord) -> [String] {
        var lines = ["\(conflict.key)\t\(conflict.summary): \(conflict.reason)"]
        switch (conflict.server, conflict.local) {
        case (nil, nil):
            break
        case (nil, .some):
            guard conflict.isVersionConflict else { break }
            lines.append("    the server has no such record; the local copy would bring it back")
        case (.some(let server), nil):
            lines.append("    --- server\(versionNote(server))")
            lines.append("    +++ local: deleted")
        case (.some(let server), .some(let local)):
            lines.append("    --- server\(versionNote(server))")
            lines.append("    +++ local")
            let differences = PropertyDifference.between(server: server, local: local)
            if differences.isEmpty {
                lines.append("    (the same content; only the versions differ)")
            }
            for difference in differences {
                if let value = difference.server { lines.append("    - \(difference.name): \(shown(value))") }
                if let value = difference.local { lines.append("    + \(difference.name): \(shown(value))") }
            }
        }
        return lines
    }

    /// ` (version "…", updated …)` for the server's copy, or nothing when it carries neither.
    static func versionNote(_ server: [String: JSONValue]) -> String {
        let parts = [
            server[SystemProperty.version]?.stringValue.map { "version \"\($0)\"" },
            server[SystemProperty.updatedAt]?.stringValue.map { "updated \($0)" }
        ].compactMap { $0 }
        return parts.isEmpty ? "" : " (\(parts.joined(separator: ", ")))"
    }

    /// `value` as one line of compact JSON, cut at ``longestValue`` characters.
    static func shown(_ value: JSONValue) -> String {
        let text = CanonicalJSON.string(value, style: .compact)
        guard text.count > longestValue else { return text }
        return String(text.prefix(longestValue - 1)) + "…"
    }
}
