import ArgumentParser
import TableSync

/// `tablesync resolve`'s choice as one flag of three, `--keep-local`, `--take-server` or `--discard`: the argument
/// parser requires exactly one and refuses two.
///
/// The conformance lives here because the library does not depend on the argument parser. It takes no
/// `@retroactive`: Swift 6.3 refuses that attribute for a type declared in the same package, and does not warn.
/// The flag names come from the case names (`keepLocal` → `--keep-local`), the same words as the raw values.
extension ConflictResolution: EnumerableFlag {
    /// What each choice does, for `resolve --help`.
    public static func help(for value: ConflictResolution) -> ArgumentHelp? {
        switch value {
        case .keepLocal: "Keep the local change; the next push sends it on top of the server's version."
        case .takeServer: "Drop the local change and take the server's copy."
        case .discard: "Drop the local change and the local record."
        }
    }
}
