"""A student's phone without a browser, for ``bench_class.py``: one Streamlit session over the websocket
(``/_stcore/stream``, Streamlit's own protobuf messages), which opens ``/?join=CODE``, answers the question
with the slider and Send as the page's widgets would, and keeps polling as the page does (it follows the
server's ``auto_rerun`` messages: the join view's fragment, every ``join.POLL_S`` seconds).

Each student is an asyncio task, so one process stands in for a class of phones; what it measures is the
server's side: the answer acknowledged ("Answer recorded" in the page the rerun sent back) and when.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field

import websockets
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

RECEIPT = "Answer recorded"


@dataclass
class Student:
    """One headless phone: its view's widgets (ids from the page's messages), its address, and what
    became of its answer."""

    url: str  # the server's (or the load balancer's) http address
    code: str
    query: str = ""
    slider: str | None = None
    button: str | None = None
    fragments: dict[str, float] = field(default_factory=dict)  # fragment id → its rerun interval, s
    sent_at: float | None = None
    acked_at: float | None = None
    texts: list[str] = field(default_factory=list)
    polls: int = 0


def _read(student: Student, msg: ForwardMsg) -> bool:
    """Take what the page says in ``msg``; True at the end of a script run."""
    kind = msg.WhichOneof("type")
    if kind == "page_info_changed":
        student.query = msg.page_info_changed.query_string
    elif kind == "auto_rerun":
        student.fragments[msg.auto_rerun.fragment_id] = msg.auto_rerun.interval
    elif kind == "delta" and msg.delta.WhichOneof("type") == "new_element":
        element = msg.delta.new_element
        which = element.WhichOneof("type")
        if which == "slider":
            student.slider = element.slider.id
        elif which == "button" and element.button.label == "Send":
            student.button = element.button.id
        elif which in ("alert", "markdown"):
            student.texts.append(getattr(element, which).body)
    return kind == "script_finished"


def _rerun(student: Student, value: float | None = None, fragment: str | None = None) -> bytes:
    msg = BackMsg()
    state = msg.rerun_script
    state.query_string = student.query
    if fragment is not None:
        state.fragment_id, state.is_auto_rerun = fragment, True
    if value is not None:
        slider = state.widget_states.widgets.add()
        slider.id = student.slider
        slider.double_array_value.data.append(value)
        button = state.widget_states.widgets.add()
        button.id, button.trigger_value = student.button, True
    return msg.SerializeToString()


async def _until_finished(ws: websockets.ClientConnection, student: Student) -> None:
    while True:
        msg = ForwardMsg()
        msg.ParseFromString(await ws.recv())
        if _read(student, msg):
            return


async def _poll(ws: websockets.ClientConnection, student: Student, stop: asyncio.Event) -> None:
    """What the join view's browser does between answers: rerun each fragment at its interval."""
    while not stop.is_set():
        await asyncio.sleep(min(student.fragments.values(), default=2.0))
        for fragment in list(student.fragments):
            await ws.send(_rerun(student, fragment=fragment))
            student.polls += 1


async def attend(student: Student, value: float, answer_at: float, stop: asyncio.Event) -> Student:
    """Join, answer ``value`` at ``answer_at`` (time.monotonic()), and poll until ``stop`` is set."""
    address = student.url.replace("http", "ws", 1) + "/_stcore/stream"
    async with websockets.connect(address, subprotocols=["streamlit"], max_size=None,
                                  open_timeout=60) as ws:
        student.query = f"join={student.code}"
        await ws.send(_rerun(student))
        await _until_finished(ws, student)
        await asyncio.sleep(max(answer_at - time.monotonic(), 0.0))
        student.sent_at = time.monotonic()
        await ws.send(_rerun(student, value=value))
        student.texts.clear()
        await _until_finished(ws, student)
        if any(RECEIPT in t for t in student.texts):
            student.acked_at = time.monotonic()
        poller = asyncio.create_task(_poll(ws, student, stop))
        reader = asyncio.create_task(_drain(ws, student))
        await stop.wait()
        poller.cancel()
        reader.cancel()
    return student


async def _drain(ws: websockets.ClientConnection, student: Student) -> None:
    """Read (and let go of) what the polling reruns send back."""
    while True:
        msg = ForwardMsg()
        msg.ParseFromString(await ws.recv())
        _read(student, msg)
