import SyncProtocol

/// How a person settles a conflict (`tablesync resolve`), as the Azure SDKs offer it.
public enum ConflictResolution: String, Sendable, CaseIterable {
    /// Keep the local change and send it again on top of the server's version (the SDKs' "update operation").
    case keepLocal = "keep-local"
    /// Drop the local change and take the server's copy (the SDKs' "cancel and update item").
    case takeServer = "take-server"
    /// Drop the local change and the local record (the SDKs' "cancel and discard item").
    case discard
}
