"""Chapter 5's charts by name: the window one pretrained attention layer learned (its pretraining replayed
under it), the error of every fixed ℓ, a fresh task predicted in context with its weights, the pretraining
loss and the sweep of the window over roughness and noise, each a function of the chapter's ``Settings``.

The chapter draws its own tasks: every builder takes the sidebar's ``Data`` as every book's do and leaves
it aside; what it draws follows from the layer's settings (``PretrainRequest``), the replay's and the page's
own choices (``Shown``: the task, the comparison, the sweep).
"""

from __future__ import annotations

import functools
from typing import NamedTuple

from kernelviz.app import figures as kf
from kernelviz.app.ui.caching import incontext as ci
from kernelviz.app.ui.charts import Book, Chart
from kernelviz.app.ui.page_data import Data
from kernelviz.app.ui.questions import bank
from kernelviz.app.ui.widgets.replay import Replay, replay_table
from kernelviz.app.ui.widgets.text import busy, prose
from kernelviz.app.views import incontext as vi
from kernelviz.app.views import page_settings as ps
from kernelviz.app.views.incontext import KernelView, TaskView
from kernelviz.app.views.settings import Control, Controls
from kernelviz.models import incontext
from kernelviz.models.incontext import PretrainRequest
from kernelviz.models.incontext.evaluation import LengthscaleSearch, SweepRow
from kernelviz.runtime.i18n import _

__all__ = [
    "BOOK", "CHAPTER", "KIND_NAMES", "PRETRAINING", "TASKS_MAX", "Settings", "Shown", "Window", "layer",
    "shown_controls", "sweep_rows", "task", "window",
]

CHAPTER = "5_in_context"  # its prose: chapters/prose/5_in_context.md
KIND_NAMES = {"softmax": _("softmax"), "linear": _("linear")}  # a kind in a sentence ("the linear layer")
PRETRAINING = _("pretraining")  # what the replay under the learned kernels replays
TASKS_MAX = 999


class Shown(NamedTuple):
    """The page's own choices beside the layer: the fresh task it draws (``task``), whether it pretrains the
    other kind of layer to compare their errors (``compare``) and whether it runs the sweep (``sweep``)."""

    task: int = 0
    compare: bool = False
    sweep: bool = False


@functools.cache
def _shown(other: str) -> Controls:
    """The ``Shown`` controls, the comparison's help naming the ``other`` kind of attention."""
    return Controls(Shown(), "icl", {
        "task": Control(_("Task number"), "number", low=0, high=TASKS_MAX, notched=False,
                        help=_("Which fresh task to draw; the button draws the next one.")),
        "compare": Control(_("Compare with the other attention"), "toggle", notched=False,
                           help=_("Pretrains a {kind} layer with the same controls: each move of them then "
                                  "takes about twice as long.").format(kind=KIND_NAMES[other])),
        "sweep": Control(_("Run the sweep"), "toggle", notched=False),
    })


def shown_controls(s: PretrainRequest) -> Controls:
    """The ``Shown`` controls of a page whose layer is ``s`` (the comparison pretrains the other kind)."""
    return _shown(vi.other_kind(s).kind)


class Settings(NamedTuple):
    """Chapter 5's settings: the layer's pretraining, the replay under its kernels, the page's choices."""

    layer: PretrainRequest
    replay: Replay
    shown: Shown


TABLES = Settings(ps.IN_CONTEXT, replay_table("icl", CHAPTER, PRETRAINING), shown_controls(PretrainRequest()))


def layer(s: PretrainRequest) -> incontext.Pretrained:
    """The layer pretrained with ``s`` (``ci.pretrain``, cached), with a status line while it runs."""
    text = prose(CHAPTER, "pretrain_status", steps=f"{s.steps:,}", n=s.n, family=ps.FAMILIES[s.family],
                 roughness=f"{s.roughness:g}", noise=f"{s.noise:g}")
    with busy(text):
        return ci.pretrain(s)


class Window(NamedTuple):
    """The learned kernels (``view``), the family's best fixed ℓ with the error of every ℓ (``best``) and
    the mean leave-one-out ℓ* of single prompts (``loo``)."""

    view: KernelView
    best: LengthscaleSearch
    loo: float


def window(s: PretrainRequest) -> Window:
    """The layer's kernels read as windows, beside the family's reference smoothers."""
    layer(s)
    with busy(_("Reading the learned kernels and scoring every fixed ℓ on 256 fresh tasks…")):
        return Window(ci.kernels(s), ci.best_lengthscale(s.family, s.roughness, s.noise, s.n),
                      ci.loo_lengthscale(s.family, s.roughness, s.noise, s.n))


def kernel(data: Data, s: Settings) -> Chart:
    """Each head's kernel K_h(x, x + δ)/K_h(x, x) at three queries beside the Gaussian window of the best
    fixed ℓ, titled; with the replay on, pretraining's kept steps under it, opened at the step asked."""
    w = window(s.layer)
    fig = kf.learned_kernel_figure(w.view.offsets, w.view.queries, w.view.kernels, w.best.best,
                                   title=_("The window pretraining learned"))
    replay = s.replay.at(s.layer.steps)
    if replay.on:
        with busy(_("Replaying pretraining: the layer's kernels and its error in context at 50 of its "
                    "steps…")):
            path = ci.pretrain_path(s.layer)
        fig = kf.add_pretrain_replay(fig, path, replay.step)
    return Chart(fig, "kernelviz-in-context-kernel")


def lengthscales(data: Data, s: Settings) -> Chart:
    """Nadaraya–Watson's mean error on fresh tasks against its fixed ℓ, the best ℓ, the learned window
    ℓ = (−2c₂)^(−1/2) and the mean leave-one-out ℓ* marked."""
    w = window(s.layer)
    return Chart(kf.lengthscale_error_figure(w.best.lengthscales, w.best.errors, w.best.best, w.view.window,
                                             w.loo), "kernelviz-in-context-lengthscales")


def task(s: Settings) -> TaskView:
    """Fresh task ``s.shown.task`` predicted in context and by Nadaraya–Watson at the best fixed ℓ."""
    layer(s.layer)
    with busy(_("Predicting in context and with Nadaraya–Watson…")):
        return ci.task(s.layer, int(s.shown.task))


def prediction(data: Data, s: Settings) -> Chart:
    """The task's prompt, its truth f, the in-context f̂(x) = Σ_h u_h Σᵢ w_hi(x) yᵢ with its band
    f̂(x) ± 2s(x), and Nadaraya–Watson at the family's best fixed ℓ."""
    t = task(s)
    curves = [kf.Curve(_("in-context f̂(x)"), t.mean, kf.COLORS["fit"], std=t.std, band_name="f̂(x) ± 2s(x)"),
              kf.Curve(_("Nadaraya–Watson, ℓ = {ell:.3g}").format(ell=t.lengthscale), t.nw_mean,
                       kf.COLORS["knn"], dash="dash")]
    figure = kf.fit_figure(kf.Points(t.x, t.y, t.queries, truth=t.truth), curves,
                           look=kf.Look(x_title="x", y_title="y", legend_rows=2))
    return Chart(figure, "kernelviz-in-context-task")


def heatmap(data: Data, s: Settings) -> Chart:
    """Each head's weights w_hi(x) on the task's prompt: queries down, sorted context points across."""
    t = task(s)
    return Chart(kf.in_context_weights_figure(t.weights, t.queries, t.x, t.mixing),
                 "kernelviz-in-context-weights")


def loss(data: Data, s: Settings) -> Chart | None:
    """The query mean squared error at every pretraining step; None for a run that diverged at its first
    step (it has no loss)."""
    losses = layer(s.layer).losses
    if not losses.size:
        return None
    return Chart(kf.loss_figure(losses, y_title=_("query mean squared error")), "kernelviz-in-context-loss")


def sweep_rows(s: PretrainRequest) -> list[SweepRow]:
    """The sweep: softmax layers of ``ci.SWEEP_STEPS`` steps at each roughness and each noise of the sweep
    (``ci.sweep``), each with its learned window and the family's best fixed ℓ."""
    layers = len(ci.SWEEP_ROUGHNESS) + len(ci.SWEEP_NOISE)
    with busy(_("Pretraining {layers} softmax layers of {steps} steps on {family}…").format(
            layers=layers, steps=ci.SWEEP_STEPS, family=ps.FAMILIES[s.family])):
        return ci.sweep(s.family, s.n, s.heads, s.seed)


def sweep_roughness(data: Data, s: Settings) -> Chart | None:
    """The learned window and the best fixed ℓ against the task roughness r at the base noise, this
    page's r marked; None while the sweep is off."""
    if not s.shown.sweep:
        return None
    by_r = [r for r in sweep_rows(s.layer) if r.noise == ci.SWEEP_BASE[1]]
    return Chart(kf.window_sweep_figure([r.roughness for r in by_r], [r.window for r in by_r],
                                        [r.best_lengthscale for r in by_r], _("task roughness r"),
                                        s.layer.roughness), "kernelviz-window-against-roughness")


def sweep_noise(data: Data, s: Settings) -> Chart | None:
    """The learned window and the best fixed ℓ against the label noise σ at the base roughness, this
    page's σ marked; None while the sweep is off."""
    if not s.shown.sweep:
        return None
    rows = sweep_rows(s.layer)
    by_s = sorted((r for r in rows if r.roughness == ci.SWEEP_BASE[0]), key=lambda r: r.noise)
    return Chart(kf.window_sweep_figure([r.noise for r in by_s], [r.window for r in by_s],
                                        [r.best_lengthscale for r in by_s], _("label noise σ"),
                                        s.layer.noise), "kernelviz-window-against-noise")


BOOK = Book(TABLES, {
    "icl.kernel": kernel, "icl.lengthscales": lengthscales, "icl.prediction": prediction,
    "icl.heatmap": heatmap, "icl.loss": loss, "icl.sweep_roughness": sweep_roughness,
    "icl.sweep_noise": sweep_noise,
}, {"icl.rough_window": lambda data, s: bank.rough_window(s.layer)})
