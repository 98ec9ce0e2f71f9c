import Foundation
import TableSyncStorage

/// The store's own git files: `.gitattributes` (how git merges the store's files, ``StoreFileMerge``) and
/// `.gitignore` (the leftovers of editors and merge tools, ``LeftoverFileName``), with the lines `init` writes and
/// `git-setup` adds when they are missing.
package enum StoreGitFiles {
    /// The lines of the store's `.gitattributes`.
    package static var attributeLines: [String] { StoreFileMerge.gitAttributeLines }

    /// The lines of the store's `.gitignore`: each leftover pattern, in every table's directory.
    package static var ignoreLines: [String] { LeftoverFileName.gitIgnorePatterns.map { "tables/*/" + $0 } }

    /// Of `wanted`, the lines `existing` lacks. Lines are compared without surrounding spaces and whatever their
    /// ending: a clone under `core.autocrlf=true` holds the same lines with CRLF.
    package static func missingLines(_ wanted: [String], in existing: String) -> [String] {
        let present = Set(existing.split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) })
        return wanted.filter { !present.contains($0) }
    }

    /// `existing` with `lines` appended, in the line ending `existing` uses (CRLF when it holds one).
    package static func appending(_ lines: [String], to existing: String) -> String {
        let ending = existing.contains("\r\n") ? "\r\n" : "\n"
        // By bytes: "\r\n" is one Character, which `hasSuffix("\n")` does not match.
        let separator = existing.isEmpty || existing.utf8.last == UInt8(ascii: "\n") ? "" : ending
        return existing + separator + lines.map { $0 + ending }.joined()
    }

    /// Adds to the store's `.gitattributes` and `.gitignore` the lines they lack; returns the lines added, by file
    /// name.
    package static func addMissingLines(storeRoot: String) throws -> [(file: String, lines: [String])] {
        let files = [
            (StoreLayout.attributesFileName, attributeLines, attributesHeader),
            (StoreLayout.ignoreFileName, ignoreLines, ignoreHeader)
        ]
        return try files.compactMap { name, wanted, header in
            let added = try addMissingLines(wanted, header: header, toFileAt: storeRoot + "/" + name)
            return added.isEmpty ? nil : (name, added)
        }
    }

    /// Adds to the file at `path` the lines of `wanted` it lacks, after `header` when the file is new; returns the
    /// lines added.
    static func addMissingLines(_ wanted: [String], header: String, toFileAt path: String) throws -> [String] {
        let existing = (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
        let missing = missingLines(wanted, in: existing)
        guard !missing.isEmpty else { return [] }
        let start = existing.isEmpty ? header + "\n" : existing
        try Data(appending(missing, to: start).utf8).write(to: URL(fileURLWithPath: path), options: .atomic)
        return missing
    }

    /// The header `init` writes above the `.gitattributes` lines.
    static let attributesHeader =
        "# Written by tablesync: how git merges this store's files (each clone runs `tablesync git-setup` once)."
    /// The header above the `.gitignore` lines.
    static let ignoreHeader = "# Written by tablesync: what editors and merge tools leave beside record files."

    /// The store's `.gitattributes` as `init` writes it.
    static var initialAttributes: String { appending(attributeLines, to: attributesHeader + "\n") }
    /// The store's `.gitignore` as `init` writes it.
    static var initialIgnore: String { appending(ignoreLines, to: ignoreHeader + "\n") }
}
