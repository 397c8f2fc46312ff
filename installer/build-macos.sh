#!/bin/sh
# Build SambaTune.app and a disk image on macOS.
#
#   installer/build-macos.sh [OUT]        OUT defaults to dist/
#
# PYTHON names the Python that has SambaTune and PyInstaller installed (default:
# .venv/bin/python, else python3); BUILD_DIR is PyInstaller's work folder (default:
# build/pyinstaller). CODESIGN_IDENTITY, if set, is the "Developer ID Application"
# identity the spec signs with, and the dmg is signed with it too; without it the
# app is signed ad hoc (Gatekeeper then asks before the first start). Writes
# OUT/SambaTune.app and OUT/SambaTune-VERSION-macos-ARCH.dmg, and prints the dmg's
# path last.
set -eu

HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(dirname "$HERE")
if [ -z "${PYTHON:-}" ]; then
    if [ -x "$REPO/.venv/bin/python" ]; then PYTHON="$REPO/.venv/bin/python"; else PYTHON=python3; fi
fi
OUT=${1:-$REPO/dist}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
WORK=${BUILD_DIR:-$REPO/build/pyinstaller}

VERSION=$("$PYTHON" -c 'from importlib.metadata import version; print(version("sambatune"))')
DMG="$OUT/SambaTune-$VERSION-macos-$(uname -m).dmg"
APP="$OUT/SambaTune.app"

rm -rf "$APP" "$OUT/SambaTune" "$DMG"
"$PYTHON" -m PyInstaller --noconfirm --clean --log-level WARN \
    --distpath "$OUT" --workpath "$WORK" "$HERE/sambatune.spec"

# The app checks itself (agents, resources, Qt) before it is packed.
QT_QPA_PLATFORM=offscreen "$APP/Contents/MacOS/sambatune" --self-check --gui
codesign --verify --deep --strict "$APP"
plutil -lint "$APP/Contents/Info.plist"

# The disk image: the app and a link to /Applications to drag it onto.
STAGE="$WORK/dmg"
rm -rf "$STAGE"
mkdir -p "$STAGE"
ditto "$APP" "$STAGE/SambaTune.app"
ln -s /Applications "$STAGE/Applications"
# hdiutil fails now and then with "Resource busy" on build machines: try again.
tries=0
until hdiutil create -volname "SambaTune $VERSION" -srcfolder "$STAGE" -ov -format UDZO "$DMG"; do
    tries=$((tries + 1))
    if [ "$tries" -ge 5 ]; then
        echo "hdiutil failed $tries times" >&2
        exit 1
    fi
    sleep 5
done
if [ -n "${CODESIGN_IDENTITY:-}" ]; then
    codesign --sign "$CODESIGN_IDENTITY" --timestamp "$DMG"
fi
hdiutil verify "$DMG"
echo "$DMG"
