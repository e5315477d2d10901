"""Chapter 4's page (attention) under AppTest: the Gaussian check, the trained layer beside the kernels it
generalises, one picture of it at a time, every control at its minimum and at its maximum, each start,
repaints, URL parameters."""

from __future__ import annotations

import numpy as np
import pytest
from pagetools import array, control, heatmap_panels, numbers, set_all, table_with
from prosetools import where_from
from test_app import charts, ok, start

import kernelviz as kv
from kernelviz.app.ui import charts as books
from kernelviz.app.ui.charts import Panel
from kernelviz.app.ui.charts import attention as book  # imported at collection: its tables are the page's
from kernelviz.app.ui.widgets.sidebar import builtin_data
from kernelviz.models.attention.training import STARTS
from kernelviz.models.heads import initial_lengthscales
from kernelviz.models.smoothing import HEADS_MAX

ATTN = "chapters/4_attention.py"
DATA = builtin_data("blog", 150, 2024)  # the sidebar's default data
ALWAYS = {"attn.equivalence", "attn.fit"}  # the charts every view of the page draws
PICTURES = {"heads": "attn.heatmaps", "wo": "attn.wo", "kernel": "attn.kernel", "sequence": "attn.sequence",
            "selfcross": "attn.selfcross", "loss": "attn.loss"}  # "Inside the trained layer": one chart each
ATTN_CHARTS = ALWAYS | {"attn.heatmaps"}  # the default picture
SLIDERS = ["attn.lengthscale", "attn.heads", "attn.dqk", "attn.dv", "attn.holdout", "attn.steps", "attn.lr",
           "attn.seed"]


def comparison(at) -> dict[str, list[str]]:
    return table_with(at, "leave-one-out error")


def show(at, picture: str) -> dict[str, dict]:
    """Choose ``picture`` inside the trained layer; the page's charts, which hold that picture's alone."""
    at.segmented_control(key="attn.picture").set_value(picture).run()
    ok(at)
    figs = charts(at)
    assert set(figs) == ALWAYS | {PICTURES[picture]}, set(figs)
    return figs


def every_picture(at) -> tuple[dict[str, dict], str]:
    """Every picture's chart (by key) and all the page's text, picture by picture; back to the first."""
    figs, text = {}, ""
    for picture, key in PICTURES.items():
        figs[key] = show(at, picture)[key]
        text += " ".join(m.value for m in at.markdown)
    show(at, "heads")
    return figs, text


def diffs(at) -> list[float]:
    return [float(m.value) for m in at.metric if m.label.startswith("max |")]


def test_attention_page_verifies_the_gaussian_and_tells_the_story():
    at = start(ATTN)
    assert at.title[0].value.startswith("4 ·")
    assert len(at.latex) >= 4  # and W_O's formula in its picture
    assert any(m.startswith("Follows:") for m in where_from(at))
    assert any(s.value == "Try this" for s in at.subheader)
    figs = charts(at)
    assert set(figs) == ATTN_CHARTS
    assert len(diffs(at)) == 2 and all(0 <= d < 1e-9 for d in diffs(at))
    heads = at.slider(key="attn.heads").value
    assert heatmap_panels(figs["attn.heatmaps"]) == heads
    inside, text = every_picture(at)
    left, right = [t for t in inside["attn.kernel"]["data"] if t["type"] == "heatmap"]
    np.testing.assert_allclose(array(right["z"]), array(left["z"]).T)
    assert not np.allclose(array(right["z"]), array(left["z"]))  # a learned kernel is not symmetric
    for words in ("W_O", "self-attention", "cross-attention", "W_v", "kernelviz's choice", "leave-one-out"):
        assert words in text, words
    maps = table_with(at, "token component")
    assert list(numbers(maps["W_v column 1"])) == [0, 0, 0, 1]  # the Gaussian head's W_v projects onto y


def test_the_trained_layer_beats_the_gaussian_on_the_page():
    at = start(ATTN)
    table = comparison(at)
    models = table["model"]
    assert len(models) == 3 and "Gaussian smoother" in models[1] and "chapter 3" in models[2]
    loo = numbers(table["leave-one-out error"])
    assert loo[0] < loo[1], loo  # attention below the best Gaussian, at the defaults on the blog data
    band = numbers(table["band width 4s̄"])
    assert band[0] <= band[2]  # no wider than chapter 3's
    sentence = next(m.value for m in at.markdown if "the best Gaussian's" in m.value)
    assert "below** the best Gaussian" in sentence
    truth = numbers(table["error against the true mean"])  # the sentence says which way the truth goes
    said = sentence.split("error against the true mean")[1]
    assert f"% {'below' if truth[0] < truth[1] else 'above'}**" in said, sentence
    sequence = show(at, "sequence")["attn.sequence"]
    outputs = [t for t in sequence["data"] if str(t.get("name", "")).startswith("output x′ᵢ")]
    assert len(outputs) == at.slider(key="attn.dv").value


def test_values_and_heads_repaint():
    at = start(ATTN, {"attn.picture": "sequence"})
    before = charts(at)
    at.slider(key="attn.dv").set_value(3).run()
    ok(at)
    after = charts(at)
    assert set(after) == ALWAYS | {"attn.sequence"}  # the picture chosen stays chosen
    assert sum(str(t.get("name", "")).startswith("output x′ᵢ") for t in after["attn.sequence"]["data"]) == 3
    assert after["attn.equivalence"] == before["attn.equivalence"]  # the Gaussian part does not retrain
    after |= every_picture(at)[0]
    at.slider(key="attn.heads").set_value(1).run()
    ok(at)
    one = charts(at) | every_picture(at)[0]
    assert heatmap_panels(one["attn.heatmaps"]) == 1
    for key in ("attn.fit", "attn.heatmaps", "attn.wo", "attn.kernel", "attn.sequence"):
        assert one[key] != after[key], key
    at.slider(key="attn.holdout").set_value(30).run()
    ok(at)
    moved = charts(at) | every_picture(at)[0]
    for key in ("attn.fit", "attn.loss", "attn.selfcross"):
        assert moved[key] != one[key], key


def test_a_picture_and_its_head_rerun_only_the_picture():
    at = start(ATTN, {"attn.picture": "kernel", "attn.head": "2"})
    assert at.segmented_control(key="attn.picture").value == "kernel"
    assert not at.radio(key="attn.head").disabled
    fit = charts(at)["attn.fit"]
    titles = str(charts(at)["attn.kernel"]["layout"])
    assert "head 2" in titles and "head 1" not in titles
    at.radio(key="attn.head").set_value(3).run()
    ok(at)
    assert "head 3" in str(charts(at)["attn.kernel"]["layout"])
    assert show(at, "wo")["attn.fit"] == fit
    assert at.radio(key="attn.head").disabled  # W_O shows every head


@pytest.mark.parametrize("which", ["random", "post"])
def test_each_start_runs_and_says_where_it_starts(which):
    at = start(ATTN, {"attn.start": which})
    assert at.selectbox(key="attn.start").value == which
    assert set(charts(at)) == ATTN_CHARTS
    table = comparison(at)
    assert np.all(np.isfinite(numbers(table["leave-one-out error"])))
    if which == "post":
        ells = initial_lengthscales(4, kv.blog_data().x)
        assert any(f"{ells[0]:.3g}" in m.value for m in at.markdown)
    else:
        assert any("none, the maps are random" in m.value for m in at.markdown)


def test_attention_controls_at_extremes():
    at = start(ATTN, {"attn.picture": "kernel"})
    for which in ("min", "max"):
        values = set_all(at, SLIDERS, which)
        at.selectbox(key="attn.start").set_value(STARTS[0 if which == "min" else -1])
        at.run()
        ok(at)
        assert set(charts(at)) == ALWAYS | {"attn.kernel"}
        for key, v in values.items():
            assert control(at, key)[1].value == v
        assert all(d < 1e-9 for d in diffs(at)), diffs(at)
        for which_head in ("min", "max"):
            set_all(at, ["attn.head"], which_head)
            at.run()
            ok(at)
    assert at.radio(key="attn.head").value == HEADS_MAX


def test_attention_query_params_set_the_controls():
    at = start(ATTN, {"attn.heads": "3", "attn.dqk": "2", "attn.dv": "2", "attn.holdout": "12",
                      "attn.steps": "200", "attn.lr": "0.1", "attn.seed": "4", "attn.head": "2",
                      "attn.start": "post", "attn.picture": "heads"})
    assert at.slider(key="attn.heads").value == 3
    assert at.slider(key="attn.dqk").value == 2
    assert at.slider(key="attn.dv").value == 2
    assert at.slider(key="attn.holdout").value == 12
    assert at.slider(key="attn.steps").value == 200
    assert at.select_slider(key="attn.lr").value == pytest.approx(0.1)
    assert at.slider(key="attn.seed").value == 4
    assert at.radio(key="attn.head").value == 2
    assert at.selectbox(key="attn.start").value == "post"
    assert at.segmented_control(key="attn.picture").value == "heads"
    assert heatmap_panels(charts(at)["attn.heatmaps"]) == 3


def test_large_data_subsample_the_heatmaps_and_say_so():
    at = start(ATTN, {"data.n": "2000", "attn.heads": "2", "attn.steps": "200"})
    figs = charts(at)
    assert set(figs) == ATTN_CHARTS
    keys = array(next(t for t in figs["attn.heatmaps"]["data"] if t["type"] == "heatmap")["x"])
    assert keys.size <= 500
    assert any("subsample" in c.value and "2,000" in c.value for c in at.caption)
    self_cross = [t for t in show(at, "selfcross")["attn.selfcross"]["data"] if t["type"] == "heatmap"]
    assert all(array(t["z"]).size <= 120 * 200 for t in self_cross)  # thinned cells, not n × n


def test_the_book_draws_the_picture_chosen_as_the_page_does():
    """Each chart by name (``kernelviz.app.ui.charts.attention``) at a view's values: the same traces as the
    page's, and only the charts the page draws there (the picture chosen's, the formula when x* is)."""
    assert books.book("dot-product-attention") is book.BOOK
    for picture, key in PICTURES.items():
        values = {"attn.picture": picture, "attn.head": "2", "attn.explain": "true", "attn.x": "1"}
        settings, problems = book.BOOK.read(DATA, values)
        assert problems == ()
        drawn = {name: build(DATA, settings) for name, build in book.BOOK.charts.items()}
        assert {name for name, d in drawn.items() if d is not None} == ALWAYS | {"attn.formula", key}
        assert isinstance(drawn["attn.formula"], Panel)
        page = charts(start(ATTN, values))
        for name in ALWAYS | {key}:
            assert [t.type for t in drawn[name].figure.data] == [t["type"] for t in page[name]["data"]], name
            assert drawn[name].figure.layout.title.text == page[name]["layout"].get("title", {}).get("text")


def test_a_scenes_head_is_one_of_its_layers():
    """A scene reads "Head shown" before the number of heads: a head past the layer's last shows the last,
    as the page's control snaps it."""
    settings, problems = book.BOOK.read(DATA, {"attn.heads": "2", "attn.head": "6", "attn.picture": "kernel"})
    assert problems == () and settings.inside.head == 6
    assert "head 2" in str(book.kernel(DATA, settings).figure.layout)
    at = start(ATTN, {"attn.heads": "2", "attn.head": "6", "attn.picture": "kernel"})
    assert at.radio(key="attn.head").value == 2
