#!/bin/sh
# Install (or remove) Qiao for the current user: no root needed, nothing outside ~/.local.
#
#   ./install.sh              register this folder's qiao: command, menu entry, icon
#   ./install.sh --uninstall  remove them again (this folder is left for you to delete)
#
# The app runs from wherever this folder lives; move the folder, then run install.sh again.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
data=${XDG_DATA_HOME:-$HOME/.local/share}
bin=$HOME/.local/bin
app_id=io.github.qiao.Qiao

if [ "${1:-}" = "--uninstall" ]; then
  rm -f "$bin/qiao" "$data/applications/qiao.desktop" "$data/metainfo/$app_id.metainfo.xml" \
        "$data/icons/hicolor/256x256/apps/qiao.png" "$data/icons/hicolor/scalable/apps/qiao.svg"
  command -v update-desktop-database >/dev/null 2>&1 && update-desktop-database "$data/applications" 2>/dev/null || true
  echo "Qiao is unregistered. Delete $here to remove the program itself."
  exit 0
fi

mkdir -p "$bin" "$data/applications" "$data/metainfo" "$data/icons/hicolor/256x256/apps" \
         "$data/icons/hicolor/scalable/apps"
ln -sf "$here/qiao" "$bin/qiao"
# The menu entry runs this folder's executable by its absolute path (~/.local/bin may not be on PATH).
sed -e "s|^Exec=qiao|Exec=\"$here/qiao\"|" -e "s|^TryExec=qiao|TryExec=$here/qiao|" \
    "$here/share/applications/qiao.desktop" > "$data/applications/qiao.desktop"
cp "$here/share/metainfo/$app_id.metainfo.xml" "$data/metainfo/"
cp "$here/share/icons/hicolor/256x256/apps/qiao.png" "$data/icons/hicolor/256x256/apps/"
cp "$here/share/icons/hicolor/scalable/apps/qiao.svg" "$data/icons/hicolor/scalable/apps/"
command -v update-desktop-database >/dev/null 2>&1 && update-desktop-database "$data/applications" 2>/dev/null || true
command -v gtk-update-icon-cache >/dev/null 2>&1 && gtk-update-icon-cache -q "$data/icons/hicolor" 2>/dev/null || true
echo "Qiao is installed: find it in your applications menu, or run $bin/qiao"
