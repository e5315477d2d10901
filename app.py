"""kernelviz, the front door: `streamlit run app.py`.

Navigation over a home page and the chapters (their registry: ``kernelviz/app/ui/pages.py``), the shared data
sidebar, and one compile warm-up per server (``kernelviz/app/ui/server.py``).
"""

from __future__ import annotations

from pathlib import Path

import streamlit as st

from kernelviz.app import ui
from kernelviz.app.ui import pages, previews, server
from kernelviz.app.ui.caching import ahead
from kernelviz.app.ui.classroom import join
from kernelviz.app.ui.lesson import presenter, scene_copy
from kernelviz.app.ui.pages import CHAPTERS
from kernelviz.app.ui.widgets import access
from kernelviz.runtime import devices
from kernelviz.runtime import memory as _memory
from kernelviz.runtime.i18n import _

# Before any program runs: the heap settings, the shared IR context, the compile lock, ... (once per
# process; a device the installed JAX leaves off is logged with what it costs: kernelviz/runtime/devices.py).
devices.set_up_server()

lesson = presenter.requested()  # ?lesson=NAME: a teacher plays a lesson, scene by scene (ui/lesson/)
joining = join.requested()  # ?join=CODE: a student in a class session, on a phone (ui/classroom/join.py)
st.set_page_config(
    page_title=_("kernelviz: from kernel regression to attention"),
    page_icon=str(Path(__file__).parent / "docs" / "favicon.png"),  # a local file: no icon fetched from a CDN
    layout="wide",
    initial_sidebar_state="collapsed" if lesson or joining is not None else "auto",
)
access.apply()  # contrast and formulas as WCAG 2.1 AA asks (kernelviz/app/ui/widgets/access.py)


# ---------------------------------------------------------------------------------------------------------
# Home page
# ---------------------------------------------------------------------------------------------------------


def home() -> None:
    st.title(_("kernelviz: from kernel regression to attention"))
    st.markdown(_(
        "Attention, the heart of the transformer, is a **kernel smoother**: a prediction at a query x is a "
        "weighted average of values yᵢ, with weights that say how similar x is to each key xᵢ. kernelviz "
        "grows attention out of Nadaraya–Watson kernel regression in four steps, then pretrains it on whole "
        "families of tasks. Every control retrains the model live, so you can see what each idea changes."
    ))
    lessons()
    chapter_cards(ui.current_data())
    st.subheader(_("The story"))
    st.latex(
        r"\hat f(x) = \sum_{i=1}^n w_i(x)\, y_i, \qquad "
        r"w_i(x) = \frac{K\!\left(\frac{x - x_i}{\ell}\right)}{\sum_{j} K\!\left(\frac{x - x_j}{\ell}\right)}"
        r" = \operatorname{softmax}_i\, \log K\!\left(\tfrac{x - x_i}{\ell}\right)"
    )
    st.markdown(_(
        "**In order:** (1) kernel regression with a hand-picked lengthscale ℓ; (2) learning ℓ by masked "
        "training, predicting held-out points from the others (a little like BERT's masked tokens), and "
        "d2l's parametric pooling with a learnable w = 1/ℓ; (3) several heads with their own ℓ, mixed by "
        "learned weights; (4) dot-product attention, where the kernel itself is learned; (5) one attention "
        "layer pretrained on a whole family of small regression tasks, which then predicts a new task in "
        "context. Pick a data set in the sidebar (or upload your own CSV): chapters 1 to 4 use it, "
        "chapter 5 draws its own tasks."
    ))
    st.markdown(_(
        "**Lessons** play a prepared sequence of views, one scene at a time, in large type for a projector: "
        "← and → (or a clicker's PageUp and PageDown) step through them. Write your own in `lessons/` "
        "(`lessons/README.md`); on any chapter, *Copy this view as a lesson scene* in the sidebar writes a "
        "scene for you."
    ))
    st.caption(_(
        "Sources: Paweł Czyż, “From kernel regression to the transformer” (blog post); “Attention as a "
        "kernel smoothing problem” (blog post); Dive into Deep Learning, “Nadaraya-Watson kernel "
        "regression” and “Attention Pooling”; lecture notes on kernel regression and attention. Chapter 5, "
        "kernelviz's own: Collins et al., NeurIPS 2024 (arXiv 2402.11639); Garg et al., NeurIPS 2022."
    ))


def chapter_cards(data: ui.Data) -> None:
    """The data in use, then a card per chapter, two a row: its link, its summary and its preview."""
    ui.data_summary(data)
    for row in range(0, len(CHAPTERS), 2):
        cols = st.columns(2)
        for col, ch in zip(cols, CHAPTERS[row : row + 2], strict=False):
            with col, st.container(border=True):
                st.page_link(PAGES[ch.path], label=ch.title, icon=ch.icon)
                st.caption(ch.summary)
                with ui.busy(_("Preparing the preview of {chapter} on this data …").format(chapter=ch.title)):
                    preview = ch.preview(data)  # kept for the first data set (ui/caching/kept.py)
                ui.show(preview, key=f"home.preview.{Path(ch.path).stem}",
                        filename=f"kernelviz-{Path(ch.path).stem}",
                        name=_("Preview: {chapter}").format(chapter=ch.title))
    ahead.prepare_next_data("home", data, previews.prepare)  # a student stepping n finds the next ready


def lessons() -> None:
    """One line: the lessons in ``lessons/``, each a link that plays it in the presenter view."""
    found = presenter.lessons()
    if not found:
        return
    labels = [_("{title} ({n} scenes)").format(title=lesson_.title, n=len(lesson_.scenes))
              for lesson_ in found]
    widths = [22.0] + [len(label) + 6.0 for label in labels]  # columns as wide as their text
    cols = st.columns(widths, vertical_alignment="center")
    cols[0].markdown(_("**Lessons for the room:**"))
    for col, lesson_, label in zip(cols[1:], found, labels, strict=True):
        col.page_link(HOME, label=label, icon=":material/slideshow:", query_params={"lesson": lesson_.name},
                      help=lesson_.summary or None)


# ---------------------------------------------------------------------------------------------------------
# The app
# ---------------------------------------------------------------------------------------------------------

PAGES = {c.path: pages.page(c.path, title=c.title, icon=c.icon) for c in (*CHAPTERS, pages.SOURCES)}
HOME = st.Page(home, title=_("Overview"), icon=":material/home:", default=True)
page = st.navigation([HOME, *PAGES.values()], position="hidden" if joining is not None else "sidebar")


def sidebar(messages: bool = True) -> ui.Data:
    """The shared data sidebar and (on a page, not a lesson's stage) its messages; returns its data."""
    data = ui.data_sidebar(used=page.url_path not in pages.OWN_DATA_URLS)
    access.numbers_switch()
    if messages:
        ui.data_messages(data)
    return data


def run_page() -> None:
    """The page as it draws on its own: the shared data sidebar, its messages, then the page."""
    sidebar()
    page.run()


def run_view() -> None:
    """This run's view: a student's class session, a lesson's scene, or a page."""
    if joining is not None:  # a student's phone: no chapter runs, nothing is compiled for it
        join.page(joining)
        return
    server.warm_up()  # its thread starts its compilations after this run (see server.Runs)
    ui.enter_page(page.url_path)  # a link into a page with parameters sets its controls, sidebar included
    if lesson is not None:
        presenter.play(lesson, page, PAGES, HOME, sidebar)
    else:
        presenter.leave()
        scene_copy.start_run()
        run_page()
        scene_copy.copy_button(page.url_path)
    ui.sync_url()


with server.Runs.running():
    run_view()
_memory.release_native_heap()  # XLA's temporaries of this run, freed but still held by the C heap
