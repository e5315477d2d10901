"""JavaScript probes that the harness evaluates in the page: Streamlit's state and a signature of the chart
data, the margins Plotly grew, and the value of every widget the user sees."""

from __future__ import annotations

# One snapshot of the page, evaluated in the browser: Streamlit's script and connection state, how many
# elements are stale (left over from before a rerun), whether anything is still a skeleton placeholder,
# and a signature of the data of every current (non-stale) Plotly chart, whichever element drew it (Plotly
# marks its div .js-plotly-plot; bench_ab.py compares versions that draw differently). Hashing megabytes
# of JSON is slow, so each chart's hash is cached per data object: Plotly.react swaps the object on every
# update.
PAGE_STATE_JS = """
() => {
  const cache = window.__kvChartHash || (window.__kvChartHash = new WeakMap());
  const hash = (s) => {
    let h = 2166136261;
    for (let i = 0; i < s.length; i++) { h ^= s.charCodeAt(i); h = Math.imul(h, 16777619); }
    return (h >>> 0).toString(16) + ':' + s.length;
  };
  const app = document.querySelector('[data-testid="stApp"]');
  const charts = [...document.querySelectorAll('.js-plotly-plot')]
    .filter((gd) => !gd.closest('[data-stale="true"]'));
  const parts = charts.map((gd) => {
    if (!gd.data || !gd._fullLayout) return 'undrawn';
    let h = cache.get(gd.data);
    if (h === undefined) { h = hash(JSON.stringify(gd.data)); cache.set(gd.data, h); }
    return h;
  });
  return {
    script: app ? app.getAttribute('data-test-script-state') : null,
    connection: app ? app.getAttribute('data-test-connection-state') : null,
    stale: document.querySelectorAll('[data-stale="true"]').length,
    skeletons: document.querySelectorAll('[data-testid="stSkeleton"]').length,
    charts: charts.length,
    signature: parts.join(','),
    exceptions: document.querySelectorAll('[data-testid="stException"]').length,
  };
}
"""

# The same test as ``page.is_idle``, as a predicate for page.wait_for_function (polled every frame); it also
# stops the wait as soon as a finished run left an exception box, which no amount of waiting will fix.
IDLE_AND_CHANGED_JS = (
    "(before) => { const s = (" + PAGE_STATE_JS + ")();"
    " if (s.connection === 'CONNECTED' && s.script === 'notRunning' && s.exceptions > 0) return true;"
    " return s.connection === 'CONNECTED' && s.script === 'notRunning' && s.stale === 0"
    " && s.skeletons === 0 && s.charts > 0 && !s.signature.includes('undrawn')"
    " && (before === null || s.signature !== before); }"
)

# Text of the page's charts that runs into other text: every pair of tick labels, titles, panel titles,
# axis titles, colour-bar titles, legend entries and a replay's buttons and slider labels of one chart
# whose boxes overlap by more than a pixel each way, and any of them that runs past the chart's edge; one
# line per clash, naming the chart by its place.
CHART_TEXT_CLASHES_JS = """() => {
  const sel = '.xtick text, .ytick text, .annotation-text, .g-xtitle text, .g-ytitle text,'
    + ' [class*="g-x"][class*="title"] text, [class*="g-y"][class*="title"] text, .g-gtitle text,'
    + ' .cbtitle text, .legendtext, .updatemenu-item-text, .slider-currentvalue, .slider-label';
  const out = [];
  document.querySelectorAll('[data-testid="stMain"] .js-plotly-plot').forEach((gd, i) => {
    if (gd.closest('[data-stale="true"]') || !gd.offsetParent) return;
    const frame = gd.querySelector('.main-svg').getBoundingClientRect();
    const boxes = [...new Set(gd.querySelectorAll(sel))].filter((t) => (t.textContent || '').trim())
      .map((t) => ({t: t.textContent.trim(), r: t.getBoundingClientRect()})).filter((b) => b.r.width > 0);
    for (const b of boxes)
      if (b.r.left < frame.left - 1 || b.r.right > frame.right + 1) out.push(`chart ${i}: "${b.t}" runs off`);
    for (let a = 0; a < boxes.length; a++) for (let c = a + 1; c < boxes.length; c++) {
      const p = boxes[a].r, q = boxes[c].r;
      const w = Math.min(p.right, q.right) - Math.max(p.left, q.left);
      const h = Math.min(p.bottom, q.bottom) - Math.max(p.top, q.top);
      if (w > 1 && h > 1) out.push(`chart ${i}: "${boxes[a].t}" overlaps "${boxes[c].t}"`);
    }
  });
  return out;
}"""

# Margins (l, r, t, b) that Plotly's automargin grew by more than a few pixels: a chart whose labels did
# not fit the margins it asked for (``kf.MARGIN``), which Plotly then drew a second time;
# one "chart <i> <side>: asked → drawn" per grown margin.
GROWN_MARGINS_JS = """() => [...document.querySelectorAll('.js-plotly-plot')]
  .map((gd, i) => { const m = gd._fullLayout.margin, s = gd._fullLayout._size;
    return ['l', 'r', 't', 'b'].filter((k) => s[k] - m[k] > 4)
      .map((k) => `chart ${i} ${k}: ${m[k]} → ${s[k]}`); })
  .flat()"""

# Label → value of every widget the user sees (sliders, select boxes, radios, checkboxes, number inputs),
# sidebar widgets prefixed with "sidebar: ". Values are what the page displays, e.g. "0.50" or "Gaussian".
WIDGETS_JS = """
() => {
  const kinds = ['stSlider', 'stSelectSlider', 'stSelectbox', 'stRadio', 'stCheckbox', 'stToggle',
                 'stNumberInput', 'stMultiSelect', 'stTextInput'];
  const selector = kinds.map((k) => `[data-testid="stApp"] [data-testid="${k}"]`).join(',');
  const out = {};
  for (const w of document.querySelectorAll(selector)) {
    if (w.closest('[data-stale="true"]')) continue;
    const kind = w.getAttribute('data-testid');
    const labelEl = w.querySelector('[data-testid="stWidgetLabel"]');
    let label = (labelEl ? labelEl.innerText : w.innerText).trim();
    let value;
    if (kind === 'stSlider' || kind === 'stSelectSlider') {
      value = [...w.querySelectorAll('input[type="range"], [role="slider"]')]
        .map((e) => e.getAttribute('aria-valuetext') || e.getAttribute('aria-valuenow') || e.value)
        .join(' – ');
    } else if (kind === 'stSelectbox' || kind === 'stMultiSelect') {
      const combo = w.querySelector('input[role="combobox"]');
      const box = w.querySelector('[data-baseweb="select"]');
      value = combo ? combo.value : (box ? box.innerText : '').trim();
    } else if (kind === 'stRadio') {
      const c = w.querySelector('input:checked');
      value = c ? (c.closest('label') || c.parentElement).innerText.trim() : '';
    } else if (kind === 'stCheckbox' || kind === 'stToggle') {
      const c = w.querySelector('input');
      value = String(!!(c && c.checked));
    } else {
      const i = w.querySelector('input');
      value = i ? i.value : '';
    }
    if (w.closest('[data-testid="stSidebar"]')) label = 'sidebar: ' + label;
    out[label] = value;
  }
  return out;
}
"""
