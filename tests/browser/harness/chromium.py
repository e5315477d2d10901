"""Debian's Chromium through Playwright: where it is, how it is launched, and whether browser tests can run.

Playwright's own browser download is not available, so the harness drives ``/usr/bin/chromium``.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

CHROMIUM_PATH = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
VIEWPORT = {"width": 1280, "height": 900}


def in_ci() -> bool:
    """True under ``CI=true`` (also ``1``/``yes``), where browser tests must run and never skip."""
    return os.environ.get("CI", "").strip().lower() in {"true", "1", "yes"}


def browser_unavailable_reason() -> str | None:
    """Why the browser tests cannot run here, or None when Chromium and Playwright are both present."""
    missing = []
    if not CHROMIUM_PATH.exists():
        missing.append(f"Chromium not found at {CHROMIUM_PATH} (Debian/Ubuntu: apt-get install -y chromium)")
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        missing.append("the Python package playwright is not installed (pip install -r requirements-dev.txt)")
    return "; ".join(missing) or None


def launch_chromium(playwright: Any, **kwargs: Any) -> Any:
    """Debian's Chromium through Playwright (a fresh temporary profile per launch)."""
    return playwright.chromium.launch(executable_path=str(CHROMIUM_PATH), args=CHROMIUM_ARGS, **kwargs)
