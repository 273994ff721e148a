#!/usr/bin/env bash
# Package the frozen app (dist/qiao, from packaging/build.sh) for Linux:
#   dist/qiao-<version>-linux-<arch>.tar.zst   always: the app folder + desktop file, icons, AppStream metainfo and
#                                             a per-user install.sh (no root)
#   dist/Qiao-<version>-<arch>.AppImage       when appimagetool is on PATH (or $APPIMAGETOOL points at it)
#
#   packaging/linux/package.sh [--zstd-level N]     (default 19: release artifacts are compressed once)
set -euo pipefail
cd "$(dirname "$0")/../.."
level=19
[ "${1:-}" = "--zstd-level" ] && level="${2:?}"

[ -x dist/qiao/qiao ] || { echo "package.sh: build dist/qiao first (packaging/build.sh)" >&2; exit 1; }
version=$(sed -n 's/^__version__ = "\(.*\)"/\1/p' engine/__init__.py)
arch=$(uname -m)
app_id=io.github.qiao.Qiao
name="qiao-$version-linux-$arch"

# Desktop integration files, laid out as under /usr (share/...), beside the executable.
add_share() {  # $1: destination root
  install -Dm644 resources/linux/qiao.desktop "$1/share/applications/qiao.desktop"
  install -Dm644 "resources/linux/$app_id.metainfo.xml" "$1/share/metainfo/$app_id.metainfo.xml"
  install -Dm644 resources/icons/qiao.png "$1/share/icons/hicolor/256x256/apps/qiao.png"
  install -Dm644 resources/icons/qiao.svg "$1/share/icons/hicolor/scalable/apps/qiao.svg"
}

# ---- tarball ----------------------------------------------------------------------------------------------------
work=build/linux-package
rm -rf "$work" && mkdir -p "$work/$name"
cp -a dist/qiao/. "$work/$name/"
add_share "$work/$name"
install -m755 packaging/linux/install.sh "$work/$name/install.sh"
tar -C "$work" --owner=0 --group=0 --numeric-owner -cf - "$name" | zstd -q -f "-$level" -T0 -o "dist/$name.tar.zst"
echo "package.sh: dist/$name.tar.zst ($(du -h "dist/$name.tar.zst" | cut -f1))"

# ---- AppImage (optional) ----------------------------------------------------------------------------------------
tool=${APPIMAGETOOL:-$(command -v appimagetool || true)}
if [ -z "$tool" ]; then
  echo "package.sh: appimagetool not found; skipping the AppImage (the tarball is the Linux release)"
  exit 0
fi
appdir="$work/Qiao.AppDir"
rm -rf "$appdir" && mkdir -p "$appdir/usr/lib"
cp -a dist/qiao "$appdir/usr/lib/qiao"
add_share "$appdir/usr"
cp resources/linux/qiao.desktop "$appdir/qiao.desktop"
cp resources/icons/qiao.png "$appdir/qiao.png"
cat > "$appdir/AppRun" <<'APPRUN'
#!/bin/sh
# The frozen app is relocatable: run it from inside the mounted AppImage.
here=$(dirname "$(readlink -f "$0")")
exec "$here/usr/lib/qiao/qiao" "$@"
APPRUN
chmod 755 "$appdir/AppRun"
ARCH="$arch" "$tool" --no-appstream "$appdir" "dist/Qiao-$version-$arch.AppImage"
echo "package.sh: dist/Qiao-$version-$arch.AppImage"
