"""Chapter 5's page (in context) under AppTest: it runs at the defaults with its maths, metrics and charts,
every control at its minimum and at its maximum, roughness moves the learned window, the New task button
draws another task, the sweep runs on request, and the URL sets the controls; its book (kernelviz/app/ui/
charts/incontext.py) draws each chart by name as the page does, and a lesson scene without the page."""

from __future__ import annotations

import dataclasses
import json

import plotly.graph_objects as go
import pytest
from prosetools import shown, where_from
from test_app import charts, ok, start, values

from kernelviz.app.ui import charts as books
from kernelviz.app.ui.charts import Chart
from kernelviz.app.ui.charts import incontext as icl
from kernelviz.app.ui.lesson import files as lesson_files
from kernelviz.app.ui.questions.predict import QUESTION_CHAPTERS
from kernelviz.app.ui.widgets.sidebar import builtin_data
from kernelviz.data import tasks
from kernelviz.models.incontext import PretrainRequest
from kernelviz.models.smoothing import HEADS_MAX
from kernelviz.models.training import STEPS_MAX

PAGE = "chapters/5_in_context.py"
CH = "5_in_context"  # its prose: chapters/prose/5_in_context.md
CHARTS = {"icl.kernel", "icl.lengthscales", "icl.prediction", "icl.heatmap", "icl.loss"}
SWEEP = {"icl.sweep_roughness", "icl.sweep_noise"}
FAST = {"icl.steps": "50"}  # a short pretraining, so that a run at other ends stays quick
SLIDERS = {  # key: (minimum, maximum)
    "icl.roughness": tasks.ROUGHNESS_RANGE,
    "icl.noise": (0.0, tasks.NOISE_MAX),
    "icl.n": (tasks.N_MIN, tasks.N_MAX),
    "icl.heads": (1, HEADS_MAX),
    "icl.seed": (0, 99),
}
CHOICES = {"icl.family": ("sine", "gp"), "icl.kind": ("softmax", "linear")}


def metric(at, label: str) -> float:
    value = next(m.value for m in at.metric if m.label == label)
    return float(str(value).rstrip("×"))


def set_controls(at, values: dict[str, object]) -> None:
    """Set sliders, segmented controls and the task number at once; the caller runs the app."""
    for key, value in values.items():
        if key in CHOICES:
            at.segmented_control(key=key).set_value(value)
        elif key == "icl.task":
            at.number_input(key=key).set_value(value)
        else:
            at.slider(key=key).set_value(value)


def test_page_runs_at_the_defaults_with_maths_metrics_and_charts():
    at = start(PAGE)
    assert at.title[0].value.startswith("5 ·")
    assert len(at.latex) >= 3  # the prompt, the score and softmax weights, the Gaussian window
    follows = next(m for m in where_from(at) if m.startswith("Follows:"))
    assert "kernelviz's own chapter" in follows and "2402.11639" in follows and "Garg" in follows
    first = json.loads(at.get("plotly_chart")[0].proto.spec)  # titled: it starts high on a first screen
    assert first["layout"]["title"]["text"] == "The window pretraining learned"
    for label in ("Learned window", "Best fixed ℓ (Nadaraya–Watson)", "Mean leave-one-out ℓ*",
                  "In-context error", "Nadaraya–Watson at best ℓ", "Ratio"):
        assert any(m.label == label for m in at.metric), label
    window, best = metric(at, "Learned window"), metric(at, "Best fixed ℓ (Nadaraya–Watson)")
    assert 0.5 * best < window < 2.0 * best  # the softmax layer learned a window near the best fixed one
    assert metric(at, "Ratio") < 1.2
    assert not any(m.label == "Linear attention" for m in at.metric)  # the comparison waits to be asked
    assert shown((i.value for i in at.info), CH, "compare_off") == {"other": "linear"}
    assert set(charts(at)) == CHARTS
    assert at.slider(key="icl.steps").value == 1500 and at.slider(key="icl.roughness").value == 3.0


def test_the_comparison_pretrains_the_other_layer_with_the_same_controls():
    at = start(PAGE, {"icl.compare": "true"})
    assert at.toggle(key="icl.compare").value is True
    assert not at.info or all("comparison" not in i.value for i in at.info)
    assert metric(at, "Softmax attention") == metric(at, "In-context error")  # this page's layer
    assert metric(at, "Linear attention") > 1.5 * metric(at, "Softmax attention")
    at.toggle(key="icl.compare").set_value(False).run()
    assert not any(m.label == "Linear attention" for m in at.metric)


def test_every_chart_is_valid_plotly_with_axis_titles():
    at = start(PAGE, {"icl.sweep": "true", **FAST})
    assert set(charts(at)) == CHARTS | SWEEP
    for c in at.get("plotly_chart"):
        fig = json.loads(c.proto.spec)
        go.Figure(fig)
        axes = [v for k, v in fig["layout"].items() if k.startswith(("xaxis", "yaxis"))]
        titled = [a.get("title", {}).get("text") for a in axes]
        assert any(titled), f"{c.proto.id} has no axis title"


@pytest.mark.parametrize("which", [0, 1])
def test_every_control_at_its_minimum_and_maximum(which):
    at = start(PAGE, FAST)
    ends = {key: bounds[which] for key, bounds in SLIDERS.items()}
    ends |= {key: options[which] for key, options in CHOICES.items()}
    ends["icl.task"] = (0, 999)[which]
    set_controls(at, ends)
    at.run()
    ok(at)
    assert set(charts(at)) == CHARTS
    assert at.slider(key="icl.n").value == ends["icl.n"]


def test_pretraining_steps_at_both_ends():
    at = start(PAGE, {"icl.steps": str(STEPS_MAX)})
    ok(at)
    assert at.slider(key="icl.steps").value == STEPS_MAX
    at.slider(key="icl.steps").set_value(50).run()
    ok(at)
    assert set(charts(at)) == CHARTS


def test_roughness_moves_the_learned_window():
    at = start(PAGE)
    smooth = metric(at, "Learned window")
    at.slider(key="icl.roughness").set_value(8.0).run()
    ok(at)
    rough = metric(at, "Learned window")
    assert rough < 0.8 * smooth, (smooth, rough)


def test_new_task_draws_another_task():
    at = start(PAGE, FAST)
    before = charts(at)["icl.prediction"]
    next(b for b in at.button if b.label == "New task").click().run()
    ok(at)
    assert at.number_input(key="icl.task").value == 1
    assert charts(at)["icl.prediction"] != before
    assert at.query_params["icl.task"] in ("1", ["1"])


def test_the_sweep_runs_on_request_and_shows_the_predicted_direction():
    at = start(PAGE)
    assert not SWEEP & set(charts(at))
    shown((i.value for i in at.info), CH, "sweep_off")
    at.toggle(key="icl.sweep").set_value(True).run()
    ok(at)
    assert set(charts(at)) >= SWEEP
    found = shown((m.value for m in at.markdown), CH, "sweep_result")
    assert found == {"narrows": "yes", "widens": "yes"}


def test_query_params_set_the_controls():
    at = start(PAGE, {"icl.family": "gp", "icl.roughness": "6", "icl.kind": "linear", "icl.n": "12",
                      "icl.steps": "5000", "icl.noise": "junk"})
    assert at.segmented_control(key="icl.family").value == "gp"
    assert at.segmented_control(key="icl.kind").value == "linear"
    assert at.slider(key="icl.roughness").value == 6.0
    assert at.slider(key="icl.n").value == 12
    assert at.slider(key="icl.steps").value == STEPS_MAX  # clamped
    assert at.slider(key="icl.noise").value == 0.1  # junk ignored
    shown((c.value for c in at.caption), CH, "kernels_linear")


BOOK = books.book("in-context")
DATA = builtin_data("blog", 150, 2024)  # the sidebar's: the chapter's charts leave it aside


def fingerprint(figure: dict) -> list[tuple]:
    """What a chart shows, as the page sends it and as the builder makes it: each trace's type, name and
    number of points, the title, and the replay's frames."""
    traces = [(t["type"], t.get("name"), values(t["y"]).size if "y" in t else None) for t in figure["data"]]
    title = (figure["layout"].get("title") or {}).get("text")
    return [*traces, ("title", title), ("frames", len(figure.get("frames") or ()))]


def test_the_book_draws_every_chart_by_name_as_the_page_does():
    query = {"icl.sweep": "true", "icl.replay": "true", "icl.task": "3", **FAST}
    settings, problems = BOOK.read(DATA, query)
    assert problems == () and settings.shown == icl.Shown(task=3, compare=False, sweep=True)
    assert settings.replay.at(settings.layer.steps).step == 50  # the last step of a run of 50
    page = charts(start(PAGE, query))
    assert set(BOOK.charts) == set(page) == CHARTS | SWEEP
    for key, build in BOOK.charts.items():
        drawn = build(DATA, settings)
        assert isinstance(drawn, Chart), key
        assert fingerprint(drawn.figure.to_plotly_json()) == fingerprint(page[key]), key


def test_the_sweeps_charts_wait_for_the_sweep():
    settings, _ = BOOK.read(DATA, FAST)
    assert BOOK.charts["icl.sweep_roughness"](DATA, settings) is None
    assert BOOK.charts["icl.sweep_noise"](DATA, settings) is None


def test_a_layer_with_no_loss_has_no_loss_chart(monkeypatch):
    settings, _ = BOOK.read(DATA, FAST)
    fit = icl.layer(settings.layer)
    monkeypatch.setattr(icl, "layer", lambda s: dataclasses.replace(fit, losses=fit.losses[:0]))
    assert BOOK.charts["icl.loss"](DATA, settings) is None


def test_the_comparisons_help_names_the_other_attention():
    assert "Pretrains a linear layer" in icl.shown_controls(PretrainRequest()).fields["compare"].help
    linear = icl.shown_controls(PretrainRequest(kind="linear"))
    assert "Pretrains a softmax layer" in linear.fields["compare"].help
    at = start(PAGE, {"icl.kind": "linear", **FAST})
    assert "Pretrains a softmax layer" in at.toggle(key="icl.compare").help


def test_a_scene_draws_its_charts_without_the_page_and_explores_at_its_values():
    name = "from-kernel-regression-to-attention"
    lesson = lesson_files.load_lesson(lesson_files.lesson_path(name), QUESTION_CHAPTERS)
    number = next(k for k, scene in enumerate(lesson.scenes, 1) if "icl.sweep_roughness" in scene.charts)
    at = start(PAGE, {"lesson": name, "scene": str(number)})
    assert set(charts(at)) == {"icl.sweep_roughness"}
    page_widgets = [w.key for kind in ("slider", "segmented_control", "toggle", "number_input")
                    for w in getattr(at, kind)]
    assert not [key for key in page_widgets if key and key.startswith("icl.")]  # no page control ran
    at.button(key="lesson.explore").click().run()  # the chapter itself, at the scene's values
    ok(at)
    assert at.toggle(key="icl.sweep").value is True and at.number_input(key="icl.task").value == 0
    assert set(charts(at)) == CHARTS | SWEEP
