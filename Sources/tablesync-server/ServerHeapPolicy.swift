import CFileSystem

/// The heap policy of the `tablesync-server` process.
enum ServerHeapPolicy {
    /// The size from which an allocation gets a mapping of its own: a page's records, a large request body.
    static let ownMappingThreshold: Int32 = 1 << 20

    /// Every allocation of ``ownMappingThreshold`` or more is served by its own mapping and given back to the
    /// system when freed. Without it glibc raises its threshold to the size of the first such buffer freed, and the
    /// pages of large records that follow stay in the heap after their answers, so the server kept the memory of
    /// its largest moment for good. Call once, before the server starts; does nothing where the C library has no
    /// such setting.
    static func apply() {
        _ = tablesync_map_allocations_from(ownMappingThreshold)
    }
}
