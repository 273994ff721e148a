"""Render resources/icons/qiao.svg into the PNG sizes the app and the installers use.

Run after editing the SVG: `python resources/icons/build_icons.py`. Writes gui/assets/qiao-<size>.png (loaded by
the window at run time, all sizes so high-DPI screens get a crisp icon), plus qiao.ico (Windows) and qiao.icns
(macOS) here when Pillow is installed.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication, QImage, QPainter
from PySide6.QtSvg import QSvgRenderer

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
SIZES = (16, 24, 32, 48, 64, 128, 256, 512)


def render(svg: Path, size: int) -> QImage:
    image = QImage(size, size, QImage.Format.Format_ARGB32_Premultiplied)
    image.fill(Qt.GlobalColor.transparent)
    painter = QPainter(image)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    QSvgRenderer(str(svg)).render(painter)
    painter.end()
    return image


def main() -> int:
    QGuiApplication(sys.argv[:1])
    svg = HERE / "qiao.svg"
    assets = ROOT / "gui" / "assets"
    assets.mkdir(exist_ok=True)
    (assets / "qiao.svg").write_bytes(svg.read_bytes())
    pngs = {}
    for size in SIZES:
        out = assets / f"qiao-{size}.png"
        render(svg, size).save(str(out))
        pngs[size] = out
    (HERE / "qiao.png").write_bytes(pngs[256].read_bytes())
    try:
        from PIL import Image
    except ImportError:
        print("Pillow not installed: skipped qiao.ico / qiao.icns")
        return 0
    big = Image.open(pngs[512])
    big.save(HERE / "qiao.ico", sizes=[(s, s) for s in (16, 24, 32, 48, 64, 128, 256)])
    big.save(HERE / "qiao.icns")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
