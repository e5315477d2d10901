"""Pure Plotly builders: NumPy arrays in, ``go.Figure`` out. No Streamlit, no JAX, no state.

Every figure in the dashboard is built here so that it can be tested without a browser and so that one
colour means one thing on every page:

* ``COLORS`` maps a *role* to a colour: ``data`` (observed points), ``truth`` (the true mean f(x) and its
  ±2n(x) band), ``fit`` (the model's prediction m(x) and its ±2s(x) band), ``average`` and ``knn``
  (baselines), ``optimum`` (an exact optimum marked on a curve), ``trajectory`` (where training went),
  ``loss`` (training loss). ``HEAD_COLORS`` gives one colour per attention head, in order.
* ``style(fig, look)`` is the shared layout of a ``Look`` (title, axis titles, height, legend, log axes):
  legend on top, hover, margins. A builder takes ``look=`` where its caller chooses those; a field left
  None takes the builder's own default.
* ``png_config(name)`` is the ``config=`` for ``st.plotly_chart``: the modebar's camera saves a PNG.

Conventions that every builder keeps:

* NaN never becomes a line: lines use ``connectgaps=False`` so a NaN (an empty kernel window) is a gap,
  and bands are drawn as one closed polygon per finite run (``band_polygon``).
* Axis titles name the quantity ("lengthscale ℓ", "sorted training inputs xᵢ (keys)").
* Colours come from ``COLORS``/``HEAD_COLORS`` with transparency added by ``rgba``; the light or dark
  theme's fonts, backgrounds and grid are set last, by ``themed`` (the app sends the figure with
  ``theme=None``).

The builders live in modules by what they draw, and every public name is available from this package
(``from kernelviz.app import figures as kf; kf.fit_figure(...)``):

* ``styling``: colours, ``style``, ``thumbnail``, ``png_config`` and the small-multiples grid;
* ``numbers``: a figure's numbers as they travel (``compact``: short decimals and a data revision);
* ``theme``: the light and dark themes' look, set in a figure by ``themed``;
* ``narrow``: a figure's layout laid out again for a phone's narrow screen (``phone_layout``, which
  ``themed`` applies for a phone);
* ``log_axes``: log axes whose labels are whole values (``log_ticks``, ``log_props``);
* ``fits``: the traces (``band_trace``, ``line_trace``, ``data_trace``), ``Curve``, the data a fit is drawn
  over (``Points``), several heads' fits (``Mixture``) and the fit figures;
* ``heatmaps``: weight matrices, thinned by ``thin_heatmap`` (from ``kernelviz.runtime.shapes``, which views
  use too);
* ``training``: loss, leave-one-out error, learned values across seeds, kernel shapes;
* ``heads``: the post's multi-head panels, the attention heads' weights on y, self-attention over a
  sequence;
* ``incontext``: chapter 5's learned windows, the error of every fixed window, the window sweep;
* ``explain``: a selected query x* marked on the fit (its weights on the data) and on the heatmap;
* ``animation``, ``replay``: frames drawn in the browser, chapter 1's scrub through ℓ and the replays of
  training (chapters 2, 4 and 5).

Adding a builder for a new chapter: take arrays (or a record of them), put the traces in with
``line_trace``/``band_trace``/``data_trace``, finish with ``style(fig, look)`` and return the figure; add a
test in tests/test_figures.py.
"""

from kernelviz.app.figures.classroom import class_answers_figure
from kernelviz.app.figures.describe import ChartText, chart_tables, describe
from kernelviz.app.figures.explain import mark_heads, mark_point, mark_row, weight_sizes
from kernelviz.app.figures.fits import (
    PANEL_POINTS,
    Curve,
    Mixture,
    Points,
    add_scrub,
    band_polygon,
    band_trace,
    data_trace,
    even_points,
    fit_figure,
    heads_fit_figure,
    line_trace,
    mixing_figure,
    small_multiples_figure,
)
from kernelviz.app.figures.heads import heads_panels_figure, sequence_figure, y_weights_figure
from kernelviz.app.figures.heatmaps import (
    coverage_figure,
    head_heatmaps_figure,
    heatmap_figure,
    heatmap_pair_figure,
    score_transpose_figure,
    self_cross_figure,
)
from kernelviz.app.figures.incontext import (
    in_context_weights_figure,
    learned_kernel_figure,
    lengthscale_error_figure,
    window_sweep_figure,
)
from kernelviz.app.figures.log_axes import log_props, log_ticks
from kernelviz.app.figures.replay import (
    add_kernel_replay,
    add_layer_replay,
    add_loo_replay,
    add_pretrain_replay,
    add_training_scrub,
    loss_titles,
)
from kernelviz.app.figures.styling import BAND_ALPHA as BAND_ALPHA
from kernelviz.app.figures.styling import (
    COLORS,
    HEAD_COLORS,
    Look,
    at_height,
    head_color,
    legend_below,
    png_config,
    rgba,
    style,
    thumbnail,
)
from kernelviz.app.figures.styling import HEATMAP_SCALE as HEATMAP_SCALE
from kernelviz.app.figures.theme import THEMES, ChartTheme, Sent, themed, themed_spec
from kernelviz.app.figures.training import (
    LooPath,
    epoch_loss_figure,
    error_by_size_figure,
    kernel_shape_figure,
    loo_figure,
    loss_figure,
    masked_loo_figure,
    seeds_figure,
)
from kernelviz.app.figures.training import _running_mean as _running_mean
from kernelviz.runtime.shapes import even_indices, thin_heatmap

__all__ = [
    "COLORS",
    "HEAD_COLORS",
    "PANEL_POINTS",
    "THEMES",
    "ChartText",
    "ChartTheme",
    "Curve",
    "LooPath",
    "Look",
    "Mixture",
    "Points",
    "Sent",
    "add_kernel_replay",
    "add_layer_replay",
    "add_loo_replay",
    "add_pretrain_replay",
    "add_scrub",
    "add_training_scrub",
    "at_height",
    "band_polygon",
    "band_trace",
    "chart_tables",
    "class_answers_figure",
    "coverage_figure",
    "data_trace",
    "describe",
    "epoch_loss_figure",
    "error_by_size_figure",
    "even_indices",
    "even_points",
    "fit_figure",
    "head_color",
    "head_heatmaps_figure",
    "heads_fit_figure",
    "heads_panels_figure",
    "heatmap_figure",
    "heatmap_pair_figure",
    "in_context_weights_figure",
    "kernel_shape_figure",
    "learned_kernel_figure",
    "legend_below",
    "lengthscale_error_figure",
    "line_trace",
    "log_props",
    "log_ticks",
    "loo_figure",
    "loss_figure",
    "loss_titles",
    "mark_heads",
    "mark_point",
    "mark_row",
    "masked_loo_figure",
    "mixing_figure",
    "png_config",
    "rgba",
    "score_transpose_figure",
    "seeds_figure",
    "self_cross_figure",
    "sequence_figure",
    "small_multiples_figure",
    "style",
    "themed",
    "themed_spec",
    "thin_heatmap",
    "thumbnail",
    "weight_sizes",
    "window_sweep_figure",
    "y_weights_figure",
]
