import CFileSystem

/// The heap policy of a process that runs TableSync's commands.
public enum ProcessMemory {
    /// The size from which an allocation gets a mapping of its own: a page of records, a run's merge buffers, a
    /// big listing.
    static let ownMappingThreshold: Int32 = 1 << 20

    /// Has every allocation of ``ownMappingThreshold`` or more served by its own mapping and given back to the
    /// system when freed. Without it glibc raises its threshold after the first such buffer is freed, and the
    /// big buffers that follow (a million-record pull's run merges) stay in the heap as it grows, so peak memory
    /// rose with the store. Call once, before the work starts; does nothing where the C library has no such
    /// setting.
    public static func returnLargeBuffersToTheSystem() {
        _ = tablesync_map_allocations_from(ownMappingThreshold)
    }
}
