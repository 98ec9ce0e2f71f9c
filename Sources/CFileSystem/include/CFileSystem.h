#ifndef TABLESYNC_CFILESYSTEM_H
#define TABLESYNC_CFILESYSTEM_H

// Linux calls that the Swift Glibc module does not import (glibc declares them only with _GNU_SOURCE or in
// <malloc.h>), declared once for the store, the command line, the server and the benchmarks. On other systems they fail with
// ENOSYS (or do nothing) and the callers take their portable path.

/// `syncfs(2)`: writes out every dirty page of the file system holding `descriptor`.
int tablesync_syncfs(int descriptor);

/// `renameat2(2)`; with `TABLESYNC_RENAME_EXCHANGE` it swaps the two paths atomically, with
/// `TABLESYNC_RENAME_NOREPLACE` it never replaces a file.
int tablesync_renameat2(int fromDirectory, const char *from, int toDirectory, const char *to, unsigned int flags);

/// `RENAME_NOREPLACE` of `renameat2(2)`: fails with EEXIST instead of replacing a file.
#define TABLESYNC_RENAME_NOREPLACE (1U << 0)

/// `RENAME_EXCHANGE` of `renameat2(2)`.
#define TABLESYNC_RENAME_EXCHANGE (1U << 1)

/// Has glibc serve every allocation of at least `bytes` by its own mapping, returned to the system when freed
/// (`mallopt(M_MMAP_THRESHOLD)`), instead of letting the threshold rise after the first such buffer is freed and
/// later ones stay in the heap. Returns 1 on success, 0 where there is no such setting.
int tablesync_map_allocations_from(int bytes);

/// Caps the heap arenas glibc gives threads at `count` (`mallopt(M_ARENA_MAX)`; its default is 8 per core).
/// Returns 1 on success, 0 where there is no such setting.
int tablesync_limit_heap_arenas(int count);

/// `posix_spawn_file_actions_addchdir_np(3)`: the child starts in `directory`. `actions` is a
/// `posix_spawn_file_actions_t *`. Returns 0, or an error number (ENOSYS where there is no such call).
int tablesync_spawn_add_chdir(void *actions, const char *directory);

/// `memmem(3)`: where the `needleLength` bytes at `needle` first occur in the `haystackLength` bytes at
/// `haystack`, or NULL.
const void *tablesync_memmem(const void *haystack, long haystackLength, const void *needle, long needleLength);

/// The kernel's id of the calling thread (`gettid(2)`), or -1 where there is none.
int tablesync_thread_id(void);

#endif
