#!/bin/sh
# Build the Linux tarball: the PyInstaller one-dir bundle, the freedesktop menu
# entry, hicolor icons and install.sh.
#
#   installer/build-linux.sh [OUT]        OUT defaults to dist/
#
# PYTHON names the Python that has SambaTune and PyInstaller installed (default:
# .venv/bin/python, else python3); BUILD_DIR is PyInstaller's work folder (default:
# build/pyinstaller). Writes OUT/sambatune-VERSION-linux-ARCH/ (ready to run) and
# OUT/sambatune-VERSION-linux-ARCH.tar.gz, and prints the tarball's path last.
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
NAME="sambatune-$VERSION-linux-$(uname -m)"
STAGE="$OUT/$NAME"

rm -rf "$STAGE" "$STAGE.tar.gz"
"$PYTHON" -m PyInstaller --noconfirm --clean --log-level WARN \
    --distpath "$STAGE" --workpath "$WORK" "$HERE/sambatune.spec"

cp "$HERE/linux/install.sh" "$HERE/linux/README.txt" "$STAGE/"
mkdir -p "$STAGE/share/applications" "$STAGE/share/icons/hicolor/scalable/apps"
cp "$HERE/linux/sambatune.desktop" "$STAGE/share/applications/"
cp "$REPO/resources/icons/sambatune.svg" "$STAGE/share/icons/hicolor/scalable/apps/"
for png in "$REPO"/resources/icons/sambatune-*.png; do
    size=${png##*-}
    size=${size%.png}
    # hicolor stops at 512; the 1024 rendering is for macOS.
    [ "$size" -le 512 ] || continue
    mkdir -p "$STAGE/share/icons/hicolor/${size}x$size/apps"
    cp "$png" "$STAGE/share/icons/hicolor/${size}x$size/apps/sambatune.png"
done

# Owner and order fixed so the archive does not depend on who built it.
tar --create --gzip --file "$STAGE.tar.gz" --directory "$OUT" \
    --owner=0 --group=0 --numeric-owner --sort=name "$NAME"
echo "$STAGE.tar.gz"
