"""What sizing a multi-head prediction's query blocks to the cache buys: chapter 3's heads and chapter 4's
layer predicted on the fit charts' grid from n keys, with ``pooling.fitted_block`` (blocks of at most
``BLOCK_CELLS`` heads × queries × keys) against fixed blocks of 64 queries, in the same run.

    python -m benchmarks.bench_blocks [--repeats 5]
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable

import jax
import numpy as np

import kernelviz as kv
from kernelviz.app import defaults
from kernelviz.core import pooling
from kernelviz.models.attention import attention_predict
from kernelviz.models.smoothing import predict_heads

SIZES = (300, 1000, 2000, 5000)


def timed(call: Callable[[], object], repeats: int) -> float:
    """Median seconds of ``call`` after one call that compiles."""
    call()
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        call()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def calls(n: int) -> dict[str, Callable[[], object]]:
    """The predictions a page makes from n keys: 8 heads with and without weights, the attention layer."""
    ds = kv.make_dataset("blog", n=n)
    grid = ds.grid(defaults.GRID_POINTS)
    ells, mixing = np.geomspace(0.05, 1.0, 8), np.full(8, 1 / 8)
    layer = kv.fit_attention(ds.x[:150], ds.y[:150], heads=4, steps=50)
    return {
        "8 heads, weights": lambda: predict_heads(grid, ds.x, ds.y, ells, mixing),
        "8 heads": lambda: predict_heads(grid, ds.x, ds.y, ells, mixing, with_weights=False),
        "attention layer": lambda: attention_predict(layer, grid, ds.x, ds.y, with_weights=False),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    cells = pooling.BLOCK_CELLS
    print(f"grid {defaults.GRID_POINTS} queries; median of {args.repeats} after compiling; fitted blocks "
          f"(at most {cells:,} cells) against fixed blocks of 64 queries")
    print(f"{'n':>6}  {'prediction':<18} {'fitted':>9} {'fixed 64':>9}  ratio")
    for n in SIZES:
        for name, call in calls(n).items():
            row = []
            for limit in (cells, 1 << 62):
                pooling.BLOCK_CELLS = limit
                jax.clear_caches()  # traced again with this limit
                row.append(timed(call, args.repeats))
            pooling.BLOCK_CELLS = cells
            print(f"{n:>6}  {name:<18} {row[0] * 1e3:7.1f}ms {row[1] * 1e3:7.1f}ms  {row[1] / row[0]:5.2f}x")


if __name__ == "__main__":
    main()
