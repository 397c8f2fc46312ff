"""Render SambaTune's icons from the SVG sources: PNGs, a Windows .ico, a macOS .icns.

    python installer/make_icons.py            # rewrites resources/icons/
    python installer/make_icons.py --out DIR  # writes somewhere else

Sources, both our own drawings: ``sambatune.svg`` (the icon) and ``sambatune-small.svg``
(the same icon redrawn on a 16-pixel grid, bolder, for SMALL_MAX pixels and less).
Qt's QSvgRenderer draws them offscreen; the ICO and ICNS containers are written here
with struct. The output is committed; tests/test_icons.py checks it is in sync.
"""

from __future__ import annotations

import argparse
import os
import struct
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from PySide6.QtGui import QImage

ICONS = Path(__file__).resolve().parents[1] / "resources" / "icons"
SOURCE = "sambatune.svg"
SMALL_SOURCE = "sambatune-small.svg"
#: Up to this many pixels the small drawing is used: the full one turns to mush.
SMALL_MAX = 24
#: resources/icons/sambatune-N.png; also the Linux hicolor sizes.
PNG_SIZES = (16, 22, 24, 32, 48, 64, 128, 256, 512, 1024)
#: Windows picks from these for title bars, the taskbar, Explorer and the Start menu.
ICO_SIZES = (16, 24, 32, 48, 64, 128, 256)
#: ICNS entries as macOS's iconutil names them: type -> pixels (the @2x types serve
#: Retina screens). Every payload is a PNG, which macOS reads since 10.7.
ICNS_TYPES = (
    ("ic11", 32),
    ("ic12", 64),
    ("ic07", 128),
    ("ic13", 256),
    ("ic08", 256),
    ("ic14", 512),
    ("ic09", 512),
    ("ic10", 1024),
)
#: macOS icons sit on a 1024 grid with an 824-pixel body: the Dock and Finder expect
#: that margin, so the .icns gets the icon scaled into it. Our SVG's body is 240/256.
MACOS_BODY = 824 / 1024
SVG_BODY = 240 / 256
PNG_NAME = "sambatune-{size}.png"
ICO_NAME = "sambatune.ico"
ICNS_NAME = "sambatune.icns"


def png_name(size: int) -> str:
    return PNG_NAME.format(size=size)


class Renderer:
    """Draws the icon at any size; needs a QGuiApplication (offscreen is enough)."""

    def __init__(self, folder: Path = ICONS) -> None:
        from PySide6.QtGui import QGuiApplication
        from PySide6.QtSvg import QSvgRenderer

        os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
        self._app = QGuiApplication.instance() or QGuiApplication([sys.argv[0]])
        self._full = QSvgRenderer(str(folder / SOURCE))
        self._small = QSvgRenderer(str(folder / SMALL_SOURCE))
        for renderer, name in ((self._full, SOURCE), (self._small, SMALL_SOURCE)):
            if not renderer.isValid():
                raise SystemExit(f"cannot read {folder / name}")

    def image(self, size: int, scale: float = 1.0) -> QImage:
        """A size x size ARGB32 QImage with the icon drawn at ``scale``, centred."""
        from PySide6.QtCore import QRectF, Qt
        from PySide6.QtGui import QImage, QPainter

        image = QImage(size, size, QImage.Format.Format_ARGB32_Premultiplied)
        image.fill(Qt.GlobalColor.transparent)
        painter = QPainter(image)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        painter.setRenderHint(QPainter.RenderHint.SmoothPixmapTransform)
        side = size * scale
        offset = (size - side) / 2
        renderer = self._small if side <= SMALL_MAX else self._full
        renderer.render(painter, QRectF(offset, offset, side, side))
        painter.end()
        return image.convertToFormat(QImage.Format.Format_ARGB32)

    def png(self, size: int, scale: float = 1.0) -> bytes:
        return png_bytes(self.image(size, scale))


def png_bytes(image: QImage) -> bytes:
    from PySide6.QtCore import QBuffer, QByteArray, QIODevice

    data = QByteArray()
    buffer = QBuffer(data)
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    if not image.save(buffer, "PNG"):
        raise SystemExit("Qt could not encode a PNG")
    buffer.close()
    return bytes(data.data())


def bgra_rows(image: QImage) -> list[bytes]:
    """Rows of a Format_ARGB32 QImage as B,G,R,A bytes (the order of an ICO
    bitmap), top row first."""
    width, height = image.width(), image.height()
    rows = []
    for y in range(height):
        pixels = bytearray()
        for x in range(width):
            argb = image.pixel(x, y)
            pixels += struct.pack("<I", argb)
        rows.append(bytes(pixels))
    return rows


def ico_bitmap(image: QImage) -> bytes:
    """One ICO image as a 32-bit DIB: header, colours bottom-up, then the 1-bit mask."""
    width, height = image.width(), image.height()
    rows = bgra_rows(image)
    colours = b"".join(reversed(rows))
    mask_stride = ((width + 31) // 32) * 4
    mask_rows = []
    for row in reversed(rows):
        bits = bytearray(mask_stride)
        for x in range(width):
            if row[4 * x + 3] == 0:  # fully transparent: masked out
                bits[x // 8] |= 0x80 >> (x % 8)
        mask_rows.append(bytes(bits))
    mask = b"".join(mask_rows)
    header = struct.pack(
        "<IiiHHIIiiII", 40, width, 2 * height, 1, 32, 0, len(colours) + len(mask), 0, 0, 0, 0
    )
    return header + colours + mask


def ico_bytes(entries: Iterable[tuple[int, bytes]]) -> bytes:
    """An ICO file from (size, image data) pairs; data is a DIB or a PNG."""
    entries = list(entries)
    directory = struct.pack("<HHH", 0, 1, len(entries))
    offset = 6 + 16 * len(entries)
    blobs = []
    for size, data in entries:
        edge = 0 if size >= 256 else size  # 0 means 256 in an ICO directory
        directory += struct.pack("<BBBBHHII", edge, edge, 0, 0, 1, 32, len(data), offset)
        offset += len(data)
        blobs.append(data)
    return directory + b"".join(blobs)


def icns_bytes(entries: Iterable[tuple[str, bytes]]) -> bytes:
    """An ICNS file from (type, PNG) pairs.

    No table of contents: it is optional for macOS, and Qt's reader loses its place
    in a table with more than one entry.
    """
    body = b"".join(kind.encode("ascii") + struct.pack(">I", 8 + len(data)) + data for kind, data in entries)
    return b"icns" + struct.pack(">I", 8 + len(body)) + body


def make_icons(out: Path, sources: Path = ICONS) -> list[Path]:
    renderer = Renderer(sources)
    written = []

    def write(name: str, data: bytes) -> None:
        path = out / name
        path.write_bytes(data)
        written.append(path)

    out.mkdir(parents=True, exist_ok=True)
    for size in PNG_SIZES:
        write(png_name(size), renderer.png(size))
    # Small sizes as bitmaps (what every Windows part reads), 256 as a PNG (the
    # only size Windows wants compressed).
    write(
        ICO_NAME,
        ico_bytes(
            (size, renderer.png(size) if size >= 256 else ico_bitmap(renderer.image(size)))
            for size in ICO_SIZES
        ),
    )
    scale = MACOS_BODY / SVG_BODY
    write(ICNS_NAME, icns_bytes((kind, renderer.png(size, scale)) for kind, size in ICNS_TYPES))
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ICONS, help=f"default: {ICONS}")
    args = parser.parse_args(argv)
    for path in make_icons(args.out):
        print(f"{path}  {path.stat().st_size} bytes")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
