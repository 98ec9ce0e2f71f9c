/// The files editors and merge tools leave beside the files they change: backups (`r.json~`, `r.json.bak`), a
/// merge's leftovers (`r.json.orig`, `r.json.rej`, git mergetool's `r_BASE_1234.json`), swap, lock and probe files
/// (`r.json.swp`, `#r.json#`, vim's `4913`). They are no records: a scan ignores them with a notice instead of
/// reporting them as broken, and `git-setup` keeps them out of commits (``gitIgnorePatterns``). Names starting with a
/// dot (`.r.json.swp`, emacs' `.#r.json`) are hidden files, which a scan ignores already.
///
/// A pure rule on names, tested alone:
///
/// | name | leftover |
/// |---|---|
/// | ends in `~`, `.orig`, `.rej`, `.bak`, `.swp`, `.swo`, `.swn`, `.tmp`, `___jb_tmp___` or `___jb_old___` | yes |
/// | `#…#` | yes |
/// | `4913` | yes |
/// | `<stem>_BASE_<digits>.json` (also `LOCAL`, `REMOTE`, `BACKUP`) beside a record file `<stem>.json` | yes |
/// | the same without `<stem>.json` beside it | no: a record whose id happens to end so |
/// | anything else | no |
package enum LeftoverFileName {
    /// The endings of backup, swap and temporary files.
    static let suffixes = ["~", ".orig", ".rej", ".bak", ".swp", ".swo", ".swn", ".tmp", "___jb_tmp___", "___jb_old___"]
    /// The roles git mergetool writes each side of a merge under.
    static let mergeToolRoles = ["BASE", "LOCAL", "REMOTE", "BACKUP"]
    /// The name vim writes and removes to probe whether a directory is writable.
    static let vimProbe = "4913"

    /// Whether the file `name` is a leftover, given whether a record file of another name is beside it.
    package static func isLeftover(_ name: String, besideRecordFile: (String) -> Bool) -> Bool {
        if !name.hasSuffix(RecordFileName.fileExtension) { return isLeftover(name) }
        return mergeToolOriginal(of: name).map(besideRecordFile) ?? false
    }

    /// Whether `name`, which does not end in `.json`, is a leftover by its name alone.
    package static func isLeftover(_ name: String) -> Bool {
        if name == vimProbe { return true }
        if name.count > 2, name.hasPrefix("#"), name.hasSuffix("#") { return true }
        return suffixes.contains { name.hasSuffix($0) }
    }

    /// For a name git mergetool gives one side of a merge (`r_BASE_1234.json`), the record file it was made from
    /// (`r.json`); `nil` for any other name. The copy is a leftover only when that file is there too.
    package static func mergeToolOriginal(of name: String) -> String? {
        let fileExtension = RecordFileName.fileExtension
        guard name.hasSuffix(fileExtension) else { return nil }
        let base = name.dropLast(fileExtension.count)
        guard let digitsStart = base.lastIndex(of: "_") else { return nil }
        let digits = base[base.index(after: digitsStart)...]
        guard !digits.isEmpty, digits.allSatisfy(\.isASCII), digits.allSatisfy(\.isNumber) else { return nil }
        let withRole = base[..<digitsStart]
        for role in mergeToolRoles where withRole.hasSuffix("_" + role) {
            let stem = withRole.dropLast(role.count + 1)
            return stem.isEmpty ? nil : stem + fileExtension
        }
        return nil
    }

    /// Whether the bytes of a listed name may be a mergetool copy (``mergeToolOriginal(of:)``): a cheap test on
    /// every record file's name, so that only the rare candidate becomes a `String`.
    package static func mayBeMergeToolCopy(_ name: UnsafeBufferPointer<UInt8>) -> Bool {
        name.contains(UInt8(ascii: "_"))
    }

    /// What `status` and `verify` say of a leftover.
    package static let notice =
        "left by an editor or merge tool: ignored, never sent, never committed by tablesync (remove it when done)"

    /// The patterns, relative to a table's directory, that keep leftovers out of git (`git-setup` writes them into
    /// the store's `.gitignore`). Mergetool copies are left out: their names can be a record's, and a record file
    /// that git ignored would never be committed; a commit of the store leaves them out by name instead.
    package static var gitIgnorePatterns: [String] {
        suffixes.map { "*" + $0 } + ["#*#", ".#*", ".*.sw?", vimProbe]
    }
}
