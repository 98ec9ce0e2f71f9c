# The release build as the packages ship it, the Swift runtime linked statically (a binary that needs no toolchain
# library, and starts without resolving the runtime's symbols): make package builds it, and make bench measures it.
# Sourced: release_build is its swift build command line, to which callers add --product or --show-bin-path.
# shellcheck shell=bash
release_build=(swift build -c release --static-swift-stdlib --scratch-path .build-release)

# build_command CONFIG: sets build to the swift build command line for CONFIG (release: release_build).
build_command() {
  if [ "$1" = release ]; then build=("${release_build[@]}"); else build=(swift build -c "$1"); fi
}
