"""Chapter 5's figures: the learned kernels as windows around the query, the error of every fixed window
beside the learned one, and how the learned window moves with the task family."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go

from kernelviz.app.figures.fits import Curve, line_trace
from kernelviz.app.figures.heatmaps import head_heatmaps_figure
from kernelviz.app.figures.styling import COLORS, Look, head_color, style, vec
from kernelviz.app.figures.training import _marker
from kernelviz.runtime.i18n import _

__all__ = [
    "in_context_weights_figure", "learned_kernel_figure", "lengthscale_error_figure", "window_sweep_figure",
]

QUERY_DASHES = ("solid", "dash", "dot", "dashdot", "longdash")


def learned_kernel_figure(offsets: object, queries: Sequence[float], kernels: object,
                          reference: float | None = None, *, title: str | None = None,
                          height: int = 400) -> go.Figure:
    """Each head's kernel K_h(x, x + δ)/K_h(x, x) against the offset δ = x′ − x (``kernels`` (H, q, g)),
    one colour per head (one legend entry each) and one dash per query x (``QUERY_DASHES``, in the hover);
    ``reference`` adds the Gaussian window exp(−δ²/2ℓ²) of that ℓ (Nadaraya–Watson's) for comparison;
    ``title`` goes above the plot."""
    d, k = vec(offsets), np.asarray(kernels, dtype=np.float64)
    fig = go.Figure()
    if reference is not None:
        window = np.exp(-0.5 * np.square(d / reference))
        best = _("Nadaraya–Watson window, best ℓ = {ell:.3g}").format(ell=reference)
        fig.add_trace(line_trace(d, Curve(best, window, COLORS["truth"], dash="dot", width=2.0)))
    for h in range(k.shape[0]):
        for j, x in enumerate(queries):
            head = Curve(_("head {h}").format(h=h + 1), k[h, j], head_color(h),
                         dash=QUERY_DASHES[j % len(QUERY_DASHES)], width=2.0)
            hover = _("head {h}, query x = {x:+.1f}").format(h=h + 1, x=x)
            fig.add_trace(line_trace(d, head, hover_name=hover, legendgroup=f"head {h}", showlegend=j == 0))
    return style(fig, Look(title=title, x_title=_("offset x′ − x (key minus query)"),
                           y_title=_("weight K(x, x′) / K(x, x)"), height=height,
                           legend_rows=1 if k.shape[0] <= 4 else 3), y_axes={"range": [0.0, 1.1]})


def in_context_weights_figure(weights: object, queries: object, keys: object, mixing: Sequence[float]
                              ) -> go.Figure:
    """Every head's attention weights on one prompt (``head_heatmaps_figure``: queries down, the sorted
    context points across), titled with its mixing weight u_h; one head gets a taller panel, and the left
    margin holds the y axis's title beside its signed ticks (−0.5) without Plotly widening it."""
    names = [_("head {h}: u = {u:+.2f}").format(h=h + 1, u=u) for h, u in enumerate(mixing)]
    look = Look(x_title=_("context points xᵢ (keys)"), y_title=_("queries x"),
                height=440 if len(names) == 1 else None)  # one taller panel: 380 px and the margins
    fig = head_heatmaps_figure(weights, queries, keys, names, look=look)
    return fig.update_layout(margin={"l": 96})


def lengthscale_error_figure(lengthscales: object, errors: object, best: float, window: float | None,
                             loo: float | None, *, height: int = 380) -> go.Figure:
    """The mean error of Gaussian Nadaraya–Watson on fresh tasks of the family against its fixed ℓ (log
    axis), with the best ℓ, the layer's learned window and the mean leave-one-out ℓ* marked on the curve."""
    ells, errs = vec(lengthscales), vec(errors)
    fig = go.Figure(line_trace(ells, Curve(_("Nadaraya–Watson at a fixed ℓ"), errs, COLORS["fit"])))

    def on_curve(ell: float) -> float:
        return float(np.interp(np.log(ell), np.log(ells), errs))

    marks = [(best, _("best fixed ℓ"), "circle", COLORS["optimum"])]
    if window is not None and np.isfinite(window) and ells[0] <= window <= ells[-1]:
        marks.append((window, _("learned window"), "diamond", COLORS["truth"]))
    if loo is not None and np.isfinite(loo) and ells[0] <= loo <= ells[-1]:
        marks.append((loo, _("mean leave-one-out ℓ*"), "x", COLORS["knn"]))
    for ell, name, symbol, color in marks:
        marker = {"symbol": symbol, "size": 12, "color": color}
        hover = _("{name}<br>ℓ = %{{x:.3g}}<br>error = %{{y:.3g}}").format(name=name) + "<extra></extra>"
        fig.add_trace(_marker(ell, on_curve(ell), f"{name} = {ell:.3g}", marker, hover))
    return style(fig, Look(x_title=_("lengthscale ℓ (x units)"),
                           y_title=_("mean squared error on fresh tasks"),
                           height=height, log_x=True, log_y=True))


def window_sweep_figure(values: object, windows: object, best: object, x_title: str,
                        current: float | None = None, *, height: int = 320) -> go.Figure:
    """The learned window and the best fixed ℓ of the family at each setting of one control (``values``),
    the setting on the page (``current``) marked."""
    v = vec(values)
    fig = go.Figure([
        go.Scatter(x=v, y=vec(windows), name=_("learned window"), mode="lines+markers",
                   line={"color": COLORS["truth"], "width": 2.5},
                   hovertemplate=_("{control} = %{{x:.3g}}<br>window = %{{y:.3g}}").format(control=x_title)
                   + "<extra></extra>"),
        go.Scatter(x=v, y=vec(best), name=_("best fixed ℓ"), mode="lines+markers",
                   line={"color": COLORS["optimum"], "width": 2.0, "dash": "dash"},
                   hovertemplate=_("{control} = %{{x:.3g}}<br>best ℓ = %{{y:.3g}}").format(control=x_title)
                   + "<extra></extra>"),
    ])
    if current is not None:
        fig.add_vline(x=current, line={"color": COLORS["data"], "dash": "dot", "width": 1.5})
    return style(fig, Look(x_title=x_title, y_title=_("width ℓ (x units)"), height=height, log_y=True))
