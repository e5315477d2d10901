"""Benchmarks, run from the repository root as ``python -m benchmarks.<name>``. They time and measure
under the server's JAX settings (``kernelviz.runtime.jax_setup.set_up``), applied here."""

from kernelviz.runtime import jax_setup

jax_setup.set_up()
