"""The Streamlit app end to end with AppTest: pages run, every control at its extremes, URL state, uploads.

JAX compiles on first use, so runs get a generous timeout; the caches (st.cache_resource/st.cache_data and
JAX's own) persist across the AppTest instances of one pytest process.
"""

from __future__ import annotations

import base64
import json
import math
import tomllib
from pathlib import Path

import numpy as np
import plotly.graph_objects as go
import pytest
from prosetools import assert_frame, shown
from streamlit.elements.lib.utils import user_key_from_element_id
from streamlit.testing.v1 import AppTest

import kernelviz as kv
from kernelviz.app import figures as kf
from kernelviz.app import ui
from kernelviz.app.figures.numbers import SIGNIFICANT, SINGLE_TOL
from kernelviz.core.kernels import get_kernel
from kernelviz.data.csvfile import MAX_CSV_MB
from kernelviz.models.heads import SEEDS_MAX
from kernelviz.models.holdout import holdout_range
from kernelviz.models.training import TRAIN_MAX_POINTS

ROOT = Path(__file__).resolve().parents[1]
TIMEOUT = 240
KR = "chapters/1_kernel_regression.py"
MASKED = "chapters/2_masked_training.py"
KR_CH, MASKED_CH = Path(KR).stem, Path(MASKED).stem  # their prose: chapters/prose/<stem>.md
CHAPTERS = [
    p
    for p in (KR, MASKED, "chapters/3_multihead.py", "chapters/4_attention.py", "chapters/5_in_context.py")
    if (ROOT / p).exists()
]

GOOD_CSV = b"time,signal\n" + b"".join(
    f"{t:.3f},{math.sin(t) + 0.1 * math.cos(7 * t):.4f}\n".encode() for t in np.linspace(0, 6, 40)
)
WIDE_CSV = b"a,b,c\n" + b"".join(f"{i},{i * i % 7},{math.cos(i):.4f}\n".encode() for i in range(30))
BAD_CSV = b"only one column\n1\n2\n3\n"



def assert_sent(got: object, want: object) -> None:
    """``got``, numbers a chart sent, is ``want`` up to the rounding they travel with: ``SINGLE_TOL`` / 2 of
    their range, or (on a log axis) ``SIGNIFICANT`` digits of each; here with twice that room."""
    want = np.asarray(want, dtype=np.float64)
    finite = want[np.isfinite(want)]
    reach = float(np.ptp(finite)) if finite.size else 0.0
    np.testing.assert_allclose(got, want, rtol=10.0 ** (1 - SIGNIFICANT), atol=SINGLE_TOL * reach)


_REGISTRY: dict = {}


def start(page: str | None = None, query: dict[str, str] | None = None) -> AppTest:
    """Open ``page`` (home when None) with URL parameters ``query``, as a new session from a shared link.

    ``switch_page`` needs the page registry that st.navigation builds; AppTest learns it from a run, so a
    first session runs home once and the new session is handed that registry: its first run is then on
    ``page`` itself, with the URL, like a browser opening the link.
    """
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=TIMEOUT)
    at.query_params.update(query or {})
    if page is None:
        at.run()
        ok(at)
        return at
    if not _REGISTRY:
        probe = AppTest.from_file(str(ROOT / "app.py"), default_timeout=TIMEOUT).run()
        ok(probe)
        _REGISTRY.update(probe._registered_pages)
    at._registered_pages = dict(_REGISTRY)
    at.switch_page(page).run()
    ok(at)
    return at


def ok(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]


def code_boxes(at: AppTest) -> list:
    """The page's code expanders (``ui.show_code``), in page order."""
    keyed = [(e, user_key_from_element_id(e.proto.id) or "") for e in at.expander]
    return [e for e, key in keyed if key.startswith("kv.code.")]


def open_code(at: AppTest) -> AppTest:
    """Opens every code expander of the page (its code is drawn only while open) and reruns it."""
    for box in code_boxes(at):
        at.session_state[user_key_from_element_id(box.proto.id)] = True
    at.run()
    ok(at)
    return at


def charts(at: AppTest) -> dict[str, dict]:
    """Plotly figures of the current page by widget key, as parsed JSON."""
    out = {}
    for c in at.get("plotly_chart"):
        key = c.proto.id.split("-", 2)[2]
        out[key] = json.loads(c.proto.spec)
    return out


def values(v: object) -> np.ndarray:
    """A Plotly JSON array (a list, or {"bdata": base64, "dtype": ...}) as floats; null becomes NaN."""
    if isinstance(v, dict) and "bdata" in v:
        return np.frombuffer(base64.b64decode(v["bdata"]), dtype=np.dtype(v["dtype"])).astype(float)
    return np.array([np.nan if e is None else e for e in v], dtype=float)


def widget(at: AppTest, key: str):
    for kind in ("slider", "select_slider", "selectbox", "toggle", "number_input"):
        for w in getattr(at, kind):
            if w.key == key:
                return kind, w
    raise KeyError(key)


def option_value(w, shown: str) -> object:
    """The option value a select_slider shows as ``shown`` (its format_func maps it back to that text)."""
    candidates = []
    for cast in (int, float, str):
        try:
            candidates.append(cast(shown))
        except ValueError:
            continue
    for c in candidates:
        try:
            if w.format_func(c) == shown:
                return c
        except (TypeError, ValueError):
            continue
    raise AssertionError(f"no value of {w.key} is shown as {shown!r}")


def pick(w, index: int) -> object:
    """Set select_slider ``w`` to its option number ``index``; returns the value."""
    v = option_value(w, w.options[index])
    w.set_value(v)
    return v


def set_extreme(at: AppTest, key: str, which: str) -> object:
    """Set the control ``key`` to its minimum ("min") or maximum ("max"); returns the value set."""
    kind, w = widget(at, key)
    if kind == "slider":
        v = w.min if which == "min" else w.max
        w.set_value(v)
    elif kind == "number_input":
        v = w.proto.min if which == "min" else w.proto.max
        w.set_value(int(v))
    elif kind == "select_slider":
        v = pick(w, 0 if which == "min" else -1)
    elif kind == "selectbox":
        i = 0 if which == "min" else len(w.options) - 1
        v = w.options[i]
        w.select_index(i)
    else:
        v = which == "max"
        w.set_value(v)
    return v


# ---------------------------------------------------------------------------------------------------------
# Pages run
# ---------------------------------------------------------------------------------------------------------


def test_home_runs_with_previews_and_sidebar():
    at = start()
    assert "kernelviz" in at.title[0].value
    assert len(at.latex) >= 1
    previews = [k for k in charts(at) if k.startswith("home.preview.")]
    assert len(previews) == len(CHAPTERS)
    assert at.selectbox(key="data.source").value == "blog"
    assert at.select_slider(key="data.n").value == 150
    assert at.number_input(key="data.seed").value == 2024


@pytest.mark.parametrize("n", [min(ui.POINT_CHOICES), max(ui.POINT_CHOICES)])
def test_home_previews_at_the_ends_of_the_size_slider(n):
    """Every chapter's preview trains with its defaults, held-out count included, on the smallest data set."""
    at = start(None, {"data.n": str(n)})
    ok(at)
    assert len([k for k in charts(at) if k.startswith("home.preview.")]) == len(CHAPTERS)


@pytest.mark.parametrize("page", CHAPTERS)
def test_every_chapter_runs(page):
    at = start(page)
    ok(at)
    assert at.title, "a chapter starts with its title"
    assert charts(at), "a chapter draws figures"


@pytest.mark.parametrize("page", [KR, MASKED])
def test_my_chapters_quote_maths_sources_and_prompts(page):
    at = start(page)
    assert len(at.latex) >= 2
    assert_frame(at, Path(page).stem, [f"try.{i}" for i in (1, 2, 3)])


def test_every_figure_is_valid_plotly_with_axis_titles_and_png_download():
    """Every chart of every chapter: Plotly's own validation accepts its spec (the builders assemble their
    layout without property-by-property checks), it has an axis title, a PNG download and the light theme's
    look in its own layout (no template; AppTest has no browser, hence no dark theme)."""
    views = [(page, None) for page in (KR, MASKED, "chapters/3_multihead.py")]
    pictures = ("heads", "wo", "kernel", "sequence", "selfcross", "loss")
    views += [("chapters/4_attention.py", p) for p in pictures]
    for page, picture in views:  # chapter 4 draws one picture of its layer at a time
        at = start(page, None if picture is None else {"attn.picture": picture})
        for c in at.get("plotly_chart"):
            cfg = json.loads(c.proto.config)
            assert cfg["toImageButtonOptions"]["format"] == "png"
            fig = json.loads(c.proto.spec)
            go.Figure(fig)  # raises on any invalid property or value
            layout = fig["layout"]
            axes = [v for k, v in layout.items() if k.startswith(("xaxis", "yaxis"))]
            titled = [a.get("title", {}).get("text") for a in axes]
            assert any(titled), f"{c.proto.id} has no axis title"
            assert c.proto.theme == "" and layout["template"] is None
            assert layout["paper_bgcolor"] == kf.THEMES["light"].background


# ---------------------------------------------------------------------------------------------------------
# Every control at its extremes
# ---------------------------------------------------------------------------------------------------------

KR_CONTROLS = ["kr.kernel", "kr.lengthscale", "kr.true_band", "kr.fit_band", "kr.baselines", "kr.k"]
MASKED_CONTROLS = [
    "masked.kernel", "masked.holdout", "masked.steps", "masked.lr", "masked.seed", "masked.nseeds",
    "masked.d2l_sidebar", "masked.kotlin", "masked.d2l_kernel", "masked.d2l_epochs", "masked.d2l_seed",
]
DATA_CONTROLS = ["data.n", "data.seed"]


def sweep(at: AppTest, keys: list[str]) -> None:
    for key in keys:
        _, w = widget(at, key)
        before = w.value
        for which in ("min", "max"):
            set_extreme(at, key, which)
            at.run()
            ok(at)
            assert charts(at)
        # back to where it was, so the next control is swept from the default view
        _, w = widget(at, key)
        w.set_value(before)
        at.run()
        ok(at)


@pytest.mark.parametrize("source", ["blog", "d2l"])
@pytest.mark.parametrize("kernel", ["gaussian", "epanechnikov"])
def test_kernel_regression_controls_at_extremes(source, kernel):
    at = start(KR, {"data.source": source, "kr.kernel": kernel, "kr.baselines": "true"})
    assert at.selectbox(key="kr.kernel").value == kernel
    sweep(at, KR_CONTROLS)


@pytest.mark.parametrize(
    ("source", "kernel"), [("blog", "gaussian"), ("blog", "boxcar"), ("d2l", "gaussian")]
)
def test_masked_training_controls_at_extremes(source, kernel):
    at = start(MASKED, {"data.source": source, "masked.kernel": kernel, "masked.picture": "seeds"})
    sweep(at, MASKED_CONTROLS)


@pytest.mark.parametrize("page", [KR, MASKED])
def test_sidebar_data_controls_at_extremes(page):
    at = start(page)
    sweep(at, DATA_CONTROLS)
    at.selectbox(key="data.source").set_value("d2l")
    at.run()
    ok(at)
    # switching the data set starts from its own size and seed
    assert at.select_slider(key="data.n").value == 50
    assert at.number_input(key="data.seed").value == 0


def test_large_data_streams_and_subsamples_training():
    at = start(MASKED, {"data.n": "5000"})
    ok(at)
    assert at.select_slider(key="data.n").value == 5000
    assert any("subsample" in c.value and f"{TRAIN_MAX_POINTS:,}" in c.value for c in at.caption)
    at.switch_page(KR).run()
    ok(at)
    fit = charts(at)["kr.fit"]
    data = next(t for t in fit["data"] if t["name"].startswith("data"))
    assert values(data["x"]).shape == (5000,)  # every point drawn (WebGL)
    line = next(t for t in fit["data"] if t["name"] == "kernel regression m(x)")
    assert values(line["y"]).shape == (ui.GRID_POINTS,)
    heat = charts(at)["kr.heatmap"]["data"][0]
    assert values(heat["x"]).shape[0] <= 320  # the heatmap shows a thinned subsample of the keys


# ---------------------------------------------------------------------------------------------------------
# Controls change the figures
# ---------------------------------------------------------------------------------------------------------


def test_moving_the_lengthscale_repaints_fit_and_heatmap():
    at = start(KR)
    before = charts(at)
    ss = at.select_slider(key="kr.lengthscale")
    pick(ss, ss.options.index(ss.format_func(ss.value)) - 8)
    at.run()
    ok(at)
    after = charts(at)
    for key in ("kr.fit", "kr.heatmap"):
        assert before[key] != after[key], f"{key} did not change with ℓ"
    # the four-lengthscale panels do not depend on the slider
    assert before["kr.multiples"] == after["kr.multiples"]


def test_the_scrub_starts_at_the_pages_lengthscale():
    """Chapter 1's chart sends every second ℓ as a frame, counted from the page's ℓ, so its own slider
    starts exactly there, whichever ℓ is chosen."""
    at = start(KR)
    ss = at.select_slider(key="kr.lengthscale")
    start_index = ss.options.index(ss.format_func(ss.value))
    for step in (0, 1, -3):
        pick(ss, start_index + step)
        at.run()
        ok(at)
        slider = charts(at)["kr.fit"]["layout"]["sliders"][0]
        ell = at.select_slider(key="kr.lengthscale").value
        assert slider["steps"][slider["active"]]["label"] == f"{ell:.3g}"


def test_the_scrub_is_one_block_of_the_path_program():
    """The scrub's ℓ fill one block of ``nadaraya_watson_path``'s program at any x-range: a 33rd would pad
    the path to two blocks, twice the work of every press that redraws chapter 1."""
    from kernelviz.app.ui.caching.scrub import scrub_lengthscales
    from kernelviz.models.smoothing import PATH_BLOCK

    counts = {len(scrub_lengthscales(span)) for span in np.geomspace(1e-3, 1e4, 701)}
    assert min(counts) >= 30 and max(counts) == PATH_BLOCK


def test_moving_the_holdout_retrains():
    at = start(MASKED)
    before = charts(at)
    at.slider(key="masked.holdout").set_value(1)
    at.run()
    ok(at)
    after = charts(at)
    for key in ("masked.fit", "masked.loss", "masked.loo"):
        assert before[key] != after[key], f"{key} did not change with the hold-out size"
    # the post's four panels have hold-out sizes of their own; d2l's section has no hold-out
    for key in ("masked.post", "masked.d2l_fit"):
        assert before[key] == after[key], f"{key} changed with the hold-out size"


def test_the_post_figure_or_the_seed_spread_one_at_a_time():
    at = start(MASKED)
    before = charts(at)
    assert "masked.post" in before and "masked.seeds" not in before
    shown((m.value for m in at.markdown), MASKED_CH, "caveats")
    assert not [s for s in at.slider if s.key == "masked.nseeds"]
    at.segmented_control(key="masked.picture").set_value("seeds").run()
    ok(at)
    after = charts(at)
    assert "masked.seeds" in after and "masked.post" not in after
    assert after["masked.fit"] == before["masked.fit"]  # the choice does not retrain the fit
    assert at.slider(key="masked.nseeds").value == SEEDS_MAX
    shown((m.value for m in at.markdown), MASKED_CH, "caveats")  # the post's caveats, either way
    assert at.query_params["masked.picture"] == ["seeds"] or at.query_params["masked.picture"] == "seeds"


def test_compact_kernel_at_small_lengthscale_explains_its_gaps():
    at = start(KR, {"kr.kernel": "boxcar"})
    pick(at.select_slider(key="kr.lengthscale"), 0)
    at.run()
    ok(at)
    gaps = shown((i.value for i in at.info), KR_CH, "gaps")
    assert gaps["kernel"] == get_kernel("boxcar").label
    assert gaps["ell"] == f"{at.select_slider(key='kr.lengthscale').value:g}"
    assert 0 < int(gaps["share"].rstrip("%")) <= 100
    fit = charts(at)["kr.fit"]
    line = next(t for t in fit["data"] if t["name"] == "kernel regression m(x)")
    assert np.isnan(values(line["y"])).any()  # NaN stays NaN: a gap, not a line to zero
    assert line["connectgaps"] is False


def test_diverging_training_warns_and_still_draws():
    at = start(MASKED, {"masked.lr": "1000", "masked.holdout": "1"})
    assert any("diverged" in w.value for w in at.warning)
    assert "masked.fit" in charts(at)
    assert ui.widgets.text.NO_LOSS in [i.value for i in at.info]  # diverged at its first step


def test_runaway_lengthscale_is_explained():
    at = start(MASKED, {"masked.lr": "100", "masked.holdout": "1", "masked.seed": "1"})
    assert any("ran away" in w.value for w in at.warning)
    assert "masked.loo" in charts(at)


def test_boxcar_training_says_it_searches():
    at = start(MASKED, {"masked.kernel": "boxcar"})
    assert any("search" in i.value for i in at.info)


# ---------------------------------------------------------------------------------------------------------
# What runs is what the sources run
# ---------------------------------------------------------------------------------------------------------

SQRT2 = math.sqrt(2.0)


def metric(at: AppTest, label_start: str) -> float:
    """The number a metric whose label starts with ``label_start`` shows."""
    found = [m.value for m in at.metric if m.label.startswith(label_start)]
    assert len(found) == 1, [m.label for m in at.metric]
    return float(found[0].rstrip("%"))


def trace(spec: dict, name_start: str) -> dict:
    return next(t for t in spec["data"] if (t.get("name") or "").startswith(name_start))


def titles(spec: dict) -> list[str]:
    return [a["text"] for a in spec["layout"].get("annotations", [])]


def page_texts(at: AppTest) -> list[str]:
    """The text of every Markdown element and caption of the page."""
    return [m.value for m in (*at.markdown, *at.caption)]


def page_text(at: AppTest) -> str:
    return "\n".join(page_texts(at))


@pytest.mark.parametrize("source", ["blog", "d2l"])
def test_kernel_regression_starts_at_the_posts_lengthscale(source):
    at = start(KR, {"data.source": source})
    ds = kv.make_dataset(source)
    span = float(np.ptp(ds.x))
    post = 0.25 / SQRT2 * span / 6.0  # ℓ_post = 0.25 in our convention, scaled from the post's span 6
    ell = at.select_slider(key="kr.lengthscale").value
    assert ell == pytest.approx(post, rel=0.1)  # the nearest of the slider's 12-per-decade values
    assert abs(math.log(ell / post)) <= min(abs(math.log(o / post)) for o in ui.lengthscale_options(span))
    fits = charts(at)
    line = values(trace(fits["kr.fit"], "kernel regression")["y"])
    want = kv.nadaraya_watson(ds.grid(ui.GRID_POINTS), ds.x, ds.y, ell, with_weights=False).mean
    assert_sent(line, want)
    # the post's four panels, with the post's ℓ and ours in each title
    panels = fits["kr.multiples"]
    expected = [f"post ℓ = {p:g} → our ℓ = {p / SQRT2 * span / 6.0:.3g}" for p in (3.0, 0.5, 0.25, 0.05)]
    assert titles(panels) == expected
    fit_lines = [values(t["y"]) for t in panels["data"] if t["name"] == "fit m(x)"]
    for p, got in zip((3.0, 0.5, 0.25, 0.05), fit_lines, strict=True):
        want = kv.nadaraya_watson(ds.grid(ui.GRID_POINTS), ds.x, ds.y, p / SQRT2 * span / 6.0).mean
        assert_sent(got, want)


def test_masked_training_is_the_posts_gaussian_kernel():
    at = start(MASKED)
    controls = [at.slider(key=k).value for k in ("masked.holdout", "masked.steps")]
    assert controls == [10, 100] and at.number_input(key="masked.seed").value == 2024
    assert at.select_slider(key="masked.lr").value == pytest.approx(0.2)
    ds = kv.blog_data()
    fit = kv.fit(ds.x, ds.y, heads=1, holdout=10, steps=100, learning_rate=0.2, seed=2024)
    assert fit.mixing.tolist() == [1.0] and fit.trajectory[0, 0] * SQRT2 == pytest.approx(1.0)
    assert metric(at, "Learned ℓ") == pytest.approx(fit.lengthscales[0], rel=1e-3)
    assert "100 / 100" in [m.value for m in at.metric if m.label == "Steps run"]
    # the post's figure: its own runs at the defaults, with its titles (and the softmax's where it differs)
    assert titles(charts(at)["masked.post"]) == [
        "Hold-out=1, ℓ_post=0.13", "Hold-out=10, ℓ_post=0.14", "Hold-out=75, ℓ_post=0.21",
        "Hold-out=120, ℓ_post=0.30 (softmax: 0.35)",
    ]
    text = page_texts(at)
    assert shown(text, MASKED_CH, "model") == {"start": f"{1 / SQRT2:.3g}", "scaled": ""}  # ℓ_post = 1
    shown(text, MASKED_CH, "caveats")
    at.segmented_control(key="masked.picture").set_value("seeds").run()
    text = page_texts(at)
    shown(text, MASKED_CH, "seeds_intro")  # says the seed spread is kernelviz's, not the post's
    seeds = shown(text, MASKED_CH, "seeds_caption")
    assert (seeds["first"], seeds["last"], seeds["steps"]) == ("2024", str(2024 + SEEDS_MAX - 1), "100")


def test_home_previews_are_the_chapters_opening_views():
    home = charts(start())
    at = start(KR)
    line = values(trace(charts(at)["kr.fit"], "kernel regression")["y"])
    np.testing.assert_allclose(values(trace(home["home.preview.1_kernel_regression"], "fit")["y"]), line)
    at = start(MASKED)
    learned = metric(at, "Learned ℓ")
    marker = trace(home["home.preview.2_masked_training"], "learned")
    assert values(marker["x"])[0] == pytest.approx(learned, rel=1e-3)


# ---------------------------------------------------------------------------------------------------------
# URL state
# ---------------------------------------------------------------------------------------------------------


def test_query_params_set_the_widgets():
    at = start(
        KR,
        {"kr.kernel": "laplace", "kr.lengthscale": "0.562", "kr.fit_band": "false", "data.source": "d2l"},
    )
    ok(at)
    assert at.selectbox(key="kr.kernel").value == "laplace"
    assert at.select_slider(key="kr.lengthscale").value == pytest.approx(0.562)
    assert at.toggle(key="kr.fit_band").value is False
    assert at.selectbox(key="data.source").value == "d2l"
    query = {"masked.holdout": "7", "masked.steps": "300", "masked.lr": "0.03", "masked.seed": "5"}
    at = start(MASKED, query)
    assert at.slider(key="masked.holdout").value == 7
    assert at.slider(key="masked.steps").value == 300
    assert at.select_slider(key="masked.lr").value == pytest.approx(0.03)
    assert at.number_input(key="masked.seed").value == 5


def test_moving_a_widget_updates_the_url():
    at = start(MASKED)
    at.slider(key="masked.holdout").set_value(3)
    at.run()
    assert at.query_params["masked.holdout"] == ["3"] or at.query_params["masked.holdout"] == "3"
    at.switch_page(KR).run()
    at.selectbox(key="kr.kernel").set_value("cauchy")
    at.run()
    qp = {k: (v[-1] if isinstance(v, list) else v) for k, v in at.query_params.items()}
    assert qp["kr.kernel"] == "cauchy"
    assert not any(k.startswith("masked.") for k in qp), "parameters of another page are dropped"


def test_junk_query_params_are_ignored_or_clamped():
    at = start(
        MASKED,
        {
            "masked.holdout": "100000",  # clamped to the largest hold-out
            "masked.steps": "-7",  # clamped to the smallest
            "masked.lr": "abc",  # unreadable: default
            "masked.seed": "nan",  # not finite: default
            "masked.kernel": "no-such-kernel",  # not an option: default
            "data.n": "-4",  # snapped to the smallest choice
            "data.seed": "-5",  # clamped to 0
            "unrelated": "<script>",  # not kernelviz's: left as it is, never read
        },
    )
    ok(at)
    assert at.select_slider(key="data.n").value == min(ui.POINT_CHOICES)
    assert at.slider(key="masked.holdout").value == holdout_range(min(ui.POINT_CHOICES))[1]
    assert at.slider(key="masked.steps").value == 50
    assert at.select_slider(key="masked.lr").value == pytest.approx(0.2)
    assert at.number_input(key="masked.seed").value == 2024
    assert at.selectbox(key="masked.kernel").value == "gaussian"
    assert at.number_input(key="data.seed").value == 0
    unrelated = at.query_params["unrelated"]
    assert (unrelated[-1] if isinstance(unrelated, list) else unrelated) == "<script>"


def test_out_of_range_size_snaps_to_the_largest_choice():
    at = start(KR, {"data.n": "1e9", "kr.lengthscale": "1e300"})
    assert at.select_slider(key="data.n").value == max(ui.POINT_CHOICES)
    ss = at.select_slider(key="kr.lengthscale")
    assert ss.format_func(ss.value) == ss.options[-1]


def test_controls_keep_their_value_when_their_range_changes():
    at = start(MASKED)
    at.slider(key="masked.holdout").set_value(7)
    at.run()
    at.select_slider(key="data.n").set_value(300)  # the hold-out slider's maximum changes with n
    at.run()
    ok(at)
    assert at.slider(key="masked.holdout").max == holdout_range(300)[1]
    assert at.slider(key="masked.holdout").value == 7


def test_values_survive_a_round_trip_through_another_page():
    at = start(KR)
    at.selectbox(key="kr.kernel").set_value("triangular")
    at.run()
    at.switch_page(MASKED).run()
    at.switch_page(KR).run()
    ok(at)
    assert at.selectbox(key="kr.kernel").value == "triangular"


# ---------------------------------------------------------------------------------------------------------
# Uploads
# ---------------------------------------------------------------------------------------------------------


def test_apply_upload_keeps_previous_data_on_error():
    state: dict = {}
    assert ui.apply_upload(state, GOOD_CSV, "good.csv") is None
    first = state[ui._UPLOAD]
    assert first.columns == ("time", "signal") and state["data.source"] == "csv"
    message = ui.apply_upload(state, BAD_CSV, "bad.csv")
    assert message and "bad.csv" in message and "column" in message
    assert state[ui._UPLOAD] is first  # the previous upload stays
    # the message is exactly the loader's, for people
    with pytest.raises(kv.DataError) as err:
        kv.load_csv(BAD_CSV)
    assert str(err.value) in message


def upload(at: AppTest, name: str, content: bytes) -> None:
    """Upload ``content`` as ``name`` through the sidebar and run."""
    at.file_uploader(key="data.upload").upload(name, content, "text/csv")
    at.run()
    ok(at)


def test_upload_through_the_sidebar_then_a_bad_file_keeps_the_data():
    at = start(KR)
    upload(at, "good.csv", GOOD_CSV)
    assert at.selectbox(key="data.source").value == "csv"
    fit = charts(at)["kr.fit"]
    assert fit["layout"]["xaxis"]["title"]["text"] == "time"
    assert not at.error
    upload(at, "broken.csv", BAD_CSV)
    assert at.error and "broken.csv" in at.error[0].value.replace("\\", "")  # shown Markdown-escaped
    assert at.selectbox(key="data.source").value == "csv"
    assert charts(at)["kr.fit"]["layout"]["xaxis"]["title"]["text"] == "time"
    # all controls still work on the kept data
    pick(at.select_slider(key="kr.lengthscale"), -1)
    at.run()
    ok(at)
    at.switch_page(MASKED).run()
    ok(at)
    assert "masked.fit" in charts(at)


def test_wide_csv_offers_column_choice():
    at = start(KR)
    upload(at, "wide.csv", WIDE_CSV)
    assert at.selectbox(key="data.xcol").value == "a"
    ycol = at.selectbox(key="data.ycol")
    assert "a" not in ycol.options
    ycol.set_value("c")
    at.run()
    ok(at)
    assert charts(at)["kr.fit"]["layout"]["yaxis"]["title"]["text"] == "c"


def test_column_names_are_escaped():
    assert ui.md_escape("a*b_[x](y)$z<b>") == r"a\*b\_\[x\]\(y\)\$z\<b\>"


# ---------------------------------------------------------------------------------------------------------
# Pure helpers and configuration
# ---------------------------------------------------------------------------------------------------------


def test_spec_coerce_clamps_snaps_and_rejects_junk():
    s = ui.Spec("slider", min_value=1, max_value=10, step=1, integer=True)
    assert s.coerce("4") == 4 and s.coerce("99") == 10 and s.coerce("-3") == 1 and s.coerce("4.6") == 5
    assert s.coerce("x") is None and s.coerce("inf") is None and s.coerce(True) is None
    f = ui.Spec("slider", min_value=50, max_value=2000, step=50)
    assert f.coerce("123") == 100
    opts = ui.Spec("select_slider", options=(0.1, 0.2, 0.5, 1.0))
    assert opts.coerce("0.2") == 0.2 and opts.coerce("0.45") == 0.5 and opts.coerce("1e6") == 1.0
    assert opts.coerce("abc") is None
    names = ui.Spec("selectbox", options=("gaussian", "boxcar"))
    assert names.coerce("boxcar") == "boxcar" and names.coerce("Boxcar ") is None
    t = ui.Spec("toggle")
    assert t.coerce("true") is True and t.coerce("0") is False and t.coerce("maybe") is None


def test_log_options_are_nice_and_cover_the_data():
    opts = ui.log_options(0.01, 10, 12)
    assert opts[0] == 0.01 and opts[-1] == 10.0 and len(opts) == 37
    assert all(float(f"{v:.3g}") == v for v in opts)
    ls = ui.lengthscale_options(6.0)
    assert ls[0] <= 6.0 / 1000 and ls[-1] >= 12.0
    with pytest.raises(ValueError):
        ui.log_options(1.0, 0.5)


def test_config_matches_the_upload_limit_and_theme():
    cfg = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text())
    assert cfg["server"]["maxUploadSize"] == MAX_CSV_MB
    assert cfg["server"]["headless"] is True
    assert cfg["browser"]["gatherUsageStats"] is False
    assert "light" in cfg["theme"]
    assert cfg["runner"]["postScriptGC"] is False  # a class's reruns (kernelviz/runtime/memory.py)
    from streamlit import config

    config.get_config_options(force_reparse=True)  # Streamlit reads it so, from this folder
    assert config.get_option("runner.postScriptGC") is False
