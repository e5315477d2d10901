"""Training replayed (chapters 4 and 5): the frames are the models at the steps their training kept, the
last frame is the still chart, and the pages send them only when asked."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
import pytest
from pagetools import array
from test_app import charts, ok, start

import kernelviz as kv
from kernelviz.app import defaults, views
from kernelviz.app import figures as kf
from kernelviz.app.views import replay
from kernelviz.app.views.incontext import kernel_view
from kernelviz.models import incontext
from kernelviz.models.attention import attention_kernel, attention_predict
from kernelviz.models.incontext.evaluation import in_context_error
from kernelviz.models.training import SNAPSHOTS

MASKED = "chapters/2_masked_training.py"
ATTN = "chapters/4_attention.py"
ICL = "chapters/5_in_context.py"


@pytest.fixture(scope="module")
def layer() -> tuple[kv.Dataset, object, views.AttentionView, replay.LayerPath]:
    ds = kv.blog_data()
    fit = kv.fit_attention(ds.x, ds.y, heads=3, d_qk=4, steps=300, seed=1)
    view = views.attention_view(ds, fit)
    return ds, fit, view, replay.layer_path(ds, fit, view.grid, view.kgrid)


def test_the_layer_path_is_the_layer_at_each_kept_step(layer):
    ds, fit, view, path = layer
    assert path.steps == tuple(int(s) for s in fit.snapshot_steps) and len(path.steps) == SNAPSHOTS
    for j in (0, 17, SNAPSHOTS - 1):
        p = attention_predict(fit.at_snapshot(j), view.grid, ds.x, ds.y, with_weights=False)
        np.testing.assert_allclose(path.means[j], p.mean, rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(path.head_outputs[j], p.head_outputs, rtol=1e-5, atol=1e-5)
        thin = slice(None, None, replay.KERNEL_STRIDE)
        k = attention_kernel(fit.at_snapshot(j), view.kgrid)[:, thin, thin]
        np.testing.assert_allclose(path.log_kernels[j], k, rtol=1e-5, atol=1e-4)
    # the last frame is the trained layer the still chart draws
    np.testing.assert_allclose(path.means[-1], view.mean, rtol=1e-5, atol=1e-5)
    assert np.isnan(path.losses[0]) and path.losses[-1] == pytest.approx(float(np.mean(fit.losses[-25:])))
    assert not np.allclose(path.means[0], path.means[-1], atol=1e-3)  # training moved the fit


def test_a_short_run_makes_one_frame_per_step():
    ds = kv.blog_data()
    fit = kv.fit_attention(ds.x, ds.y, heads=1, steps=5)
    view = views.attention_view(ds, fit)
    path = replay.layer_path(ds, fit, view.grid, view.kgrid)
    assert path.steps == (0, 1, 2, 3, 4, 5) and path.means.shape == (6, view.grid.shape[0])


def test_the_layer_replay_frames_and_their_last_frame(layer):
    ds, fit, view, path = layer
    heads = [f"head {h + 1}" for h in range(fit.heads)]
    fig = kf.heads_fit_figure(kf.Points(ds.x, ds.y, view.grid),
                              kf.Mixture(view.head_outputs, view.mean, view.std, heads, "f", "band"))
    fig = kf.add_layer_replay(fig, path, "f", heads, "band")
    go.Figure(fig.to_dict())  # built without validation: valid all the same
    slider = fig.layout.sliders[0]
    assert len(fig.frames) == SNAPSHOTS and slider.active == SNAPSHOTS - 1
    assert [s.label for s in slider.steps][:3] == ["0", "6", "12"]
    names = [t.name for t in fig.data]
    first, last = fig.frames[0], fig.frames[-1]
    assert [names[i] for i in first.traces] == ["f", *heads, "band"]
    np.testing.assert_allclose(first.data[0].y, path.means[0], rtol=1e-6)
    np.testing.assert_allclose(first.data[2].y, path.head_outputs[0, 1], rtol=1e-6)
    assert len(first.data[-1].x) == 0 and len(last.data[-1].x) > 0  # the band: only the still chart's
    for k, i in enumerate(last.traces):  # the still chart's own data, float32 as the chart sends it
        np.testing.assert_allclose(np.asarray(last.data[k].y, float), np.asarray(fig.data[i].y, float),
                                   rtol=1e-6, atol=1e-7)
    assert first.layout.title.text == "At the start, before training"
    title = f"After {path.steps[10]} steps: hold-out loss {path.losses[10]:.3g}"
    assert fig.frames[10].layout.title.text == title


def test_a_replay_never_moves_by_itself_and_never_glides(layer):
    # prefers-reduced-motion: nothing plays until Play is pressed (no frame runs on load), a step of the
    # slider jumps to its frame, and no frame is tweened into the next
    ds, fit, view, path = layer
    heads = [f"head {h + 1}" for h in range(fit.heads)]
    mixture = kf.Mixture(view.head_outputs, view.mean, view.std, heads, "f", "band")
    fig = kf.heads_fit_figure(kf.Points(ds.x, ds.y, view.grid), mixture)
    fig = kf.add_layer_replay(fig, path, "f", heads, "band")
    slider, (menu,) = fig.layout.sliders[0], fig.layout.updatemenus
    assert slider.active == len(fig.frames) - 1 and menu.showactive is False and menu.type == "buttons"
    options = [step.args[1] for step in slider.steps] + [button.args[1] for button in menu.buttons]
    assert all(option["transition"]["duration"] == 0 for option in options)
    assert {button.label for button in menu.buttons} == {"Play", "Pause"}
    legend_top, controls_top = fig.layout.legend.y, slider.y
    assert legend_top is None or legend_top > 0 or legend_top < controls_top  # a legend below: under them


def test_the_kernel_replay_draws_both_panels_on_the_thinned_grid(layer):
    _, _, view, path = layer
    fig = kf.add_kernel_replay(kf.score_transpose_figure(view.log_kernel[1], view.kgrid), path, 1)
    go.Figure(fig.to_dict())
    frame = fig.frames[3]
    assert tuple(frame.traces) == (0, 2)
    np.testing.assert_allclose(frame.data[0].z, path.log_kernels[3, 1], rtol=1e-6)
    np.testing.assert_allclose(frame.data[1].z, path.log_kernels[3, 1].T, rtol=1e-6)
    np.testing.assert_allclose(frame.data[0].x, path.kgrid)
    assert np.asarray(fig.frames[-1].data[0].z).shape == (view.kgrid.shape[0],) * 2  # the still chart


def test_chapter_4_sends_the_replay_only_when_asked():
    at = start(ATTN)
    assert not charts(at)["attn.fit"].get("frames")
    at.toggle(key="attn.replay").set_value(True).run()
    ok(at)
    spec = charts(at)["attn.fit"]
    assert len(spec["frames"]) == SNAPSHOTS and spec["layout"]["sliders"][0]["active"] == SNAPSHOTS - 1
    at.segmented_control(key="attn.picture").set_value("kernel").run()
    ok(at)
    kernel = charts(at)["attn.kernel"]
    assert len(kernel["frames"]) == SNAPSHOTS
    side = len(np.arange(defaults.KERNEL_GRID_POINTS)[:: replay.KERNEL_STRIDE])
    assert array(kernel["frames"][0]["data"][0]["z"]).size == side * side
    at.toggle(key="attn.replay").set_value(False).run()
    ok(at)
    assert not charts(at)["attn.kernel"].get("frames") and not charts(at)["attn.fit"].get("frames")


def test_the_pretrain_path_is_the_layer_at_each_kept_step():
    fit = incontext.pretrain(steps=120, heads=2)
    path = replay.pretrain_path(fit)
    assert path.steps == tuple(int(s) for s in fit.snapshot_steps)
    for j in (0, 20, SNAPSHOTS - 1):
        view = kernel_view(fit.at_snapshot(j))
        np.testing.assert_allclose(path.kernels[j], view.kernels, rtol=1e-5, atol=1e-6)
        assert path.windows[j] == pytest.approx(view.window)
        assert path.errors[j] == pytest.approx(in_context_error(fit.at_snapshot(j)))
    assert path.errors[-1] == pytest.approx(in_context_error(fit))  # the page's own readout
    assert path.errors[-1] < path.errors[0]  # pretraining taught it something


def test_the_pretrain_replay_moves_every_kernel_line():
    fit = incontext.pretrain(steps=60, heads=2)
    view, path = kernel_view(fit), replay.pretrain_path(fit)
    still = kf.learned_kernel_figure(view.offsets, view.queries, view.kernels, 0.2)
    fig = kf.add_pretrain_replay(still, path)
    go.Figure(fig.to_dict())
    q = len(view.queries)
    assert len(fig.frames[0].traces) == 2 * q and fig.frames[0].traces[0] == 1  # after the reference window
    np.testing.assert_allclose(fig.frames[5].data[q + 1].y, path.kernels[5, 1, 1], rtol=1e-6)
    assert fig.frames[0].layout.title.text.startswith("At the start: window ℓ = ")
    assert fig.frames[-1].layout.title.text.endswith(f"in-context error {path.errors[-1]:.3g}")


def test_chapter_5_sends_the_replay_only_when_asked():
    at = start(ICL)
    assert not charts(at)["icl.kernel"].get("frames")
    at.toggle(key="icl.replay").set_value(True).run()
    ok(at)
    spec = charts(at)["icl.kernel"]
    assert len(spec["frames"]) == SNAPSHOTS and spec["layout"]["sliders"][0]["active"] == SNAPSHOTS - 1


def test_open_at_step_stays_at_the_end_when_the_steps_change():
    at = start(MASKED, {"masked.replay": "true"})
    step = lambda: at.number_input(key="masked.step").value  # noqa: E731
    assert step() == at.slider(key="masked.steps").value  # the last step: the still chart
    at.slider(key="masked.steps").set_value(500).run()
    ok(at)
    assert step() == 500  # still the last
    at.number_input(key="masked.step").set_value(30).run()
    at.slider(key="masked.steps").set_value(1000).run()
    ok(at)
    assert step() == 30 and charts(at)["masked.fit"]["layout"]["sliders"][0]["steps"][0]["label"] == "0"


def test_a_chapter_2_scene_draws_its_replay_by_name_and_explore_opens_it_there():
    at = start(MASKED, {"lesson": "ten-minutes", "scene": "3"})  # hold-out 10, opened at step 0
    ok(at)
    fit = charts(at)["masked.fit"]
    assert fit["layout"]["sliders"][0]["active"] == 0 and "masked.loo" in charts(at)
    assert not [s for s in at.slider if s.key == "masked.holdout"]  # drawn by name: the page did not run
    at.button(key="lesson.explore").click().run()  # the chapter, at the scene's values
    ok(at)
    assert at.slider(key="masked.holdout").value == 10 and at.toggle(key="masked.replay").value
    assert at.number_input(key="masked.step").value == 0
    assert charts(at)["masked.fit"]["data"] == fit["data"]  # the fit the scene drew
