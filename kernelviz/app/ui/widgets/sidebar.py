"""The shared data sidebar: the data set every page works on (built in or a CSV upload) and its messages."""

from __future__ import annotations

import hashlib
import inspect
from collections.abc import MutableMapping
from dataclasses import dataclass
from typing import Any, NamedTuple

import streamlit as st

import kernelviz as kv
from kernelviz.app import defaults
from kernelviz.app.ui.page_data import GRID_POINTS, Data
from kernelviz.app.ui.widgets.controls import field
from kernelviz.app.ui.widgets.text import md_escape
from kernelviz.app.views.settings import Control, Controls
from kernelviz.data.csvfile import MAX_CSV_MB
from kernelviz.data.datasets import subsample
from kernelviz.models.training import TRAIN_MAX_POINTS
from kernelviz.runtime.i18n import _

__all__ = [
    "DATA_CONTROLS",
    "GRID_POINTS",
    "POINT_CHOICES",
    "SOURCES",
    "CsvUpload",
    "Data",
    "DataChoice",
    "apply_upload",
    "builtin_data",
    "csv_preview",
    "current_data",
    "data_messages",
    "data_sidebar",
    "data_summary",
    "make_data",
    "native_sample",
    "point_options",
]

POINT_CHOICES = defaults.POINT_CHOICES

# session_state keys that are not widgets
_UPLOAD = "kv._upload"  # the last CSV upload that parsed (a CsvUpload)
_UPLOAD_ERROR = "kv._upload_error"  # the message of the last upload that did not parse
_LAST_GOOD = "kv._last_good"  # the last Data that loaded, kept when a new choice fails
_DATA = "kv._data"  # the Data of the current run
_DATA_ERROR = "kv._data_error"

SOURCES = {  # data-set identifier → the name the selectbox shows
    "blog": _("Heteroskedastic sine (blog post)"),
    "d2l": _("2 sin x + x^0.8 (d2l)"),
    "csv": _("Your CSV upload"),
}


@dataclass(frozen=True)
class CsvUpload:
    """A CSV that parsed: file name, the bytes, their SHA-256 (the cache key) and its numeric columns."""

    filename: str
    content: bytes
    digest: str
    columns: tuple[str, ...]
    n_rows_read: int


@st.cache_resource(max_entries=16, show_spinner=False)
def _builtin(name: str, n: int, seed: int) -> kv.Dataset:
    return kv.make_dataset(name, n=n, seed=seed)


@st.cache_resource(max_entries=8, show_spinner=False)
def _from_csv(digest: str, x_column: str | None, y_column: str | None, _content: bytes) -> kv.Dataset:
    """The parsed CSV, cached by the content's SHA-256 and the columns (the bytes are not re-hashed)."""
    return kv.load_csv(_content, x_column=x_column, y_column=y_column)


@st.cache_resource(max_entries=16, show_spinner=False)
def _train_subset(key: tuple, _ds: kv.Dataset) -> kv.Dataset:
    return subsample(_ds, TRAIN_MAX_POINTS)


def make_data(key: tuple, ds: kv.Dataset) -> Data:
    """A ``Data`` for ``ds`` identified by ``key``, with its training subsample."""
    return Data(key=key, ds=ds, train=_train_subset(key, ds))


def builtin_data(source: str, n: int, seed: int) -> Data:
    """The built-in data set ``source`` drawn with ``n`` points from noise seed ``seed``, as a ``Data``."""
    return make_data((source, int(n), int(seed)), _builtin(source, int(n), int(seed)))


def point_options(source: str) -> tuple[int, ...]:
    """The values of the number-of-points slider for the built-in data set ``source``: ``POINT_CHOICES``
    and the data set's own size."""
    return tuple(sorted({*POINT_CHOICES, native_sample(source)[0]}))


def apply_upload(state: MutableMapping[str, Any], content: bytes, filename: str) -> str | None:
    """Parse uploaded CSV ``content``; on success remember it in ``state`` and select it, return None.

    On failure return the ``kv.DataError`` message (also kept in ``state`` for the page to show) and leave
    the previous upload and data set untouched, so every control keeps working.
    ``state`` is ``st.session_state`` in the app and a plain dict in tests.
    """
    try:
        ds = kv.load_csv(content)
    except kv.DataError as exc:
        state[_UPLOAD_ERROR] = _("Could not use {filename}: {error}").format(filename=filename, error=exc)
        return state[_UPLOAD_ERROR]
    digest = hashlib.sha256(content).hexdigest()
    state[_UPLOAD] = CsvUpload(filename, bytes(content), digest, ds.columns, ds.n_rows_read)
    state[_UPLOAD_ERROR] = None
    key = DATA_CONTROLS.key
    state[key("source")], state[key("xcol")], state[key("ycol")] = "csv", ds.x_label, ds.y_label
    return None


def _on_upload() -> None:
    file = st.session_state.get("data.upload")
    if file is None:
        return
    apply_upload(st.session_state, file.getvalue(), file.name)


def native_sample(name: str) -> tuple[int, int]:
    """(n, seed) of the built-in data set ``name`` as its source draws it: (150, 2024) for the blog post's,
    (50, 0) for d2l's."""
    params = inspect.signature(kv.DATASETS[name].factory).parameters
    return int(params["n"].default), int(params["seed"].default)


def _native_size() -> None:
    """When the data set changes, start from its own size and seed."""
    state, key = st.session_state, DATA_CONTROLS.key
    name = state.get(key("source"))
    if name in kv.DATASETS:
        state[key("n")], state[key("seed")] = native_sample(name)


class DataChoice(NamedTuple):
    """The shared sidebar's settings: the data set (``source``), its size and noise seed (a built-in
    set's), the columns used as x and y (a CSV's with more than two)."""

    source: str
    n: int
    seed: int
    xcol: str = ""
    ycol: str = ""


class DataContext(NamedTuple):
    """What the sidebar's controls depend on: whether the page uses the shared data (``used``), whether a
    CSV has been uploaded, the data set chosen, the CSV's numeric columns and the x column chosen."""

    used: bool
    uploaded: bool
    source: str
    columns: tuple[str, ...] = ()
    xcol: str = ""


def _unused(ctx: DataContext) -> bool:
    return not ctx.used


def _others(ctx: DataContext) -> tuple[str, ...]:
    return tuple(c for c in ctx.columns if c != ctx.xcol)


# Each data set opens at its own size and seed (``opens_at``); the start record holds the blog post's.
DATA_CONTROLS = Controls(DataChoice("blog", *native_sample("blog")), "data", {
    "source": Control(
        _("Data set"), "selectbox", options=lambda ctx: ("blog", "d2l", *(("csv",) if ctx.uploaded else ())),
        names=SOURCES, disabled=_unused, notched=False,
        help=_("The two synthetic sets come from the sources; upload a CSV below to use your own data.")),
    "n": Control(
        _("Number of points n"), "select_slider", options=lambda ctx: point_options(ctx.source),
        opens_at=lambda ctx: native_sample(ctx.source)[0], disabled=_unused,
        help=_("How many (x, y) pairs to draw from the data set's formula.")),
    "seed": Control(
        _("Noise seed"), "number", low=0, high=99_999, step=1, notched=False,
        opens_at=lambda ctx: native_sample(ctx.source)[1], disabled=_unused,
        help=_("Seed of the random noise: another seed is another sample of the same curve.")),
    "xcol": Control(_("x column"), "selectbox", options=lambda ctx: ctx.columns,
                    opens_at=lambda ctx: ctx.columns[0], disabled=_unused, notched=False),
    "ycol": Control(_("y column"), "selectbox", options=_others, opens_at=lambda ctx: _others(ctx)[0],
                    disabled=_unused, notched=False),
})


def _csv_data(upload: CsvUpload, ctx: DataContext) -> Data:
    """The uploaded CSV as a ``Data``; with more than two numeric columns, x and y are chosen here."""
    xcol = ycol = None
    if len(upload.columns) > 2:
        ctx = ctx._replace(columns=upload.columns)
        xcol = field(DATA_CONTROLS, "xcol", ctx)
        ycol = field(DATA_CONTROLS, "ycol", ctx._replace(xcol=xcol))
    ds = _from_csv(upload.digest, xcol, ycol, upload.content)
    return make_data(("csv", upload.digest, ds.x_label, ds.y_label), ds)


def _builtin_data(ctx: DataContext) -> Data:
    """A built-in data set as a ``Data``, with its number of points and noise seed chosen here."""
    return builtin_data(ctx.source, field(DATA_CONTROLS, "n", ctx), field(DATA_CONTROLS, "seed", ctx))


def data_sidebar(used: bool = True) -> Data:
    """Draw the shared sidebar (data set, number of points, noise seed, CSV upload) and return the data.

    A choice that cannot be loaded keeps the last good data set; the message is shown by
    ``data_messages`` in the page. On a page that draws its own data (``used`` False) the controls are
    shown disabled, keeping their values for the other pages.
    """
    state = st.session_state
    upload: CsvUpload | None = state.get(_UPLOAD)
    with st.sidebar:
        st.header(_("Data"))
        ctx = DataContext(used, upload is not None, "blog")
        source = field(DATA_CONTROLS, "source", ctx, on_change=_native_size)
        ctx = ctx._replace(source=source)
        if not used:
            st.caption(_("This page draws its own data; these controls apply to chapters 1 to 4."))
        try:
            csv = source == "csv" and upload is not None
            data = _csv_data(upload, ctx) if csv else _builtin_data(ctx)
            state[_LAST_GOOD] = data
            state[_DATA_ERROR] = None
        except kv.DataError as exc:
            state[_DATA_ERROR] = str(exc)
            data = state.get(_LAST_GOOD) or builtin_data("blog", *native_sample("blog"))
        st.file_uploader(
            _("Your own data (CSV)"),
            type=["csv", "txt", "tsv"],
            key="data.upload",
            on_change=_on_upload,
            help=_("Two numeric columns (x, y); with more, choose them above. Up to {mb} MB.").format(
                mb=MAX_CSV_MB),
            disabled=not used,
        )
        if upload is not None and source == "csv":
            st.caption(_("File: {name} · {rows:,} rows read").format(name=md_escape(upload.filename),
                                                                      rows=upload.n_rows_read))
    state[_DATA] = data
    return data


def current_data() -> Data:
    """The data set of this run, as chosen in the shared sidebar (drawn by app.py before the page runs)."""
    data = st.session_state.get(_DATA)
    if data is None:
        data = data_sidebar()
    return data


def data_messages(data: Data) -> None:
    """Errors about the data (bad upload, a column choice that fails) and, for user data, a preview."""
    for err in (st.session_state.get(_UPLOAD_ERROR), st.session_state.get(_DATA_ERROR)):
        if err:
            st.error(_("{error}  \nThe previous data set stays in use.").format(error=md_escape(err)),
                     icon=":material/warning:")
    csv_preview(data)


def data_summary(data: Data, *, training: bool = False) -> None:
    """One caption line about the data in use; says when training uses a subsample."""
    ds = data.ds
    parts = [_("Data: {title} · {n:,} points").format(title=md_escape(ds.title), n=data.n)]
    if ds.name == "csv":
        parts.append(_("x = {x}, y = {y}").format(x=md_escape(ds.x_label), y=md_escape(ds.y_label)))
    if training and data.subsampled:
        parts.append(_(
            "training and leave-one-out use an even subsample of {used:,} of the {n:,} points (subsample, "
            "limit {limit:,}); the fit is drawn with all of them"
        ).format(used=len(data.train), n=data.n, limit=TRAIN_MAX_POINTS))
    st.caption(" · ".join(parts))


def csv_preview(data: Data, rows: int = 8) -> None:
    """For user data: the first rows used (x, y), the number of rows used and what loading did."""
    ds = data.ds
    if ds.name != "csv":
        return
    xname, yname = ds.x_label, ds.y_label
    if xname == yname:
        xname, yname = f"{xname} (x)", f"{yname} (y)"
    title = _("Your data: {used:,} rows used of {read:,} read").format(used=len(ds), read=ds.n_rows_read)
    with st.expander(title, expanded=False, icon=":material/table_chart:"):
        st.dataframe({xname: ds.x[:rows], yname: ds.y[:rows]}, hide_index=True)
        notes = " ".join(md_escape(n) for n in ds.notes)  # what loading did (kernelviz.data.csvfile's words)
        st.caption(_("First rows after sorting by x. {notes}").format(notes=notes))
