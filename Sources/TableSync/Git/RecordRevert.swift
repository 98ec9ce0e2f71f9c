import SyncProtocol

/// What a record holds once a commit's change to it is undone (`tablesync revert`), as git's revert decides for a
/// file, property by property: the state before the commit, the state after it, and the state now, each without
/// its synced mark (`nil`: no such record).
enum RecordRevert {
    /// The content the record is to hold, or `nil` for none (a delete when it exists now):
    /// - the commit created it: none;
    /// - the commit deleted it: its content before, unless it exists again now (left as it is);
    /// - the commit changed it: each own property the commit changed goes back to its value before, unless it was
    ///   changed again since (that change stays); the system properties stay as they are now. A record deleted
    ///   since stays deleted.
    static func content(
        before: [String: JSONValue]?, after: [String: JSONValue]?, now: [String: JSONValue]?
    ) -> [String: JSONValue]? {
        switch (before, after) {
        case (nil, _): return nil
        case (let before?, nil): return now ?? before
        case (let before?, let after?):
            guard let now else { return nil }
            var reverted = now
            for name in Set(before.keys).union(after.keys) where !SystemProperty.isSystemProperty(name) {
                if before[name] != after[name] && now[name] == after[name] { reverted[name] = before[name] }
            }
            return reverted
        }
    }
}
