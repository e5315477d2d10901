"""The baseline for the repaint benchmark: a bare Streamlit page with one slider and two Plotly charts.

No JAX, no caching, no kernelviz: whatever time a key press on this slider takes to reach a repainted chart
is Streamlit's and Plotly's own cost (websocket round trip, script rerun, figure serialisation, drawing).
The charts have the size of the dashboard's: a 256-point curve with a band over 150 points, and a
150 × 256 heatmap.

At ``?element=inplace`` the same figures are drawn by a minimal chart element that keeps its Plotly chart
and updates it in place (``benchmarks/inplace.js``), for ``bench_chart_element.py``; ``st.plotly_chart``
mounts a changed figure afresh and draws it twice.

    streamlit run benchmarks/bare_app.py
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
import plotly.graph_objects as go
import plotly.io as pio
import streamlit as st


@st.cache_resource
def inplace_element():
    """The in-place element, registered once (only at ``?element=inplace``: the bare page is as it was)."""
    js = (Path(__file__).parent / "inplace.js").read_text(encoding="utf-8")
    return st.components.v2.component("bare.inplace", js=js, isolate_styles=False)


@st.cache_resource
def plotly_module() -> str:
    """The file name of Streamlit's module that carries its chart element, and Plotly with it (which sets
    window.Plotly as it loads)."""
    return next((Path(st.__file__).parent / "static" / "static" / "js").glob("PlotlyChart.*.js")).name


def draw(fig: go.Figure, key: str) -> None:
    """``fig`` by ``st.plotly_chart``, or at ``?element=inplace`` by the in-place element."""
    if st.query_params.get("element") != "inplace":
        st.plotly_chart(fig, key=key)
        return
    spec = pio.to_json(fig, validate=False)
    rev = hashlib.sha1(spec.encode()).hexdigest()
    inplace_element()(key=key, data={"figure": spec, "rev": rev, "chunk": plotly_module()})


st.set_page_config(page_title="Bare page", layout="wide")
st.title("Bare page")

width = st.slider("Width", min_value=0.05, max_value=2.0, value=0.5, step=0.05, key="bare.width")

rng = np.random.default_rng(0)
x = np.sort(rng.uniform(0.0, 5.0, 150))
y = 2.0 * np.sin(x) + x**0.8 + rng.normal(0.0, 0.5, x.size)
grid = np.linspace(0.0, 5.0, 256)
logits = -0.5 * ((grid[:, None] - x[None, :]) / width) ** 2
weights = np.exp(logits - logits.max(axis=1, keepdims=True))
weights /= weights.sum(axis=1, keepdims=True)
mean = weights @ y
std = np.sqrt((weights * (y[None, :] - mean[:, None]) ** 2).sum(axis=1))

fit = go.Figure()
fit.add_scatter(
    x=np.concatenate([grid, grid[::-1]]),
    y=np.concatenate([mean + 2 * std, (mean - 2 * std)[::-1]]),
    fill="toself",
    line={"width": 0},
    name="±2σ",
)
fit.add_scatter(x=x, y=y, mode="markers", name="data")
fit.add_scatter(x=grid, y=mean, mode="lines", name="fit")
fit.update_layout(height=380, xaxis_title="x", yaxis_title="y", margin={"t": 30})
draw(fit, "bare.fit")

heat = go.Figure(go.Heatmap(z=weights.T, x=grid, y=x, colorscale="Viridis"))
heat.update_layout(height=380, xaxis_title="query", yaxis_title="key", margin={"t": 30})
draw(heat, "bare.weights")
