"""The chapters' books (kernelviz/app/ui/charts/): every chart a chapter page draws can be drawn by name from
its settings, a scene's values are read as a URL's are, and a lesson scene draws its charts without running
its page."""

from __future__ import annotations

import pytest
from test_app import charts, ok, start

from kernelviz.app.ui import charts as books
from kernelviz.app.ui.charts import Chart, Panel
from kernelviz.app.ui.pages import CHAPTERS
from kernelviz.app.ui.widgets.sidebar import builtin_data

DATA = builtin_data("blog", 150, 2024)
CHAPTER_URLS = [c.url for c in CHAPTERS]


@pytest.mark.parametrize("url", CHAPTER_URLS)
def test_every_chapter_has_a_book_whose_keys_are_its_own(url):
    book = books.book(url)
    assert book is not None, f"{url} has no book in kernelviz/app/ui/charts/"
    prefixes = {key.split(".")[0] for key in (*book.charts, *book.questions, *book.keys())}
    assert len(prefixes) == 1, prefixes  # one page's prefix: a scene's keys name one chapter
    assert set(book.picks) <= set(book.charts)


@pytest.mark.parametrize("url", CHAPTER_URLS)
def test_a_books_settings_go_to_the_address_and_back(url):
    book = books.book(url)
    settings, problems = book.read(DATA, {})
    assert problems == ()
    again, problems = book.read(DATA, book.to_query(settings))
    assert again == settings and problems == ()


@pytest.mark.parametrize("url", CHAPTER_URLS)
def test_a_hostile_scene_gets_messages_not_an_exception(url):
    book = books.book(url)
    hostile = dict.fromkeys(book.keys(), "1e309")
    settings, problems = book.read(DATA, hostile)
    assert settings == book.read(DATA, book.to_query(settings)).record  # every value one its control takes
    assert all(isinstance(p, str) and p for p in problems)


def test_chapter_1_draws_each_chart_by_name_as_the_page_does():
    book = books.book("kernel-regression")
    settings, _ = book.read(DATA, {"kr.explain": "true", "kr.x": "1"})
    drawn = {key: build(DATA, settings) for key, build in book.charts.items()}
    assert isinstance(drawn["kr.fit"], Chart) and isinstance(drawn["kr.formula"], Panel)
    assert drawn["kr.d2l_fit"] is None and drawn["kr.d2l_consistency"] is None  # d2l's data only
    page = charts(start(CHAPTERS[0].path, {"kr.explain": "true", "kr.x": "1"}))
    for key in ("kr.heatmap", "kr.kernel_shape", "kr.multiples"):
        assert drawn[key].figure.to_plotly_json()["data"][0]["type"] == page[key]["data"][0]["type"]
    fit = drawn["kr.fit"].figure.layout.title.text
    assert fit == page["kr.fit"]["layout"]["title"]["text"]


def test_a_scene_is_drawn_without_its_page():
    at = start(CHAPTERS[0].path, {"lesson": "ten-minutes", "scene": "1"})
    ok(at)
    assert {"kr.fit", "kr.heatmap"} <= set(charts(at))
    page_widgets = [w.key for kind in ("select_slider", "selectbox", "toggle") for w in getattr(at, kind)]
    assert not [key for key in page_widgets if key and key.startswith("kr.")]  # no page control ran


def test_a_click_on_a_scenes_fit_explains_that_point_on_the_stage():
    at = start(CHAPTERS[0].path, {"lesson": "ten-minutes", "scene": "2"})
    assert "kr.formula" not in charts(at)
    at.session_state["kv._scene_picked"] = {"kr.explain": True, "kr.x": 0.5}  # what on_pick writes
    at.run()
    ok(at)
    traces = charts(at)["kr.fit"]["data"]
    assert any((t.get("name") or "").startswith("weights wᵢ(x*)") for t in traces)  # the point, marked
    assert "kr.formula" not in charts(at)  # and nothing the scene does not name
    at.button(key="lesson.explore").click().run()  # the chapter, at the scene's values and the click's
    ok(at)
    assert at.toggle(key="kr.explain").value and at.number_input(key="kr.x").value == 0.5
