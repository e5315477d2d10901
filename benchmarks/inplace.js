// A minimal chart element that keeps its Plotly chart and updates it in place (benchmarks/bare_app.py with
// ?element=inplace, timed by benchmarks/bench_chart_element.py). Plotly itself is Streamlit's own copy:
// the module that carries Streamlit's chart element sets window.Plotly when it loads.
let plotly = null;

function loadPlotly(chunk) {
  if (plotly === null) {
    const main = [...document.querySelectorAll('script[type="module"][src]')]
      .map((s) => s.src).find((src) => src.includes('/static/js/'));
    plotly = import(new URL(chunk, main).href).then(() => window.Plotly);
  }
  return plotly;
}

export default async function (component) {
  const { data, parentElement } = component;
  let div = parentElement.querySelector('.kv-inplace');
  if (div === null) {
    div = document.createElement('div');
    div.className = 'kv-inplace';
    div.style.width = '100%';
    parentElement.appendChild(div);
  }
  if (div.dataset.rev === data.rev) return;  // the same figure as the last run: nothing to draw
  div.dataset.rev = data.rev;
  const Plotly = await loadPlotly(data.chunk);
  const figure = JSON.parse(data.figure);
  figure.layout.width = div.clientWidth;
  Plotly.react(div, figure.data, figure.layout, { displaylogo: false });
}
