#!/usr/bin/env bash
# Screenshots of the quick popup after the real global shortcut on X11: Xvfb :55, openbox, text selected in an
# xterm (PRIMARY), `xdotool key ctrl+alt+t`; light/dark × English/简体中文, plus the "nothing selected" message.
set -euo pipefail
OUT=${1:-/tmp/wt-quick-shots}
PY=${PY:-/work/main/.venv/bin/python}
HERE=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$OUT"
export DISPLAY=:55
Xvfb :55 -screen 0 1280x800x24 -nolisten tcp >/dev/null 2>&1 & XVFB=$!
trap 'kill $XVFB 2>/dev/null || true' EXIT
sleep 1
openbox >/dev/null 2>&1 & WM=$!
trap 'kill $WM $XVFB 2>/dev/null || true' EXIT
sleep 1
shoot() {  # theme lang name [problem]
  local log="$OUT/$3.log"
  if [ "${4:-}" = problem ]; then xsel -p -c; xsel -b -c; fi
  "$PY" "$HERE/shots.py" --theme "$1" --lang "$2" --out "$OUT/$3.png" >"$log" 2>&1 & local app=$!
  for _ in $(seq 100); do grep -q READY "$log" && break; sleep 0.1; done
  sleep 0.5
  xdotool mousemove 330 120
  xdotool key ctrl+alt+t
  wait $app || true
  cat "$log"
}
xterm -geometry 90x20+40+40 -fa "Noto Sans Mono" -fs 12 -e bash -c 'printf "Thank you very much.\n"; sleep 600' & XT=$!
trap 'kill $XT $WM $XVFB 2>/dev/null || true' EXIT
sleep 1.5
select_line() { xdotool mousemove 120 60 click --repeat 3 --delay 80 1; sleep 0.3; echo "PRIMARY: $(xsel -p -o)"; }
select_line; shoot light en popup-light-en
select_line; shoot dark en popup-dark-en
select_line; shoot light zh_CN popup-light-zh_CN
select_line; shoot dark zh_CN popup-dark-zh_CN
shoot dark en popup-dark-en-nothing-selected problem
