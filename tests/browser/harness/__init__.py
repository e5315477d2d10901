"""The browser harness: a Streamlit server, Debian's Chromium driven by Playwright, and the helpers that wait
for a page to be drawn and read it. The browser tests (``tests/browser/``) and the scripts in
``benchmarks/`` import it, so a benchmark measures exactly what the tests check::

    from tests.browser import harness

    server = harness.start_streamlit("app.py")
    ...
    harness.wait_until_drawn(page, timeout=harness.FIRST_LOAD_TIMEOUT_S)

One module per concern: ``server`` (start and stop ``streamlit run``), ``chromium`` (launch it, and whether
the browser tests can run here), ``probes`` (the JavaScript evaluated in the page), ``page`` (waiting,
errors, screenshots, the sidebar's pages), ``controls`` (sliders and select boxes), ``memory`` (the
resident memory of a process tree) and ``classroom`` (a class session's stage and phones). Everything is
also importable from the package itself.
"""

from __future__ import annotations

from .chromium import (
    CHROMIUM_ARGS,
    CHROMIUM_PATH,
    VIEWPORT,
    browser_unavailable_reason,
    in_ci,
    launch_chromium,
)
from .classroom import PHONE, SCENE, answer_question, start_class
from .controls import (
    QUESTION,
    choose_option,
    number_input_step_up,
    select_options,
    slider_by_label,
    slider_key_towards_middle,
    slider_label,
    slider_value,
    slider_values,
    sliders,
    widget_values,
)
from .memory import (
    descendants,
    process_tree_rss,
)
from .page import (
    FIRST_LOAD_TIMEOUT_S,
    REFERENCE_PATHS,
    RERUN_TIMEOUT_S,
    SCREENSHOT_DIR,
    AppExceptionError,
    BrowserErrors,
    app_pages,
    exception_texts,
    full_page_screenshot,
    is_idle,
    nav_links,
    nav_path,
    page_state,
    settled,
    wait_for_repaint,
    wait_until_drawn,
)
from .probes import (
    CHART_TEXT_CLASHES_JS,
    GROWN_MARGINS_JS,
    IDLE_AND_CHANGED_JS,
    PAGE_STATE_JS,
    WIDGETS_JS,
)
from .server import (
    REPO_ROOT,
    StreamlitServer,
    free_port,
    start_streamlit,
)

__all__ = [
    "CHART_TEXT_CLASHES_JS",
    "CHROMIUM_ARGS",
    "CHROMIUM_PATH",
    "FIRST_LOAD_TIMEOUT_S",
    "GROWN_MARGINS_JS",
    "IDLE_AND_CHANGED_JS",
    "PAGE_STATE_JS",
    "PHONE",
    "QUESTION",
    "REFERENCE_PATHS",
    "REPO_ROOT",
    "RERUN_TIMEOUT_S",
    "SCENE",
    "SCREENSHOT_DIR",
    "VIEWPORT",
    "WIDGETS_JS",
    "AppExceptionError",
    "BrowserErrors",
    "StreamlitServer",
    "answer_question",
    "app_pages",
    "browser_unavailable_reason",
    "choose_option",
    "descendants",
    "exception_texts",
    "free_port",
    "full_page_screenshot",
    "in_ci",
    "is_idle",
    "launch_chromium",
    "nav_links",
    "nav_path",
    "number_input_step_up",
    "page_state",
    "process_tree_rss",
    "select_options",
    "settled",
    "slider_by_label",
    "slider_key_towards_middle",
    "slider_label",
    "slider_value",
    "slider_values",
    "sliders",
    "start_class",
    "start_streamlit",
    "wait_for_repaint",
    "wait_until_drawn",
    "widget_values",
]
