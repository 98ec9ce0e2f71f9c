#ifndef CBUILDSTAMP_H
#define CBUILDSTAMP_H

// The release version and commit that `make package` stamps into the executables (scripts/package.sh sets
// TABLESYNC_BUILD_VERSION and TABLESYNC_BUILD_COMMIT, which Package.swift turns into C defines, the one way SwiftPM
// passes a value into code). Empty in a build without a stamp, such as a plain `swift build`.
const char *tablesync_build_version(void);
const char *tablesync_build_commit(void);

#endif
