"""Page helpers: wait until Streamlit is idle with its charts drawn (or repainted), read the page's state,
collect console errors and exception boxes, take full-page screenshots, and read the sidebar's pages."""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar
from urllib.parse import urlsplit

from .chromium import VIEWPORT
from .probes import IDLE_AND_CHANGED_JS, PAGE_STATE_JS
from .server import REPO_ROOT

SCREENSHOT_DIR = REPO_ROOT / "artifacts" / "screenshots"
# Pages without controls of their own (a catalogue of links): the sidebar's slider changes no chart there.
REFERENCE_PATHS = frozenset({"/sources"})

# The first page a fresh server shows compiles the JAX programs (a cold cache takes a while on 2 cores);
# every later wait is for one rerun.
FIRST_LOAD_TIMEOUT_S = 300.0
RERUN_TIMEOUT_S = 90.0


class AppExceptionError(AssertionError):
    """The page shows Streamlit's exception box; the message carries its text."""


def exception_texts(page: Any) -> list[str]:
    """The text of every exception box on the page (Streamlit's red traceback boxes)."""
    return [t.strip() for t in page.locator('[data-testid="stException"]').all_inner_texts()]


def _raise_on_exception(page: Any, state: dict) -> None:
    if state["exceptions"]:
        raise AppExceptionError(f"{page.url} shows an exception:\n" + "\n---\n".join(exception_texts(page)))


def page_state(page: Any) -> dict:
    """Streamlit's state and the chart signature of ``page`` (see PAGE_STATE_JS)."""
    return page.evaluate(PAGE_STATE_JS)


def is_idle(state: dict) -> bool:
    """Connected, no script running, nothing stale or skeletal, at least one chart and all charts drawn."""
    return (
        state["connection"] == "CONNECTED"
        and state["script"] == "notRunning"
        and state["stale"] == 0
        and state["skeletons"] == 0
        and state["charts"] > 0
        and "undrawn" not in state["signature"]
    )


def wait_until_drawn(page: Any, timeout: float = RERUN_TIMEOUT_S, settle: float = 0.4) -> dict:
    """Waits until Streamlit is idle with every chart drawn, and stays so (same charts) for ``settle`` s."""
    deadline = time.monotonic() + timeout
    while True:
        remaining = max(deadline - time.monotonic(), 0.1)
        page.wait_for_function(IDLE_AND_CHANGED_JS, arg=None, polling="raf", timeout=remaining * 1e3)
        first = page_state(page)
        _raise_on_exception(page, first)
        page.wait_for_timeout(settle * 1e3)
        second = page_state(page)
        _raise_on_exception(page, second)
        if is_idle(second) and second["signature"] == first["signature"]:
            return second
        if time.monotonic() > deadline:
            raise TimeoutError(f"page never settled: {second}")


def wait_for_repaint(page: Any, before: str, timeout: float = RERUN_TIMEOUT_S) -> dict:
    """Waits until the chart signature differs from ``before`` and Streamlit is idle with charts drawn."""
    page.wait_for_function(IDLE_AND_CHANGED_JS, arg=before, polling="raf", timeout=timeout * 1e3)
    state = page_state(page)
    _raise_on_exception(page, state)
    return state


@dataclass
class BrowserErrors:
    """Console errors and uncaught exceptions of one page, minus known harmless noise."""

    messages: list[str] = field(default_factory=list)

    # Known harmless noise, each with a specific pattern and the reason it is harmless.
    IGNORED: ClassVar[tuple[re.Pattern[str], ...]] = (
        # Opened directly at a page's URL (/kernel_regression), Streamlit's frontend finds the server's base
        # path by probing <page URL>/_stcore/health and /host-config first; those 404 before it tries the
        # root, and Chromium logs each 404. Only these two endpoints under a non-root path are ignored.
        re.compile(
            r"^console\.error: Failed to load resource: the server responded with a status of 404"
            r" \(Not Found\) \(http://127\.0\.0\.1:\d+/[^/?#()]+(?:/[^/?#()]+)*/_stcore/(?:health|host-config)\)$"
        ),
    )

    def attach(self, page: Any) -> BrowserErrors:
        page.on("console", self._on_console)
        page.on("pageerror", lambda exc: self._add(f"pageerror: {exc}"))
        return self

    def _on_console(self, message: Any) -> None:
        if message.type == "error":
            location = message.location or {}
            self._add(f"console.error: {message.text} ({location.get('url', '')})")

    def _add(self, text: str) -> None:
        if not any(p.search(text) for p in self.IGNORED):
            self.messages.append(text)


def full_page_screenshot(page: Any, path: Path) -> Path:
    """Screenshot of the whole page. Streamlit scrolls inside its main container, not the document, so the
    viewport is stretched to the container's height for the shot and restored afterwards."""
    path.parent.mkdir(parents=True, exist_ok=True)
    size = page.viewport_size or VIEWPORT
    height = page.evaluate(
        "() => { const m = document.querySelector('[data-testid=\"stMain\"]')"
        " || document.querySelector('[data-testid=\"stAppViewContainer\"]');"
        " return Math.max(m ? m.scrollHeight : 0, document.documentElement.scrollHeight); }"
    )
    page.set_viewport_size({"width": size["width"], "height": min(max(int(height), size["height"]), 16000)})
    try:
        page.wait_for_timeout(600)  # Plotly redraws to the new size on the window's resize event
        page.screenshot(path=str(path), full_page=True)
    finally:
        page.set_viewport_size(size)
    return path


def app_pages() -> list[str]:
    """The pages the app should show, in the sidebar's order: "overview" (the default page at ``/``),
    then the stem of each chapter file under chapters/ (``1_kernel_regression``, …)."""
    return ["overview"] + [f.stem for f in sorted((REPO_ROOT / "chapters").glob("*.py"))]


def nav_links(page: Any) -> list[tuple[str, str]]:
    """(label, URL path) of every link of the sidebar navigation, in order (the default page is ``/``)."""
    links = page.locator('[data-testid="stSidebarNav"] [data-testid="stSidebarNavLink"]')
    links.first.wait_for()
    out = []
    for a in links.all():
        out.append((a.inner_text().strip(), urlsplit(a.get_attribute("href") or "").path or "/"))
    return out


def nav_path(page: Any, label_part: str) -> str:
    """The URL path of the sidebar link whose label contains ``label_part`` (case-insensitive)."""
    for label, path in nav_links(page):
        if label_part.lower() in label.lower():
            return path
    raise LookupError(f"no page {label_part!r} in the sidebar: {nav_links(page)}")


def settled(page: Any, timeout: float = RERUN_TIMEOUT_S) -> None:
    """Streamlit connected and idle, nothing stale and every chart drawn, for a second (a question scene has
    no chart, which ``wait_until_drawn`` waits for)."""
    deadline = time.monotonic() + timeout
    quiet_since = None
    while time.monotonic() < deadline:
        s = page_state(page)
        running = (s["connection"], s["script"], s["stale"], s["skeletons"])
        idle = running == ("CONNECTED", "notRunning", 0, 0) and "undrawn" not in s["signature"]
        quiet_since = (quiet_since or time.monotonic()) if idle else None
        if quiet_since is not None and time.monotonic() - quiet_since > 1.0:
            return
        page.wait_for_timeout(100)
    raise TimeoutError(f"{page.url} never settled")
