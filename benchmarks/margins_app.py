"""The page ``bench_margins.py`` presses: chapter 1's three kinds of figure, drawn as the app draws them.

One slider (number of points of the blog post's data set) redraws a fit with its band, a heatmap of the
weights and four small multiples, built by ``kernelviz.app.figures`` and drawn with Streamlit's chart theme.
With ``KERNELVIZ_BENCH_MARGINS=automargin`` every figure gets the margins the builders used before
``kf.MARGIN`` (60 px left, 20 right, 50 below, 40 above a plot without a title), which Plotly's automargin
then grows once it has measured the labels.

    streamlit run benchmarks/margins_app.py
"""

from __future__ import annotations

import os

import numpy as np
import streamlit as st

import kernelviz as kv
from kernelviz.app import figures as kf

OLD = os.environ.get("KERNELVIZ_BENCH_MARGINS") == "automargin"

st.set_page_config(page_title="Margins", layout="wide")
st.title("Margins: " + ("grown by automargin" if OLD else "kf.MARGIN"))
n = st.select_slider("Number of points", options=(50, 75, 100, 150, 200, 300, 500, 1000), value=150,
                     key="bench.n")

ds = kv.blog_data(n)
grid = np.linspace(ds.x.min(), ds.x.max(), 256)
fit = kv.nadaraya_watson(grid, ds.x, ds.y, 0.2, with_weights=True)
panels = [(f"ℓ = {ell}", kv.nadaraya_watson(grid, ds.x, ds.y, ell).mean) for ell in (2.1, 0.35, 0.18, 0.035)]
figures = [
    kf.fit_figure(ds.x, ds.y, grid, [kf.Curve("fit", fit.mean, kf.COLORS["fit"], std=fit.std)],
                  title=f"n = {n}"),
    kf.heatmap_figure(fit.weights, grid, ds.x, title="weights"),
    kf.small_multiples_figure(ds.x, ds.y, grid, panels),
]
for i, fig in enumerate(figures):
    if OLD:
        fig.update_layout(margin={"l": 60, "r": 20, "b": 110 if i == 0 else 50, "t": 50 if i < 2 else 95})
    st.plotly_chart(kf.compact(fig), key=f"bench.fig{i}", theme="streamlit")
