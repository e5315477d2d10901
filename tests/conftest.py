"""The tests run under the server's JAX settings (``kernelviz.runtime.jax_setup.set_up``: float64, the CPU,
the compilation cache, one compute thread), since they call the models' inner functions directly, as the
app does. What importing and calling kernelviz does to a caller's own settings is tested in a fresh process
(``tests/test_import_effects.py``), and by the quickstart notebook (``tests/test_notebook.py``)."""

from kernelviz.runtime import jax_setup

jax_setup.set_up()
