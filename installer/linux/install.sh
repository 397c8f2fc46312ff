#!/bin/sh
# Install SambaTune from this unpacked tarball, or remove it again.
#
#   ./install.sh                   for you alone, under ~/.local (as root: /usr/local)
#   ./install.sh --prefix DIR      under DIR instead
#   ./install.sh --uninstall       remove what an install with the same prefix put there
#
# What goes where (PREFIX as above):
#   PREFIX/lib/sambatune/                 this folder: the program, icons, this script
#   PREFIX/bin/sambatune                  a link to the program
#   PREFIX/share/applications/sambatune.desktop   the application-menu entry
#   PREFIX/share/icons/hicolor/*/apps/sambatune.* the icons
# Settings and results stay in your home folder; neither install nor uninstall
# touches them.
set -eu

HERE=$(cd "$(dirname "$0")" && pwd)
if [ "$(id -u)" = 0 ]; then PREFIX=/usr/local; else PREFIX="$HOME/.local"; fi
ACTION=install

usage() {
    sed -n '2,6s/^# \{0,1\}//p' "$0"
}

while [ $# -gt 0 ]; do
    case "$1" in
        --prefix)
            [ $# -ge 2 ] || { echo "install.sh: --prefix needs a folder" >&2; exit 2; }
            PREFIX=$2; shift 2 ;;
        --prefix=*) PREFIX=${1#--prefix=}; shift ;;
        --uninstall) ACTION=uninstall; shift ;;
        -h|--help) usage; exit 0 ;;
        *) echo "install.sh: unknown option $1" >&2; usage >&2; exit 2 ;;
    esac
done
case "$PREFIX" in
    /*) ;;
    *) PREFIX="$(pwd)/$PREFIX" ;;
esac

APPDIR="$PREFIX/lib/sambatune"
PROGRAM="$APPDIR/sambatune/sambatune"
LINK="$PREFIX/bin/sambatune"
DESKTOP="$PREFIX/share/applications/sambatune.desktop"
ICONS="$PREFIX/share/icons/hicolor"
# The icons this package carries, as paths below hicolor/.
ICON_FILES=$(cd "$HERE/share/icons/hicolor" && find . -type f | sed 's|^\./||')

remove_installed() {
    # The link only if it is ours: never a sambatune from elsewhere.
    if [ -L "$LINK" ] && [ "$(readlink "$LINK")" = "$PROGRAM" ]; then
        rm -f "$LINK"
    fi
    rm -f "$DESKTOP"
    for icon in $ICON_FILES; do
        rm -f "$ICONS/$icon"
    done
    if [ "$HERE" != "$APPDIR" ]; then
        rm -rf "$APPDIR"
    fi
}

refresh_icon_cache() {
    # Only a cache that exists is updated: a new one would hide icons that other
    # programs add later without refreshing it.
    if [ -f "$ICONS/icon-theme.cache" ] && command -v gtk-update-icon-cache >/dev/null 2>&1; then
        gtk-update-icon-cache -q -t "$ICONS" || true
    fi
    touch "$ICONS" 2>/dev/null || true
}

if [ "$ACTION" = uninstall ]; then
    remove_installed
    if [ "$HERE" = "$APPDIR" ]; then
        # Running the installed copy of this script: its folder goes last.
        cd /
        rm -rf "$APPDIR"
    fi
    refresh_icon_cache
    echo "Removed SambaTune from $PREFIX."
    exit 0
fi

if [ "$HERE" != "$APPDIR" ]; then
    mkdir -p "$PREFIX/lib"
    rm -rf "$APPDIR.new"
    cp -a "$HERE" "$APPDIR.new"
    rm -rf "$APPDIR"
    mv "$APPDIR.new" "$APPDIR"
fi

mkdir -p "$PREFIX/bin" "$PREFIX/share/applications"
if [ -e "$LINK" ] && ! { [ -L "$LINK" ] && [ "$(readlink "$LINK")" = "$PROGRAM" ]; }; then
    # Something else is called sambatune there (a pip install, say): leave it be.
    echo "Note: $LINK exists and is not this SambaTune; left as it is."
    LINKED=no
else
    ln -sfn "$PROGRAM" "$LINK"
    LINKED=yes
fi
# The menu entry starts the program by its full path: PREFIX/bin is not always on
# the PATH of a desktop session.
sed -e "s|^Exec=.*|Exec=\"$PROGRAM\"|" -e "s|^TryExec=.*|TryExec=$PROGRAM|" \
    "$APPDIR/share/applications/sambatune.desktop" > "$DESKTOP.new"
mv "$DESKTOP.new" "$DESKTOP"
for icon in $ICON_FILES; do
    mkdir -p "$(dirname "$ICONS/$icon")"
    cp "$APPDIR/share/icons/hicolor/$icon" "$ICONS/$icon"
done
refresh_icon_cache

VERSION=$("$PROGRAM" --version)
echo "Installed $VERSION in $APPDIR."
if [ "$LINKED" = no ]; then
    echo "Start it from the application menu or with: $PROGRAM"
else
    case ":$PATH:" in
        *":$PREFIX/bin:"*) echo "Start it from the application menu or with: sambatune" ;;
        *) echo "Start it from the application menu or with: $LINK" ;;
    esac
fi

# Qt's X11 plugin needs a few libraries that desktops usually have; say which are
# missing rather than let Qt fail later with a cryptic message.
XCB="$APPDIR/sambatune/_internal/PySide6/Qt/plugins/platforms/libqxcb.so"
if [ -f "$XCB" ] && command -v ldd >/dev/null 2>&1; then
    MISSING=$(LD_LIBRARY_PATH="$APPDIR/sambatune/_internal" ldd "$XCB" 2>/dev/null \
        | awk '/not found/ {print $1}' | sort -u | tr '\n' ' ')
    if [ -n "$MISSING" ]; then
        echo "Note: on X11, SambaTune needs these libraries, missing here: $MISSING"
        echo "      (Debian/Ubuntu: apt install libxcb-cursor0 libxcb-icccm4 libxcb-keysyms1;"
        echo "       Fedora: dnf install xcb-util-cursor xcb-util-wm xcb-util-keysyms)"
    fi
fi
