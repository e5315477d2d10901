// kernelviz's chart element (kernelviz/app/ui/chart.py): one Plotly chart that stays in the page across
// reruns and is drawn once per changed figure, with Plotly.react into the div it keeps.
//
// Plotly is Streamlit's own copy: the module that carries Streamlit's chart element sets window.Plotly as
// it loads (its file name comes from the server). The chart takes Streamlit's chart theme as
// st.plotly_chart(theme="streamlit") does: the figure's template holds placeholder colours (#000001 …
// #000040, Streamlit's "streamlit" Plotly template) that become the active theme's, read from Streamlit's
// CSS variables, and the theme's fonts, greys and margins go into the template's layout. Streamlit calls
// this function again when the data or the theme changes.

const GREYS = {  // Streamlit's chart greys: tick labels and titles, grid lines, legend text
  light: { text: '#808495', grid: '#e6eaf1', legend: '#262730', up: '#29b09d', down: '#ff2b2b', total: '#1c83e1' },
  dark: { text: '#e6eaf1', grid: '#31333F', legend: '#fafafa', up: '#7defa1', down: '#ffabab', total: '#83c9ff' },
};
const FULLSCREEN_ICON = {
  width: 24, height: 24,
  path: 'M3 3h6v2H5v4H3V3zm12 0h6v6h-2V5h-4V3zM3 15h2v4h4v2H3v-6zm16 0h2v6h-6v-2h4v-4z',
};

let plotly = null;

function loadPlotly(module) {
  if (plotly === null) {
    const main = [...document.querySelectorAll('script[type="module"][src]')]
      .map((s) => s.src).find((src) => src.includes('/static/js/'));
    plotly = import(new URL(module, main ?? document.baseURI).href).then(() => window.Plotly);
  }
  return plotly;
}

function luminance(color) {  // relative luminance of #rrggbb or rgb(r, g, b), as Streamlit reads its background
  const hex = color.match(/^#([0-9a-f]{2})([0-9a-f]{2})([0-9a-f]{2})/i);
  const rgb = hex ? hex.slice(1).map((h) => parseInt(h, 16)) : (color.match(/\d+/g) ?? [255, 255, 255]).map(Number);
  const lin = rgb.map((c) => (c / 255 <= 0.04045 ? c / 255 / 12.92 : ((c / 255 + 0.055) / 1.055) ** 2.4));
  return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2];
}

function readTheme(el) {
  const css = getComputedStyle(el);
  const v = (name, fallback) => css.getPropertyValue(name).trim() || fallback;
  const bg = v('--st-background-color', '#ffffff');
  const greys = luminance(bg) > 0.5 ? GREYS.light : GREYS.dark;
  const list = (name) => v(name, '').split(',').map((c) => c.trim()).filter(Boolean);
  return {
    ...greys, bg, body: v('--st-text-color', greys.legend), heading: v('--st-heading-color', greys.legend),
    border: v('--st-border-color', greys.grid), secondary: v('--st-secondary-background-color', bg),
    font: v('--st-font', 'sans-serif'), headingFont: v('--st-heading-font', v('--st-font', 'sans-serif')),
    categorical: list('--st-chart-categorical-colors'), sequential: list('--st-chart-sequential-colors'),
    diverging: list('--st-chart-diverging-colors'),
  };
}

function colored(spec, t) {  // the template's placeholder colours as the theme's
  const slot = (n) => `#0000${String(n).padStart(2, '0')}`;
  const runs = [[1, t.categorical], [11, t.sequential], [21, t.diverging]];
  for (const [first, colors] of runs) {
    colors.slice(0, 10).forEach((c, i) => { spec = spec.replaceAll(slot(first + i), c); });
  }
  const single = [t.up, t.down, t.total, t.grid, t.text, t.legend, t.bg, t.border, t.secondary];
  single.forEach((c, i) => { spec = spec.replaceAll(slot(32 + i), c); });
  return spec;
}

function themeLayout(t) {  // what Streamlit's chart theme puts in the template's layout
  const axisTitle = { font: { color: t.text, size: 14 } };
  const ticks = { tickcolor: t.grid, tickfont: { color: t.text, size: 12 }, gridcolor: t.grid,
    zerolinecolor: t.grid, minor: { gridcolor: t.grid }, automargin: true };
  return {
    font: { color: t.text, family: t.font, size: 12 },
    title: { font: { family: t.headingFont, size: 16, color: t.heading }, subtitle: { font: { color: t.body } },
      pad: { l: 4 }, xanchor: 'left', x: 0 },
    legend: { title: { font: { size: 12, color: t.text }, side: 'top' }, valign: 'top',
      bordercolor: 'transparent', borderwidth: 0, font: { size: 12, color: t.legend } },
    paper_bgcolor: t.bg, plot_bgcolor: t.bg,
    yaxis: { ...ticks, ticklabelposition: 'outside', title: { ...axisTitle, standoff: 24 } },
    xaxis: { ...ticks, showgrid: false, zeroline: false, title: { ...axisTitle, standoff: 20 } },
    margin: { pad: 8, r: 0, l: 0 },
    hoverlabel: { bgcolor: t.bg, bordercolor: t.border, font: { color: t.text, family: t.font, size: 12 } },
    coloraxis: { colorbar: { thickness: 16, xpad: 24, ticklabelposition: 'outside', outlinecolor: 'transparent',
      outlinewidth: 8, len: 0.75, y: 0.5745, title: axisTitle, tickfont: { color: t.text, size: 12 } } },
  };
}

function merged(base, patch) {  // patch merged into base, key by key (arrays and values replaced)
  const out = { ...base };
  for (const [k, v] of Object.entries(patch)) {
    const b = out[k];
    out[k] = v && typeof v === 'object' && !Array.isArray(v) && b && typeof b === 'object' && !Array.isArray(b)
      ? merged(b, v) : v;
  }
  return out;
}

function themedFigure(spec, t, selectable) {
  const fig = JSON.parse(colored(spec, t));
  const layout = fig.layout ?? {};
  const template = layout.template ?? {};
  layout.template = { ...template, layout: merged(template.layout ?? {}, themeLayout(t)) };
  if (layout.title !== undefined && layout.title !== null) {  // titles in bold, as Streamlit draws them
    const title = typeof layout.title === 'string' ? { text: layout.title } : layout.title;
    layout.title = { ...title, text: `<b>${typeof title.text === 'string' ? title.text : ''}</b>` };
  }
  if (selectable) {  // a click selects the point under it; a click elsewhere deselects
    layout.clickmode ??= 'event+select';
    layout.hovermode ??= 'closest';
    layout.dragmode ??= 'pan';
  }
  fig.layout = layout;
  return fig;
}

function chartConfig(config, chart) {
  const remove = [...(config.modeBarButtonsToRemove ?? []), 'lasso2d', 'select2d', 'sendDataToCloud'];
  const fullscreen = { name: 'Fullscreen', title: 'Fullscreen', icon: FULLSCREEN_ICON,
    click: () => (document.fullscreenElement ? document.exitFullscreen() : chart.requestFullscreen()) };
  return { ...config, displaylogo: false, showSendToCloud: false, modeBarButtonsToRemove: [...new Set(remove)],
    modeBarButtonsToAdd: [fullscreen, ...(config.modeBarButtonsToAdd ?? [])] };
}

function size(chart) {  // the container's width; the whole screen in fullscreen
  if (document.fullscreenElement === chart) return { width: window.innerWidth, height: window.innerHeight };
  return { width: Math.max(chart.clientWidth, 150), height: chart.__kvHeight };
}

function wire(chart, plot, Plotly, setTriggerValue) {
  const send = (points) => setTriggerValue('select', { selection: { points } });
  plot.on('plotly_selected', (ev) => {
    if (!ev || !chart.__kvSelectable) return;
    send(ev.points.map((p) => ({ x: p.x, y: p.y, curve_number: p.curveNumber, point_index: p.pointIndex })));
  });
  plot.on('plotly_deselect', () => { if (chart.__kvSelectable) send([]); });
  const resize = () => {
    const want = size(chart);
    if (plot._fullLayout && (want.width !== plot._fullLayout.width || want.height !== plot._fullLayout.height)) {
      Plotly.relayout(plot, want);
    }
  };
  const observer = new ResizeObserver(resize);
  observer.observe(chart);
  chart.addEventListener('fullscreenchange', resize);
  return () => { observer.disconnect(); Plotly.purge(plot); };
}

export default async function (component) {
  const { data, parentElement, setTriggerValue } = component;
  let chart = parentElement.querySelector('.kv-chart');
  if (chart === null) {
    chart = document.createElement('div');
    chart.className = 'kv-chart';
    chart.style.width = '100%';
    chart.style.background = 'var(--st-background-color)';
    chart.appendChild(document.createElement('div'));
    parentElement.appendChild(chart);
  }
  const plot = chart.firstChild;
  const theme = readTheme(parentElement);
  const drawn = `${data.rev}|${theme.bg}|${theme.body}|${theme.categorical.join(',')}`;
  if (chart.dataset.drawn === drawn) return chart.__kvCleanup;  // this figure, in this theme, is on the page
  chart.dataset.drawn = drawn;
  let Plotly;
  try {
    Plotly = await loadPlotly(data.module);
  } catch (err) {
    chart.textContent = `The chart could not be drawn: Plotly did not load (${err}).`;
    return undefined;
  }
  const fig = themedFigure(data.figure, theme, data.selectable);
  chart.__kvHeight = fig.layout.height ?? 450;
  chart.__kvSelectable = data.selectable;
  Object.assign(fig.layout, size(chart));
  await Plotly.react(plot, { data: fig.data, layout: fig.layout, frames: fig.frames, config: chartConfig(data.config, chart) });
  if (!chart.__kvCleanup) chart.__kvCleanup = wire(chart, plot, Plotly, setTriggerValue);
  return chart.__kvCleanup;
}
