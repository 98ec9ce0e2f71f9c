import SyncProtocol
import TableSyncStorage

/// The version of a store's layout and file formats, `"format"` in `tablesync.json`: what outlives a binary. A
/// store made before formats were numbered (0.1.0) has none and is format 1, as it is laid out today.
///
/// A binary opens a store of its own format or an older one, upgrading an older one in place on its first
/// read-write open (today: writing the number); a store of a newer format is refused before anything is read
/// further or changed (``StoreError/newerStoreFormat(found:supported:)``, exit 2). A change of a format that an older
/// binary would misread raises ``current`` and adds its upgrade here.
package enum StoreFormat {
    /// The format this binary writes, and the newest it reads.
    package static let current = 1
    /// The member of `tablesync.json` that holds it.
    package static let settingsKey = "format"

    /// What to do with a store whose `tablesync.json` names `found` (`nil`: none).
    package enum Decision: Equatable {
        /// The store is in this binary's format.
        case current
        /// The store is older: upgrade it in place on a read-write open.
        case upgrade
        /// The store is newer than this binary reads.
        case refuse(found: Int)
    }

    /// The decision for a store that names `found`. A number below 1 is no format any version wrote: refused like a
    /// newer one rather than guessed at.
    package static func decide(found: Int?) -> Decision {
        guard let found else { return .upgrade }
        if found == current { return .current }
        return found < current && found >= 1 ? .upgrade : .refuse(found: found)
    }

    /// Checks the format `settingsBytes` (the file `tablesync.json`) names, before anything else of the store is read;
    /// returns whether the store needs the upgrade.
    /// - Throws: ``StoreError/newerStoreFormat(found:supported:)``; ``StoreError/invalidSettings(file:field:reason:)``
    ///   when the member is no integer.
    static func check(settingsBytes: [UInt8]) throws -> Bool {
        let reader = try SettingsReader(file: StoreLayout.settingsFileName, bytes: settingsBytes)
        switch decide(found: try reader.optionalInteger(settingsKey)) {
        case .current: return false
        case .upgrade: return true
        case .refuse(let found): throw StoreError.newerStoreFormat(found: found, supported: current)
        }
    }

    /// Upgrades the store at `layout` in place to ``current``: `tablesync.json` gains the number, every other member
    /// kept as it is. Written durably, as every store file is.
    static func upgrade(layout: StoreLayout, settingsBytes: [UInt8]) throws {
        guard case .object(var members) = try JSONParser.parse(settingsBytes) else { return }
        members[settingsKey] = .integer(Int64(current))
        var batch = DurableFileBatch()
        batch.write(CanonicalJSON.encode(.object(members)), to: layout.settingsFile)
        try batch.commit(temporaryDirectory: layout.temporaryDirectory)
    }
}
