import SyncProtocol
import TableSyncStorage

/// The three-way merge of one record file (git's merge driver, `tablesync merge-file`): a pure function of the
/// base and the two sides, tested alone.
///
/// A side whose `version` differs from the base's was moved by a sync: it holds a server copy. The rules, for
/// each property that is not a system property:
/// - both sides agree, or only one side changed it from the base: that value;
/// - both changed it and both sides are server copies: the newer copy's value (the server's later state);
/// - both changed it otherwise (a hand edit on at least one side): a conflict.
/// - Only the older server copy changed it and the newer one still has the base's value: a conflict too, since
///   it is either a change the server later undid or a hand edit made on top of the older copy, and only a person
///   can tell.
///
/// A change that only stamps the base's content as a server copy (theirs has the base's content with other system
/// properties: a cherry-pick of a sync commit whose parent held the hand edit it sent) changes no property. Laid over
/// an intact server copy on our side, it leaves that copy whole: our content under their version would be an older
/// copy passing for an edit on the newer one. The next sync brings the kept copy up to date.
///
/// The system properties (`createdAt`, `updatedAt`, `version`, `deleted`) and the ``SyncedMark`` come whole from
/// the newer server copy: the side with the later `updatedAt` (then the greater `version`), so the merged file still
/// names a version the server really had; when the merged content is that copy's, the mark still vouches for it,
/// and otherwise the next sync sends the merged content on top of that version.
enum RecordMerge {
    struct Result: Equatable {
        /// The merged record, conflicting properties taken from ours.
        var ours: [String: JSONValue]
        /// The merged record, conflicting properties taken from theirs.
        var theirs: [String: JSONValue]
        /// The properties both sides changed differently.
        var conflicts: [String]
    }

    /// Merges `ours` and `theirs` from `base`; `oursIntact`: our side's synced mark vouches for it.
    static func merge(
        base: [String: JSONValue]?, ours: [String: JSONValue], theirs: [String: JSONValue], oursIntact: Bool = false
    ) -> Result {
        if oursIntact, let base, ServerRecord.content(theirs) == ServerRecord.content(base) {
            return Result(ours: ours, theirs: ours, conflicts: [])
        }
        let baseVersion = base?[SystemProperty.version]
        let oursSynced = ours[SystemProperty.version] != nil && ours[SystemProperty.version] != baseVersion
        let theirsSynced = theirs[SystemProperty.version] != nil && theirs[SystemProperty.version] != baseVersion
        let oursNewer = isNewer(ours, than: theirs)
        let newer = oursNewer ? ours : theirs
        var mergedOurs: [String: JSONValue] = [:]
        var mergedTheirs: [String: JSONValue] = [:]
        var conflicts: [String] = []
        let names = Set(ours.keys).union(theirs.keys).union(base.map { Set($0.keys) } ?? [])
        for name in names where !copyProperties.contains(name) {
            let (mine, other, original) = (ours[name], theirs[name], base?[name])
            let value: JSONValue?
            if mine == other {
                value = mine
            } else if oursSynced && theirsSynced {
                let (newerValue, olderValue) = oursNewer ? (mine, other) : (other, mine)
                if olderValue == original || newerValue != original {
                    value = newerValue
                } else {
                    // Only the older copy changed it: undone on the server later, or edited by hand on top of it.
                    conflicts.append(name)
                    (mergedOurs[name], mergedTheirs[name]) = (mine, other)
                    continue
                }
            } else if other == original {
                value = mine
            } else if mine == original {
                value = other
            } else {
                conflicts.append(name)
                (mergedOurs[name], mergedTheirs[name]) = (mine, other)
                continue
            }
            mergedOurs[name] = value
            mergedTheirs[name] = value
        }
        for name in copyProperties {
            mergedOurs[name] = newer[name]
            mergedTheirs[name] = newer[name]
        }
        return Result(ours: mergedOurs, theirs: mergedTheirs, conflicts: conflicts.sorted())
    }

    /// The properties that belong to a server copy as a whole, never merged one by one.
    static let copyProperties = SystemProperty.serverManaged.union([SyncedMark.property])

    /// Whether `record` is a later server copy than `other`: later `updatedAt`, then greater `version`.
    static func isNewer(_ record: [String: JSONValue], than other: [String: JSONValue]) -> Bool {
        func instant(_ record: [String: JSONValue]) -> Timestamp? {
            record[SystemProperty.updatedAt]?.stringValue.flatMap(Timestamp.init(parsing:))
        }
        switch (instant(record), instant(other)) {
        case let (mine?, theirs?) where mine != theirs: return mine > theirs
        case (_?, nil): return true
        case (nil, _?): return false
        default:
            return (record[SystemProperty.version]?.stringValue ?? "")
                >= (other[SystemProperty.version]?.stringValue ?? "")
        }
    }
}
