"""Text measured as it is drawn: DejaVu Sans through FreeType (Pillow).

DejaVu Sans ships with matplotlib (a dependency) in ``mpl-data/fonts/ttf``; its file is found
from the installed package without importing it. Pillow's basic layout engine is used (no
Raqm): the same advances on every machine, so the same run draws the same PNG.
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from PIL import ImageFont

DPI = 120  # pixels per inch of the PNG and of every layout measure
# The PNG is drawn at twice its size and reduced (png.py); text is measured at that size too,
# because FreeType rounds each glyph's advance to whole pixels of the size it draws at.
SUPERSAMPLE = 2
LINE_SPACING = 1.2  # baseline to baseline, in font sizes (matplotlib's Text default)


def px(points: float, scale: float = 1.0) -> float:
    """``points`` (1/72 in) in pixels at :data:`DPI` times ``scale``."""
    return points * DPI / 72.0 * scale


@cache
def _font_dir() -> Path:
    spec = importlib.util.find_spec("matplotlib")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("matplotlib (which ships the DejaVu Sans font) is not installed")
    return Path(next(iter(spec.submodule_search_locations))) / "mpl-data" / "fonts" / "ttf"


@cache
def font(size_px: float, bold: bool = False) -> ImageFont.FreeTypeFont:
    """DejaVu Sans (or its bold face) at ``size_px`` pixels."""
    name = "DejaVuSans-Bold.ttf" if bold else "DejaVuSans.ttf"
    return ImageFont.truetype(str(_font_dir() / name), size_px,
                              layout_engine=ImageFont.Layout.BASIC)


@dataclass(frozen=True, slots=True)
class TextBox:
    """A (possibly multi-line) text's size in pixels: the widest line, the height from the
    first line's top (ascent) to the last line's bottom (descent), and the line pitch."""

    width: float
    height: float
    ascent: float
    descent: float
    pitch: float
    lines: tuple[str, ...]


@cache
def measure(text: str, size_pt: float, bold: bool = False) -> TextBox:
    """The size of ``text`` at ``size_pt`` points (lines split at ``\\n``)."""
    face = font(px(size_pt, SUPERSAMPLE), bold)
    ascent, descent = (m / SUPERSAMPLE for m in face.getmetrics())
    lines = tuple(text.split("\n"))
    width = max(face.getlength(line) for line in lines) / SUPERSAMPLE
    pitch = px(size_pt) * LINE_SPACING
    height = ascent + descent + pitch * (len(lines) - 1)
    return TextBox(width=width, height=height, ascent=ascent, descent=descent, pitch=pitch,
                   lines=lines)
