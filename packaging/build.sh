#!/usr/bin/env bash
# Freeze Qiao into dist/qiao/ (Linux and macOS; on Windows use packaging/build.ps1).
#
#   packaging/build.sh [--model DIR|fixture|fixture-zh-en|none]... [--int8-only] [--dist DIR]
#   packaging/build.sh --catalogue DIR/catalogue.json [--int8-only] [--dist DIR]
#
#   --model DIR     a model bundle to embed; repeat for several (one per pair). Default: resources/models/opus-mt-en-zh,
#                   and resources/models/opus-mt-zh-en when it has been built
#   --model fixture the committed tiny en→zh test model (what CI and the offline smoke test use);
#                   fixture-zh-en is its zh→en twin
#   --model none    no model inside; the app opens and explains where to put one
#   --catalogue F   a release's catalogue.json (its zips beside it): embed the best-quality bundle of each
#                   direction, as a new install would choose (the Firefox models where the release has them)
#   --int8-only     embed the INT8 models only (drops fp32/ and rewrites each manifest to match)
#   --dist DIR      output folder (default: dist): the app lands in DIR/qiao
#
# Uses $PYTHON (default: .venv/bin/python, else python3), which needs the package extra: pip install -e '.[package]'.
# Output: DIST/qiao/qiao (+ DIST/Qiao.app on macOS) and build/check_dist.json (size report, forbidden-package check).
set -euo pipefail
cd "$(dirname "$0")/.."

models=()
catalogue=""
int8_only=""
dist=dist
while [ $# -gt 0 ]; do
  case "$1" in
    --model) models+=("${2:?--model needs DIR, fixture or none}"); shift 2 ;;
    --model=*) models+=("${1#--model=}"); shift ;;
    --catalogue) catalogue="${2:?--catalogue needs a catalogue.json}"; shift 2 ;;
    --catalogue=*) catalogue="${1#--catalogue=}"; shift ;;
    --int8-only) int8_only="--int8-only"; shift ;;
    --dist) dist="${2:?--dist needs a folder}"; shift 2 ;;
    -h|--help) sed -n '2,19p' "$0"; exit 0 ;;
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
stage_args=()
for m in ${models[@]+"${models[@]}"}; do
  if [ "$m" = "none" ]; then
    [ ${#models[@]} -eq 1 ] || { echo "build.sh: --model none cannot be combined with other models" >&2; exit 2; }
  else
    stage_args+=(--model "$m")
  fi
done
if [ -n "$catalogue" ]; then
  [ ${#models[@]} -eq 0 ] || { echo "build.sh: --catalogue chooses the models itself: not with --model" >&2; exit 2; }
  stage_args=(--catalogue "$catalogue")
fi
if [ ${#models[@]} -eq 0 ] || [ ${#stage_args[@]} -gt 0 ]; then
  "$PYTHON" packaging/stage_model.py "$stage" ${stage_args[@]+"${stage_args[@]}"} $int8_only
  spec_args=(-- --model-stage "$stage")
fi

rm -rf "$dist/qiao" "$dist/Qiao.app"
"$PYTHON" -m PyInstaller --noconfirm --clean --log-level WARN \
  --distpath "$dist" --workpath build/pyinstaller packaging/qiao.spec "${spec_args[@]}"

# Strip, trim ICU (Linux), then fail if a build-only package (torch, transformers, …) got in.
"$PYTHON" packaging/finish_dist.py "$dist/qiao" --json build/check_dist.json
echo "build.sh: $dist/qiao/qiao is ready$( [ -d "$dist/Qiao.app" ] && echo " (and $dist/Qiao.app)")"
