#!/usr/bin/env bash
# Freeze Qiao into dist/qiao/ (Linux and macOS; on Windows use packaging/build.ps1).
#
#   packaging/build.sh [--model DIR|fixture|none] [--int8-only] [--dist DIR]
#
#   --model DIR     the model bundle to embed (default: resources/models/opus-mt-en-zh)
#   --model fixture the committed tiny test model (what CI and the offline smoke test use)
#   --model none    no model inside; the app opens and explains where to put one
#   --int8-only     embed the INT8 model only (drops fp32/ and rewrites the manifest to match)
#   --dist DIR      output folder (default: dist): the app lands in DIR/qiao
#
# Uses $PYTHON (default: .venv/bin/python, else python3), which needs the package extra: pip install -e '.[package]'.
# Output: DIST/qiao/qiao (+ DIST/Qiao.app on macOS) and build/check_dist.json (size report, forbidden-package check).
set -euo pipefail
cd "$(dirname "$0")/.."

model=""
int8_only=""
dist=dist
while [ $# -gt 0 ]; do
  case "$1" in
    --model) model="${2:?--model needs DIR, fixture or none}"; shift 2 ;;
    --model=*) model="${1#--model=}"; shift ;;
    --int8-only) int8_only="--int8-only"; shift ;;
    --dist) dist="${2:?--dist needs a folder}"; shift 2 ;;
    -h|--help) sed -n '2,13p' "$0"; exit 0 ;;
    *) echo "build.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done

if [ -z "${PYTHON:-}" ]; then
  if [ -x .venv/bin/python ]; then PYTHON=.venv/bin/python; else PYTHON=python3; fi
fi
"$PYTHON" -c "import PyInstaller" 2>/dev/null || {
  echo "build.sh: PyInstaller is missing: $PYTHON -m pip install -e '.[package]'" >&2; exit 1; }

stage=build/stage
rm -rf "$stage"
mkdir -p "$stage"
spec_args=()
if [ "$model" != "none" ]; then
  "$PYTHON" packaging/stage_model.py "$stage" ${model:+--model "$model"} $int8_only
  spec_args=(-- --model-stage "$stage")
fi

rm -rf "$dist/qiao" "$dist/Qiao.app"
"$PYTHON" -m PyInstaller --noconfirm --clean --log-level WARN \
  --distpath "$dist" --workpath build/pyinstaller packaging/qiao.spec "${spec_args[@]}"

# Strip, trim ICU (Linux), then fail if a build-only package (torch, transformers, …) got in.
"$PYTHON" packaging/finish_dist.py "$dist/qiao" --json build/check_dist.json
echo "build.sh: $dist/qiao/qiao is ready$( [ -d "$dist/Qiao.app" ] && echo " (and $dist/Qiao.app)")"
