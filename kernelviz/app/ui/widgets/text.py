"""Words and figures on the page: titles, prose, prompts, spinners, escaped user text, small tables,
Plotly charts and the code behind a chart."""

from __future__ import annotations

import contextlib
import functools
import hashlib
import inspect
import re
from collections.abc import Callable, Collection, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from types import FrameType
from typing import NamedTuple

import plotly.graph_objects as go
import streamlit as st

from kernelviz.app import figures as kf
from kernelviz.app.mdtable import markdown_table, md_escape
from kernelviz.app.ui import platform
from kernelviz.app.ui.caching import kept
from kernelviz.app.ui.lesson import stage
from kernelviz.app.ui.widgets import access
from kernelviz.core import pooling
from kernelviz.models import holdout_fast, smoothing
from kernelviz.runtime.i18n import _, language, localized

__all__ = [
    "CALLED",
    "POST_TRAINED",
    "SEARCHED",
    "SERVED",
    "STREAMED",
    "TRAINED",
    "TRAINED_THEN_SERVED",
    "Ran",
    "busy",
    "chapter_header",
    "code_key",
    "md_escape",
    "prose",
    "say",
    "sections",
    "show",
    "show_code",
    "show_table",
    "streamed_if",
    "trained_fast",
    "try_this",
]

PROSE_DIR = Path(__file__).resolve().parents[4] / "chapters" / "prose"
_SECTION = re.compile(r"^<!--\s*([\w.-]+)\s*-->\s*$", re.MULTILINE)
_PLACEHOLDER = re.compile(r"⟨(\w+)⟩")

def chapter_header(title: str, *, lead: str, source: str) -> None:
    """Page title, one paragraph saying what the chapter shows, and, in a collapsed "Where this comes from"
    expander, which sources it follows and what is kernelviz's own (``docs/sources.md`` has every item)."""
    st.title(title)
    st.markdown(lead)
    with st.expander(_("Where this comes from"), icon=":material/menu_book:"):
        st.markdown(_("Follows: {source}").format(source=source))
        st.caption(_("The Sources page lists every figure, printed number and exercise of these texts, each "
                     "with a link to the view that shows it."))


def try_this(prompts: Sequence[str]) -> None:
    """The closing "Try this" list: two or three experiments for the class."""
    st.subheader(_("Try this"))
    st.markdown("\n".join(f"{i}. {p}" for i, p in enumerate(prompts, 1)))


@contextmanager
def busy(text: str) -> Iterator[None]:
    """A spinner that says what the long-running work is doing (with elapsed time); while a lesson scene
    plays, on its stage."""
    scene = stage.active()
    with (scene.status if scene is not None else contextlib.nullcontext()), st.spinner(text, show_time=True):
        yield


# What an untitled chart is called in its text alternative, by its key's last part (``kr.loo``): built once,
# as the server's language is fixed when it starts.
_CHART_NAMES = {
    "kernel_shape": _("Kernel shapes"), "multiples": _("The fit at four lengthscales"),
    "d2l_fit": _("d2l's fit"), "d2l_heatmap": _("d2l's attention weights"),
    "d2l_consistency": _("The error against the number of points"),
    "post": _("The learned ℓ for each hold-out size"), "loo": _("The leave-one-out error against ℓ"),
    "loss": _("The loss at each training step"), "d2l_loss": _("d2l's training loss"),
    "d2l_heatmaps": _("d2l's attention weights before and after training"),
    "panels": _("Multi-head fits side by side"), "heatmaps": _("Each head's attention weights"),
    "heatmap": _("Attention weights"), "equivalence": _("The Gaussian kernel and its attention head"),
    "lengthscales": _("The in-context error against the lengthscale"),
    "prediction": _("A new task, predicted in context"),
    "coverage": _("What the pages show of each source"),
}


def chart_name(key: str) -> str:
    """What an untitled chart is called in its text alternative, from its key's last part (``kr.loo``);
    ``Chart`` for a key not named in ``_CHART_NAMES``."""
    return _CHART_NAMES.get(key.rsplit(".", 1)[-1], _("Chart"))


SLIDER_ROOM = 40  # px more on the stage for a figure with a slider of frames and Play / Pause


def show(fig: go.Figure, key: str, filename: str | None = None,
         on_select: Callable[[], None] | None = None, name: str | None = None) -> None:
    """Draw a Plotly figure in the reader's theme, light or dark, with its numbers as short decimals and a
    data revision (``kf.themed``; Streamlit's own chart theme is not used, so that its second draw of a chart
    is cheap), laid out for a narrow screen in a phone's browser (``phone`` of ``kf.themed``, and without
    Plotly's toolbar there), and a PNG download in the toolbar. Its text alternative, ``kf.describe``, is
    the chart's accessible name: what it shows, from its own numbers, named by its title (or ``name``, or
    ``chart_name(key)``). ``on_select``: called when the reader clicks a point (or the background), the
    click in ``st.session_state[key]``.

    While a lesson scene plays (``stage.active()``), only the charts the scene names are drawn, each in its
    slot on the stage, at a height that fits a projector's screen, lower under a question (a figure with a
    slider of frames keeps ``SLIDER_ROOM`` more for it, below the plot)."""
    box = stage.place(key)
    if box is None:
        return
    if box is not st:
        scene = stage.active()
        height = scene.chart_height if scene else stage.CHART_HEIGHT
        most = height + (SLIDER_ROOM if fig.layout.sliders else 0)
        fig = kf.at_height(fig, min(fig.layout.height or most, most))
    phone = access.on_phone()
    config = kf.png_config(filename or key.replace(".", "-"))
    if phone:  # Plotly's toolbar, which a tap showed over the chart's title, left out
        config["displayModeBar"] = False
    # from the figure's own numbers, before compact rounds them; an untitled chart is named by its key
    alt = kf.describe(fig, fallback=name or chart_name(key)).alt
    if (scene := stage.active()) is not None:
        scene.described[key] = alt
    tables = kf.chart_tables(fig) if access.numbers_wanted() else []
    selectable = on_select is not None
    spec = kf.themed_spec(fig, st.context.theme.type, phone=phone, selectable=selectable)
    box.plotly_chart(platform.Sent(spec), key=key, theme=None, config=config, alt=alt,
                     on_select=on_select or "ignore", selection_mode="points")
    if spec["layout"].get("updatemenus"):  # Play and Pause: made buttons a key presses
        access.replay_keys(box, key)
    for caption, table in tables:
        box.caption(_("The numbers of the chart above: {caption}").format(caption=caption))
        box.markdown(markdown_table(table))


@functools.cache
def sections(chapter: str, lang: str = "en") -> dict[str, str]:
    """The sections of ``chapters/prose/<chapter>.md`` (``chapters/prose/<lang>/<chapter>.md`` where a
    translation has it): text after each ``<!-- name -->`` line."""
    path = PROSE_DIR / lang / f"{chapter}.md"
    path = path if path.is_file() else PROSE_DIR / f"{chapter}.md"
    parts = _SECTION.split(path.read_text(encoding="utf-8"))
    return {parts[i]: parts[i + 1].strip() for i in range(1, len(parts), 2)}


@functools.cache
def _template(chapter: str, section: str, lang: str) -> str:
    """Section ``section`` in language ``lang``; a formula (a section named ``…formula``) as written."""
    text = sections(chapter, lang)[section]
    return text if section.endswith("formula") else localized(text)


@functools.cache
def constants() -> dict[str, str]:
    """The backend's fixed numbers that any section may name by placeholder, so that no prose types them:
    ``⟨prompts_per_step⟩`` fresh prompts a pretraining step draws, ``⟨query_points⟩`` per prompt,
    ``⟨window_queries⟩`` queries the learned window is read at, ``⟨eval_tasks⟩`` fresh tasks the errors
    average over, ``⟨loo_prompts⟩`` single prompts of the leave-one-out window, ``⟨snapshots⟩`` frames a
    replay keeps, ``⟨loss_tail⟩`` last steps a loss readout averages, ``⟨grid_points⟩`` points of a fit's
    grid, ``⟨pretrain_steps⟩`` pretraining steps by default."""
    from kernelviz.app import defaults
    from kernelviz.data import tasks
    from kernelviz.models import incontext, training
    from kernelviz.models.incontext import evaluation

    numbers = {"prompts_per_step": incontext.BATCH, "query_points": tasks.QUERIES,
               "window_queries": len(evaluation.WINDOW_QUERIES), "eval_tasks": evaluation.EVAL_TASKS,
               "loo_prompts": evaluation.LOO_TASKS, "snapshots": training.SNAPSHOTS,
               "loss_tail": defaults.TAIL, "grid_points": defaults.GRID_POINTS,
               "pretrain_steps": incontext.STEPS}
    return {name: f"{int(value):,}" for name, value in numbers.items()}


def prose(chapter: str, section: str, **values: object) -> str:
    """Section ``section`` of the chapter's Markdown file, each ``⟨name⟩`` replaced by ``values[name]``
    (or, for a name the page does not give, the backend's fixed number ``constants()[name]``).

    Markdown and LaTeX (``$…$``, ``$$…$$``) pass through as written; the placeholders use ⟨ ⟩ so that they
    never clash with LaTeX braces.
    """
    filled = {**constants(), **values}
    return _PLACEHOLDER.sub(lambda m: str(filled[m.group(1)]), _template(chapter, section, language()))


def say(chapter: str, section: str, **values: object) -> None:
    """``st.markdown`` of ``prose(chapter, section, **values)``."""
    st.markdown(prose(chapter, section, **values))


def show_status(status: object, prefix: str = "") -> None:
    """A run's ``views.Status``: a warning, an info box (a search) or a quiet caption, as its level says;
    nothing for an empty note."""
    if status.level == "warning":
        st.warning(prefix + status.message, icon=":material/warning:")
    elif status.level == "info":
        st.info(prefix + status.message, icon=":material/search:")
    elif status.message:
        st.caption(prefix + status.message)


NO_LOSS = _("Training diverged at its first step, so there is no loss to draw. Lower the learning rate.")


class Ran(NamedTuple):
    """How the code shown under a chart was run: one ``line`` for the reader, and the ``fast`` path that ran
    in its place, if any (shown in a second expander with ``note``: the same formula, tested equal)."""

    line: str
    fast: tuple[Callable, ...] = ()
    note: str = ""


SERVED = Ran(_(
    "The model is written for one problem, as the formula above. `kernelviz.runtime.serve` ran it: it checks "
    "the data, pads them to a fixed size with a mask of the real points, compiles the model once in float64 "
    "and cuts the result back to your points."
))
TRAINED = Ran(_(
    "`kernelviz.models.training.run` ran this step: once per training step, all steps in one compiled "
    "program (a `lax.while_loop`), on the data padded to a fixed size with a mask; it stops at the first "
    "step whose loss or parameters are not finite."
))
TRAINED_THEN_SERVED = Ran(_(
    "{trained} The fit drawn from the trained parameters is the last model above, which "
    "`kernelviz.runtime.serve` ran on the grid."
).format(trained=TRAINED.line))
POST_TRAINED = Ran(
    _("`kernelviz.models.training.run` ran the post's step, each step's hold-out set drawn as the post "
      "draws it (`holdout_split`), on the data in float32 as the post computed, all steps in one compiled "
      "program."),
    fast=(holdout_fast.holdout_split_fast,),
    note=_("Training draws each step's hold-out set by this form of `holdout_split`: no stable sort, and "
           "none at all for hold-out 1; tested to hold out the same points in the same order."),
)
CALLED = Ran(_(
    "Called as written, once for each setting of the controls; the page keeps the result."
))
SEARCHED = Ran(_(
    "ℓ* is the ℓ of least CV(ℓ): `kernelviz.models.loo.loo_lengthscale` evaluates this CV on a grid of "
    "log ℓ, then takes Newton steps on it, all in one compiled program, the pairs in blocks (the same sum)."
))
STREAMED = Ran(
    _("{served} With more than {most:,} points it ran the same formula over blocks of keys, merged exactly "
      "(a running log-sum-exp), so that the n × q weights are never held at once.").format(
        served=SERVED.line, most=smoothing.DENSE_MAX_KEYS),
    fast=(smoothing.nadaraya_watson_streamed, pooling.merge),
    note=_("The streamed path: the key blocks' pooled sums are merged exactly; tested equal to the dense "
           "path."),
)
KEPT = _(
    "At these settings (the page's defaults) this server computed nothing for this chart: it drew results "
    "kept from such a run of this code (`kernelviz/app/ui/caching/kept.py`; the tests run it again and "
    "compare)."
)
FAST_PATH = _("How training runs fast")
FAST_NOTE = _(
    "The model above calls a core operation; this is how that operation runs when training: in float32, "
    "with its gradient written out instead of traced, and tested equal to the plain float64 form."
)


def streamed_if(n: int) -> Ran:
    """How ``smoothing.nadaraya_watson`` ran a fit from ``n`` keys without its weights: ``STREAMED`` above
    ``smoothing.DENSE_MAX_KEYS`` keys, ``SERVED`` otherwise."""
    return STREAMED if n > smoothing.DENSE_MAX_KEYS else SERVED


def trained_fast(*functions: Callable) -> Ran:
    """``TRAINED``, with the fast path training took in the place of the shown core operation."""
    return TRAINED._replace(fast=functions, note=FAST_NOTE)


@functools.lru_cache(maxsize=512)
def _source(fn: Callable) -> str:
    """The source of ``fn`` (unwrapped), read once per server: reading and tokenizing it again took some
    30 ms of every rerun of a chapter."""
    return inspect.getsource(inspect.unwrap(fn))


def qualified_name(fn: Callable) -> str:
    """``module.qualname`` of ``fn`` (unwrapped, as ``_source`` reads it)."""
    inner = inspect.unwrap(fn)
    return f"{inner.__module__}.{inner.__qualname__}"


def code_key(functions: Sequence[Callable], label: str, where: str = "") -> str:
    """The widget key of the code expander titled ``label`` that shows ``functions`` (by their qualified
    names, in order), drawn by ``where`` (the page and the function of the ``show_code`` call, which tells
    apart the same code shown twice on a page): the same in every run, and wherever in that function the
    call stands."""
    shown = ",".join(qualified_name(fn) for fn in functions)
    return "kv.code." + hashlib.blake2b(f"{shown}|{label}|{where}".encode(), digest_size=6).hexdigest()


def _caller(frame: FrameType | None) -> str:
    """``page.function`` of ``frame``: its file's stem and its code's qualified name (``<module>`` for a
    page's top level)."""
    if frame is None:
        return ""
    return f"{Path(frame.f_code.co_filename).stem}.{frame.f_code.co_qualname}"


def _code_expander(label: str, key: str, icon: str, caption: str, functions: Sequence[Callable]) -> None:
    """An expander titled ``label``, ``caption`` on its first line, then the source of ``functions`` while it
    is open. Opening or closing it reruns the page (or its fragment), so that the code is drawn only while
    open: closed, the code of a page's expanders was drawn again by every rerun, about 50 ms a press of
    chapter 3's n (``docs/benchmarks.md``)."""
    box = st.expander(label, icon=icon, key=key, on_change="rerun")
    with box:
        st.caption(caption)
        for fn in functions if box.open else ():
            st.code(_source(fn), language="python")


def show_code(*functions: Callable, ran: Ran, label: str | None = None) -> None:
    """An expander with the source of ``functions`` (models, losses and training steps of
    ``kernelviz.core`` and ``kernelviz.models``), read from the package itself, and one line saying how they
    were run (``ran``), or that the chart drew kept results (``KEPT``: a cached call since the last code
    expander was a kept one); a second expander shows the fast path that ran in their place, if any. The
    code is sent only while its expander is open (``_code_expander``). ``label``: "The code that ran" when
    not given. Each expander is keyed by what it shows and the function that draws it (``code_key``), so
    that it keeps its key, and its open or closed state, when lines are added above the call."""
    label = _("The code that ran") if label is None else label
    line = f"{ran.line} {KEPT}" if kept.drawn_from_kept() else ran.line
    frame = inspect.currentframe()
    where = _caller(frame.f_back if frame is not None else None)
    _code_expander(label, code_key(functions, label, where), ":material/code:", line, functions)
    if ran.fast:
        fast_key = code_key((*functions, *ran.fast), FAST_PATH, where)  # the fast path under these functions
        _code_expander(FAST_PATH, fast_key, ":material/speed:", ran.note, ran.fast)


def show_table(table: dict[str, list], two_decimals: Collection[str] = ()) -> None:
    """A small table as Markdown (``mdtable.markdown_table``: numbers right-aligned with 4 significant
    digits, the columns named in ``two_decimals``, e.g. a source's printed numbers,
    ``views_training.PRINTED``, with two decimals), so that drawing it imports neither pandas nor pyarrow."""
    st.markdown(markdown_table(table, two_decimals))
