"""Names and numbers the packaging shares: the spec, the build scripts and the tests.

Standard library only: PyInstaller executes the spec in the build environment.
"""

from __future__ import annotations

import re

APP_NAME = "SambaTune"
#: The program on Linux and inside the macOS .app; the command line everywhere but Windows.
CLI_NAME = "sambatune"
#: Windows: the windowed program the Start menu starts ...
GUI_NAME = "SambaTune"
#: ... and the console one for the command line (file names ignore case there, so
#: it cannot be plain "sambatune" next to "SambaTune").
WINDOWS_CLI_NAME = "sambatune-cli"
BUNDLE_ID = "io.github.sambatune.SambaTune"
#: The oldest macOS any PySide6 we allow (6.6 and later) runs on; the spec raises it
#: to what the bundled Qt was built for.
MACOS_MINIMUM = "11.0"
#: The freedesktop desktop-file id; ui/app.py sets the same name on the application.
DESKTOP_ID = "sambatune"

#: Qt modules SambaTune never uses. PyInstaller collects a Qt module (and its
#: libraries, plugins and data) only when something imports it; these are listed so a
#: library that imports one opportunistically cannot drag it in.
QT_EXCLUDES = [
    f"PySide6.{name}"
    for name in (
        "Qt3DAnimation",
        "Qt3DCore",
        "Qt3DExtras",
        "Qt3DInput",
        "Qt3DLogic",
        "Qt3DRender",
        "QtBluetooth",
        "QtCharts",
        "QtDataVisualization",
        "QtDesigner",
        "QtGraphs",
        "QtGraphsWidgets",
        "QtHelp",
        "QtHttpServer",
        "QtLocation",
        "QtMultimedia",
        "QtMultimediaWidgets",
        "QtNetworkAuth",
        "QtNfc",
        "QtPdf",
        "QtPdfWidgets",
        "QtPositioning",
        "QtQml",
        "QtQuick",
        "QtQuick3D",
        "QtQuickControls2",
        "QtQuickWidgets",
        "QtRemoteObjects",
        "QtScxml",
        "QtSensors",
        "QtSerialBus",
        "QtSerialPort",
        "QtSpatialAudio",
        "QtSql",
        "QtTest",
        "QtTextToSpeech",
        "QtUiTools",
        "QtWebChannel",
        "QtWebEngineCore",
        "QtWebEngineQuick",
        "QtWebEngineWidgets",
        "QtWebSockets",
        "QtWebView",
        "QtNetwork",
    )
]

#: Qt plugins (relative to the plugins folder) the Linux bundle leaves out: the GTK
#: theme (see the spec), and the platforms for kiosks and embedded screens (EGLFS,
#: framebuffer, VNC) with their input drivers. Kept: xcb, wayland, offscreen, minimal.
LINUX_DROPPED_PLUGINS = (
    "platformthemes/libqgtk3.so",
    "egldeviceintegrations/",
    "generic/",
    "platforms/libqeglfs.so",
    "platforms/libqlinuxfb.so",
    "platforms/libqminimalegl.so",
    "platforms/libqvkkhrdisplay.so",
    "platforms/libqvnc.so",
)


def release_numbers(version: str) -> tuple[int, ...]:
    """The leading numbers of a version: "1.2.0rc1" -> (1, 2, 0)."""
    match = re.match(r"\d+(?:\.\d+)*", version)
    if match is None:
        raise ValueError(f"not a version: {version!r}")
    return tuple(int(part) for part in match.group(0).split("."))


def windows_version_tuple(version: str) -> tuple[int, int, int, int]:
    """Windows version resources hold exactly four numbers."""
    numbers = (*release_numbers(version), 0, 0, 0, 0)[:4]
    return (numbers[0], numbers[1], numbers[2], numbers[3])


def macos_version(version: str) -> str:
    """CFBundleShortVersionString: up to three numbers, nothing else."""
    return ".".join(str(n) for n in release_numbers(version)[:3])
