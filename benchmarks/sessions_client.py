"""The browser side of ``bench_sessions.py``: one visitor's session on a chapter, which presses one slider
(a ``Drill``: chapter 2's hold-out size, or chapter 4's or chapter 5's number of heads) and then checks
that it kept its own settings, URL and charts.

A ``light`` session does not draw its charts: the browser gets an empty module in place of Streamlit's
Plotly component, so the server does all its work (each rerun computes, builds and sends every figure)
while one Chromium can stand in for thirty laptops. Its press ends at the server's "script finished"
message, and its check covers the settings and the URL (the charts are not drawn to compare).
"""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import Callable
from typing import NamedTuple
from urllib.parse import parse_qsl, urlencode, urlsplit

from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

from tests.browser import harness

PLOTLY_CHUNK = "**/static/js/PlotlyChart.*.js"  # Streamlit's lazily loaded chart component
FINISHED_MAX_BYTES = 1024  # "script finished" is tens of bytes; larger frames carry the page's elements
NO_CHART = "export default function NoChart() { return null }\nexport const PlotlyChart = NoChart\n"
LEARNING_RATES = ("0.01", "0.03", "0.1", "0.2", "0.3")  # options of chapter 2's "Learning rate" slider


class Drill(NamedTuple):
    """What a class does on one chapter: the slider every student presses (ArrowRight, from ``start``), and
    the settings that make each student's results their own."""

    page: str  # the chapter's sidebar label
    slider: str  # the label of the slider pressed
    param: str  # its URL parameter
    start: int  # its value before the first press
    end: int | None  # its largest value, when it is fixed
    settings: Callable[[int], dict[str, str]]  # session index → its own URL parameters (the slider's aside)
    widgets: dict[str, str]  # widget label → URL parameter: what each session checks it kept


def masked_settings(index: int) -> dict[str, str]:
    """Chapter 2: the session's own noise seed (its own data), training seed and learning rate."""
    return {"data.seed": str(6000 + index), "masked.seed": str(index),
            "masked.lr": LEARNING_RATES[index % len(LEARNING_RATES)]}


def attention_settings(index: int) -> dict[str, str]:
    """Chapter 4: the session's own noise seed (its own data) and training seed."""
    return {"data.seed": str(6000 + index), "attn.seed": str(index)}


def incontext_settings(index: int) -> dict[str, str]:
    """Chapter 5: the session's own pretraining seed (its own layers, prompts and tasks)."""
    return {"icl.seed": str(index)}


DRILLS = {
    2: Drill("Masked training", "Hold-out size", "masked.holdout", 10, None, masked_settings,
             {"Seed": "masked.seed", "Learning rate": "masked.lr", "sidebar: Noise seed": "data.seed"}),
    4: Drill("Attention", "Number of heads H", "attn.heads", 1, 8, attention_settings,
             {"Seed": "attn.seed", "sidebar: Noise seed": "data.seed"}),
    5: Drill("In context", "Number of heads", "icl.heads", 1, 8, incontext_settings, {"Seed": "icl.seed"}),
}
ALONE = 99  # the index of the session measured alone: settings no session of a class shares


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


async def idle(page, label: str, timeout: float = harness.FIRST_LOAD_TIMEOUT_S) -> dict:
    """A light session's page connected, its script finished, nothing stale (no charts drawn) and the slider
    ``label`` shown."""
    deadline = time.perf_counter() + timeout
    while True:
        state = await page.evaluate(harness.PAGE_STATE_JS)
        ready = state["connection"] == "CONNECTED" and state["script"] == "notRunning"
        if ready and state["stale"] == 0 and await harness.slider_by_label(page, label).count():
            return state
        if time.perf_counter() > deadline:
            raise TimeoutError(f"{page.url} not idle after {timeout:.0f} s: {state}")
        await asyncio.sleep(0.05)


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

    def __init__(self, index: int, drill: Drill, light: bool = False) -> None:
        self.index, self.drill, self.light = index, drill, light
        self.times: list[float] = []
        self.unfinished = 0  # presses the server had not finished within harness.RERUN_TIMEOUT_S
        self.server_times: list[float] = []
        self.finished: list[float] = []
        self.context = self.page = None

    def _watch(self, ws) -> None:
        ws.on("framereceived", lambda payload: script_finished(payload)
              and self.finished.append(time.perf_counter()))

    def settings(self, moves: int = 0) -> dict[str, str]:
        """This session's URL parameters after ``moves`` presses."""
        return {**self.drill.settings(self.index), self.drill.param: str(self.drill.start + moves)}

    async def open(self, browser, base: str, path: str) -> None:
        self.context = await browser.new_context(viewport=harness.VIEWPORT)
        if self.light:
            await self.context.route(PLOTLY_CHUNK, lambda route: route.fulfill(
                status=200, content_type="text/javascript", body=NO_CHART))
        self.page = await self.context.new_page()
        self.page.on("websocket", self._watch)
        url = f"{base}{path}?{urlencode(self.settings())}"
        await self.page.goto(url, timeout=harness.FIRST_LOAD_TIMEOUT_S * 1e3)
        await (idle(self.page, self.drill.slider) if self.light else settle(self.page))

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
        thumb = harness.slider_by_label(self.page, self.drill.slider)
        start = time.perf_counter() + phase
        for k in range(moves):
            if every is not None:
                await asyncio.sleep(max(0.0, start + k * every - time.perf_counter()))
            before = (await self.page.evaluate(harness.PAGE_STATE_JS))["signature"]
            await thumb.focus()
            t = time.perf_counter()
            await self.page.keyboard.press("ArrowRight")
            try:
                await self._pressed(t, before)
            except TimeoutError:  # an overloaded server: counted, and the next press comes as planned
                self.unfinished += 1
                continue
            self.times.append(time.perf_counter() - t)
            if not math.isnan(server := server_time(self.finished, t)):
                self.server_times.append(server)

    async def verify(self, browser, moves: int) -> list[str]:
        """What is wrong with this session's view (empty when it shows its own settings and data)."""
        problems = []
        page = self.page
        await (idle(page, self.drill.slider) if self.light else settle(page))
        widgets = await page.evaluate(harness.WIDGETS_JS)
        want = self.settings(moves)
        for label, param in {self.drill.slider: self.drill.param, **self.drill.widgets}.items():
            if widgets.get(label) != want[param]:
                problems.append(f"widget {label!r} shows {widgets.get(label)!r}, expected {want[param]!r}")
        query = dict(parse_qsl(urlsplit(page.url).query))
        for name, value in want.items():
            if query.get(name) != value:
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
