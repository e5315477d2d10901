"""Streamlit's and Plotly's insides that the app relies on (``kernelviz/app/ui/platform.py``), where they are
used: every selector still matches on a view that uses it; the header's buttons take a thumb; the replay
keys' boxes take no room and Play shows a focus ring; the presenter hides the chapter off its stage and
sets its large type; a student's join page is a narrow column; a phone's charts have no Plotly toolbar and
a computer's do; Plotly's internals still do what the figures ask of them; and every test that
``platform.py`` names exists."""

from __future__ import annotations

import ast
import re
from pathlib import Path
from typing import Any

import numpy as np
import plotly.graph_objects as go
import pytest
from plotly.subplots import make_subplots

from kernelviz.app.figures import styling
from kernelviz.app.ui import platform as pf
from tests.browser.harness import (
    PHONE,
    REPO_ROOT,
    RERUN_TIMEOUT_S,
    StreamlitServer,
    settled,
    wait_until_drawn,
)

WIDE = {"viewport": {"width": 1280, "height": 900}}
PROJECTOR = {"viewport": {"width": 1280, "height": 720}}
STAGE = pf.key_class("kv-stage")
KEYS_BOX = pf.keys_starting("kv-keys")
SCENE = "/?lesson=ten-minutes&scene=1"  # a scene with charts and a note with formulas
REPLAY = "/masked-training?masked.replay=true"  # two charts with Play and Pause

# Each view, the screen it is opened on, and the selectors of platform.py the app uses there.
VIEWS: dict[str, tuple[str, dict, tuple[str, ...]]] = {
    "overview": ("/", WIDE, (pf.CAPTION, pf.FORMULA, f"{pf.FORMULA} > {pf.KATEX}", pf.PLOT, pf.BUTTONS,
                             pf.MAIN_BLOCK, f"{pf.MAIN_MENU} button")),
    "chapter 1": ("/kernel-regression", WIDE, (pf.WIDGET_LABEL, f"{pf.CHECKBOX} label", pf.PLOT_TITLE,
                                               f"{pf.SELECTBOX} {pf.SELECT_FIELD}",
                                               f"{pf.SLIDER} {pf.SLIDER_THUMB}")),
    "chapter 3 on a phone": ("/multi-head", PHONE, (f'{pf.BUTTON_GROUP} [role="radiogroup"]',
                                                    f"{pf.BUTTON_GROUP} button", pf.EXPAND_SIDEBAR,
                                                    pf.NUMBER_INPUT, pf.STEP_UP, pf.STEP_DOWN)),
    "a replay": (REPLAY, WIDE, (pf.REPLAY_BUTTON, f"{pf.LAYOUT_WRAPPER}:has(> {KEYS_BOX})", KEYS_BOX)),
    "a lesson scene": (SCENE, PROJECTOR, (STAGE, f"{STAGE} p", f"{STAGE} h2", f"{STAGE} {pf.KATEX}",
                                          pf.key_class("kv-twins"))),
}


def opened(browser: Any, server: StreamlitServer, path: str, screen: dict) -> Any:
    """A new page on ``screen`` at ``path``, settled (its charts drawn, if it has any)."""
    context = browser.new_context(**screen)
    context.set_default_timeout(RERUN_TIMEOUT_S * 1e3)
    page = context.new_page()
    page.goto(server.url + path)
    page.wait_for_selector(pf.MAIN_BLOCK)
    settled(page)
    return page


@pytest.mark.parametrize("view", list(VIEWS))
def test_selectors_match(warm_server: StreamlitServer, browser: Any, view: str) -> None:
    path, screen, selectors = VIEWS[view]
    page = opened(browser, warm_server, path, screen)
    try:
        found = {s: page.locator(s).count() for s in selectors}
    finally:
        page.context.close()
    assert [s for s, n in found.items() if n == 0] == [], found


SIZE_JS = """(selector) => [...document.querySelectorAll(selector)].filter(e => e.offsetParent !== null)
  .map(e => { const r = e.getBoundingClientRect(); return [Math.round(r.width), Math.round(r.height)]; })"""


def test_header_buttons(warm_server: StreamlitServer, browser: Any) -> None:
    """On a phone, the header's buttons (open the sidebar, the menu) are 44 × 44 px or more."""
    page = opened(browser, warm_server, "/kernel-regression", PHONE)
    try:
        sizes = {s: page.evaluate(SIZE_JS, s) for s in (pf.EXPAND_SIDEBAR, f"{pf.MAIN_MENU} button")}
    finally:
        page.context.close()
    assert all(sizes.values()), sizes
    assert all(w >= 44 and h >= 44 for found in sizes.values() for w, h in found), sizes


FIELDS = (f"{pf.CHECKBOX} label", pf.NUMBER_INPUT, f"{pf.SELECTBOX} {pf.SELECT_FIELD}")


def test_fields_take_a_thumb(warm_server: StreamlitServer, browser: Any) -> None:
    """On a touch screen every checkbox's label, number field and select box's field, the sidebar's too,
    is at least 44 px high."""
    page = opened(browser, warm_server, "/multi-head", PHONE)
    try:
        heights = {s: page.evaluate("(s) => [...document.querySelectorAll(s)].map(e => "
                                    "getComputedStyle(e).minHeight)", s) for s in FIELDS}
    finally:
        page.context.close()
    assert all(heights.values()), heights
    assert {h for found in heights.values() for h in found} == {"44px"}, heights


def test_keys_box(warm_server: StreamlitServer, browser: Any) -> None:
    """The boxes of the replay keys' script take no room, and a focused Play shows its focus ring."""
    page = opened(browser, warm_server, REPLAY, WIDE)
    try:
        boxes = page.evaluate("(s) => [...document.querySelectorAll(s)].map(e => "
                              "[getComputedStyle(e).display, e.getBoundingClientRect().height])",
                              f"{pf.LAYOUT_WRAPPER}:has(> {KEYS_BOX})")
        play = page.locator(f'{pf.REPLAY_BUTTON}[aria-label="Play the replay"]').first
        play.focus()
        ring = play.evaluate("e => [getComputedStyle(e).outlineStyle, getComputedStyle(e).outlineWidth]")
    finally:
        page.context.close()
    assert boxes and all(box == ["none", 0] for box in boxes), boxes
    assert ring == ["solid", "3px"]


STAGE_JS = """([stage, twins, main, katex]) => {
  const px = (e, p) => parseFloat(getComputedStyle(e)[p]);
  const formula = document.querySelector(`${stage} p ${katex}`);
  return {
    hidden: getComputedStyle(document.querySelector(twins)).display,
    top: px(document.querySelector(main), 'paddingTop'),
    note: px(document.querySelector(`${stage} p`), 'fontSize'),
    title: px(document.querySelector(`${stage} h2`), 'fontSize'),
    formula: formula ? px(formula, 'fontSize') / px(formula.parentElement, 'fontSize') : null,
  };
}"""


def test_presenter_look(warm_server: StreamlitServer, browser: Any) -> None:
    """A lesson scene: the clicker's twin buttons are hidden, the page
    starts 3rem down, the note is in 1.35rem type, the title in 1.9rem and its formulas 1.3 times larger."""
    page = opened(browser, warm_server, SCENE, PROJECTOR)
    try:
        found = page.evaluate(STAGE_JS, [STAGE, pf.key_class("kv-twins"), pf.MAIN_BLOCK, pf.KATEX])
    finally:
        page.context.close()
    assert found["hidden"] == "none"
    assert found == {**found, "top": 48, "note": pytest.approx(21.6), "title": pytest.approx(30.4)}
    assert found["formula"] == pytest.approx(1.3, abs=0.01)


def test_join_column(warm_server: StreamlitServer, browser: Any) -> None:
    """A student's join page is one column at most 34rem wide, its words in 1.15rem type."""
    page = opened(browser, warm_server, "/?join=", WIDE)
    try:
        column = page.locator(pf.MAIN_BLOCK)
        width = column.evaluate("e => e.getBoundingClientRect().width")
        words = column.locator("p").first.evaluate("e => getComputedStyle(e).fontSize")
    finally:
        page.context.close()
    assert width <= 34 * 16 + 1
    assert words == "18.4px"


TOOLBAR_JS = f"""() => [document.querySelectorAll('[data-testid="stMain"] {pf.PLOT}').length,
  document.querySelectorAll('[data-testid="stMain"] {pf.PLOT} .modebar-btn').length]"""


@pytest.mark.parametrize("screen", ["phone", "computer"])
def test_phone_toolbar(warm_server: StreamlitServer, browser: Any, screen: str) -> None:
    """A phone's charts come without Plotly's toolbar (``displayModeBar``), a computer's with it."""
    context = browser.new_context(**(PHONE if screen == "phone" else WIDE))
    context.set_default_timeout(RERUN_TIMEOUT_S * 1e3)
    try:
        page = context.new_page()
        page.goto(warm_server.url + "/kernel-regression")
        wait_until_drawn(page)
        charts, buttons = page.evaluate(TOOLBAR_JS)
    finally:
        context.close()
    assert charts > 0
    assert (buttons == 0) if screen == "phone" else (buttons >= charts)


def test_plotly_internals() -> None:
    """A figure built ``unchecked`` skips Plotly's validation (an unknown property would stop a checked
    one), ``binary_arrays`` writes NumPy arrays as Plotly's typed arrays, and Streamlit's reading of a
    figure (``return_figure_from_figure_or_data``, which ``st.plotly_chart`` calls) takes ``Sent``'s dict
    as it is."""
    from plotly.tools import return_figure_from_figure_or_data

    def odd() -> dict:
        return {"data": [{"type": "scatter", "nope": 1}]}

    with pytest.raises(ValueError):
        go.Figure(odd())
    assert styling.unchecked(odd()).to_dict()["data"] == odd()["data"]
    arrays = {"y": np.arange(3.0), "range": np.arange(2.0), "x": [1, 2]}
    styling.binary_arrays(arrays)
    assert set(arrays["y"]) == {"dtype", "bdata"} and arrays["x"] == [1, 2]
    assert isinstance(arrays["range"], np.ndarray)  # Plotly leaves a range as it is
    spec = {"data": [], "layout": {"template": None}}
    assert return_figure_from_figure_or_data(pf.Sent(spec), validate_figure=True) is spec


@pytest.mark.parametrize("rows, cols", [(1, 2), (2, 2), (2, 4), (3, 4)])
def test_panels_are_where_make_subplots_puts_them(rows: int, cols: int) -> None:
    """A ``subplot_grid`` places a trace on panel (row, col) as ``make_subplots`` does, by its axes' names
    (Plotly's public grid needs ``make_subplots`` for every figure, 10–35 ms)."""
    grid = styling.PanelGrid(rows, cols, 0.03)
    titles = [f"panel {k}" for k in range(rows * cols)]
    ours = styling.subplot_grid(grid, titles)
    theirs = make_subplots(rows=rows, cols=cols, shared_xaxes=True, shared_yaxes=True, subplot_titles=titles,
                           horizontal_spacing=0.03, vertical_spacing=0.1)
    for fig in (ours, theirs):
        for r in range(1, rows + 1):
            for c in range(1, cols + 1):
                fig.add_trace(go.Scatter(x=[0.0, 1.0], y=[r, c], name=f"{r}, {c}"), row=r, col=c)
    assert ours.to_dict() == theirs.to_dict()
    with pytest.raises(ValueError):
        ours.add_trace(go.Scatter(), row=rows + 1, col=1)


NAMED = re.compile(r"(test_\w+\.py)::(test_\w+)")


def _named_tests() -> dict[str, list[tuple[str, str]]]:
    """For each name ``platform.py`` exports, the tests its comment names: the comment lines right above
    its definition, or the line "# ``name``, …" for a name defined elsewhere."""
    source = (REPO_ROOT / "kernelviz" / "app" / "ui" / "platform.py").read_text(encoding="utf-8")
    lines = source.splitlines()
    defined = {}
    for node in ast.parse(source).body:
        names = ([t.id for t in node.targets if isinstance(t, ast.Name)] if isinstance(node, ast.Assign)
                 else [node.name] if isinstance(node, (ast.FunctionDef, ast.ClassDef)) else [])
        defined.update((name, node.lineno) for name in names)
    out = {}
    for name in pf.__all__:
        above = []
        if name in defined:
            k = defined[name] - 2
            while k >= 0 and lines[k].startswith("#"):
                above.append(lines[k])
                k -= 1
        above += [line for line in lines if line.startswith(f"# ``{name}``")]
        out[name] = [m.groups() for line in above for m in NAMED.finditer(line)]
    return out


def test_every_internal_names_its_test() -> None:
    named = _named_tests()
    assert [name for name, tests in named.items() if not tests] == []
    missing = []
    for file, test in {t for tests in named.values() for t in tests}:
        path = REPO_ROOT / "tests" / "browser" / file
        if not path.is_file() or not re.search(rf"^def {test}\(", path.read_text(encoding="utf-8"), re.M):
            missing.append(f"{file}::{test}")
    assert missing == []


SELECTORS = re.compile(r"data-testid|st-key-|\.js-plotly-plot|updatemenu-button|modebar-|\.katex|\.gtitle")


def _strings(path: Path) -> list[str]:
    """The string constants of ``path``'s code (f-strings' parts too), docstrings left out."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    owners = (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)
    docs = {id(node.body[0].value) for node in ast.walk(tree) if isinstance(node, owners) and node.body
            and isinstance(node.body[0], ast.Expr) and isinstance(node.body[0].value, ast.Constant)}
    return [node.value for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs]


def test_the_app_names_no_selector_of_its_own() -> None:
    """Streamlit's ``data-testid`` names, its ``st-key-`` classes and Plotly's and KaTeX's classes are
    written in ``platform.py`` alone: the app's CSS and scripts take them from there."""
    sources = [*(REPO_ROOT / "kernelviz" / "app").rglob("*.py"), *(REPO_ROOT / "chapters").glob("*.py"),
               REPO_ROOT / "app.py"]
    found = {str(path.relative_to(REPO_ROOT)): hits for path in sources if path.name != "platform.py"
             if (hits := [s for s in _strings(path) if SELECTORS.search(s)])}
    assert found == {}
