"""The home page's previews kept for the data set a first visitor sees, so a fresh server draws them at once.

``previews.npz`` (beside this module) holds each preview's inputs (``previews.PREVIEWS``) for
``KEPT_DATA``, the blog post's own sample as the sidebar opens on it, computed by the code that computes
them live (``previews.write_kept``). ``kept`` hands them out; ``tests/test_previews.py`` recomputes them
and fails when they differ (after a change to a default, a model or the data, rewrite them with ``python
-m kernelviz.app.ui.previews``).
"""

from __future__ import annotations

import functools
import zipfile
from pathlib import Path

import numpy as np

from kernelviz.app.ui.page_data import Data

__all__ = ["KEPT_DATA", "STORE", "kept", "load"]

STORE = Path(__file__).with_name("previews.npz")
KEPT_DATA = ("blog", 150, 2024)  # Data.key of the sidebar's first data set: the post's own sample


@functools.cache
def load() -> dict[str, dict[str, np.ndarray]]:
    """The kept inputs, by preview and array name ({} when the file is missing or unreadable)."""
    try:
        with np.load(STORE, allow_pickle=False) as arrays:
            flat = {name: arrays[name] for name in arrays.files}
    except (OSError, ValueError, zipfile.BadZipFile):
        return {}
    kept: dict[str, dict[str, np.ndarray]] = {}
    for name, array in flat.items():
        preview, _, field = name.partition(".")
        kept.setdefault(preview, {})[field] = array
    return kept


def kept(preview: str, data: Data) -> dict[str, np.ndarray] | None:
    """The kept inputs of ``preview`` when ``data`` is ``KEPT_DATA``, else None (compute them)."""
    if tuple(data.key) != KEPT_DATA:
        return None
    return load().get(preview)
