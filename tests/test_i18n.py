"""The pseudo-locale and the reading of words in the server's language (``kernelviz/runtime/i18n.py``): every
letter a person reads changes, nothing a translation keeps does (placeholders, formulas, code, addresses),
and the prose files follow the language."""

from __future__ import annotations

import re
import string

import pytest

from kernelviz.app.ui.widgets import text
from kernelviz.runtime import i18n

ASCII_WORD = re.compile(r"[A-Za-z]{2,}")


def test_english_is_the_message_itself(monkeypatch):
    monkeypatch.delenv("KERNELVIZ_LANG", raising=False)
    assert i18n.language() == "en"
    assert i18n._("Try this") == "Try this"
    assert i18n.ngettext("{n} point", "{n} points", 2) == "{n} points"
    assert i18n.localized("The post's data.") == "The post's data."


@pytest.mark.parametrize(("message", "kept"), [
    ("Error at ℓ = 1, n = {n:,}", ["{n:,}"]),
    ("At ⟨share⟩ of x, no point lies within ℓ = ⟨ell⟩.", ["⟨share⟩", "⟨ell⟩"]),
    ("The loss $\\mathcal{L}(\\ell)$ falls; see `kv.fit` at [the page](https://example.org/a).",
     ["$\\mathcal{L}(\\ell)$", "`kv.fit`", "](https://example.org/a)"]),
    ("<b>%{y:.3f}</b> at x = %{x}", ["<b>", "%{y:.3f}", "</b>", "%{x}"]),
    (":material/warning: **Right.** :red[Not this time.]", [":material/warning:", ":red["]),
])
def test_the_pseudo_locale_changes_every_letter_and_keeps_the_rest(message, kept):
    out = i18n.pseudo(message)
    for part in kept:
        assert part in out
    rest = out
    for part in kept:
        rest = rest.replace(part, " ")
    assert ASCII_WORD.findall(rest) == []
    letters = sum(c.isascii() and c.isalpha() for c in message) - sum(
        c.isascii() and c.isalpha() for part in kept for c in part)
    assert out.endswith(" " + "·" * -(-letters // 3))  # padded by a third of its letters


def test_a_pseudo_message_formats_with_the_same_names(monkeypatch):
    monkeypatch.setenv("KERNELVIZ_LANG", i18n.PSEUDO)
    message = "Error at ℓ = {ell:.2f}, n = {n:,}"
    names = [f[1] for f in string.Formatter().parse(i18n._(message)) if f[1]]
    assert names == ["ell", "n"]
    assert "1,000" in i18n._(message).format(ell=0.5, n=1000)
    assert i18n.ngettext("{n} point", "{n} points", 1).startswith("{n} þóíñţ")


def test_the_prose_follows_the_language_and_formulas_stay(monkeypatch):
    monkeypatch.setenv("KERNELVIZ_LANG", i18n.PSEUDO)
    lead = text.prose("1_kernel_regression", "lead")
    assert ASCII_WORD.findall(lead) == []
    assert text.prose("1_kernel_regression", "formula") == text.sections("1_kernel_regression")["formula"]
    monkeypatch.delenv("KERNELVIZ_LANG")
    assert text.prose("1_kernel_regression", "lead") == text.sections("1_kernel_regression")["lead"]
