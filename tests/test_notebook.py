"""examples/quickstart.ipynb, the package used from a notebook, runs cell by cell without an error, and
each step shows what it says: the numbers it prints and a kernelviz Plotly figure."""

from __future__ import annotations

from pathlib import Path

import nbclient
import nbformat

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOK = ROOT / "examples" / "quickstart.ipynb"
PLOTLY = "application/vnd.plotly.v1+json"


def test_the_quickstart_notebook_runs_and_draws(monkeypatch):
    monkeypatch.setenv("PYTHONPATH", str(ROOT))  # as after `pip install .`: the kernel imports kernelviz
    nb = nbformat.read(NOTEBOOK, as_version=4)
    assert all(not c.get("outputs") for c in nb.cells if c.cell_type == "code"), "stored without outputs"
    client = nbclient.NotebookClient(nb, timeout=600, kernel_name="python3",
                                     resources={"metadata": {"path": str(NOTEBOOK.parent)}})
    client.execute()  # raises CellExecutionError, naming the cell, if any cell fails
    code = [c for c in nb.cells if c.cell_type == "code"]
    text = "".join(o.get("text", "") for c in code for o in c.outputs if o.output_type == "stream")
    figures = sum(PLOTLY in o.get("data", {}) for c in code for o in c.outputs)
    assert figures >= 6  # the fit, the weights, the loss, the mixing, the attention fit, in context
    assert "(256, 150) True" in text  # the weights: 256 queries × 150 keys, rows summing to one
    for phrase in ("exact leave-one-out ℓ* = 0.118", "ℓ_h:", "leave-one-out error:", "learned window ℓ ≈"):
        assert phrase in text, phrase
