"""Record the results of every page at its defaults into ``kernelviz/app/ui/caching/kept_results.npz.xz``.

    python -m kernelviz.app.keep     (from the repository's root, after a change that ``tests/test_kept.py``
                                      reports: a default, a model or a figure's data)

Opens the home page and then each page in one AppTest session of the repository's ``app.py``, with every
lookup of kept results off, and keeps each cached call it computed (``kernelviz.app.ui.caching.kept``
says how the file holds them: arrays in an ``.npz``, the rest in a JSON index, nothing pickled).
"""

from __future__ import annotations

import logging
from pathlib import Path

import streamlit as st
from streamlit.testing.v1 import AppTest

from kernelviz.app.ui.caching import kept
from kernelviz.app.ui.pages import CHAPTERS, SOURCES
from kernelviz.runtime.i18n import language

__all__ = ["record_defaults"]


def record_defaults(root: Path) -> dict[str, object]:
    """Every cached call of the home page and each page at its defaults, opened in order in one AppTest
    session of ``root / "app.py"``, in English (the only language kept results serve)."""
    if language() != "en":
        raise RuntimeError("record the kept results in English: unset KERNELVIZ_LANG")
    st.cache_data.clear()  # every call computed, none served from this process's cache
    with kept.recording() as results:
        at = AppTest.from_file(str(root / "app.py"), default_timeout=600).run()
        for page in (*CHAPTERS, SOURCES):
            at.switch_page(page.path).run()
            if at.exception:
                raise RuntimeError(f"{page.path}: {[e.value for e in at.exception]}")
        return dict(results)


if __name__ == "__main__":
    from kernelviz.runtime import jax_setup

    logging.getLogger("streamlit.runtime.caching.cache_data_api").setLevel(logging.ERROR)  # warns per call
    jax_setup.set_up()
    path = kept.write(record_defaults(Path.cwd()))
    print(f"wrote {len(kept.load())} results to {path} ({path.stat().st_size / 1e3:.0f} kB)")
