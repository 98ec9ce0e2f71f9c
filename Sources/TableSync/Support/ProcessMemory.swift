import CFileSystem

/// The heap policy of a process that runs TableSync's commands.
package enum ProcessMemory {
    /// The size from which an allocation gets a mapping of its own: a page of records, a run's merge buffers, a
    /// big listing.
    static let ownMappingThreshold: Int32 = 1 << 20

    /// Sets the heap policy; call once, before the work starts. Does nothing where the C library has no such
    /// settings.
    ///
    /// - Every allocation of ``ownMappingThreshold`` or more is served by its own mapping and given back to the
    ///   system when freed. Without it glibc raises its threshold after the first such buffer is freed, and the
    ///   big buffers that follow (a million-record pull's run merges) stay in the heap as it grows, so peak memory
    ///   rose with the store.
    /// - Threads share one heap arena per core (glibc's default is eight per core). A pull stages one page on one
    ///   thread while another commits the page before and a third decodes the next; with an arena for nearly every
    ///   thread, each kept its own high-water mark and the sum grew with the number of pages (docs/bench.md,
    ///   "Figures behind the code").
    package static func applyCommandLinePolicy() {
        _ = tablesync_map_allocations_from(ownMappingThreshold)
        _ = tablesync_limit_heap_arenas(Int32(clamping: activeCores))
    }
}
