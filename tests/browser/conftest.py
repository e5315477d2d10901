"""Real-browser fixtures: one `streamlit run app.py` and one Chromium per test session.

The browser tests drive Debian's Chromium (``/usr/bin/chromium``) through Playwright's sync API, since
Playwright's own browser download is not available. Without Chromium or Playwright they are skipped with a
reason, except under ``CI=true``, where they fail instead: CI must never pass by skipping them.

The helpers below (server start and stop, Chromium launch, waiting for Streamlit to be idle with its charts
drawn, the chart-data signature, console-error collection, slider nudging, full-page screenshots) are plain
functions so that the scripts in ``benchmarks/`` reuse exactly what the tests check.
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar
from urllib.parse import urlsplit

import pytest

# The test modules import these helpers as ``kvbrowser``: a name of their own, so another conftest.py
# elsewhere under tests/ (which pytest also imports as ``conftest``) can never shadow them.
sys.modules.setdefault("kvbrowser", sys.modules[__name__])

REPO_ROOT = Path(__file__).resolve().parents[2]
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
SCREENSHOT_DIR = REPO_ROOT / "artifacts" / "screenshots"
VIEWPORT = {"width": 1280, "height": 900}
# Pages without controls of their own (a catalogue of links): the sidebar's slider changes no chart there.
REFERENCE_PATHS = frozenset({"/sources"})

# The first page a fresh server shows compiles the JAX programs (a cold cache takes a while on 2 cores);
# every later wait is for one rerun.
FIRST_LOAD_TIMEOUT_S = 300.0
RERUN_TIMEOUT_S = 90.0


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


# ---------------------------------------------------------------------------------------------- the server


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class StreamlitServer:
    """A ``streamlit run <script>`` child process on a loopback port; ``stop()`` always ends it."""

    script: str
    port: int
    process: subprocess.Popen
    log_path: Path
    started_at: float = field(default_factory=time.perf_counter)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def pid(self) -> int:
        return self.process.pid

    def log_tail(self, chars: int = 4000) -> str:
        try:
            return self.log_path.read_text(errors="replace")[-chars:]
        except OSError:
            return ""

    def wait_healthy(self, timeout: float = 60.0) -> None:
        """Polls ``/_stcore/health`` until it answers ``ok``; raises with the server's log otherwise."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                code = self.process.returncode
                raise RuntimeError(f"streamlit run {self.script} exited with code {code}:\n{self.log_tail()}")
            try:
                with urllib.request.urlopen(f"{self.url}/_stcore/health", timeout=2) as r:
                    if r.status == 200 and r.read().strip() == b"ok":
                        return
            except (urllib.error.URLError, ConnectionError, TimeoutError, OSError):
                pass
            time.sleep(0.1)
        raise TimeoutError(f"streamlit run {self.script} unhealthy after {timeout:.0f} s:\n{self.log_tail()}")

    def stop(self) -> None:
        """Terminate the server's process group, then kill it if it has not exited within 10 s."""
        if self.process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait(timeout=10)


try:  # looked up here, in the parent: the child between fork and exec only calls it
    _PRCTL = ctypes.CDLL(None, use_errno=True).prctl
except (OSError, AttributeError):
    _PRCTL = None


def _die_with_parent() -> None:
    """In the child, before exec: ask Linux to send SIGTERM when the test or benchmark process dies, so a
    killed run (where no fixture teardown happens) never leaves a server behind."""
    if _PRCTL is not None:
        _PRCTL(1, signal.SIGTERM)  # 1 = PR_SET_PDEATHSIG


def start_streamlit(
    script: str = "app.py",
    env: Mapping[str, str] | None = None,
    port: int | None = None,
    health_timeout: float = 60.0,
    launcher: tuple[str, ...] = ("-m", "streamlit"),
) -> StreamlitServer:
    """Starts ``python -m streamlit run <script>`` headless on 127.0.0.1 from the repository root.

    ``env`` adds to (and overrides) the current environment, e.g. ``{"KERNELVIZ_JAX_CACHE": tmp}``;
    ``launcher`` replaces ``-m streamlit`` (a benchmark's timed server, ``benchmarks/timed_streamlit.py``).
    The server runs in its own process group so that ``stop()`` also ends anything it spawned.
    """
    port = port or free_port()
    log = Path(tempfile.mkstemp(prefix="kernelviz-streamlit-", suffix=".log")[1])
    cmd = [
        sys.executable, *launcher, "run", script,
        "--server.headless", "true",
        "--server.port", str(port),
        "--server.address", "127.0.0.1",
        "--browser.gatherUsageStats", "false",
    ]  # fmt: skip
    with log.open("wb") as out:
        process = subprocess.Popen(
            cmd,
            cwd=REPO_ROOT,
            env={**os.environ, "PYTHONUNBUFFERED": "1", **(env or {})},
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            preexec_fn=_die_with_parent,
        )
    server = StreamlitServer(script=script, port=port, process=process, log_path=log)
    try:
        server.wait_healthy(health_timeout)
    except BaseException:
        server.stop()
        raise
    return server


def descendants(pid: int) -> list[int]:
    """Every descendant process of ``pid`` (children, their children, …), from /proc."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        children.setdefault(int(fields[1]), []).append(int(entry.name))
    found, todo = [], [pid]
    while todo:
        kids = children.get(todo.pop(), [])
        found += kids
        todo += kids
    return found


def process_tree_rss(pid: int) -> int:
    """Resident memory of a process plus all its descendants, in bytes (from /proc)."""
    total = 0
    for p in (pid, *descendants(pid)):
        try:
            for line in Path(f"/proc/{p}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1]) * 1024
                    break
        except OSError:
            pass
    return total


# --------------------------------------------------------------------------------------------- the browser


def launch_chromium(playwright: Any, **kwargs: Any) -> Any:
    """Debian's Chromium through Playwright (a fresh temporary profile per launch)."""
    return playwright.chromium.launch(executable_path=str(CHROMIUM_PATH), args=CHROMIUM_ARGS, **kwargs)


# One snapshot of the page, evaluated in the browser: Streamlit's script and connection state, how many
# elements are stale (left over from before a rerun), whether anything is still a skeleton placeholder,
# and a signature of the data of every current (non-stale) Plotly chart. Hashing megabytes of JSON is
# slow, so each chart's hash is cached per data object: Plotly.react swaps the object on every update.
PAGE_STATE_JS = """
() => {
  const cache = window.__kvChartHash || (window.__kvChartHash = new WeakMap());
  const hash = (s) => {
    let h = 2166136261;
    for (let i = 0; i < s.length; i++) { h ^= s.charCodeAt(i); h = Math.imul(h, 16777619); }
    return (h >>> 0).toString(16) + ':' + s.length;
  };
  const app = document.querySelector('[data-testid="stApp"]');
  const charts = [...document.querySelectorAll('[data-testid="stPlotlyChart"] .js-plotly-plot')]
    .filter((gd) => !gd.closest('[data-stale="true"]'));
  const parts = charts.map((gd) => {
    if (!gd.data || !gd._fullLayout) return 'undrawn';
    let h = cache.get(gd.data);
    if (h === undefined) { h = hash(JSON.stringify(gd.data)); cache.set(gd.data, h); }
    return h;
  });
  return {
    script: app ? app.getAttribute('data-test-script-state') : null,
    connection: app ? app.getAttribute('data-test-connection-state') : null,
    stale: document.querySelectorAll('[data-stale="true"]').length,
    skeletons: document.querySelectorAll('[data-testid="stSkeleton"]').length,
    charts: charts.length,
    signature: parts.join(','),
    exceptions: document.querySelectorAll('[data-testid="stException"]').length,
  };
}
"""

# The same test as `is_idle` below, as a predicate for page.wait_for_function (polled every frame); it also
# stops the wait as soon as a finished run left an exception box, which no amount of waiting will fix.
IDLE_AND_CHANGED_JS = (
    "(before) => { const s = (" + PAGE_STATE_JS + ")();"
    " if (s.connection === 'CONNECTED' && s.script === 'notRunning' && s.exceptions > 0) return true;"
    " return s.connection === 'CONNECTED' && s.script === 'notRunning' && s.stale === 0"
    " && s.skeletons === 0 && s.charts > 0 && !s.signature.includes('undrawn')"
    " && (before === null || s.signature !== before); }"
)


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


def sliders(page: Any) -> Any:
    """Every slider thumb on the page (main area and sidebar), as a Playwright locator."""
    return page.locator('[data-testid="stApp"] [role="slider"], [data-testid="stApp"] input[type="range"]')


def slider_by_label(page: Any, label: str) -> Any:
    """The (first) slider thumb whose accessible name is ``label``, e.g. "Hold-out size"."""
    # Not get_by_role: Streamlit's thumb is labelled by itself and by its group, so its accessible name
    # is the label twice ("Width Width"); the aria-label attribute holds the label once.
    name = json.dumps(label)
    return page.locator(
        f'[data-testid="stApp"] input[type="range"][aria-label={name}],'
        f' [data-testid="stApp"] [role="slider"][aria-label={name}]'
    ).first


def slider_label(thumb: Any) -> str:
    return thumb.get_attribute("aria-label") or thumb.evaluate(
        "(el) => el.closest('[data-testid=\"stSlider\"]')?.querySelector('label')?.innerText || ''"
    )


def slider_value(thumb: Any) -> str:
    """The slider's value as shown to the user (aria-valuetext, e.g. "0.50"), falling back to the number."""
    return (
        thumb.get_attribute("aria-valuetext")
        or thumb.get_attribute("aria-valuenow")
        or thumb.evaluate("(el) => String(el.value ?? '')")
    )


def slider_key_towards_middle(thumb: Any) -> str:
    """ArrowRight, or ArrowLeft when the thumb already sits at its maximum: the press always moves it."""
    info = thumb.evaluate(
        "(el) => ({v: Number(el.getAttribute('aria-valuenow') ?? el.value),"
        " max: Number(el.getAttribute('aria-valuemax') ?? el.max)})"
    )
    return "ArrowLeft" if info["v"] >= info["max"] else "ArrowRight"


def slider_values(page: Any) -> dict[str, str]:
    """Label → displayed value of every slider on the page."""
    out: dict[str, str] = {}
    for thumb in sliders(page).all():
        out[slider_label(thumb)] = slider_value(thumb)
    return out


# Margins (l, r, t, b) that Plotly's automargin grew by more than a few pixels: a chart whose labels did
# not fit the margins it asked for (``kf.MARGIN``), which Plotly then drew a second time;
# one "chart <i> <side>: asked → drawn" per grown margin.
GROWN_MARGINS_JS = """() => [...document.querySelectorAll('[data-testid="stPlotlyChart"] .js-plotly-plot')]
  .map((gd, i) => { const m = gd._fullLayout.margin, s = gd._fullLayout._size;
    return ['l', 'r', 't', 'b'].filter((k) => s[k] - m[k] > 4)
      .map((k) => `chart ${i} ${k}: ${m[k]} → ${s[k]}`); })
  .flat()"""


# Label → value of every widget the user sees (sliders, select boxes, radios, checkboxes, number inputs),
# sidebar widgets prefixed with "sidebar: ". Values are what the page displays, e.g. "0.50" or "Gaussian".
WIDGETS_JS = """
() => {
  const kinds = ['stSlider', 'stSelectSlider', 'stSelectbox', 'stRadio', 'stCheckbox', 'stToggle',
                 'stNumberInput', 'stMultiSelect', 'stTextInput'];
  const selector = kinds.map((k) => `[data-testid="stApp"] [data-testid="${k}"]`).join(',');
  const out = {};
  for (const w of document.querySelectorAll(selector)) {
    if (w.closest('[data-stale="true"]')) continue;
    const kind = w.getAttribute('data-testid');
    const labelEl = w.querySelector('[data-testid="stWidgetLabel"]');
    let label = (labelEl ? labelEl.innerText : w.innerText).trim();
    let value;
    if (kind === 'stSlider' || kind === 'stSelectSlider') {
      value = [...w.querySelectorAll('input[type="range"], [role="slider"]')]
        .map((e) => e.getAttribute('aria-valuetext') || e.getAttribute('aria-valuenow') || e.value)
        .join(' – ');
    } else if (kind === 'stSelectbox' || kind === 'stMultiSelect') {
      const combo = w.querySelector('input[role="combobox"]');
      const box = w.querySelector('[data-baseweb="select"]');
      value = combo ? combo.value : (box ? box.innerText : '').trim();
    } else if (kind === 'stRadio') {
      const c = w.querySelector('input:checked');
      value = c ? (c.closest('label') || c.parentElement).innerText.trim() : '';
    } else if (kind === 'stCheckbox' || kind === 'stToggle') {
      const c = w.querySelector('input');
      value = String(!!(c && c.checked));
    } else {
      const i = w.querySelector('input');
      value = i ? i.value : '';
    }
    if (w.closest('[data-testid="stSidebar"]')) label = 'sidebar: ' + label;
    out[label] = value;
  }
  return out;
}
"""


def widget_values(page: Any) -> dict[str, str]:
    """Label → displayed value of every widget on the page (see WIDGETS_JS)."""
    return page.evaluate(WIDGETS_JS)


def _open_select(page: Any, label: str) -> Any:
    """Opens the list of the select box labelled ``label``; returns the locator of its options."""
    box = page.locator('[data-testid="stApp"] [data-testid="stSelectbox"]').filter(
        has=page.locator('[data-testid="stWidgetLabel"]', has_text=label)
    ).first
    # Streamlit's select box is a combo box with an "Open" button (older releases: a BaseWeb select).
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    opener = box.locator('button[aria-haspopup="listbox"], [data-baseweb="select"]').first
    options = page.get_by_role("option")
    for attempt in range(3):  # a click that lands while the page scrolls may not open the list
        opener.scroll_into_view_if_needed()
        opener.click()
        try:
            options.first.wait_for(timeout=5000)
            return options
        except PlaywrightTimeout:
            if attempt == 2:
                raise
            page.keyboard.press("Escape")
    return options


def choose_option(page: Any, label: str, option: str) -> None:
    """Opens the select box labelled ``label`` and picks the option whose text is ``option``."""
    _open_select(page, label).filter(has_text=re.compile(rf"^\s*{re.escape(option)}\s*$")).first.click()


def select_options(page: Any, label: str) -> list[str]:
    """The option texts of the select box labelled ``label`` (opens it, reads, closes with Escape)."""
    texts = [t.strip() for t in _open_select(page, label).all_inner_texts()]
    page.keyboard.press("Escape")
    return texts


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
    then the stem of each chapter file under pages/ (``1_kernel_regression``, …)."""
    return ["overview"] + [f.stem for f in sorted((REPO_ROOT / "pages").glob("*.py"))]


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


# ------------------------------------------------------------------------------------------------ fixtures


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Skips browser tests where Chromium or Playwright is missing, unless CI=true (then they fail)."""
    reason = browser_unavailable_reason()
    if reason is None or in_ci():
        return
    skip = pytest.mark.skip(reason=f"browser test skipped: {reason} (under CI=true this is a failure)")
    for item in items:
        if "browser" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(scope="session")
def streamlit_server() -> Iterator[StreamlitServer]:
    """One `streamlit run app.py` for the whole session, stopped (terminate, then kill) at the end."""
    reason = browser_unavailable_reason()
    if reason is not None:
        pytest.fail(f"CI=true requires the browser tests to run, but {reason}", pytrace=False)
    if not (REPO_ROOT / "app.py").exists():
        pytest.fail("app.py is missing: nothing to test in the browser", pytrace=False)
    server = start_streamlit("app.py")
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="session")
def playwright_instance() -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        yield p


@pytest.fixture(scope="session")
def browser(playwright_instance: Any) -> Iterator[Any]:
    """One Chromium for the whole session; each test opens its own context (cookies, storage, tabs)."""
    reason = browser_unavailable_reason()
    if reason is not None:
        pytest.fail(f"CI=true requires the browser tests to run, but {reason}", pytrace=False)
    b = launch_chromium(playwright_instance)
    try:
        yield b
    finally:
        b.close()


@pytest.fixture(scope="session")
def site_nav(streamlit_server: StreamlitServer, browser: Any) -> list[tuple[str, str]]:
    """The sidebar's (label, URL path) links, read once the first page has been drawn (so the one-off
    warm-up is not charged to any single test)."""
    context = browser.new_context(viewport=VIEWPORT)
    try:
        page = context.new_page()
        page.goto(streamlit_server.url + "/")
        wait_until_drawn(page, timeout=FIRST_LOAD_TIMEOUT_S)
        return nav_links(page)
    finally:
        context.close()


@pytest.fixture(scope="session")
def warm_server(streamlit_server: StreamlitServer, site_nav: list[tuple[str, str]]) -> StreamlitServer:
    """The server after its first page has been drawn."""
    return streamlit_server


@pytest.fixture
def context(browser: Any) -> Iterator[Any]:
    ctx = browser.new_context(viewport=VIEWPORT)
    ctx.set_default_timeout(RERUN_TIMEOUT_S * 1e3)
    try:
        yield ctx
    finally:
        ctx.close()


@pytest.fixture
def errors() -> BrowserErrors:
    return BrowserErrors()


@pytest.fixture
def page(context: Any, errors: BrowserErrors) -> Any:
    """A fresh tab whose console errors and uncaught exceptions end up in ``errors``."""
    p = context.new_page()
    errors.attach(p)
    return p
