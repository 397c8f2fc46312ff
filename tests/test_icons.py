"""The committed icons are what installer/make_icons.py makes from the SVG sources.

Qt's own ICO and ICNS readers are the independent check that the files parse.
"""

from __future__ import annotations

import struct
import sys
from pathlib import Path

import numpy as np
import pytest
from PySide6.QtGui import QImage, QImageReader
from PySide6.QtWidgets import QApplication

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "installer"))
import make_icons  # noqa: E402

ICONS = make_icons.ICONS
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == PNG_SIGNATURE
    assert data[12:16] == b"IHDR"
    width, height = struct.unpack(">II", data[16:24])
    return width, height


def ico_entries(data: bytes) -> list[tuple[int, bytes]]:
    reserved, kind, count = struct.unpack("<HHH", data[:6])
    assert (reserved, kind) == (0, 1)
    entries = []
    for index in range(count):
        width, height, _colours, _zero, planes, bits, length, offset = struct.unpack(
            "<BBBBHHII", data[6 + 16 * index : 22 + 16 * index]
        )
        assert width == height and (planes, bits) == (1, 32)
        assert offset + length <= len(data)
        entries.append((width or 256, data[offset : offset + length]))
    return entries


def icns_entries(data: bytes) -> list[tuple[str, bytes]]:
    assert data[:4] == b"icns"
    assert struct.unpack(">I", data[4:8])[0] == len(data)
    entries, position = [], 8
    while position < len(data):
        kind = data[position : position + 4].decode("ascii")
        (length,) = struct.unpack(">I", data[position + 4 : position + 8])
        assert length >= 8 and position + length <= len(data)
        entries.append((kind, data[position + 8 : position + length]))
        position += length
    return entries


def channels(image: QImage) -> np.ndarray:
    """Each pixel's four 8-bit channels, one row of the image a row of the array."""
    image = image.convertToFormat(QImage.Format.Format_ARGB32)
    data = np.frombuffer(bytes(image.constBits()), dtype=np.uint8)
    rows = data.reshape(image.height(), image.bytesPerLine())[:, : 4 * image.width()]
    return rows.astype(np.int16)


def mean_difference(a: QImage, b: QImage) -> float:
    """Mean absolute difference per channel, 0..255."""
    one, two = channels(a), channels(b)
    assert one.shape == two.shape
    return float(np.abs(one - two).mean())


@pytest.fixture(scope="module")
def renderer(qapp: QApplication) -> make_icons.Renderer:
    return make_icons.Renderer()


@pytest.mark.parametrize("size", make_icons.PNG_SIZES)
def test_every_png_size_is_there(size: int) -> None:
    path = ICONS / make_icons.png_name(size)
    assert png_size(path.read_bytes()) == (size, size)


@pytest.mark.parametrize("size", [16, 24, 64, 256])
def test_pngs_match_a_fresh_rendering_of_the_svg(renderer: make_icons.Renderer, size: int) -> None:
    """Fails when an SVG was edited and make_icons.py not run again."""
    committed = QImage(str(ICONS / make_icons.png_name(size)))
    assert mean_difference(committed, renderer.image(size)) < 1.0


def test_small_sizes_use_the_small_drawing(renderer: make_icons.Renderer) -> None:
    full = renderer.image(64).scaled(16, 16)
    small = QImage(str(ICONS / make_icons.png_name(16)))
    assert mean_difference(small, renderer.image(16)) < 1.0
    assert mean_difference(small, full) > 5.0


def test_ico_holds_each_size_made_from_the_same_drawing() -> None:
    data = (ICONS / make_icons.ICO_NAME).read_bytes()
    entries = ico_entries(data)
    assert [size for size, _ in entries] == list(make_icons.ICO_SIZES)
    for size, blob in entries:
        if size >= 256:
            assert png_size(blob) == (size, size)
        else:
            header = struct.unpack("<IiiHHI", blob[:20])
            assert header == (40, size, 2 * size, 1, 32, 0)
    reader = QImageReader(str(ICONS / make_icons.ICO_NAME))
    assert reader.imageCount() == len(make_icons.ICO_SIZES)
    for index, size in enumerate(make_icons.ICO_SIZES):
        assert reader.jumpToImage(index)
        image = reader.read()
        assert (image.width(), image.height()) == (size, size), reader.errorString()
        committed = QImage(str(ICONS / make_icons.png_name(size)))
        assert np.array_equal(channels(image), channels(committed))


def test_icns_holds_the_retina_set_with_the_macos_margin(renderer: make_icons.Renderer) -> None:
    data = (ICONS / make_icons.ICNS_NAME).read_bytes()
    entries = icns_entries(data)
    assert [(kind, png_size(blob)[0]) for kind, blob in entries] == list(make_icons.ICNS_TYPES)
    reader = QImageReader(str(ICONS / make_icons.ICNS_NAME))
    assert reader.imageCount() == len(make_icons.ICNS_TYPES)
    # PySide6's stub wants the format as bytes, but at run time it takes a str and refuses bytes.
    largest = QImage.fromData(entries[-1][1], "PNG")  # type: ignore[arg-type]
    assert mean_difference(largest, renderer.image(1024, make_icons.MACOS_BODY / make_icons.SVG_BODY)) < 1.0
    # The margin: the corner of the body is further in than in the plain PNG.
    assert largest.pixelColor(60, 512).alpha() == 0
    assert QImage(str(ICONS / make_icons.png_name(1024))).pixelColor(60, 512).alpha() == 255


def test_the_window_icon_offers_every_size_up_to_256(qapp: QApplication) -> None:
    from sambatune.ui.main_window import WINDOW_ICON_MAX, app_icon

    sizes = sorted(size.width() for size in app_icon().availableSizes())
    assert WINDOW_ICON_MAX == 256
    assert sizes == [size for size in make_icons.PNG_SIZES if size <= 256]
