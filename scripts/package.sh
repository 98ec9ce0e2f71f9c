#!/usr/bin/env bash
# make package: builds both executables in release mode with the Swift runtime linked statically, and writes to dist/
#   tablesync_<version>_<arch>.deb, tablesync-server_<version>_<arch>.deb   Debian's packages (dpkg-deb)
#   tablesync-<version>-linux-<machine>.tar.gz                              both, as the packages lay them out
# The packaging sources (units, maintainer scripts, control files, copyright) are in packaging/. The build refuses a
# binary that links anything from the Swift toolchain, and lintian, when installed, must find no error.
set -euo pipefail
cd "$(dirname "$0")/.."
umask 022

dist=dist
# shellcheck source=lib/release-build.sh
source scripts/lib/release-build.sh
swift_build=("${release_build[@]}")

# One version for the binaries and the packages: the latest tag vX.Y.Z plus the commits since it and the commit, or
# without a tag the version in TableSyncVersion.swift plus the commits of the whole history and the commit.
commit="$(git rev-parse --short HEAD)"
if tag="$(git describe --tags --abbrev=0 --match 'v[0-9]*' 2>/dev/null)"; then
  base="${tag#v}"
  since="$(git rev-list --count "$tag..HEAD")"
else
  base="$(sed -n 's/.*static let current = "\(.*\)".*/\1/p' Sources/SyncProtocol/Protocol/TableSyncVersion.swift)"
  since="$(git rev-list --count HEAD)"
fi
version="$base"
[ "$since" -eq 0 ] || version+="+$since.g$commit"
if ! git diff --quiet HEAD; then
  [ "$since" -ne 0 ] || version+="+0.g$commit"
  version+=".dirty"
fi
# Debian sorts "~" before the release it precedes (0.2.0~rc.1 < 0.2.0), as semantic versioning sorts "-"; the
# revision -1 makes the packages non-native, so that CHANGELOG.md can be their upstream changelog.
deb_version="${version//-/\~}-1"
arch="$(dpkg --print-architecture)"
machine="$(uname -m)"
maintainer="$(sed -n 's/^Maintainer: //p' packaging/debian/control)"
export SOURCE_DATE_EPOCH="$(git log -1 --format=%ct)"
echo "package: version $version (commit $commit), $arch"

export TABLESYNC_BUILD_VERSION="$version" TABLESYNC_BUILD_COMMIT="$commit"
for product in tablesync tablesync-server generate-manual; do
  "${swift_build[@]}" --product "$product"
done
bin="$("${swift_build[@]}" --show-bin-path)"

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
# dpkg-shlibdeps finds the packages' folders as debian/<package> beside debian/control.
client="$work/debian/tablesync"
server="$work/debian/tablesync-server"
mkdir -p "$work/debian"
cp packaging/debian/control "$work/debian/control"

# stage ROOT PATH MODE SOURCE: one file into a package's tree.
stage() { install -D -m "$3" "$4" "$1/$2"; }
gzip_into() { gzip -9n < "$2" > "$1"; }

for program in tablesync tablesync-server; do
  root="$work/debian/$program"
  # What Debian's own packages strip (dh_strip): debug symbols, the compiler's comment and notes.
  mkdir -p "$root/usr/bin"
  strip --strip-unneeded --remove-section=.comment --remove-section=.note \
    -o "$root/usr/bin/$program" "$bin/$program"
  chmod 0755 "$root/usr/bin/$program"
  toolchain="$(ldd "$root/usr/bin/$program" | grep -E 'swift|libFoundation|libdispatch|libBlocksRuntime' || true)"
  if [ -n "$toolchain" ]; then
    echo "package: $program links the Swift toolchain's libraries:" >&2
    echo "$toolchain" >&2
    exit 1
  fi

  # Man pages from the argument parser's own definitions, so that they say what --help says.
  mkdir -p "$work/man/$program" "$root/usr/share/man/man1"
  "$bin/generate-manual" "$bin/$program" --multi-page --date "$(git log -1 --format=%cs)" \
    --output-directory "$work/man/$program"
  for page in "$work/man/$program"/*.1; do
    name="$(basename "$page" .1)"
    # Two fixes to the generated mdoc. A subcommand's page names itself "tablesync sync", which man-db's whatis
    # parser (and so apropos) cannot read: NAME takes the page's own name (tablesync.sync), and the synopsis, which
    # repeats NAME's, gets the command back. Blank lines from --help's discussions become paragraph breaks, which
    # groff does not warn about.
    awk -v page="$name" '
      /^\.Nm "/ && !named { command = substr($0, 5); print ".Nm " page; named = 1; next }
      /^\.Nm$/ && command != "" { print ".Nm " command; next }
      /^$/ { print ".Pp"; next }
      { named = named || /^\.Nm /; print }' "$page" > "$page.fixed"
    gzip_into "$root/usr/share/man/man1/$name.1.gz" "$page.fixed"
  done

  # Completion scripts are sourced, not run: bash's loses the #! line the generator writes.
  "$bin/$program" --generate-completion-script bash | sed '1{/^#!/d}' > "$work/$program.bash"
  for shell in zsh fish; do
    "$bin/$program" --generate-completion-script "$shell" > "$work/$program.$shell"
  done
  stage "$root" usr/share/bash-completion/completions/$program 0644 "$work/$program.bash"
  stage "$root" usr/share/zsh/vendor-completions/_$program 0644 "$work/$program.zsh"
  stage "$root" usr/share/fish/vendor_completions.d/$program.fish 0644 "$work/$program.fish"

  doc="$root/usr/share/doc/$program"
  mkdir -p "$doc"
  cp packaging/copyright "$doc/copyright"
  gzip_into "$doc/README.md.gz" README.md
  gzip_into "$doc/changelog.gz" CHANGELOG.md
  {
    echo "tablesync ($deb_version) unstable; urgency=medium"
    echo
    echo "  * Built from commit $commit; what changed is in changelog.gz."
    echo
    echo " -- $maintainer  $(date -u -R -d "@$SOURCE_DATE_EPOCH")"
  } > "$work/changelog.Debian"
  gzip_into "$doc/changelog.Debian.gz" "$work/changelog.Debian"
done

for unit in tablesync-sync@.service tablesync-sync@.timer tablesync-watch@.service; do
  stage "$client" "lib/systemd/system/$unit" 0644 "packaging/systemd/system/$unit"
  stage "$client" "usr/lib/systemd/user/$unit" 0644 "packaging/systemd/user/$unit"
done
stage "$server" lib/systemd/system/tablesync-server.service 0644 packaging/systemd/system/tablesync-server.service
stage "$server" etc/tablesync-server/server.json 0644 packaging/tablesync-server/server.json
mkdir -p "$server/var/lib/tablesync-server"
for page in server deploy; do
  gzip_into "$server/usr/share/doc/tablesync-server/$page.md.gz" "docs/$page.md"
done

# The packages' Depends: the shared libraries the binaries load, as the Debian packages that hold them.
depends() {
  (cd "$work" && dpkg-shlibdeps -O -e "debian/$1/usr/bin/$1") | sed -n 's/^shlibs:Depends=//p'
}

rm -rf "$dist"
mkdir -p "$dist"
for program in tablesync tablesync-server; do
  root="$work/debian/$program"
  mkdir -p "$root/DEBIAN"
  for script in postinst prerm postrm; do
    [ ! -f "packaging/$program/$script" ] || stage "$root" "DEBIAN/$script" 0755 "packaging/$program/$script"
  done
  [ ! -f "packaging/$program/conffiles" ] || stage "$root" DEBIAN/conffiles 0644 "packaging/$program/conffiles"
  (cd "$root" && find . -path ./DEBIAN -prune -o -path ./etc -prune -o -type f -printf '%P\0' \
    | LC_ALL=C sort -z | xargs -0 md5sum > DEBIAN/md5sums)
  chmod 0644 "$root/DEBIAN/md5sums"
  shlibs="$(depends "$program")"
  [ -n "$shlibs" ] || { echo "package: dpkg-shlibdeps found no libraries for $program" >&2; exit 1; }
  sed -e "s/@VERSION@/$deb_version/" -e "s/@ARCH@/$arch/" -e "s/@MAINTAINER@/$maintainer/" \
    -e "s/@INSTALLED_SIZE@/$(du -sk --exclude=DEBIAN "$root" | cut -f1)/" -e "s/@DEPENDS@/$shlibs/" \
    "packaging/$program/control" > "$root/DEBIAN/control"
  dpkg-deb --root-owner-group -Zxz --build "$root" "$dist/${program}_${deb_version}_$arch.deb" >/dev/null
done

# The tarball: both programs as the packages lay them out, the system units where any systemd distribution looks.
tree="tablesync-$version-linux-$machine"
mkdir -p "$work/tar/$tree"
for program in tablesync tablesync-server; do
  (cd "$work/debian/$program" && tar --exclude=./DEBIAN --exclude=./var --exclude=changelog.Debian.gz -cf - .) \
    | tar -xf - -C "$work/tar/$tree"
done
mkdir -p "$work/tar/$tree/usr/lib/systemd"
mv "$work/tar/$tree/lib/systemd/system" "$work/tar/$tree/usr/lib/systemd/system"
rm -r "$work/tar/$tree/lib"
cp README.md CHANGELOG.md "$work/tar/$tree/"
cp packaging/copyright "$work/tar/$tree/COPYRIGHT"
tar --sort=name --owner=0 --group=0 --numeric-owner --mtime="@$SOURCE_DATE_EPOCH" -C "$work/tar" -cf - "$tree" \
  | gzip -9n > "$dist/$tree.tar.gz"

if command -v lintian >/dev/null; then
  # Errors fail the build; each warning left is explained in docs/packaging.md.
  lintian --fail-on error "$dist"/*.deb
fi
ls -l "$dist"
