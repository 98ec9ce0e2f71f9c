#define _GNU_SOURCE
#include "CFileSystem.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <spawn.h>
#include <unistd.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

int tablesync_syncfs(int descriptor) {
#ifdef __linux__
    return syncfs(descriptor);
#else
    (void)descriptor;
    errno = ENOSYS;
    return -1;
#endif
}

int tablesync_renameat2(int fromDirectory, const char *from, int toDirectory, const char *to, unsigned int flags) {
#ifdef __linux__
    return renameat2(fromDirectory, from, toDirectory, to, flags);
#else
    (void)fromDirectory; (void)from; (void)toDirectory; (void)to; (void)flags;
    errno = ENOSYS;
    return -1;
#endif
}

int tablesync_spawn_add_chdir(void *actions, const char *directory) {
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 29))
    return posix_spawn_file_actions_addchdir_np((posix_spawn_file_actions_t *)actions, directory);
#else
    (void)actions; (void)directory;
    return ENOSYS;
#endif
}

const void *tablesync_memmem(const void *haystack, long haystackLength, const void *needle, long needleLength) {
    if (haystackLength < 0 || needleLength < 0) return NULL;
    return memmem(haystack, (size_t)haystackLength, needle, (size_t)needleLength);
}

int tablesync_thread_id(void) {
#if defined(__linux__) && defined(SYS_gettid)
    return (int)syscall(SYS_gettid);
#else
    return -1;
#endif
}

int tablesync_map_allocations_from(int bytes) {
#ifdef __GLIBC__
    return mallopt(M_MMAP_THRESHOLD, bytes);
#else
    (void)bytes;
    return 0;
#endif
}

int tablesync_limit_heap_arenas(int count) {
#ifdef __GLIBC__
    return mallopt(M_ARENA_MAX, count);
#else
    (void)count;
    return 0;
#endif
}
