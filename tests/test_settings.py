"""A view's settings are declared once (``kernelviz.app.views.settings``): the record's start, its controls'
ranges and URL keys, and everything derived from them (widgets, address, notches, the model's request, the
kept results' key) follow a change made in one place."""

from __future__ import annotations

import dataclasses
from types import SimpleNamespace

import numpy as np
import pytest
from test_app import ok, start

import kernelviz as kv
from kernelviz.app.ui.caching import attention as cache_attention
from kernelviz.app.ui.caching import kept
from kernelviz.app.ui.charts import attention as attention_book
from kernelviz.app.views import page_settings as ps
from kernelviz.app.views import training as vt
from kernelviz.app.views.settings import Control, Controls
from kernelviz.models.attention.training import LayerRequest
from kernelviz.models.incontext import PretrainRequest

SMALL = SimpleNamespace(train=np.zeros(6))  # a data set of 6 training points: hold-out sizes 1 to 4
ATTN = "chapters/4_attention.py"
NOTCHES = ps.IN_CONTEXT.notches(None)  # chapter 5's (no range depends on the data)


def test_the_page_records_are_the_models_requests():
    assert type(ps.LAYER.start) is LayerRequest and type(ps.IN_CONTEXT.start) is PretrainRequest
    assert ps.IN_CONTEXT.start == PretrainRequest()  # the page opens at the backend's defaults
    assert ps.MASKED.start == vt.MaskedSettings() and ps.OWN_HEADS.start == vt.HeadsSettings()
    changed = {f: getattr(ps.LAYER.start, f) for f in ("heads", "steps")}
    assert changed == {"heads": 4, "steps": 1000}  # the page's own, said beside it
    assert dataclasses.replace(ps.LAYER.start, heads=2, steps=500) == LayerRequest()


def test_the_address_round_trips_and_a_hostile_value_gets_the_fields_message():
    s = dataclasses.replace(ps.LAYER.defaults(SMALL), heads=3, learning_rate=0.2, start="random")
    assert ps.LAYER.from_query(ps.LAYER.to_query(s), SMALL) == (s, ())
    parsed = ps.LAYER.from_query({"attn.heads": "1e9", "attn.lr": "<script>", "attn.holdout": "nan",
                                  "attn.start": "rm -rf", "attn.steps": "77", "other": "kept"}, SMALL)
    assert parsed.record.heads == 8 and parsed.record.steps == 100  # clamped; snapped to the step of 50
    assert parsed.record.learning_rate == ps.LAYER.start.learning_rate  # unreadable: the start
    assert parsed.record.holdout == 4 and parsed.record.start == "gaussian"
    assert [p.split(" = ")[0] for p in parsed.problems] == ["attn.heads", "attn.start", "attn.holdout",
                                                            "attn.lr"]
    assert "outside 1 to 8; 8 is used" in parsed.problems[0]


def test_ranges_that_depend_on_the_data_are_functions_of_it():
    assert ps.LAYER.defaults(SMALL).holdout == 4  # the start's 10, moved into 1 … 4
    notches = ps.LAYER.notches(SMALL)
    assert (notches["holdout"].low, notches["holdout"].high, notches["holdout"].default) == (1, 4, 4)
    assert "start" not in notches and set(NOTCHES) == {"roughness", "noise", "n", "steps", "heads", "seed"}


def test_a_control_must_name_a_field_of_its_record():
    with pytest.raises(ValueError, match="has no field headz"):
        Controls(LayerRequest(), "attn", {"headz": Control("H", low=1, high=8)})
    start = Control("S", "selectbox", options=("post",))
    odd = Controls(LayerRequest(start="nowhere"), "attn", {"start": start})
    with pytest.raises(ValueError, match="not one of its values"):
        odd.first("start", None)
    assert Controls(LayerRequest(heads=20), "attn", {"heads": Control("H", low=1, high=8)}).defaults(
        None).heads == 8


def test_a_changed_start_reaches_the_widget_the_url_the_request_and_the_kept_key(monkeypatch):
    original = ps.LAYER
    changed = dataclasses.replace(original, start=dataclasses.replace(original.start, heads=3, seed=5))
    monkeypatch.setattr(ps, "LAYER", changed)  # the page's table, and its book's (a scene reads it there)
    book = attention_book.BOOK
    tables = book.tables._replace(layer=changed)
    monkeypatch.setattr(attention_book, "BOOK", dataclasses.replace(book, tables=tables))
    asked = []
    real = kv.fit_attention
    monkeypatch.setattr(kv, "fit_attention", lambda x, y, **kw: asked.append(kw) or real(x, y, **kw))
    at = start(ATTN)
    ok(at)
    assert at.slider(key="attn.heads").value == 3 and at.slider(key="attn.seed").value == 5
    query = {k: (v[-1] if isinstance(v, list) else v) for k, v in at.query_params.items()}
    assert query["attn.heads"] == "3" and query["attn.seed"] == "5"
    assert {"heads": 3, "seed": 5}.items() <= asked[0].items()
    data, fn = at.session_state["kv._data"], cache_attention.fit_attention.__wrapped__
    before, after = (kept.call_key(fn, (data, c.defaults(data)), {}) for c in (original, changed))
    assert before in kept.load() and after not in kept.load()  # kept at the page's start, wherever it is
