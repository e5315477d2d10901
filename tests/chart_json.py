"""Every chart's JSON on every view, for comparing a refactor before and after (not a test).

    python tests/chart_json.py dump OUT.json      # every view below, each chart's Plotly JSON by key
    python tests/chart_json.py diff A.json B.json # the views and charts that differ, exit 1 if any

A view is a chapter page opened with URL parameters (each chapter at its defaults and the ``VIEWS`` below)
or a lesson scene (every scene of every file in ``lessons/``), opened by AppTest as a shared link opens it
(``test_app.start``). A chart is compared as its JSON text with the data revision (``uirevision`` and
``datarevision``) left out, since those name a run, not what is drawn.
"""

from __future__ import annotations

import json
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from test_app import charts, start  # noqa: E402

from kernelviz.app.ui.pages import CHAPTERS  # noqa: E402

VIEWS: dict[str, dict[str, dict[str, str]]] = {  # page path → its views besides the defaults, by name
    "chapters/1_kernel_regression.py": {"d2l": {"data.source": "d2l"}, "n300": {"data.n": "300"},
                                        "explained": {"kr.explain": "true"}},
    "chapters/2_masked_training.py": {"replay": {"masked.replay": "true"}, "lr3": {"masked.lr": "3"},
                                      "explained": {"masked.explain": "true"}},
    "chapters/3_multihead.py": {"heads2": {"mh.heads": "2"}},
    "chapters/4_attention.py": {"replay": {"attn.replay": "true"}, "explained": {"attn.explain": "true"}},
    "chapters/5_in_context.py": {"replay": {"icl.replay": "true"}, "gp": {"icl.family": "gp"}},
}
_RUN_NAMES = ("uirevision", "datarevision")


def _clean(spec: object) -> object:
    """``spec`` without the keys that name a run rather than what is drawn."""
    if isinstance(spec, dict):
        return {k: _clean(v) for k, v in spec.items() if k not in _RUN_NAMES}
    if isinstance(spec, list):
        return [_clean(v) for v in spec]
    return spec


def views() -> list[tuple[str, str | None, dict[str, str]]]:
    """(name, page, query) of every view: each chapter at its defaults and ``VIEWS``, then every scene."""
    out: list[tuple[str, str | None, dict[str, str]]] = [("home", None, {})]
    for chapter in CHAPTERS:
        out.append((chapter.url, chapter.path, {}))
        out += [(f"{chapter.url}?{name}", chapter.path, q) for name, q in VIEWS.get(chapter.path, {}).items()]
    for path in sorted((ROOT / "lessons").glob("*.toml")):
        scenes = tomllib.loads(path.read_text(encoding="utf-8")).get("scene", [])
        for k, scene in enumerate(scenes, 1):
            page = CHAPTERS[int(scene["chapter"]) - 1].path
            out.append((f"{path.stem}#{k}", page, {"lesson": path.stem, "scene": str(k)}))
    return out


def dump(out: Path) -> None:
    result = {}
    for name, page, query in views():
        result[name] = {key: _clean(spec) for key, spec in charts(start(page, query)).items()}
        print(f"{name}: {len(result[name])} charts", flush=True)
    out.write_text(json.dumps(result, sort_keys=True), encoding="utf-8")
    print(f"{len(result)} views, {sum(map(len, result.values()))} charts → {out}")


def diff(a: Path, b: Path) -> int:
    before, after = (json.loads(p.read_text(encoding="utf-8")) for p in (a, b))
    differ = 0
    for view in sorted(set(before) | set(after)):
        x, y = before.get(view, {}), after.get(view, {})
        for key in sorted(set(x) | set(y)):
            if json.dumps(x.get(key), sort_keys=True) != json.dumps(y.get(key), sort_keys=True):
                differ += 1
                print(f"differs: {view} {key}" + ("" if key in x and key in y else " (only on one side)"))
    print(f"{len(before)} and {len(after)} views; {differ} charts differ")
    return int(differ > 0)


if __name__ == "__main__":
    command, *paths = sys.argv[1:]
    if command == "dump":
        dump(Path(paths[0]))
    else:
        sys.exit(diff(Path(paths[0]), Path(paths[1])))
