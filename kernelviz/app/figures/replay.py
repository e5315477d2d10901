"""Training replayed in the browser (``animated``): a slider of training steps under a chart, starting at
the last step, which is the still chart itself; Play replays training from its start, with no message to
the server. Chapter 2's fit with ℓ at each step, chapter 4's fit and learned kernel, chapter 5's learned
window."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
import plotly.graph_objects as go

from kernelviz.app.figures.animation import Moves, after_steps, animated, replay_frames, showing
from kernelviz.app.figures.fits import Curve
from kernelviz.app.figures.styling import vec
from kernelviz.app.figures.training import learned_name
from kernelviz.runtime.i18n import _

if TYPE_CHECKING:
    from kernelviz.app.views.replay import LayerPath, PretrainPath

__all__ = ["add_kernel_replay", "add_layer_replay", "add_loo_replay", "add_pretrain_replay",
           "add_training_scrub", "loss_titles"]

PREFIX = _("training step ")


def _replayed(fig: go.Figure, steps: Sequence[int], titles: Sequence[str] | None, opened: int | None,
              moves: Moves) -> go.Figure:
    """``fig`` with a frame per step (``replay_frames``, moving ``moves``), Play from the first; the chart
    opens at the frame whose step is nearest ``opened`` (None: the last, the still chart), its slider
    there."""
    t = [int(v) for v in steps]
    made = replay_frames(fig, t, titles or [None] * len(t), moves)
    at = len(t) - 1 if opened is None else int(np.argmin(np.abs(np.asarray(t) - int(opened))))
    out = animated(fig, made, active=at, prefix=PREFIX, from_start=True)
    return out if at == len(t) - 1 else showing(out, made[at])


def add_training_scrub(fig: go.Figure, curve: Curve, steps: object, lengthscales: object,
                       means: object, opened: int | None = None) -> go.Figure:
    """Replay chapter 2's training: one frame per training step in ``steps``, the fit ``curve`` with that
    step's ℓ (``lengthscales``; ``means`` on the curve's own x), the band only at the last frame, the
    title naming the step and its ℓ; the chart opens at the step nearest ``opened`` (None: the last)."""
    t, ells = [int(v) for v in vec(steps)], vec(lengthscales)
    title = _("{after}: ℓ = {ell:.3g}")
    titles = [title.format(after=after_steps(k), ell=ell) for k, ell in zip(t, ells, strict=True)]
    hidden = () if curve.std is None else (curve.band_label,)
    return _replayed(fig, t, titles, opened, Moves(lines={curve.name: means}, hidden=hidden))


def add_loo_replay(fig: go.Figure, learned: float, steps: object, lengthscales: object,
                   curve: tuple[object, object], opened: int | None = None) -> go.Figure:
    """Replay chapter 2's training on ``loo_figure``: the marker of the ``learned`` ℓ at each step's ℓ
    (``lengthscales``), on the drawn curve ``curve`` = (ℓ grid, CV(ℓ)) (interpolated in log ℓ), opening at
    the step nearest ``opened``; ``fig`` itself when it has no such marker (CV(learned ℓ) not finite)."""
    marker = learned_name(learned)
    if marker not in {trace.name for trace in fig.data}:
        return fig
    ells = vec(lengthscales)
    grid, cv = vec(curve[0]), vec(curve[1])
    ok = np.isfinite(cv)
    on_curve = np.interp(np.log(ells), np.log(grid[ok]), cv[ok])
    moves = Moves(markers={marker: (ells, on_curve)})
    return _replayed(fig, [int(v) for v in vec(steps)], None, opened, moves)


def loss_titles(steps: Sequence[int], losses: Sequence[float], what: str = _("hold-out loss")) -> list[str]:
    """A replay frame's title: the step and the mean loss of the steps just before it (none at the start)."""
    title, start = _("{after}: {what} {loss:.3g}"), _("At the start, before training")
    return [title.format(after=after_steps(k), what=what, loss=v) if k and math.isfinite(v) else start
            for k, v in zip(steps, losses, strict=True)]


def add_layer_replay(fig: go.Figure, path: LayerPath, mixture: str, heads: Sequence[str], band: str,
                     opened: int | None = None) -> go.Figure:
    """Replay chapter 4's training on its fit chart: at each step of ``path`` the layer's fit (the trace
    ``mixture``) and every head's part (the traces ``heads``), the band (``band``) only at the last; the
    chart opens at the step nearest ``opened``."""
    lines = {mixture: path.means} | {name: path.head_outputs[:, h] for h, name in enumerate(heads)}
    return _replayed(fig, path.steps, loss_titles(path.steps, path.losses), opened,
                     Moves(lines=lines, hidden=(band,)))


def add_kernel_replay(fig: go.Figure, path: LayerPath, head: int, opened: int | None = None) -> go.Figure:
    """Replay head ``head``'s learned kernel on ``score_transpose_figure``'s two panels (traces 0 and 2):
    log K(x, x′) and its transpose at each step of ``path``, on its thinned grid, opening at the step
    nearest ``opened``."""
    k = path.log_kernels[:, head]
    return _replayed(fig, path.steps, None, opened,
                     Moves(heatmaps={0: k, 2: np.swapaxes(k, 1, 2)}, heatmap_xy=(path.kgrid, path.kgrid)))


def add_pretrain_replay(fig: go.Figure, path: PretrainPath, opened: int | None = None) -> go.Figure:
    """Replay chapter 5's pretraining on ``learned_kernel_figure``: every head's kernel at each query, at
    each step of ``path``, the title giving the learned window ℓ and the in-context error then; the chart
    opens at the step nearest ``opened``."""
    heads, queries = path.kernels.shape[1:3]
    first = len(fig.data) - heads * queries  # the kernels are the last traces, head by head, query by query
    lines = {first + h * queries + j: path.kernels[:, h, j] for h in range(heads) for j in range(queries)}
    window = _("{after}: window ℓ = {window:.3g}, in-context error {error:.3g}")
    none_yet = _("{after}: no window yet, in-context error {error:.3g}")
    titles = [(window if np.isfinite(w) else none_yet).format(after=after_steps(k), window=w, error=e)
              for k, w, e in zip(path.steps, path.windows, path.errors, strict=True)]
    return _replayed(fig, path.steps, titles, opened, Moves(lines=lines))
