/// The version of TableSync, printed by `tablesync --version` and `tablesync-server --version`.
///
/// One constant for both executables, here because both depend on `SyncProtocol` and on nothing else in common.
/// It follows semantic versioning: bump it by hand in the commit that prepares a release (the major part when a
/// command line, exit code, store format or protocol behaviour that DESIGN §7 lists changes incompatibly, the
/// minor part for new commands or options, the patch part for fixes), and tag that commit `vX.Y.Z`.
///
/// ```swift
/// TableSyncVersion.current   // "0.1.0"
/// ```
public enum TableSyncVersion {
    /// The version as `MAJOR.MINOR.PATCH`.
    public static let current = "0.1.0"

    /// What `--version` prints: the version and commit a packaged build was stamped with (`make package` derives
    /// them from git), or ``current`` alone for a build without a stamp.
    ///
    /// ```swift
    /// TableSyncVersion.line(stampedVersion: "0.2.0+3.g1a2b3c4", commit: "1a2b3c4")
    /// // "0.2.0+3.g1a2b3c4 (commit 1a2b3c4)"
    /// TableSyncVersion.line(stampedVersion: "", commit: "")  // "0.1.0"
    /// ```
    public static func line(stampedVersion: String, commit: String) -> String {
        stampedVersion.isEmpty ? current : "\(stampedVersion) (commit \(commit))"
    }
}
