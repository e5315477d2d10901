"""What drawing every data point costs the browser: the four-panel figures with and without the panel budget.

Builds the small-multiples figure of chapters 1 and 2 (four panels, each with the data, the true mean and a
fit) from the blog post's data at several n, once as the dashboard draws it (at most
``kf.PANEL_POINTS`` points a panel, ``kf.even_points``) and once with every point, and times in headless
Chromium how long plotly.js takes to redraw it: ``Plotly.react`` from the figure at the previous n to this
one, until the next animation frame has painted (median of ``--repeat``). The plotly.js is the copy the
``plotly`` Python package ships, not Streamlit's own bundle, so the figures are the chart's own cost without
Streamlit around it. Prints one row per n and the ratio.

    python -m benchmarks.bench_markers [--repeat 7] [--sizes 150,300,1000,2000]
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
from pathlib import Path

import plotly
import plotly.io as pio
from playwright.sync_api import sync_playwright

import kernelviz as kv
from kernelviz.app import figures as kf
from tests.browser import harness

PLOTLY_JS = Path(plotly.__file__).parent / "package_data" / "plotly.min.js"

REDRAW_JS = """async ([before, after, repeat]) => {
  const frame = () => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
  const times = [];
  for (let k = 0; k < repeat; k++) {
    const gd = document.createElement('div');
    gd.style.width = '1100px';
    document.body.appendChild(gd);
    await Plotly.newPlot(gd, before.data, before.layout);
    await frame();
    const t = performance.now();
    await Plotly.react(gd, after.data, after.layout);
    gd.getBoundingClientRect();
    await frame();
    times.push(performance.now() - t);
    Plotly.purge(gd);
    gd.remove();
  }
  return times;
}"""


def four_panels(n: int, most: int) -> dict:
    """The figure as JSON (data and layout): four Gaussian fits at the post's lengthscales, ``most`` points
    a panel at the most."""
    ds = kv.blog_data(n=n, seed=1)
    grid = ds.grid(256)
    ells = (2.12, 0.354, 0.177, 0.035)  # the post's 3, 0.5, 0.25 and 0.05 in this package's convention
    panels = [(f"ℓ = {ell}", kv.nadaraya_watson(grid, ds.x, ds.y, ell).mean) for ell in ells]
    fig = kf.small_multiples_figure(ds.x, ds.y, grid, panels, truth=ds.true_mean(grid), most_points=most)
    spec = json.loads(pio.to_json(kf.compact(fig), validate=False))
    return {"data": spec["data"], "layout": spec["layout"]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7, help="redraws per figure")
    parser.add_argument("--sizes", default="150,300,1000,2000", help="numbers of points, comma-separated")
    args = parser.parse_args()
    sizes = [int(v) for v in args.sizes.split(",")]
    every = max(sizes) + 1
    with tempfile.TemporaryDirectory() as tmp, sync_playwright() as p:
        page_file = Path(tmp) / "blank.html"
        page_file.write_text("<html><body></body></html>")
        browser = harness.launch_chromium(p)
        page = browser.new_page(viewport=harness.VIEWPORT)
        page.goto(page_file.as_uri())
        page.add_script_tag(path=str(PLOTLY_JS))
        print(f"plotly.js {page.evaluate('Plotly.version')}; Plotly.react of the four-panel figure from "
              f"the previous n (median of {args.repeat}):")
        print(f"{'n':>6} {'every point':>13} {f'≤ {kf.PANEL_POINTS} a panel':>16} {'ratio':>7}")
        before = {most: four_panels(sizes[0], most) for most in (every, kf.PANEL_POINTS)}
        page.evaluate(REDRAW_JS, [before[every], before[every], args.repeat])  # not counted: warms plotly.js
        for n in sizes:
            times = {}
            for most in (every, kf.PANEL_POINTS):
                after = four_panels(n, most)
                times[most] = statistics.median(page.evaluate(REDRAW_JS, [before[most], after, args.repeat]))
                before[most] = after
            print(f"{n:>6} {times[every]:>10.0f} ms {times[kf.PANEL_POINTS]:>13.0f} ms "
                  f"{times[every] / times[kf.PANEL_POINTS]:>6.2f}x")
        browser.close()


if __name__ == "__main__":
    main()
