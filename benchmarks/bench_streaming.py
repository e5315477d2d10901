"""Big data without big memory: 2,000 queries over 200,000 keys with ``with_weights=False``.

Prints, in one run, the time and the peak memory growth of kernelviz's streaming Nadaraya–Watson against a
plain NumPy implementation that processes the queries in chunks (so NumPy is not penalised by one huge
matrix either), and checks that both give the same numbers. One float64 q × n matrix would be 3.2 GB.

    python -m benchmarks.bench_streaming [--queries 2000] [--keys 200000] [--repeat 3]
"""

from __future__ import annotations

import argparse

import numpy as np

import kernelviz as kv
from tests.measure import peak_rss, summary, timings

MB = 1024 * 1024


def numpy_chunked(q: np.ndarray, x: np.ndarray, y: np.ndarray, ell: float, chunk: int = 64):
    """Gaussian NW with local std, 64 queries at a time, stabilised by the row maximum."""
    mean = np.empty(q.size)
    std = np.empty(q.size)
    for i in range(0, q.size, chunk):
        logits = -0.5 * ((q[i : i + chunk, None] - x[None, :]) / ell) ** 2
        w = np.exp(logits - logits.max(axis=1, keepdims=True))
        w /= w.sum(axis=1, keepdims=True)
        m = w @ y
        mean[i : i + chunk] = m
        std[i : i + chunk] = np.sqrt((w * (y[None, :] - m[:, None]) ** 2).sum(axis=1))
    return mean, std


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=2000)
    parser.add_argument("--keys", type=int, default=200_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

    rng = np.random.default_rng(0)
    x = np.sort(rng.uniform(-3, 3, args.keys))
    y = np.sin(3 * x) + (0.2 + 0.05 * np.abs(x)) * rng.normal(size=x.size)
    q = np.linspace(-3, 3, args.queries)
    ell = 0.05

    def run_kv():
        return kv.nadaraya_watson(q, x, y, ell, with_weights=False)

    with peak_rss() as first:
        got = run_kv()
    with peak_rss() as steady:
        t_kv = timings(run_kv, args.repeat)
    with peak_rss() as np_mem:
        t_np = timings(lambda: numpy_chunked(q, x, y, ell), args.repeat)
    want = numpy_chunked(q, x, y, ell)
    err = max(np.max(np.abs(got.mean - want[0])), np.max(np.abs(got.std - want[1])))

    print(f"streaming Nadaraya–Watson, {args.queries:,} queries × {args.keys:,} keys (float64)")
    print(f"  one dense q×n matrix would be      {args.queries * args.keys * 8 / MB:9.0f} MB")
    for label, mem in (
        ("kernelviz first call (incl. compile)", first),
        ("kernelviz warm calls", steady),
        ("NumPy chunked (64 queries)", np_mem),
    ):
        print(f"  {label:<37} peak RSS growth {(mem['peak'] - mem['start']) / MB:7.1f} MB")
    print(f"  kernelviz  {summary(t_kv)}")
    print(f"  NumPy      {summary(t_np)}")
    print(f"  speed-up (median NumPy / median kernelviz): {np.median(t_np) / np.median(t_kv):.1f}x")
    print(f"  max |difference| to NumPy: {err:.2e}")


if __name__ == "__main__":
    main()
