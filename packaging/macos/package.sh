#!/usr/bin/env bash
# Package dist/Qiao.app (from packaging/build.sh on macOS) as dist/Qiao-<version>-macos-<arch>.dmg.
#
# Signing and notarisation are driven by environment variables and skipped when they are absent (the .app is then
# ad-hoc signed by PyInstaller, which runs locally but shows Gatekeeper's "unidentified developer" warning):
#   QIAO_CODESIGN_IDENTITY  "Developer ID Application: Name (TEAMID)" in the keychain. Set it *before*
#                           packaging/build.sh too: qiao.spec passes it to PyInstaller, which signs every binary
#                           inside the bundle with the hardened runtime and packaging/macos/entitlements.plist.
#   QIAO_NOTARY_PROFILE     a `xcrun notarytool store-credentials` keychain profile, or else all three of
#   QIAO_NOTARY_APPLE_ID, QIAO_NOTARY_TEAM_ID, QIAO_NOTARY_PASSWORD (an app-specific password).
set -euo pipefail
cd "$(dirname "$0")/../.."
[ -d dist/Qiao.app ] || { echo "package.sh: build dist/Qiao.app first (packaging/build.sh on macOS)" >&2; exit 1; }
version=$(sed -n 's/^__version__ = "\(.*\)"/\1/p' engine/__init__.py)
dmg="dist/Qiao-$version-macos-$(uname -m).dmg"

# The bundle must pass its own checks before it is wrapped: Info.plist, signature, and the self-test.
plutil -lint dist/Qiao.app/Contents/Info.plist
/usr/libexec/PlistBuddy -c "Print :NSHighResolutionCapable" dist/Qiao.app/Contents/Info.plist | grep -q true
codesign --verify --deep --strict --verbose=2 dist/Qiao.app
dist/Qiao.app/Contents/MacOS/qiao --self-test

identity="${QIAO_CODESIGN_IDENTITY:-}"
if [ -n "$identity" ]; then
  codesign --display --verbose=2 dist/Qiao.app 2>&1 | grep -q "Authority=Developer ID Application" \
    || { echo "package.sh: dist/Qiao.app is not Developer ID signed; rebuild with QIAO_CODESIGN_IDENTITY set" >&2; exit 1; }
else
  echo "package.sh: QIAO_CODESIGN_IDENTITY not set: ad-hoc signed app, no notarisation"
fi

# Disk image: the app and a link to /Applications to drag it onto.
work=build/dmg
rm -rf "$work" && mkdir -p "$work"
cp -R dist/Qiao.app "$work/"
ln -s /Applications "$work/Applications"
rm -f "$dmg"
hdiutil create -volname "Qiao $version" -srcfolder "$work" -fs HFS+ -format ULFO -ov "$dmg"

if [ -n "$identity" ]; then
  codesign --force --timestamp --sign "$identity" "$dmg"
  if [ -n "${QIAO_NOTARY_PROFILE:-}" ]; then
    xcrun notarytool submit "$dmg" --keychain-profile "$QIAO_NOTARY_PROFILE" --wait
  elif [ -n "${QIAO_NOTARY_APPLE_ID:-}" ] && [ -n "${QIAO_NOTARY_TEAM_ID:-}" ] && [ -n "${QIAO_NOTARY_PASSWORD:-}" ]; then
    xcrun notarytool submit "$dmg" --apple-id "$QIAO_NOTARY_APPLE_ID" --team-id "$QIAO_NOTARY_TEAM_ID" \
      --password "$QIAO_NOTARY_PASSWORD" --wait
  else
    echo "package.sh: no notarisation credentials (QIAO_NOTARY_*): signed but not notarised"
    echo "package.sh: $dmg"
    exit 0
  fi
  xcrun stapler staple "$dmg"
  spctl --assess --type open --context context:primary-signature --verbose=2 "$dmg"
fi
echo "package.sh: $dmg"
