"""Serving the formulas with JAX: the JAX set-up, the shapes programs are compiled for (buckets, padding),
and the server's memory and speed devices."""
