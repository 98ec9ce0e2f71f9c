#ifndef TABLESYNC_CFILESYSTEM_H
#define TABLESYNC_CFILESYSTEM_H

// Linux file-system calls that the Swift Glibc module does not import (glibc declares them only with
// _GNU_SOURCE), declared once for the store and the benchmarks. On other systems they fail with ENOSYS and the
// callers take their portable path.

/// `syncfs(2)`: writes out every dirty page of the file system holding `descriptor`.
int tablesync_syncfs(int descriptor);

/// `renameat2(2)`; with `TABLESYNC_RENAME_EXCHANGE` it swaps the two paths atomically.
int tablesync_renameat2(int fromDirectory, const char *from, int toDirectory, const char *to, unsigned int flags);

/// `RENAME_EXCHANGE` of `renameat2(2)`.
#define TABLESYNC_RENAME_EXCHANGE (1U << 1)

#endif
