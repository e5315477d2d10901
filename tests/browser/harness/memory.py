"""Resident memory of a process tree (a Streamlit server and everything it spawned), read from /proc."""

from __future__ import annotations

from pathlib import Path


def descendants(pid: int) -> list[int]:
    """Every descendant process of ``pid`` (children, their children, …), from /proc."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        children.setdefault(int(fields[1]), []).append(int(entry.name))
    found, todo = [], [pid]
    while todo:
        kids = children.get(todo.pop(), [])
        found += kids
        todo += kids
    return found


def process_tree_rss(pid: int) -> int:
    """Resident memory of a process plus all its descendants, in bytes (from /proc)."""
    total = 0
    for p in (pid, *descendants(pid)):
        try:
            for line in Path(f"/proc/{p}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1]) * 1024
                    break
        except OSError:
            pass
    return total
