"""Page tests read the words a page shows from its prose file (``chapters/prose/<chapter>.md``) through the
page's own reader, ``kernelviz.app.ui.widgets.text.prose``, so a teacher who rewrites a section breaks no
test: the tests check that the section is shown, and which numbers the page put into its ⟨placeholders⟩."""

from __future__ import annotations

import re
from collections.abc import Iterable

from kernelviz.app.ui.widgets.text import prose


def template(chapter: str, section: str) -> str:
    """The section as the file has it, each ⟨name⟩ left in place."""
    values: dict[str, str] = {}
    while True:
        try:
            return prose(chapter, section, **values)
        except KeyError as missing:
            name = missing.args[0]
            if name in values:  # not a placeholder: the section itself is missing
                raise AssertionError(f"chapters/prose/{chapter}.md has no section {section!r}") from None
            values[name] = f"⟨{name}⟩"


def _literal(text: str, open_start: bool, open_end: bool) -> str:
    """``text`` as a regular expression: verbatim, except that a run of white space matches any other (a page
    may join a section to others with a space or a new line), and that at an ``open`` end, next to a value
    that may be empty where Streamlit strips the text, no white space is needed."""
    words = [re.escape(w) for w in re.split(r"\s+", text)]
    head = r"\s*" if open_start and len(words) > 1 and not words[0] else ""
    tail = r"\s*" if open_end and len(words) > 1 and not words[-1] else ""
    words = words[1 if head else 0 : len(words) - 1 if tail else len(words)]
    return head + r"\s+".join(words) + tail


def pattern(chapter: str, section: str) -> re.Pattern[str]:
    """The section as a regular expression: its text, each ⟨name⟩ a group of that name (a name that comes
    back must repeat its first value)."""
    parts = re.split(r"⟨(\w+)⟩", template(chapter, section))
    last = len(parts) - 1  # parts alternate text, name, text, …, text
    regex, seen = [], set()
    for i, part in enumerate(parts):
        if i % 2 == 0:
            opens = (i == 2 and not parts[0], i == last - 2 and not parts[last])
            regex.append(_literal(part, *opens))
        elif part in seen:
            regex.append(f"(?P={part})")
        else:
            at_end = i == last - 1 and not parts[last]  # a value that ends the section runs to the line's end
            regex.append(f"(?P<{part}>[^\\n]*)" if at_end else f"(?P<{part}>.*?)")
            seen.add(part)
    return re.compile("".join(regex), re.DOTALL)


def shown(texts: Iterable[str], chapter: str, section: str) -> dict[str, str]:
    """The values the page filled into ``section`` of ``chapter`` in the first of ``texts`` (Markdown,
    captions, info boxes …) that shows the section; fails when none does."""
    found = pattern(chapter, section)
    for text in texts:
        match = found.search(text)
        if match:
            return match.groupdict()
    raise AssertionError(f"section {section!r} of chapters/prose/{chapter}.md is not on the page")


def shown_count(texts: Iterable[str], chapter: str, section: str) -> int:
    """How many of ``texts`` show ``section`` of ``chapter``."""
    found = pattern(chapter, section)
    return sum(1 for text in texts if found.search(text))


def where_from(at: object) -> list[str]:
    """The Markdown in the chapter's collapsed "Where this comes from" expander."""
    boxes = (*at.expander, *at.status)  # older AppTests list an expander with an icon under status
    return [m.value for e in boxes if e.label == "Where this comes from" for m in e.markdown]


def assert_frame(at: object, chapter: str, prompts: list[str]) -> None:
    """The chapter's frame: its lead under the title, "Follows: <source>" in the "Where this comes from"
    expander, and a "Try this" list that is the prompt sections ``prompts``, numbered, as the file has them
    now."""
    shown((m.value for m in at.markdown), chapter, "lead")
    assert f"Follows: {prose(chapter, 'source')}" in where_from(at)
    assert any(s.value == "Try this" for s in at.subheader)
    numbered = "\n".join(f"{i}. {prose(chapter, name)}" for i, name in enumerate(prompts, 1))
    assert numbered in [m.value for m in at.markdown]
