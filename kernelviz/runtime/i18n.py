"""Every word a person reads passes through here, so that one catalogue holds them all.

* ``_(message)`` and ``ngettext(singular, plural, n)``: the code's strings, marked for gettext. Babel's
  ``pybabel extract`` (``babel.cfg``) collects them into ``kernelviz/locale/kernelviz.pot``, which the
  repository keeps; ``tests/test_catalogue.py`` fails when the code and that file differ. Numbers the backend
  fills in are named placeholders, ``_("{n} points").format(n=…)``, never pasted into the message.
* ``localized(text)``: words that live in files rather than in code (``chapters/prose/``, ``lessons/``,
  ``chapters/prose/6_sources.toml``), for the same language.

The language is the server's, chosen by ``KERNELVIZ_LANG`` when it starts (English when unset): a
translation is ``kernelviz/locale/LANG/LC_MESSAGES/kernelviz.mo`` with prose files in
``chapters/prose/LANG/`` (``docs/translating.md`` says how to add one). ``en-XA`` is the pseudo-locale: every
letter swapped for an accented look-alike and each string padded by a third, the standard check that no
string escapes the catalogue and that the layout holds longer words (``tests/browser/test_pseudo.py``).
"""

from __future__ import annotations

import functools
import gettext
import math
import os
import re
from pathlib import Path

__all__ = ["LOCALE_DIR", "PSEUDO", "_", "language", "localized", "ngettext", "pseudo"]

LOCALE_DIR = Path(__file__).resolve().parents[1] / "locale"
DOMAIN = "kernelviz"
PSEUDO = "en-XA"  # the pseudo-locale's usual tag (accented English)

_LOOKALIKE = str.maketrans(
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ",
    "áƀçđéƒĝĥíĵķĺɱñóþǫŕšţúṽŵẋýžÁƁÇĐÉƑĜĤÍĴĶĹṀÑÓÞǪŔŠŢÚṼŴẊÝŽ",
)
# What a translation keeps as it is: placeholders (⟨n⟩, {n}, {n:.2f}, %(n)s, Plotly's %{y}), formulas ($…$,
# $$…$$, a LaTeX command), code (`…`), a link's address, HTML tags and entities, addresses, Streamlit's
# :material/icon: names and :color[…] directives.
_KEPT = re.compile(
    r"⟨\w+⟩|%\{[^}]*\}|\{[^{}]*\}|%\(\w+\)[sdfr]|%[sdfr]|\$\$.*?\$\$|\$[^$\n]*\$|`[^`]*`|\]\([^)]*\)"
    r"|<[^<>]*>|&#?\w+;|https?://\S+|:material/\w+:|:[a-z]+(?:-background)?\[|\\[A-Za-z]+",
    re.DOTALL,
)


def language() -> str:
    """The server's language: ``KERNELVIZ_LANG``, English (``en``) when unset."""
    return os.environ.get("KERNELVIZ_LANG", "").strip() or "en"


def pseudo(text: str) -> str:
    """``text`` in the pseudo-locale: each letter outside what a translation keeps (``_KEPT``) swapped for
    an accented look-alike, then padded with middle dots by a third of its letters' count."""
    out, letters, last = [], 0, 0
    for kept in _KEPT.finditer(text):
        part = text[last:kept.start()]
        letters += sum(c.isascii() and c.isalpha() for c in part)
        out += [part.translate(_LOOKALIKE), kept.group()]
        last = kept.end()
    part = text[last:]
    letters += sum(c.isascii() and c.isalpha() for c in part)
    out.append(part.translate(_LOOKALIKE))
    padding = "·" * math.ceil(letters / 3)
    return "".join(out) + (" " + padding if padding else "")


class _Pseudo(gettext.NullTranslations):
    """The pseudo-locale as a gettext translation: every message through ``pseudo``."""

    def gettext(self, message: str) -> str:
        return pseudo(message)

    def ngettext(self, msgid1: str, msgid2: str, n: int) -> str:
        return pseudo(msgid1 if n == 1 else msgid2)


@functools.cache
def _translation(lang: str) -> gettext.NullTranslations:
    if lang == PSEUDO:
        return _Pseudo()
    return gettext.translation(DOMAIN, LOCALE_DIR, languages=[lang], fallback=True)


def _(message: str) -> str:
    """``message`` in the server's language (gettext); English as written when there is no translation."""
    return _translation(language()).gettext(message)


def ngettext(singular: str, plural: str, n: int) -> str:
    """``singular`` or ``plural`` for ``n`` things, in the server's language."""
    return _translation(language()).ngettext(singular, plural, n)


def localized(text: str) -> str:
    """Words from a prose or lesson file in the server's language: files written in it are read as they
    are (``chapters/prose/LANG/``); in the pseudo-locale, ``pseudo(text)``."""
    return pseudo(text) if language() == PSEUDO else text
