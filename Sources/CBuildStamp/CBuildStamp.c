#include "CBuildStamp.h"

#ifndef TABLESYNC_BUILD_VERSION
#define TABLESYNC_BUILD_VERSION ""
#endif
#ifndef TABLESYNC_BUILD_COMMIT
#define TABLESYNC_BUILD_COMMIT ""
#endif

const char *tablesync_build_version(void) { return TABLESYNC_BUILD_VERSION; }

const char *tablesync_build_commit(void) { return TABLESYNC_BUILD_COMMIT; }
