"""Lessons (lessons/*.toml, kernelviz/app/ui/lesson/files.py, presenter.py): the shipped ones play scene by
scene with AppTest, and every kind of mistake in a lesson file gets a message naming the file, the scene and
the problem, while the other scenes still play."""

from __future__ import annotations

import re
import tomllib

import pytest
from test_app import charts, ok, start

from kernelviz.app.mdtable import md_escape
from kernelviz.app.ui.lesson import files as lesson_files
from kernelviz.app.ui.lesson import scene_copy
from kernelviz.app.ui.lesson.files import chapter_charts, lesson_names, load_lesson
from kernelviz.app.ui.pages import CHAPTERS
from kernelviz.app.ui.questions.predict import QUESTION_CHAPTERS

SHIPPED = ["from-kernel-regression-to-attention", "ten-minutes"]


def shipped(name: str) -> lesson_files.Lesson:
    return load_lesson(lesson_files.lesson_path(name), QUESTION_CHAPTERS)


WHY = "**Why the fit is where it is"
PANELS = {"kr.formula": WHY, "masked.formula": WHY, "mh.formula": WHY,  # slots that hold text
          "attn.formula": "**Why the layer's output is where it is"}


def warnings(at) -> list[str]:
    """The warnings' text as shown (without Markdown's escapes)."""
    return [re.sub(r"\\(.)", r"\1", w.value) for w in at.warning]


def test_the_shipped_lessons_read_without_a_problem():
    assert set(SHIPPED) <= set(lesson_names())
    full, short = shipped(SHIPPED[0]), shipped(SHIPPED[1])
    assert not full.problems and not short.problems
    assert 12 <= len(full.scenes) <= 17 and 4 <= len(short.scenes) <= 6
    assert {s.chapter.url for s in full.scenes} == {c.url for c in CHAPTERS}  # all five chapters
    assert {s.question for s in full.scenes if s.question} == set(QUESTION_CHAPTERS)  # every question
    for scene in (*full.scenes, *short.scenes):
        assert scene.title and len(scene.note.split()) <= lesson_files.NOTE_WORDS
        assert scene.charts or scene.question


@pytest.mark.parametrize(("name", "number"),
                         [(n, k) for n in SHIPPED for k in range(1, len(shipped(n).scenes) + 1)])
def test_every_scene_plays_with_its_charts_and_no_problem(name, number):
    scene = shipped(name).scenes[number - 1]
    at = start(scene.chapter.path, {"lesson": name, "scene": str(number)})
    assert not warnings(at), warnings(at)
    assert scene.title in [h.value for h in at.header]
    drawn = charts(at)
    assert set(scene.charts) - PANELS.keys() <= set(drawn)  # the scene's charts, drawn on its stage
    for key in set(scene.charts) & PANELS.keys():  # and its panels (the presenter warns of any missing)
        assert any(m.value.startswith(PANELS[key]) for m in at.markdown), key
    if scene.question:
        assert any(b.key == f"q.{scene.question}.reveal" for b in at.button)
    if set(scene.charts) - PANELS.keys():  # each chart's text alternative, read out under the charts
        (words,) = [e for e in at.expander if e.label == "The charts in words"]
        said = " ".join(m.value for m in words.markdown)
        for chart in at.get("plotly_chart"):
            assert md_escape(chart.proto.alt) in said
    assert dict(at.query_params) in ({"lesson": [name], "scene": [str(number)]},
                                     {"lesson": name, "scene": str(number)})  # the URL names the lesson


def test_a_scene_on_the_wrong_page_switches_to_its_chapter():
    at = start(None, {"lesson": "ten-minutes", "scene": "3"})  # scene 3 is chapter 2's
    ok(at)
    assert "Learn ℓ by predicting hidden points" in [h.value for h in at.header]


def test_a_scene_starts_from_its_values_and_the_defaults_elsewhere():
    at = start(CHAPTERS[0].path, {"kr.kernel": "boxcar"})  # the session has another kernel
    assert at.selectbox(key="kr.kernel").value == "boxcar"
    at.query_params.clear()
    at.query_params.update({"lesson": "ten-minutes", "scene": "2"})
    at.run()
    ok(at)
    title = charts(at)["kr.fit"]["layout"]["title"]["text"]
    assert title.startswith("Gaussian kernel, ℓ = 0.0178")  # the scene's ℓ, the chapter's default kernel
    assert not any(s.key == "kr.lengthscale" for s in at.select_slider)  # drawn by name: the page did not run
    at.button(key="lesson.explore").click().run()  # the chapter itself, at the scene's values
    ok(at)
    assert at.select_slider(key="kr.lengthscale").value == 0.0178
    assert at.selectbox(key="kr.kernel").value == "gaussian"  # not the session's boxcar


def test_copy_as_scene_writes_a_block_that_reads_back():
    at = start(CHAPTERS[0].path, {"kr.lengthscale": "0.562", "kr.kernel": "laplace"})
    values = {"kr.kernel": "laplace", "kr.lengthscale": 0.562, "kr.fit_band": True, "data.source": "blog"}
    block = scene_copy.scene_block("kernel-regression", values, ["kr.fit", "kr.heatmap"])
    scene = tomllib.loads(block)["scene"][0]
    assert scene["chapter"] == 1 and scene["charts"] == ["kr.fit", "kr.heatmap"]
    assert scene["set"] == values
    at.button(key="kv.copy_scene").click().run()
    ok(at)
    (code,) = [c.value for c in at.code if "[[scene]]" in c.value]
    assert 'charts = ["kr.fit"' in code and '"kr.lengthscale" = 0.562' in code


# ---------------------------------------------------------------------------------------------------------
# Mistakes in lesson files
# ---------------------------------------------------------------------------------------------------------

GOOD = """
[[scene]]
chapter = 1
title = "Fine"
charts = ["kr.fit"]
"""


@pytest.fixture
def lessons(tmp_path, monkeypatch):
    """A lessons folder of the test's own; returns a function that writes lesson NAME with TEXT."""
    monkeypatch.setattr(lesson_files, "LESSONS_DIR", tmp_path)

    def write(name: str, text: str) -> lesson_files.Lesson:
        path = tmp_path / f"{name}.toml"
        path.write_text(text, encoding="utf-8")
        return load_lesson(path, QUESTION_CHAPTERS)

    return write


def test_a_syntax_error_names_the_file(lessons):
    found = lessons("broken", 'title = "Oops\n[[scene]]\nchapter = 1\n')
    (problem,) = found.problems
    assert str(problem).startswith("lessons/broken.toml, the lesson: it is not valid TOML")
    assert found.scenes == ()


@pytest.mark.parametrize(("scene", "message"), [
    ('chapter = 9\ntitle = "x"\ncharts = ["kr.fit"]', "chapter 9 is not one of kernelviz's"),
    ('chapter = 1\ntitle = "x"\ncharts = ["kr.nope"]', "has no chart 'kr.nope'"),
    ('chapter = 1\ntitle = "x"\nquestion = "nope"', "question 'nope' is not one of kernelviz's"),
    ('chapter = 1\ntitle = "x"\nquestion = "icl.rough_window"', "belongs to chapter 'in-context'"),
    ('chapter = 1\ntitle = "x"\ncolour = "red"', "a field 'colour' that scenes do not have"),
    ('chapter = 1\ncharts = ["kr.fit"]', "it has no title"),
    ('chapter = 1\ntitle = "x"\nnote = "' + "word " * 90 + '"', "its note has 90 words"),
    ('chapter = 1\ntitle = "x"\nset = 3', "its set should be a table"),
])
def test_each_mistake_names_the_file_the_scene_and_what(lessons, scene, message):
    found = lessons("mine", f'title = "Mine"\n{GOOD}\n[[scene]]\n{scene}\n{GOOD}')
    assert len(found.scenes) == 3
    problems = [str(p) for p in found.problems]
    assert any(p.startswith("lessons/mine.toml, scene 2: ") and message in p for p in problems), problems
    assert not found.problems_of(1) and not found.problems_of(3)  # the other scenes are untouched


def test_an_unknown_control_and_a_value_out_of_range_are_reported_when_played(lessons):
    lessons("mine", f"""title = "Mine"
{GOOD}
[[scene]]
chapter = 1
title = "Two mistakes"
charts = ["kr.fit"]
[scene.set]
kr.lengthscale = 1e6
kr.colour = "red"
kr.kernel = "spline"
""")
    at = start(CHAPTERS[0].path, {"lesson": "mine", "scene": "2"})
    (warning,) = warnings(at)
    assert "mine.toml, scene 2: kr.lengthscale = 1e+06 is outside 0.001 to 100; 100 is used" in warning
    assert "kr.colour is not a control of this page or of the sidebar" in warning
    assert "kr.kernel = spline is not one of: gaussian" in warning
    title = charts(at)["kr.fit"]["layout"]["title"]["text"]  # the scene still plays, with the nearest
    assert title.startswith("Gaussian kernel, ℓ = 100")  # value and the default
    at.query_params["scene"] = "1"
    at.run()
    ok(at)
    assert not warnings(at)  # the good scene before it has nothing to report


def test_a_chart_not_drawn_at_the_scenes_values_is_reported(lessons):
    lessons("mine", 'title = "Mine"\n[[scene]]\nchapter = 1\ntitle = "x"\ncharts = ["kr.d2l_fit"]\n')
    at = start(CHAPTERS[0].path, {"lesson": "mine", "scene": "1"})  # d2l's chart needs d2l's data
    (warning,) = warnings(at)
    assert "lessons/mine.toml, scene 1: kr.d2l_fit is not drawn on this page at these values" in warning


def test_a_scene_whose_chapter_is_unknown_shows_its_problem_and_lets_the_lesson_go_on(lessons):
    lessons("mine", f'title = "Mine"\n[[scene]]\nchapter = "nowhere"\ntitle = "Lost"\n{GOOD}')
    at = start(None, {"lesson": "mine", "scene": "1"})
    assert any("lessons/mine.toml, scene 1: chapter 'nowhere'" in w for w in warnings(at))
    assert not at.button(key="lesson.next").disabled


def test_a_lesson_name_with_no_file_lists_the_lessons_there_are(lessons):
    lessons("first", f'title = "The first"\n{GOOD}')
    lessons("second", f'title = "The second"\n{GOOD}')
    at = start(None, {"lesson": "nope"})
    assert any("There is no lesson 'nope'" in e.value for e in at.error)
    links = [link.proto.label for link in at.get("page_link")]
    assert "The first" in links and "The second" in links


def test_an_empty_or_scene_less_file_says_so(lessons):
    assert "it has no scenes" in str(lessons("empty", 'title = "Nothing"\n').problems[0])
    assert "it has no title" in str(lessons("untitled", GOOD).problems[0])


def test_every_chapter_has_charts_a_scene_can_name():
    for chapter in CHAPTERS:
        keys = chapter_charts(chapter.path)
        assert keys and all("." in k for k in keys), chapter.path


def test_a_scene_opens_a_replay_at_its_step_and_explains_x_star(lessons):
    lessons("mine", """title = "Mine"
[[scene]]
chapter = 2
title = "Training from its start, x* = 1 explained"
charts = ["masked.fit", "masked.loo", "masked.formula"]
[scene.set]
masked.replay = true
masked.step = 0
masked.explain = true
masked.x = 1.0
[[scene]]
chapter = 4
title = "The layer at x* = 1, halfway through training"
charts = ["attn.fit", "attn.formula"]
[scene.set]
attn.replay = true
attn.step = 500
attn.explain = true
attn.x = 1.0
""")
    at = start(CHAPTERS[1].path, {"lesson": "mine", "scene": "1"})
    assert not warnings(at)
    fit, loo = charts(at)["masked.fit"], charts(at)["masked.loo"]
    for spec in (fit, loo):  # both open at the start, their sliders there
        assert spec["layout"]["sliders"][0]["active"] == 0 and len(spec["frames"]) > 1
    assert fit["layout"]["title"]["text"].startswith("At the start: ℓ = ")
    assert any((t.get("name") or "").startswith("weights wᵢ(x*)") for t in fit["data"])  # x*, marked
    assert any(m.value.startswith(PANELS["masked.formula"]) for m in at.markdown)  # and written out
    assert not [s for s in at.slider if s.key == "masked.holdout"]  # drawn by name: the page did not run
    at.query_params["scene"] = "2"
    at.run()
    ok(at)
    assert not warnings(at)
    fit = charts(at)["attn.fit"]
    slider = fit["layout"]["sliders"][0]
    label = slider["steps"][slider["active"]]["label"]  # the kept step nearest 500 of 1,000
    assert abs(int(label) - 500) <= 10
    assert fit["layout"]["title"]["text"].startswith(f"After {label} steps: hold-out loss ")
    assert any(t.get("name") == "f̂(x*)" for t in fit["data"])  # x*, marked
    assert any(m.value.startswith(PANELS["attn.formula"]) for m in at.markdown)  # and written out
    assert not [s for s in at.slider if s.key == "attn.heads"]  # drawn by name: the page did not run
    at.switch_page(CHAPTERS[3].path)  # where the scene switched to (AppTest runs the page it was given)
    at.button(key="lesson.explore").click().run()  # the chapter, at the scene's values
    ok(at)
    assert at.toggle(key="attn.replay").value and at.number_input(key="attn.step").value == 500
    assert at.toggle(key="attn.explain").value and at.number_input(key="attn.x").value == 1.0
    assert charts(at)["attn.fit"]["data"] == fit["data"]  # the fit the scene drew
