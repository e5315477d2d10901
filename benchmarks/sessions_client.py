"""The browser side of ``bench_sessions.py``: one visitor's session on chapter 2, which presses the hold-out
slider and then checks that it kept its own settings, URL and charts.

A ``light`` session does not draw its charts: the browser gets an empty module in place of Streamlit's
Plotly component, so the server does all its work (each rerun computes, builds and sends every figure)
while one Chromium can stand in for thirty laptops. Its press ends at the server's "script finished"
message, and its check covers the settings and the URL (the charts are not drawn to compare).
"""

from __future__ import annotations

import asyncio
import math
import time
from urllib.parse import parse_qsl, urlsplit

from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

from tests.browser import harness

HOLDOUT = "Hold-out size"
PLOTLY_CHUNK = "**/static/js/PlotlyChart.*.js"  # Streamlit's lazily loaded chart component
FINISHED_MAX_BYTES = 1024  # "script finished" is tens of bytes; larger frames carry the page's elements
NO_CHART = "export default function NoChart() { return null }\nexport const PlotlyChart = NoChart\n"


async def wait_drawn(page, before: str | None = None, timeout: float = harness.RERUN_TIMEOUT_S) -> dict:
    """Async twin of the test helpers: idle with charts drawn (and, given ``before``, new chart data)."""
    await page.wait_for_function(
        harness.IDLE_AND_CHANGED_JS, arg=before, polling="raf", timeout=timeout * 1e3
    )
    state = await page.evaluate(harness.PAGE_STATE_JS)
    if state["exceptions"]:
        texts = await page.locator('[data-testid="stException"]').all_inner_texts()
        raise harness.AppExceptionError(f"{page.url} shows an exception:\n" + "\n".join(texts))
    return state


async def settle(page) -> dict:
    """Waits until the page is idle and stays so (same chart data) for 0.4 s."""
    while True:
        first = await wait_drawn(page, timeout=harness.FIRST_LOAD_TIMEOUT_S)
        await page.wait_for_timeout(400)
        second = await page.evaluate(harness.PAGE_STATE_JS)
        if harness.is_idle(second) and second["signature"] == first["signature"]:
            return second


async def idle(page, timeout: float = harness.FIRST_LOAD_TIMEOUT_S) -> dict:
    """A light session's page connected, its script finished and nothing stale (no charts drawn)."""
    deadline = time.perf_counter() + timeout
    while True:
        state = await page.evaluate(harness.PAGE_STATE_JS)
        ready = state["connection"] == "CONNECTED" and state["script"] == "notRunning"
        if ready and state["stale"] == 0 and await holdout_thumb(page).count():
            return state
        if time.perf_counter() > deadline:
            raise TimeoutError(f"{page.url} not idle after {timeout:.0f} s: {state}")
        await asyncio.sleep(0.05)


def holdout_thumb(page):
    return page.locator(f'[data-testid="stApp"] input[type="range"][aria-label="{HOLDOUT}"]').first


def script_finished(payload: bytes | str) -> bool:
    """Whether a websocket frame from the server is Streamlit's "script finished" message."""
    if isinstance(payload, str) or len(payload) > FINISHED_MAX_BYTES:  # a delta, a figure: not parsed
        return False
    msg = ForwardMsg()
    try:
        msg.ParseFromString(payload)
    except Exception:  # not a ForwardMsg: not ours to judge
        return False
    return msg.WhichOneof("type") == "script_finished"


def server_time(finished: list[float], since: float) -> float:
    """Seconds from ``since`` (a key press) to the last "script finished" message at or after it (NaN when
    none came): the server's part of a press."""
    done = [f for f in finished if f >= since]
    return done[-1] - since if done else math.nan


class Session:
    """One visitor: a browser context with its own settings, which it moves and then verifies.

    ``times`` are key press → repainted charts (server and browser); ``server_times`` key press → the
    server's "script finished" message (the rerun's work on the server, without the browser's drawing).
    """

    def __init__(self, index: int, data_seed: int, seed: int, lr: str, light: bool = False) -> None:
        self.index, self.data_seed, self.seed, self.lr = index, data_seed, seed, lr
        self.light = light
        self.times: list[float] = []
        self.server_times: list[float] = []
        self.finished: list[float] = []
        self.context = self.page = None

    def _watch(self, ws) -> None:
        ws.on("framereceived", lambda payload: script_finished(payload)
              and self.finished.append(time.perf_counter()))

    @property
    def start_url_query(self) -> str:
        return f"data.seed={self.data_seed}&masked.seed={self.seed}&masked.lr={self.lr}&masked.holdout=10"

    async def open(self, browser, base: str, path: str) -> None:
        self.context = await browser.new_context(viewport=harness.VIEWPORT)
        if self.light:
            await self.context.route(PLOTLY_CHUNK, lambda route: route.fulfill(
                status=200, content_type="text/javascript", body=NO_CHART))
        self.page = await self.context.new_page()
        self.page.on("websocket", self._watch)
        url = f"{base}{path}?{self.start_url_query}"
        await self.page.goto(url, timeout=harness.FIRST_LOAD_TIMEOUT_S * 1e3)
        await (idle(self.page) if self.light else settle(self.page))

    async def _pressed(self, t: float, before: str) -> None:
        """Until the press at ``t`` is done: its charts repainted, or (light) the server finished it."""
        if not self.light:
            await wait_drawn(self.page, before)
            return
        deadline = t + harness.RERUN_TIMEOUT_S
        while math.isnan(server_time(self.finished, t)):
            if time.perf_counter() > deadline:
                raise TimeoutError(f"session {self.index}: no script finished after a press")
            await asyncio.sleep(0.005)

    async def move(self, moves: int, every: float | None = None, phase: float = 0.0) -> None:
        """``moves`` presses, one after another, or (``every``) the k-th at ``phase + k·every`` seconds from
        now (at once when the previous one is still being drawn)."""
        thumb = holdout_thumb(self.page)
        start = time.perf_counter() + phase
        for k in range(moves):
            if every is not None:
                await asyncio.sleep(max(0.0, start + k * every - time.perf_counter()))
            before = (await self.page.evaluate(harness.PAGE_STATE_JS))["signature"]
            await thumb.focus()
            t = time.perf_counter()
            await self.page.keyboard.press("ArrowRight")
            await self._pressed(t, before)
            self.times.append(time.perf_counter() - t)
            if not math.isnan(server := server_time(self.finished, t)):
                self.server_times.append(server)

    async def verify(self, browser, moves: int) -> list[str]:
        """What is wrong with this session's view (empty when it shows its own settings and data)."""
        problems = []
        page = self.page
        await (idle(page) if self.light else settle(page))
        widgets = await page.evaluate(harness.WIDGETS_JS)
        want = {
            "Hold-out size": str(10 + moves),
            "Seed": str(self.seed),
            "Learning rate": self.lr,
            "sidebar: Noise seed": str(self.data_seed),
        }
        for label, value in want.items():
            if widgets.get(label) != value:
                problems.append(f"widget {label!r} shows {widgets.get(label)!r}, expected {value!r}")
        query = dict(parse_qsl(urlsplit(page.url).query))
        for name, value in {"data.seed": self.data_seed, "masked.seed": self.seed,
                            "masked.holdout": 10 + moves}.items():
            if query.get(name) != str(value):
                problems.append(f"URL has {name}={query.get(name)!r}, expected {value}")
        if await page.locator('[data-testid="stException"]').count():
            problems.append("exception box")
        if self.light:
            return [f"session {self.index}: {p}" for p in problems]
        mine = (await page.evaluate(harness.PAGE_STATE_JS))["signature"]
        fresh_context = await browser.new_context(viewport=harness.VIEWPORT)
        try:
            fresh = await fresh_context.new_page()
            await fresh.goto(page.url)
            theirs = (await settle(fresh))["signature"]
        finally:
            await fresh_context.close()
        if mine != theirs:
            problems.append("charts differ from a new session opened at the same URL")
        return [f"session {self.index}: {p}" for p in problems]
