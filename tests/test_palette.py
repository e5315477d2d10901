"""The chart colours: every line and marker colour stands 3:1 against the light and the dark theme's
background (WCAG 2.1, 1.4.11 non-text contrast), a chart's text 4.5:1 (1.4.3), and no two lines stay alike
for deuteranopia or protanopia (colorspacious simulates both, after Machado et al. 2009, and measures
distances in CAM02-UCS). The backgrounds are ``kf.THEMES``'s, which ``tests/browser/test_theme.py`` finds
to be the pages' own."""

import itertools
import tomllib
from pathlib import Path

import colorspacious
import numpy as np
import pytest

from kernelviz.app.figures import THEMES, styling

CONFIG = tomllib.loads((Path(__file__).resolve().parents[1] / ".streamlit" / "config.toml").read_text())
BACKGROUNDS = {kind: theme.background for kind, theme in THEMES.items()}
LINES = sorted({*styling.COLORS.values(), *styling.HEAD_COLORS})
GREY = styling.COLORS["data"]  # the data's points and dotted markers: told apart by their kind, not colour
APART = 10.0  # CAM02-UCS ΔE: Okabe–Ito's own closest pair of these roles is 13; 1 is a just-noticeable step


def _rgb(color: str) -> np.ndarray:
    c = color.lstrip("#")
    return np.array([int(c[i : i + 2], 16) for i in (0, 2, 4)]) / 255.0


def _luminance(color: str) -> float:
    """WCAG 2.1's relative luminance."""
    c = _rgb(color)
    c = np.where(c <= 0.04045, c / 12.92, ((c + 0.055) / 1.055) ** 2.4)
    return float(c @ [0.2126, 0.7152, 0.0722])


def contrast(a: str, b: str) -> float:
    """WCAG 2.1's contrast ratio, (L1 + 0.05) / (L2 + 0.05), L1 the lighter."""
    hi, lo = sorted((_luminance(a), _luminance(b)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


def test_contrast_matches_the_wcag_examples():
    assert contrast("#FFFFFF", "#000000") == pytest.approx(21.0)
    assert contrast("#767676", "#FFFFFF") == pytest.approx(4.54, abs=0.01)  # the lightest AA grey on white


@pytest.mark.parametrize("theme", sorted(BACKGROUNDS))
@pytest.mark.parametrize("color", LINES)
def test_every_line_colour_stands_3_to_1_on_both_themes(color, theme):
    assert contrast(color, BACKGROUNDS[theme]) >= 3.0, (color, theme)


def test_the_light_charts_stand_on_the_configured_background():
    assert THEMES["light"].background == CONFIG["theme"]["light"]["backgroundColor"]
    assert THEMES["light"].title == CONFIG["theme"]["light"]["textColor"]


@pytest.mark.parametrize("kind", sorted(THEMES))
@pytest.mark.parametrize("role", ["title", "legend", "muted"])
def test_chart_text_stands_4_5_to_1_on_its_theme(kind, role):
    theme = THEMES[kind]
    assert contrast(getattr(theme, role), theme.background) >= 4.5, (kind, role)


@pytest.mark.parametrize("cvd", ["deuteranomaly", "protanomaly"])
@pytest.mark.parametrize("palette", ["heads", "roles"])
def test_colours_stay_apart_for_colour_blindness(palette, cvd):
    colors = styling.HEAD_COLORS if palette == "heads" else sorted(set(styling.COLORS.values()) - {GREY})
    space = {"name": "sRGB1+CVD", "cvd_type": cvd, "severity": 100}
    seen = {c: np.clip(colorspacious.cspace_convert(_rgb(c), space, "sRGB1"), 0, 1) for c in colors}
    closest = min((colorspacious.deltaE(seen[a], seen[b], input_space="sRGB1"), a, b)
                  for a, b in itertools.combinations(colors, 2))
    assert closest[0] >= APART, closest


def test_the_heads_are_all_different():
    assert len(set(styling.HEAD_COLORS)) == len(styling.HEAD_COLORS)
