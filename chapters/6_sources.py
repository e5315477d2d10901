"""Sources: every figure, printed result and exercise of the five sources, and the passages of chapter 5's
two papers, each one link away, and what kernelviz does not show, with the reason."""

import streamlit as st

from kernelviz.app import figures as kf
from kernelviz.app import ui
from kernelviz.app.ui import pages
from kernelviz.app.ui.caching import sources as cache_sources
from kernelviz.runtime.i18n import _

KINDS = {"figure": ":material/image:", "printed": ":material/terminal:", "exercise": ":material/edit_note:",
         "text": ":material/article:"}
KIND_NAMES = {"figure": _("figure"), "printed": _("printed"), "exercise": _("exercise"), "text": _("text")}
CHAPTER = "6_sources"


def show_ours(item: dict) -> None:
    """kernelviz's numbers beside the source's, for the catalogue entries that have them."""
    key = item.get("ours")
    if key is None:
        return
    with ui.busy(_("Running the source's procedure in kernelviz…")):
        ours = cache_sources.ours(key)
    if key == "blog_holdouts":
        ui.say(CHAPTER, "blog_holdouts")
        sizes = (1, 10, 75, 120)  # the post's 1, 10, n/2 and 0.8 n for its 150 points
        post, here = _("ℓ_post (re-run of the post's code)"), _("ℓ_post (kernelviz)")
        ui.show_table({_("hold-out"): list(sizes), post: list(item["theirs_l"]), here: list(ours)},
                      two_decimals=(post, here))
    elif key == "blog_heads":
        ui.say(CHAPTER, "blog_heads")
        ui.show_table({
            _("heads"): [len(u) for u in item["theirs_u"]],
            _("u_h (post)"): [fmt(u) for u in item["theirs_u"]],
            _("u_h (kernelviz)"): [fmt(o["u"]) for o in ours],
            _("ℓ_post (post)"): [fmt(ell) for ell in item["theirs_l"]],
            _("ℓ_post (kernelviz)"): [fmt(o["l_post"]) for o in ours],
        })
    elif key == "d2l_average":
        theirs = item.get("theirs")
        if theirs is None:
            st.markdown(_("kernelviz's sample: average pooling predicts **{ours:.4f}** everywhere.").format(
                ours=ours))
        else:
            st.markdown(_("kernelviz's sample: average pooling predicts **{ours:.4f}** everywhere (the "
                          "source's sample: {theirs:.4f}).").format(ours=ours, theirs=theirs))
    elif key == "d2l_w":
        ui.say(CHAPTER, "d2l_w")
        text = _("w starts at {w0:.4f} and ends at **{w:.4f}** after {epochs} epochs; loss per epoch "
                 "(Σ ½ error²): {losses}.")
        st.markdown(text.format(w0=ours["w0"], w=ours["w"], epochs=len(ours["losses"]),
                                losses=", ".join(f"{v:.4f}" for v in ours["losses"])))


def fmt(values: list[float]) -> str:
    return ", ".join(f"{v:.2f}" for v in values)


def show_item(item: dict) -> None:
    """One figure, printed result or exercise: what the source shows, the link, and our numbers."""
    with st.container(border=True):
        st.markdown(f"{KINDS[item['kind']]} **{KIND_NAMES[item['kind']]}** · {item['what']}")
        st.page_link(pages.page(item["page"]), label=_("Open this view in kernelviz"),
                     icon=":material/open_in_new:", query_params=item.get("params") or None)
        show_ours(item)


def show_unshown(source: dict) -> None:
    """What kernelviz does not show of this source, each with the reason."""
    unshown = source.get("unshown")
    if unshown:
        st.markdown(ui.prose(CHAPTER, "unshown") + "\n"
                    + "\n".join(f"- {u['what']} *{u['why']}*" for u in unshown))


st.title(_("Sources"))
ui.say(CHAPTER, "lead")
st.caption(ui.prose(CHAPTER, "sample"))
ui.show(kf.coverage_figure(*cache_sources.coverage()), key="sources.coverage", filename="kernelviz-sources")
st.caption(ui.prose(CHAPTER, "coverage"))
for source in cache_sources.catalogue():
    st.header(source["title"], anchor=source["id"])
    for item in source["item"]:
        show_item(item)
    show_unshown(source)
