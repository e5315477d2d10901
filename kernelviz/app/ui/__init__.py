"""Streamlit glue: the shared data sidebar, URL-mirrored controls, cached calls into the backend, page text.

This is the only package of kernelviz that imports streamlit. Pages stay thin: widgets (``draw``), words
(``chapter_header``, ``try_this``, ``st.latex``) and figures (builders from ``kernelviz.app.figures`` shown
with ``show``); the maths lives in the other kernelviz modules and is reached through cached functions.

Sub-packages, one concern each
------------------------------
* ``widgets``: ``text`` (words, tables, figures and the code under them: ``chapter_header``, ``show``,
  ``show_code``), ``controls`` (widgets mirrored in the URL: ``draw``, ``field``), ``sidebar`` (the
  shared data sidebar), ``explain`` (click-to-explain), ``replay`` (training's replays) and ``access``
  (keyboard and touch).
* ``charts``: each chapter's book: its settings and every chart and question drawn from them, by name.
* ``caching``: every cache. ``cache`` holds ``cached`` (the one decorator of every cached call),
  ``DATA_HASH_FUNCS`` and the cached backend calls of chapters 1 and 2; ``heads``, ``attention``,
  ``incontext``, ``d2l``, ``scrub`` and ``sources`` hold the other chapters' (``incontext`` keyed by chapter
  5's controls alone: that chapter draws its own tasks); ``kept`` serves the default views from results
  kept in the package, ``ahead`` prepares the next notch while the server is idle, and ``continuing`` goes
  on from an earlier training run.
* ``lesson``: the lesson player (``files`` reads a lesson, ``presenter`` and ``stage`` play it, ``scene_copy``
  copies a view as a scene).
* ``questions``: predict, then reveal (``predict``) and the chapters' questions (``bank``).
* ``classroom``: a class session (``session`` on the stage, ``join`` on a student's phone, ``db`` the
  store's connection).
* On this floor: ``server`` (the server's own set-up), ``pages`` (the navigation), ``page_data`` (``Data``)
  and ``previews`` (the home page's previews).

How to add a chapter
--------------------
1. Put the maths in a kernelviz module (exported from ``kernelviz/__init__.py``), what a page draws in a
   view (a frozen dataclass of arrays in ``kernelviz/app/views/__init__.py`` or ``views_training.py``, no
   streamlit) and the Plotly builders in ``kernelviz/app/figures/`` (NumPy or views in, ``go.Figure`` out;
   colours from ``COLORS``/``HEAD_COLORS``; finish with ``style``).
2. Put its cached calls in ``kernelviz/app/ui/caching/<name>.py``, each taking the ``Data`` first and the
   other arguments in the order of the backend function::

       import kernelviz as kv
       from kernelviz.app.ui.caching.cache import cached
       from kernelviz.app.ui.widgets.sidebar import Data
       from kernelviz.models.heads import FitResult

       @cached()
       def fit_heads(data: Data, heads: int) -> FitResult:
           return kv.fit(data.train.x, data.train.y, heads=heads)   # cached by (data.key, heads)

   Results that hold weight matrices use ``@cached(heavy=True)`` (fewer entries), so the server's memory
   stays bounded however many views its visitors explore.
3. Declare its settings and charts once, in a book (``kernelviz/app/ui/charts/<name>.py``, listed in
   ``charts.MODULES``): a record per part of the settings with a ``Controls`` table each
   (``kernelviz.app.views.settings``), and each chart a function of the data and the settings::

       class HeadsSettings(NamedTuple):
           heads: int = 2

       HEADS = Controls(HeadsSettings(), "mh", {
           "heads": Control(_("Number of heads"), low=1, high=HEADS_MAX),
       })

       class Settings(NamedTuple):
           fit: HeadsSettings

       def fit(data: Data, s: Settings) -> Chart:
           with busy(_("Training {heads} heads by masked training…").format(heads=s.fit.heads)):
               result = cache_name.fit_heads(data, s.fit.heads)
           return Chart(kf.fit_figure(...), "kernelviz-multihead-fit")

       BOOK = Book(Settings(HEADS), {"mh.fit": fit}, {})

   Keys start with a short page prefix ("kr.", "masked.", "mh.", "attn."); a control's key is also its URL
   query parameter, validated, clamped and snapped from whatever a URL or a lesson scene says. A lesson
   scene draws the book's charts by name, without the page.
4. Write ``chapters/N_name.py``: the settings from the widgets, the charts beside the words::

       data = ui.current_data()                       # the data set chosen in the shared sidebar
       ui.chapter_header(_("3 · Multi-head kernel regression"), lead="…", source="Blog post, …")
       s = book.Settings(ui.draw(book.HEADS, data, ((("heads", 1.0),),)))   # ?mh.heads=2
       charts.put("mh.fit", book.fit(data, s))
       ui.try_this(["…", "…"])

5. Register the file in ``kernelviz/app/ui/pages.py``'s ``CHAPTERS`` (path, title, Material icon such as
   ``":material/show_chart:"``, one-line summary, preview builder).
6. Test it in tests/test_app.py (``AppTest.switch_page``; the control sweep picks up the new keys when the
   page is added to its table).
"""

from kernelviz.app.ui.questions.predict import ask
from kernelviz.app.ui.server import fragment, rerun_page
from kernelviz.app.ui.widgets.controls import (
    draw,
    enter_page,
    field,
    sync_url,
)
from kernelviz.app.ui.widgets.replay import masked_replay, replay_controls
from kernelviz.app.ui.widgets.sidebar import (
    _UPLOAD,
    GRID_POINTS,
    POINT_CHOICES,
    Data,
    apply_upload,
    current_data,
    data_messages,
    data_sidebar,
    data_summary,
)
from kernelviz.app.ui.widgets.text import (
    CALLED,
    POST_TRAINED,
    SEARCHED,
    SERVED,
    TRAINED,
    TRAINED_THEN_SERVED,
    Ran,
    busy,
    chapter_header,
    md_escape,
    prose,
    say,
    show,
    show_code,
    show_status,
    show_table,
    streamed_if,
    trained_fast,
    try_this,
)
from kernelviz.app.views.values import Spec, lengthscale_options, log_options

__all__ = [
    "CALLED",
    "GRID_POINTS",
    "POINT_CHOICES",
    "POST_TRAINED",
    "SEARCHED",
    "SERVED",
    "TRAINED",
    "TRAINED_THEN_SERVED",
    "_UPLOAD",
    "Data",
    "Ran",
    "Spec",
    "apply_upload",
    "ask",
    "busy",
    "chapter_header",
    "current_data",
    "data_messages",
    "data_sidebar",
    "data_summary",
    "draw",
    "enter_page",
    "field",
    "fragment",
    "lengthscale_options",
    "log_options",
    "masked_replay",
    "md_escape",
    "prose",
    "replay_controls",
    "rerun_page",
    "say",
    "show",
    "show_code",
    "show_status",
    "show_table",
    "streamed_if",
    "sync_url",
    "trained_fast",
    "try_this",
]
