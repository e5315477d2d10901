"""What training did and where it should have ended: loss curves, the leave-one-out error over ℓ with
training's path and the exact optimum, learned values across seeds, and the kernel shapes themselves."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, NamedTuple

import numpy as np
import plotly.graph_objects as go

from kernelviz.app.figures.fits import Curve, line_trace
from kernelviz.app.figures.styling import COLORS, Look, head_color, rgba, style, vec
from kernelviz.runtime.i18n import _

if TYPE_CHECKING:
    from kernelviz.app.views import MaskedView


def kernel_shape_figure(
    u: object,
    shapes: Mapping[str, object],
    highlight: str,
    *,
    height: int = 300,
) -> go.Figure:
    """K(u) against u = (x − x′)/ℓ: the highlighted kernel in the fit colour, the others faint for
    comparison, as one legend entry "other kernels" (each named in its hover), so that the legend stays one
    row in a narrow column."""
    uu = vec(u)
    if highlight not in shapes:
        raise ValueError(f"{highlight!r} is not one of the shapes given")
    fig = go.Figure()
    others = [name for name in shapes if name != highlight]
    for i, name in enumerate(others):
        other = Curve(_("other kernels"), shapes[name], rgba(COLORS["data"], 0.55), width=1.3)
        fig.add_trace(line_trace(uu, other, hover_name=name, legendgroup="others", showlegend=i == 0))
    fig.add_trace(line_trace(uu, Curve(highlight, shapes[highlight], COLORS["fit"], width=3.0)))
    return style(fig, Look(x_title="u = (x − x′)/ℓ", y_title="K(u)", height=height))


def _running_mean(v: np.ndarray, window: int) -> np.ndarray:
    """Mean of the last ``window`` finite values at each step (NaN where none is finite)."""
    ok = np.isfinite(v)
    c = np.concatenate([[0.0], np.cumsum(np.where(ok, v, 0.0))])
    k = np.concatenate([[0], np.cumsum(ok)])
    idx = np.arange(1, v.shape[0] + 1)
    lo = np.maximum(idx - window, 0)
    count = k[idx] - k[lo]
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(count > 0, (c[idx] - c[lo]) / np.maximum(count, 1), np.nan)


def loss_figure(
    losses: object,
    *,
    window: int = 25,
    y_title: str = _("hold-out mean squared error"),
    height: int = 320,
) -> go.Figure:
    """The loss of every training step (faint) and its running mean over ``window`` steps, log y axis.

    The steps 1, 2, … are given as ``x0 = 1, dx = 1``, not as arrays: a quarter of chapter 5's payload."""
    v = vec(losses)
    steps = np.arange(1, v.shape[0] + 1)
    v_plot = np.where(np.isfinite(v) & (v > 0), v, np.nan)
    fig = go.Figure()
    each = Curve(_("loss at each step"), v_plot, rgba(COLORS["loss"], 0.45), width=1.0)
    mean = Curve(_("mean of last {window} steps").format(window=window), _running_mean(v_plot, window),
                 COLORS["fit"])
    fig.add_trace(line_trace(steps, each))
    fig.add_trace(line_trace(steps, mean))
    fig.update_traces(x=None, x0=1, dx=1, hovertemplate=_("step %{x}<br>loss = %{y:.4g}") + "<extra></extra>")
    return style(fig, Look(x_title=_("training step"), y_title=y_title, height=height, log_y=True))


def epoch_loss_figure(losses: object, y_title: str, validation: object | None = None, *,
                      height: int = 340) -> go.Figure:
    """The loss of every epoch (lines and markers, epochs 1 … E) and, when given, the validation loss
    after every epoch beside it (the truth's colour: it scores the fit against the noise-free curve), on a
    log axis then, since the two can differ tenfold."""
    v = vec(losses)
    epochs = np.arange(1, v.shape[0] + 1)
    hover = _("epoch %{x}<br>loss = %{y:.4g}") + "<extra></extra>"
    traces = [line_trace(epochs, Curve(_("training loss"), v, COLORS["loss"])).update(mode="lines+markers",
                                                                                       hovertemplate=hover)]
    if validation is not None:
        after = Curve(_("validation loss"), vec(validation), COLORS["truth"], dash="dash")
        later = _("epoch %{x}<br>validation loss = %{y:.4g}") + "<extra></extra>"
        traces.append(line_trace(epochs, after).update(mode="lines+markers", hovertemplate=later))
    return style(go.Figure(traces), Look(x_title=_("epoch"), y_title=y_title, height=height, legend_rows=2,
                                         showlegend=validation is not None, log_y=validation is not None))


def error_by_size_figure(sizes: object, errors: Mapping[str, object], current: int | None = None, *,
                         y_title: str = _("error against the true mean"), height: int = 340) -> go.Figure:
    """Errors (one line with markers per entry of ``errors``, name → values) against the number of
    points n, both axes log; a dotted vertical line at the ``current`` n."""
    n = vec(sizes)
    colors = (COLORS["average"], COLORS["fit"], COLORS["optimum"])
    hover = _("{name}<br>n = %{{x}}<br>error = %{{y:.3g}}")
    traces = [line_trace(n, Curve(name, v, colors[i % len(colors)])).update(
        mode="lines+markers", hovertemplate=hover.format(name=name) + "<extra></extra>")
        for i, (name, v) in enumerate(errors.items())]
    if current is not None:
        values = np.concatenate([vec(v) for v in errors.values()])
        span = [float(np.nanmin(values)), float(np.nanmax(values))]
        now = Curve(_("this page's n = {n:,}").format(n=current), span, COLORS["data"], dash="dot", width=1.5)
        traces.append(line_trace([current, current], now, hoverinfo="skip"))
    return style(go.Figure(traces), Look(x_title=_("number of points n"), y_title=y_title, height=height,
                                         legend_rows=2, log_x=True, log_y=True))


def _marker(x: float, y: float | None, name: str, marker: dict, hover: str) -> go.Scatter:
    """A single marked point with its own legend entry; ``marker``: Plotly's marker (symbol, size in px,
    colour)."""
    return go.Scatter(x=[x], y=[y], name=name, mode="markers", marker=marker, hovertemplate=hover)


def _path_trace(trajectory: object, trajectory_cv: object) -> go.Scatter:
    """Training's path over CV(ℓ): ℓ and CV(ℓ) at each step, markers coloured by step."""
    t, tc = vec(trajectory), vec(trajectory_cv)
    ok = np.isfinite(t) & np.isfinite(tc) & (t > 0)
    steps = np.arange(t.shape[0])
    return go.Scatter(
        x=t[ok],
        y=tc[ok],
        name=_("training path (colour = step)"),
        mode="lines+markers",
        line={"color": rgba(COLORS["trajectory"], 0.5), "width": 1},
        marker={
            "size": 6,
            "color": steps[ok],
            "colorscale": "Greens",
            "showscale": False,
            "line": {"width": 0.5, "color": COLORS["trajectory"]},
        },
        customdata=steps[ok],
        hovertemplate=_("step %{customdata}<br>ℓ = %{x:.3g}<br>CV(ℓ) = %{y:.4g}") + "<extra></extra>",
    )


def _optimum_marker(optimum: float, ells: np.ndarray, cv: np.ndarray) -> go.Scatter:
    """A star at the exact optimum ℓ*, on the CV curve (interpolated in log ℓ; no y if CV is nowhere
    finite)."""
    finite = cv[np.isfinite(cv)]
    y0 = float(np.interp(np.log(optimum), np.log(ells), np.where(np.isfinite(cv), cv, np.nanmax(cv))))
    name = _("exact LOO optimum ℓ* = {ell:.3g}").format(ell=optimum)
    hover = "ℓ* = %{x:.4g}<extra>" + _("exact optimum") + "</extra>"
    star = {"symbol": "star", "size": 16, "color": COLORS["optimum"]}
    return _marker(optimum, y0 if finite.size else None, name, star, hover)


def learned_name(learned: float) -> str:
    """The name of the learned ℓ's marker on ``loo_figure`` (a replay moves it)."""
    return _("learned ℓ = {ell:.3g}").format(ell=learned)


class LooPath(NamedTuple):
    """Where training went on the leave-one-out curve: ℓ and CV(ℓ) at steps along training
    (``lengthscales``, ``cv``: (p,) each) and the ℓ it ended at (``learned``) with its CV(ℓ) (``learned_cv``;
    no marker when either is None or CV is not finite)."""

    lengthscales: object
    cv: object
    learned: float | None = None
    learned_cv: float | None = None


def loo_figure(lengthscales: object, cv: object, *, optimum: float | None = None, path: LooPath | None = None,
               height: int = 380) -> go.Figure:
    """The leave-one-out error CV(ℓ) on a log ℓ axis, training's path over it and the exact optimum.

    +∞ (some point's window empty) and NaN are gaps. ``path`` is where training went (markers coloured by
    step) and ended; ``optimum`` is the exact minimiser.
    """
    ells, c = vec(lengthscales), vec(cv)
    c = np.where(np.isfinite(c), c, np.nan)
    fig = go.Figure()
    fig.add_trace(
        line_trace(ells, Curve(_("leave-one-out error CV(ℓ)"), c, COLORS["fit"])).update(
            hovertemplate="ℓ = %{x:.3g}<br>CV(ℓ) = %{y:.4g}<extra></extra>"
        )
    )
    if path is not None:
        fig.add_trace(_path_trace(path.lengthscales, path.cv))
        learned, learned_cv = path.learned, path.learned_cv
        if learned is not None and learned_cv is not None and np.isfinite(learned_cv):
            hover = _("learned ℓ = %{x:.4g}<br>CV(ℓ) = %{y:.4g}") + "<extra></extra>"
            diamond = {"symbol": "diamond", "size": 13, "color": COLORS["trajectory"]}
            fig.add_trace(_marker(learned, learned_cv, learned_name(learned), diamond, hover))
    if optimum is not None:
        fig.add_vline(x=optimum, line={"color": COLORS["optimum"], "dash": "dash", "width": 2})
        fig.add_trace(_optimum_marker(optimum, ells, c))
    return style(fig, Look(x_title=_("lengthscale ℓ (log scale)"), y_title=_("leave-one-out MSE CV(ℓ)"),
                           height=height, legend_rows=4, log_x=True))


def masked_loo_figure(view: MaskedView) -> go.Figure:
    """``loo_figure`` of one masked-training run (``views.MaskedView``): the leave-one-out curve, the exact
    optimum and where training went."""
    return loo_figure(view.ells, view.cv, optimum=view.best,
                      path=LooPath(view.path, view.path_cv, view.learned, view.learned_cv))


def _seed_box(label: str, values: object, color: str) -> go.Box:
    """The finite positive ``values`` of one group: a box with every value as a dot."""
    v = vec(values)
    v = v[np.isfinite(v) & (v > 0)]
    return go.Box(
        y=v,
        name=label,
        boxpoints="all",
        jitter=0.4,
        pointpos=0,
        marker={"color": color, "size": 7},
        line={"color": color},
        fillcolor=rgba(color, 0.1),
        hovertemplate="ℓ = %{y:.4g}<extra>%{x}</extra>",
    )


def _mark_optimum_level(fig: go.Figure, optimum: float) -> go.Figure:
    """A dashed horizontal line at ``optimum`` on a log y axis, labelled at its right end."""
    fig.add_hline(y=optimum, line={"color": COLORS["optimum"], "dash": "dash", "width": 2})
    # on a log axis an annotation's y is log10 of the value (add_hline's own label would land at 10^ℓ*)
    fig.add_annotation(
        x=1.0,
        xref="paper",
        y=float(np.log10(optimum)),
        yref="y",
        text=_("exact LOO optimum ℓ* = {ell:.3g}").format(ell=optimum),
        showarrow=False,
        xanchor="right",
        yanchor="bottom",
    )
    return fig


def seeds_figure(
    groups: Mapping[str, object],
    *,
    optimum: float | None = None,
    y_title: str = _("learned lengthscale ℓ"),
    height: int = 340,
) -> go.Figure:
    """Learned values per group (e.g. per hold-out size), one dot per seed, with a box; optimum as a line."""
    fig = go.Figure()
    for i, (label, values) in enumerate(groups.items()):
        fig.add_trace(_seed_box(label, values, head_color(i)))
    if optimum is not None:
        _mark_optimum_level(fig, optimum)
    return style(fig, Look(x_title="", y_title=y_title, height=height, showlegend=False, log_y=True))
