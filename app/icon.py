"""Slabscope's application icon, from package data (`slabscope.assets`, assets/icons/)."""

from __future__ import annotations

from importlib.resources import files

from PySide6.QtGui import QIcon, QPixmap

# The PNG renderings of assets/icons/slabscope.svg (assets/make_assets.sh draws them).
SIZES = (16, 32, 48, 64, 128, 256)


def application_icon() -> QIcon:
    """The icon at every rendered size; Qt picks the nearest for the title bar and task bar."""
    icons = files("slabscope.assets") / "icons"
    icon = QIcon()
    for size in SIZES:
        pixmap = QPixmap()
        if pixmap.loadFromData((icons / f"slabscope-{size}.png").read_bytes(), "PNG"):
            icon.addPixmap(pixmap)
    return icon
