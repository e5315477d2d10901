"""Streamlit glue: the shared data sidebar, URL-mirrored controls, cached calls into the backend, page text.

This is the only module of kernelviz that imports streamlit. Pages stay thin: widgets (``control``), words
(``chapter_header``, ``try_this``, ``st.latex``) and figures (builders from ``kernelviz.figures`` shown with
``show``); the maths lives in the other kernelviz modules and is reached through cached functions.

How to add a chapter
--------------------
1. Put the maths in a kernelviz module (exported from ``kernelviz/__init__.py``) and the Plotly builders
   in ``kernelviz/figures.py`` (NumPy in, ``go.Figure`` out; colours from ``COLORS``/``HEAD_COLORS``;
   finish with ``style``).
2. Write ``pages/N_name.py``::

       import streamlit as st
       import kernelviz as kv
       from kernelviz import figures as kf
       from kernelviz import ui

       data = ui.current_data()                       # the data set chosen in the shared sidebar
       ui.chapter_header("3 · Multi-head kernel regression", lead="…", source="Blog post (seed 000), …")
       heads = ui.control("slider", "Number of heads", "mh.heads", default=2, min_value=1,
                          max_value=kv.HEADS_MAX)   # keyed per page, mirrored in the URL as ?mh.heads=2
       with ui.busy(f"Training {heads} heads by masked training…"):
           result = fit_heads(data, heads)            # decorated with @ui.cached_on_data(train=True)
       ui.show(kf.fit_figure(...), key="mh.fit", filename="kernelviz-multihead-fit")
       ui.try_this(["…", "…"])

   Widget keys start with a short page prefix ("kr.", "masked.", "mh.", "attn."); the key is also the URL
   query parameter. ``control`` validates and clamps whatever the URL says and ignores junk.
3. Register the file in app.py's ``CHAPTERS`` list (path, title, icon, one-line summary, preview builder).
4. Test it in tests/test_app.py (``AppTest.switch_page``; the control sweep picks up the new keys when the
   page is added to its table).

Public helpers
--------------
* ``control(kind, label, key, *, default, ...)``: a widget whose value round-trips through the URL.
* ``lengthscale_control(label, key, data, *, default=None)``: ℓ on a log scale, scaled to the data.
* ``log_options(lo, hi, per_decade)``: "nice" log-spaced values for a select_slider.
* ``current_data()`` → ``Data``: the shared data set (key, ds, train, grid(), truth()).
* ``data_sidebar()`` → ``Data``: draws the shared sidebar (app.py calls it once per run).
* ``apply_upload(state, content, filename)``: parse CSV bytes into the session (testable without a browser).
* ``cached_on_data(fn)`` / ``cached_on_data(train=True)``: cache ``fn(ds, *scalars)`` by (data key, scalars).
* ``predict``, ``heatmap_weights``, ``knn``, ``loo_curve``, ``loo_optimum``, ``fit``, ``fit_seeds``,
  ``fit_parametric``: cached backend calls used by chapters 1 and 2.
* ``training_work(n, holdout, steps, seeds)``: a size estimate of masked training, to keep pages live.
* ``show(fig, key, filename)``: st.plotly_chart with the Streamlit theme and a PNG download.
* ``chapter_header``, ``try_this``, ``busy``, ``md_escape``, ``data_summary``, ``csv_preview``, ``sync_url``.
"""

from __future__ import annotations

import functools
import hashlib
import math
from collections.abc import Callable, Iterator, MutableMapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import numpy as np
import plotly.graph_objects as go
import streamlit as st

import kernelviz as kv
from kernelviz import figures as kf
from kernelviz.smoothing import bucket

__all__ = [
    "CsvUpload",
    "Data",
    "apply_upload",
    "busy",
    "cached_on_data",
    "chapter_header",
    "control",
    "current_data",
    "data_sidebar",
    "data_summary",
    "fit",
    "fit_parametric",
    "fit_seeds",
    "heatmap_weights",
    "knn",
    "lengthscale_control",
    "log_options",
    "loo_curve",
    "loo_optimum",
    "md_escape",
    "predict",
    "show",
    "sync_url",
    "try_this",
]

GRID_POINTS = 256  # query grid of every fit figure (kv.warmup compiles for it)
HEATMAP_QUERIES = 96  # rows of an attention heatmap
HEATMAP_KEYS = 1500  # keys of a heatmap: bigger data sets show an even subsample of this size
POINT_CHOICES = (10, 20, 30, 50, 75, 100, 150, 200, 300, 500, 1000, 2000, 5000)

# session_state keys that are not widgets
_SHADOW = "kv._values"  # last value of every control, restored when a page is revisited
_RENDERED = "kv._rendered"  # controls drawn in the current run (the URL mirrors exactly these)
_SPECS = "kv._specs"  # label and accepted values each control was last drawn with
_UPLOAD = "kv._upload"  # the last CSV upload that parsed (a CsvUpload)
_UPLOAD_ERROR = "kv._upload_error"  # the message of the last upload that did not parse
_LAST_GOOD = "kv._last_good"  # the last Data that loaded, kept when a new choice fails
_DATA = "kv._data"  # the Data of the current run
_DATA_ERROR = "kv._data_error"

SOURCES = {
    "blog": "Heteroskedastic sine (blog post)",
    "d2l": "2 sin x + x^0.8 (d2l)",
    "csv": "Your CSV upload",
}


# ---------------------------------------------------------------------------------------------------------
# Text
# ---------------------------------------------------------------------------------------------------------

_MD_SPECIAL = set("\\`*_{}[]()<>#+-.!|$~:")


def md_escape(text: object) -> str:
    """``text`` with every Markdown/LaTeX/HTML special character backslash-escaped, for user strings."""
    return "".join("\\" + ch if ch in _MD_SPECIAL else ch for ch in str(text))


def chapter_header(title: str, *, lead: str, source: str) -> None:
    """Page title, one paragraph saying what the chapter shows, and which source it follows."""
    st.title(title)
    st.markdown(lead)
    st.caption(f"Follows: {source}")


def try_this(prompts: Sequence[str]) -> None:
    """The closing "Try this" list: two or three experiments for the class."""
    st.subheader("Try this")
    st.markdown("\n".join(f"{i}. {p}" for i, p in enumerate(prompts, 1)))


@contextmanager
def busy(text: str) -> Iterator[None]:
    """A spinner that says what the long-running work is doing (with elapsed time)."""
    with st.spinner(text, show_time=True):
        yield


def show(fig: go.Figure, key: str, filename: str | None = None) -> None:
    """Draw a Plotly figure with the Streamlit theme (light or dark) and a PNG download in the modebar."""
    st.plotly_chart(fig, key=key, theme="streamlit", config=kf.png_config(filename or key.replace(".", "-")))


# ---------------------------------------------------------------------------------------------------------
# Controls mirrored in the URL
# ---------------------------------------------------------------------------------------------------------

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off"}
_KINDS = ("slider", "select_slider", "selectbox", "radio", "toggle", "number")


def to_url(value: object) -> str:
    """How a control value is written in the URL: floats with 6 significant digits, bools as true/false."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return f"{value:.6g}"
    return str(value)


def _as_number(text: object) -> float | None:
    try:
        v = float(str(text).strip())
    except (TypeError, ValueError):
        return None
    return v if math.isfinite(v) else None


@dataclass(frozen=True)
class _Spec:
    """What values a control accepts; ``coerce`` maps anything to a valid value or None."""

    kind: str
    options: tuple = ()
    min_value: float | None = None
    max_value: float | None = None
    step: float | None = None
    integer: bool = False

    def _snap_option(self, v: object) -> object | None:
        opts = self.options
        if not opts:
            return None
        for o in opts:
            if type(o) is type(v) and o == v:
                return o
        text = to_url(v) if not isinstance(v, str) else v
        for o in opts:
            if to_url(o) == text:
                return o
        num = _as_number(text)
        numeric = [o for o in opts if isinstance(o, int | float) and not isinstance(o, bool)]
        if num is None or len(numeric) != len(opts):
            return None
        arr = np.asarray(numeric, dtype=np.float64)
        if np.all(arr > 0) and num > 0:
            return opts[int(np.argmin(np.abs(np.log(arr) - math.log(num))))]
        return opts[int(np.argmin(np.abs(arr - num)))]

    def _clamp_number(self, v: object) -> float | int | None:
        if isinstance(v, bool):
            return None
        num = _as_number(v)
        if num is None:
            return None
        lo = self.min_value if self.min_value is not None else -math.inf
        hi = self.max_value if self.max_value is not None else math.inf
        num = min(max(num, lo), hi)
        if self.step and self.min_value is not None:
            k = round((num - self.min_value) / self.step)
            num = min(max(self.min_value + k * self.step, lo), hi)
            num = round(num, 12)
        if self.integer:
            return round(num)
        return float(num)

    def coerce(self, v: object) -> Any:
        """A valid value for this control from a URL string or an old value; None when there is none."""
        if v is None:
            return None
        if self.kind == "toggle":
            if isinstance(v, bool):
                return v
            text = str(v).strip().lower()
            return True if text in _TRUE else False if text in _FALSE else None
        if self.kind in ("select_slider", "selectbox", "radio"):
            return self._snap_option(v)
        return self._clamp_number(v)


def _query_value(key: str) -> str | None:
    try:
        values = st.query_params.get_all(key)
    except Exception:
        return None
    return values[-1] if values else None


def control(
    kind: str,
    label: str,
    key: str,
    *,
    default: Any,
    options: Sequence[Any] | None = None,
    min_value: float | None = None,
    max_value: float | None = None,
    step: float | None = None,
    format_func: Callable[[Any], str] | None = None,
    help: str | None = None,
    on_change: Callable[[], None] | None = None,
    disabled: bool = False,
    container: Any = None,
) -> Any:
    """A widget keyed ``key`` whose value is mirrored in the URL query parameter of the same name.

    ``kind`` is one of "slider" (numbers between ``min_value`` and ``max_value``), "number" (a number
    input), "select_slider", "selectbox", "radio" (one of ``options``) or "toggle" (a bool).

    When the widget has no value in this session yet (first load, or coming back to the page), its start
    value is the URL's (validated: numbers are clamped to the range and snapped to ``step``, option values
    snapped to the nearest option; anything unreadable is ignored), else the value it had when the page was
    last shown, else ``default``. A value that became invalid (e.g. options that depend on the data set)
    is replaced the same way. After the widget runs, its value is written back to ``st.query_params``.
    Returns the widget's value.
    """
    if kind not in _KINDS:
        raise ValueError(f"unknown control kind {kind!r}; choose one of {', '.join(_KINDS)}")
    opts = tuple(options) if options is not None else ()
    integer = kind in ("slider", "number") and all(
        isinstance(v, int) and not isinstance(v, bool)
        for v in (default, min_value, max_value, step)
        if v is not None
    )
    spec = _Spec(kind, opts, min_value, max_value, step, integer)
    fallback = spec.coerce(default)
    if fallback is None:
        raise ValueError(f"the default {default!r} of control {key!r} is not one of its values")

    state = st.session_state
    shadow: dict = state.setdefault(_SHADOW, {})
    specs: dict = state.setdefault(_SPECS, {})
    identity = (label, spec)
    if key in state:
        current = state[key]
        fixed = spec.coerce(current)
        if fixed is None:
            fixed = spec.coerce(shadow.get(key))
        if fixed is None:
            fixed = fallback
        # Written back only when needed: a widget whose label, range or options changed gets a new
        # identity and would otherwise start again from its minimum. Writing an unchanged value would
        # make the browser reset the widget to it, losing a key press made while this run was going on.
        if specs.get(key) != identity or fixed != current or type(fixed) is not type(current):
            state[key] = fixed
    else:
        start = spec.coerce(_query_value(key))
        if start is None:
            start = spec.coerce(shadow.get(key))
        state[key] = fallback if start is None else start

    box = container if container is not None else st
    common: dict[str, Any] = {"key": key, "help": help, "on_change": on_change, "disabled": disabled}
    if kind == "slider":
        value = box.slider(label, min_value=min_value, max_value=max_value, step=step, **common)
    elif kind == "number":
        value = box.number_input(label, min_value=min_value, max_value=max_value, step=step, **common)
    elif kind == "select_slider":
        value = box.select_slider(label, options=opts, format_func=format_func or str, **common)
    elif kind == "selectbox":
        value = box.selectbox(label, options=opts, format_func=format_func or str, **common)
    elif kind == "radio":
        value = box.radio(label, options=opts, format_func=format_func or str, horizontal=True, **common)
    else:
        value = box.toggle(label, **common)

    shadow[key] = value
    specs[key] = identity
    state.setdefault(_RENDERED, set()).add(key)
    text = to_url(value)
    if _query_value(key) != text:
        st.query_params[key] = text
    return value


def sync_url() -> None:
    """End of a run: drop URL parameters that are not a control drawn in this run (stale or junk).

    app.py calls it after the page has run, so the URL always names exactly the current view.
    """
    rendered = st.session_state.get(_RENDERED, set())
    for name in list(st.query_params.keys()):
        if name not in rendered:
            del st.query_params[name]
    st.session_state[_RENDERED] = set()


def log_options(lo: float, hi: float, per_decade: int = 12) -> tuple[float, ...]:
    """Log-spaced values from ``lo`` to ``hi`` (``per_decade`` per factor 10), rounded to 3 significant
    digits."""
    if not (0 < lo < hi and math.isfinite(hi)):
        raise ValueError(f"need 0 < lo < hi, got {lo!r}, {hi!r}")
    count = round(math.log10(hi / lo) * per_decade) + 1
    values = [float(f"{v:.3g}") for v in np.geomspace(lo, hi, count)]
    return tuple(sorted(set(values)))


def lengthscale_options(span: float) -> tuple[float, ...]:
    """ℓ choices for data spanning ``span``: whole decades from about span/1000 to about 2 × span."""
    span = span if math.isfinite(span) and span > 0 else 1.0
    lo = 10.0 ** math.floor(math.log10(span / 1000.0))
    hi = 10.0 ** math.ceil(math.log10(span * 2.0))
    return log_options(lo, hi, 12)


def lengthscale_control(
    label: str,
    key: str,
    data: Data,
    *,
    default: float | None = None,
    help: str | None = None,
    container: Any = None,
) -> float:
    """A select_slider over log-spaced ℓ values scaled to the data's x-range, shown as "ℓ = …".

    ``default`` (snapped to the nearest choice) is span/24 when not given: the blog post's ℓ ≈ 0.25 on its
    data, in our convention.
    """
    lo, hi = data.ds.domain
    span = hi - lo
    opts = lengthscale_options(span)
    start = default if default is not None else span / 24.0
    snapped = _Spec("select_slider", opts).coerce(start)
    return float(
        control(
            "select_slider",
            label,
            key,
            default=snapped,
            options=opts,
            format_func=lambda v: f"{v:g}",
            help=help,
            container=container,
        )
    )


# ---------------------------------------------------------------------------------------------------------
# The data set
# ---------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class CsvUpload:
    """A CSV that parsed: file name, the bytes, their SHA-256 (the cache key) and its numeric columns."""

    filename: str
    content: bytes
    digest: str
    columns: tuple[str, ...]
    n_rows_read: int


@dataclass(frozen=True)
class Data:
    """The data set every page works on.

    ``key`` identifies it for caches (("blog", n, seed) or ("csv", sha256, x column, y column));
    ``ds`` is the whole set (predictions and plots use all of it); ``train`` is at most
    ``kv.TRAIN_MAX_POINTS`` points (``kv.subsample``) for training and leave-one-out.
    """

    key: tuple
    ds: kv.Dataset
    train: kv.Dataset

    @property
    def n(self) -> int:
        return len(self.ds)

    @property
    def subsampled(self) -> bool:
        """True when training uses fewer points than the data set has."""
        return len(self.train) < len(self.ds)

    @property
    def synthetic(self) -> bool:
        """True when the true mean f(x) and noise n(x) are known (the built-in data sets)."""
        return self.ds.true_mean is not None and self.ds.noise_sd is not None

    def grid(self, num: int = GRID_POINTS) -> np.ndarray:
        """``num`` query points over the data's x-range."""
        return self.ds.grid(num)

    def truth(self, num: int = GRID_POINTS) -> tuple[np.ndarray, np.ndarray] | None:
        """(f, n) on ``grid(num)`` for synthetic data, None for user data."""
        if not self.synthetic:
            return None
        g = self.grid(num)
        return np.asarray(self.ds.true_mean(g)), np.asarray(self.ds.noise_sd(g))


@st.cache_resource(max_entries=16, show_spinner=False)
def _builtin(name: str, n: int, seed: int) -> kv.Dataset:
    return kv.make_dataset(name, n=n, seed=seed)


@st.cache_resource(max_entries=8, show_spinner=False)
def _from_csv(digest: str, x_column: str | None, y_column: str | None, _content: bytes) -> kv.Dataset:
    """The parsed CSV, cached by the content's SHA-256 and the columns (the bytes are not re-hashed)."""
    return kv.load_csv(_content, x_column=x_column, y_column=y_column)


@st.cache_resource(max_entries=16, show_spinner=False)
def _train_subset(key: tuple, _ds: kv.Dataset) -> kv.Dataset:
    return kv.subsample(_ds, kv.TRAIN_MAX_POINTS)


def make_data(key: tuple, ds: kv.Dataset) -> Data:
    """A ``Data`` for ``ds`` identified by ``key``, with its training subsample."""
    return Data(key=key, ds=ds, train=_train_subset(key, ds))


def apply_upload(state: MutableMapping[str, Any], content: bytes, filename: str) -> str | None:
    """Parse uploaded CSV ``content``; on success remember it in ``state`` and select it, return None.

    On failure return the ``kv.DataError`` message (also kept in ``state`` for the page to show) and leave
    the previous upload and data set untouched, so every control keeps working.
    ``state`` is ``st.session_state`` in the app and a plain dict in tests.
    """
    try:
        ds = kv.load_csv(content)
    except kv.DataError as exc:
        state[_UPLOAD_ERROR] = f"Could not use {filename}: {exc}"
        return state[_UPLOAD_ERROR]
    digest = hashlib.sha256(content).hexdigest()
    state[_UPLOAD] = CsvUpload(filename, bytes(content), digest, ds.columns, ds.n_rows_read)
    state[_UPLOAD_ERROR] = None
    state["data.source"] = "csv"
    state["data.xcol"] = ds.x_label
    state["data.ycol"] = ds.y_label
    return None


def _on_upload() -> None:
    file = st.session_state.get("data.upload")
    if file is None:
        return
    apply_upload(st.session_state, file.getvalue(), file.name)


def _native_size() -> None:
    """When the data set changes, start from its own size and seed (150/2024 for the blog, 50/0 for d2l)."""
    name = st.session_state.get("data.source")
    if name in kv.DATASETS:
        ds = kv.make_dataset(name)
        st.session_state["data.n"] = len(ds)
        st.session_state["data.seed"] = _default_seed(name)


def _default_seed(name: str) -> int:
    import inspect

    return int(inspect.signature(kv.DATASETS[name].factory).parameters["seed"].default)


def data_sidebar() -> Data:
    """Draw the shared sidebar (data set, number of points, noise seed, CSV upload) and return the data.

    A choice that cannot be loaded keeps the last good data set; the message is shown by
    ``data_messages`` in the page.
    """
    state = st.session_state
    upload: CsvUpload | None = state.get(_UPLOAD)
    with st.sidebar:
        st.header("Data")
        sources = ["blog", "d2l", *(["csv"] if upload else [])]
        source = control(
            "selectbox",
            "Data set",
            "data.source",
            default="blog",
            options=sources,
            format_func=lambda s: SOURCES[s],
            on_change=_native_size,
            help="The two synthetic sets come from the sources; upload a CSV below to use your own data.",
        )
        key: tuple
        try:
            if source == "csv" and upload is not None:
                xcol = ycol = None
                if len(upload.columns) > 2:
                    xcol = control(
                        "selectbox",
                        "x column",
                        "data.xcol",
                        default=upload.columns[0],
                        options=upload.columns,
                        format_func=str,
                    )
                    others = tuple(c for c in upload.columns if c != xcol)
                    ycol = control(
                        "selectbox",
                        "y column",
                        "data.ycol",
                        default=others[0],
                        options=others,
                        format_func=str,
                    )
                ds = _from_csv(upload.digest, xcol, ycol, upload.content)
                key = ("csv", upload.digest, ds.x_label, ds.y_label)
            else:
                native = len(kv.make_dataset(source))
                n = control(
                    "select_slider",
                    "Number of points n",
                    "data.n",
                    default=native,
                    options=tuple(sorted({*POINT_CHOICES, native})),
                    help="How many (x, y) pairs to draw from the data set's formula.",
                )
                seed = control(
                    "number",
                    "Noise seed",
                    "data.seed",
                    default=_default_seed(source),
                    min_value=0,
                    max_value=99_999,
                    step=1,
                    help="Seed of the random noise: another seed is another sample of the same curve.",
                )
                ds = _builtin(source, int(n), int(seed))
                key = (source, int(n), int(seed))
            data = make_data(key, ds)
            state[_LAST_GOOD] = data
            state[_DATA_ERROR] = None
        except kv.DataError as exc:
            state[_DATA_ERROR] = str(exc)
            data = state.get(_LAST_GOOD) or make_data(("blog", 150, 2024), _builtin("blog", 150, 2024))
        st.file_uploader(
            "Your own data (CSV)",
            type=["csv", "txt", "tsv"],
            key="data.upload",
            on_change=_on_upload,
            help=f"Two numeric columns (x, y); with more, choose them above. Up to {kv.MAX_CSV_MB} MB.",
        )
        if upload is not None and source == "csv":
            st.caption(f"File: {md_escape(upload.filename)} · {upload.n_rows_read:,} rows read")
    state[_DATA] = data
    return data


def current_data() -> Data:
    """The data set of this run, as chosen in the shared sidebar (drawn by app.py before the page runs)."""
    data = st.session_state.get(_DATA)
    if data is None:
        data = data_sidebar()
    return data


def data_messages(data: Data) -> None:
    """Errors about the data (bad upload, a column choice that fails) and a preview of user data."""
    err = st.session_state.get(_UPLOAD_ERROR)
    if err:
        st.error(md_escape(err) + "  \nThe previous data set stays in use.", icon="⚠️")
    err = st.session_state.get(_DATA_ERROR)
    if err:
        st.error(md_escape(err) + "  \nThe previous data set stays in use.", icon="⚠️")


def data_summary(data: Data, *, training: bool = False) -> None:
    """One caption line about the data in use; says when training uses a subsample."""
    ds = data.ds
    text = f"Data: {md_escape(ds.title)} · {data.n:,} points"
    if ds.name == "csv":
        text += f" · x = {md_escape(ds.x_label)}, y = {md_escape(ds.y_label)}"
    if training and data.subsampled:
        text += (
            f" · training and leave-one-out use an even subsample of {len(data.train):,} of the "
            f"{data.n:,} points (kv.subsample, limit {kv.TRAIN_MAX_POINTS:,}); the fit is drawn with all "
            "of them"
        )
    st.caption(text)


def csv_preview(data: Data, rows: int = 8) -> None:
    """For user data: the first rows used (x, y), the number of rows used and what loading did."""
    ds = data.ds
    if ds.name != "csv":
        return
    with st.expander(f"Your data: {len(ds):,} rows used of {ds.n_rows_read:,} read", expanded=False):
        st.dataframe({ds.x_label: ds.x[:rows], ds.y_label: ds.y[:rows]}, hide_index=True)
        st.caption("First rows after sorting by x. " + " ".join(md_escape(n) for n in ds.notes))


# ---------------------------------------------------------------------------------------------------------
# Cached calls into the backend
# ---------------------------------------------------------------------------------------------------------


CACHE_ENTRIES = 256  # cached results of small backend calls (fits, curves: tens of kB each)
HEAVY_CACHE_ENTRIES = 16  # cached views holding weight matrices (up to a few MB each)


@st.cache_data(max_entries=CACHE_ENTRIES, show_spinner=False)
def _cached_call(
    ident: str, data_key: tuple, args: tuple, kwargs: tuple, _fn: Callable, _ds: kv.Dataset
) -> Any:
    return _fn(_ds, *args, **dict(kwargs))


@st.cache_data(max_entries=HEAVY_CACHE_ENTRIES, show_spinner=False)
def _cached_heavy_call(
    ident: str, data_key: tuple, args: tuple, kwargs: tuple, _fn: Callable, _ds: kv.Dataset
) -> Any:
    return _fn(_ds, *args, **dict(kwargs))


def cached_on_data(fn: Callable | None = None, *, train: bool = False, heavy: bool = False) -> Callable:
    """Decorator: ``fn(ds, *scalars)`` becomes ``wrapper(data: Data, *scalars)``, cached.

    The cache key is (fn's name, ``data.key``, the scalar arguments), so arrays are never hashed; a CSV is
    identified by its SHA-256. With ``train=True`` ``fn`` receives ``data.train`` (at most
    ``kv.TRAIN_MAX_POINTS`` points) instead of ``data.ds``. ``heavy=True`` (results holding weight
    matrices) keeps the results in a cache of ``HEAVY_CACHE_ENTRIES`` instead of ``CACHE_ENTRIES``, so
    the server's memory stays bounded however many views its visitors explore. Results go through pickle
    (``st.cache_data``), so callers get their own copy: return NumPy arrays or dataclasses of them, never
    mutate shared state.
    """
    call = _cached_heavy_call if heavy else _cached_call

    def deco(f: Callable) -> Callable:
        ident = f"{f.__module__}.{f.__qualname__}"

        @functools.wraps(f)
        def wrapper(data: Data, *args: Any, **kwargs: Any) -> Any:
            ds = data.train if train else data.ds
            key = (*data.key, "train") if train else data.key
            return call(ident, key, args, tuple(sorted(kwargs.items())), f, ds)

        return wrapper

    return deco(fn) if fn is not None else deco


@cached_on_data
def predict(ds: kv.Dataset, lengthscale: float, kernel: str, num: int = GRID_POINTS) -> kv.Smooth:
    """m(x), s(x) on ``ds.grid(num)`` (no weights: beyond a few thousand points this streams over key
    blocks)."""
    return kv.nadaraya_watson(ds.grid(num), ds.x, ds.y, lengthscale, kernel, with_weights=False)


@dataclass(frozen=True)
class Heat:
    """Weights for a heatmap: ``weights`` (q, k) of ``queries`` against ``keys``; ``note`` says what is
    shown."""

    queries: np.ndarray
    keys: np.ndarray
    weights: np.ndarray
    note: str


def _heat(ds: kv.Dataset, lengthscale: float, kernel: str, queries: int) -> Heat:
    sub = kv.subsample(ds, HEATMAP_KEYS) if len(ds) > HEATMAP_KEYS else ds
    q = ds.grid(queries)
    s = kv.nadaraya_watson(q, sub.x, sub.y, lengthscale, kernel, with_weights=True)
    note = ""
    if len(sub) < len(ds):
        note = (
            f"The heatmap uses an even subsample of {len(sub):,} of the {len(ds):,} points as keys, so it "
            "stays "
            "readable and light; the fit above uses all of them."
        )
    return Heat(q, np.asarray(sub.x), np.asarray(s.weights), note)


@cached_on_data(heavy=True)
def heatmap_weights(ds: kv.Dataset, lengthscale: float, kernel: str, queries: int = HEATMAP_QUERIES) -> Heat:
    """Attention weights w_i(x) for ``queries`` grid points against the keys (≤ HEATMAP_KEYS, subsampled)."""
    return _heat(ds, lengthscale, kernel, queries)


@cached_on_data(train=True, heavy=True)
def train_heatmap_weights(
    ds: kv.Dataset, lengthscale: float, kernel: str, queries: int = HEATMAP_QUERIES
) -> Heat:
    """``heatmap_weights`` on the training points (for before/after-training comparisons)."""
    return _heat(ds, lengthscale, kernel, queries)


@cached_on_data
def knn(ds: kv.Dataset, k: int, num: int = GRID_POINTS) -> np.ndarray:
    """k-nearest-neighbour average on the grid (k clipped to n); large data sets use a subsample of keys."""
    sub = kv.subsample(ds, HEATMAP_KEYS) if len(ds) > HEATMAP_KEYS else ds
    return kv.knn_average(ds.grid(num), sub.x, sub.y, int(k)).mean


@cached_on_data(train=True)
def loo_curve(ds: kv.Dataset, kernel: str, lengthscales: tuple[float, ...]) -> np.ndarray:
    """CV(ℓ) at each of ``lengthscales`` on the training points (+∞ where some window is empty)."""
    return kv.loo_curve(ds.x, ds.y, np.asarray(lengthscales), kernel)


@cached_on_data(train=True)
def loo_optimum(ds: kv.Dataset, kernel: str) -> float | None:
    """The exact leave-one-out optimum ℓ* on the training points, None when no ℓ predicts every point."""
    try:
        return kv.loo_lengthscale(ds.x, ds.y, kernel)
    except ValueError:
        return None


def training_work(n: int, holdout: int, steps: int, seeds: int = 1) -> int:
    """Kernel evaluations of one-head masked training: seeds × steps × hold-out rows × keys, as padded.

    Rows are ``kv.holdout_bucket(holdout)`` (the chunks a step runs), keys the padded data size. Pages use
    this to keep optional extra work (e.g. a spread over seeds) small enough to stay live.
    """
    return int(seeds) * int(steps) * kv.holdout_bucket(int(holdout)) * bucket(int(n))


@cached_on_data(train=True)
def fit(ds: kv.Dataset, kernel: str, holdout: int, steps: int, learning_rate: float, seed: int) -> Any:
    """``kv.fit`` (one head, masked training) on the training points."""
    return kv.fit(
        ds.x,
        ds.y,
        heads=1,
        kernel=kernel,
        holdout=holdout,
        steps=steps,
        learning_rate=learning_rate,
        seed=seed,
    )


@cached_on_data(train=True)
def fit_seeds(
    ds: kv.Dataset, kernel: str, holdout: int, steps: int, learning_rate: float, seeds: tuple[int, ...]
) -> list:
    """``kv.fit_seeds`` (one head) on the training points: one FitResult per seed."""
    return kv.fit_seeds(
        ds.x,
        ds.y,
        list(seeds),
        heads=1,
        kernel=kernel,
        holdout=holdout,
        steps=steps,
        learning_rate=learning_rate,
    )


@cached_on_data(train=True)
def fit_parametric(ds: kv.Dataset, kernel: str, steps: int, learning_rate: float) -> Any:
    """``kv.fit_parametric``: d2l's w = 1/ℓ trained leave-one-out on the training points."""
    return kv.fit_parametric(ds.x, ds.y, kernel=kernel, steps=steps, learning_rate=learning_rate)
