"""The one place for the defaults the pages show and the warm-up compiles for.

Each chapter's controls start at the values its source uses (converted to this package's convention where
the source writes another: the blog post's ℓ_post = √2 ℓ, d2l's w = 1/ℓ). The warm-up
(``kernelviz.app.warmup``) and the pages import these, so what a visitor sees first is always what was
compiled first.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

__all__ = [
    "D2L",
    "D2L_KOTLIN",
    "GRID_POINTS",
    "HEATMAP_KEYS",
    "HEATMAP_ROWS",
    "KERNEL_GRID_POINTS",
    "KERNEL_REGRESSION",
    "KERNEL_SHAPE_POINTS",
    "LEARNING_RATES",
    "MULTIHEAD",
    "POINT_CHOICES",
    "POST_SPAN",
    "SEED_MAX",
    "SQRT2",
    "TAIL",
    "post_lengthscale",
]

GRID_POINTS = 256  # query points of every fit figure
POINT_CHOICES = (10, 20, 30, 50, 75, 100, 150, 200, 300, 500, 1000, 2000, 5000)  # the sidebar's n
TAIL = 25  # training steps averaged for a hold-out loss readout
SQRT2 = math.sqrt(2.0)  # the blog post's ℓ_post = √2 ℓ
# the learning-rate sliders of the post's models (Adam; the post's 0.2 among them)
LEARNING_RATES = (0.001, 0.003, 0.01, 0.03, 0.1, 0.2, 0.3, 1.0, 3.0, 10.0, 30.0, 100.0, 300.0, 1000.0)
HEATMAP_ROWS = 96  # query rows of an attention-weight heatmap
HEATMAP_KEYS = 1500  # keys of a heatmap: bigger data sets show an even subsample of this many
KERNEL_GRID_POINTS = 77  # the learned-kernel heatmap grid of chapter 4 (two panels of 77²: ~12,000 cells)
KERNEL_SHAPE_POINTS = 241  # u on [−3, 3] of chapter 1's kernel-shape figure (one compiled program)
SEED_MAX = 9999  # the training seeds a page offers, 0 … 9,999 (the post's is 2024)
POST_SPAN = 6.0  # the blog post's data span x ∈ [−3, 3]: its lengthscales are scaled by span/6 elsewhere


def post_lengthscale(post_ell: float, span: float = POST_SPAN) -> float:
    """The blog post's ℓ_post (K = exp(−((x − x′)/ℓ_post)²)) in this package's convention, ℓ = ℓ_post/√2,
    scaled from the post's data span to ``span``."""
    return post_ell / math.sqrt(2.0) * span / POST_SPAN


@dataclass(frozen=True)
class KernelRegression:
    """Chapter 1: the post's “reasonable choice” ℓ_post ≈ 0.25 and its four panels."""

    kernel: str = "gaussian"
    post_lengthscale: float = 0.25
    panels: tuple[float, ...] = (3.0, 0.5, 0.25, 0.05)


@dataclass(frozen=True)
class Multihead:
    """Chapter 3: the post's MultiheadGaussianKernel (hold-out 1, 1,000 steps, Adam 0.2) and its panels of
    1, 2, 4 and 8 heads."""

    heads: int = 4
    kernel: str = "gaussian"
    holdout: int = 1
    steps: int = 1000
    learning_rate: float = 0.2
    seed: int = 2024  # the post's PRNGKey(2024): with it the four panels re-run the post's code
    panels: tuple[int, ...] = (1, 2, 4, 8)
    # what the post printed after training each panel (its convention: ℓ_post = √2 ℓ, its data x ∈ [−3, 3])
    post_mixing: tuple[tuple[float, ...], ...] = (
        (1.09,), (0.99, -0.10), (1.09, -0.36, -0.24, 0.10),
        (0.90, 0.02, 0.86, 0.95, -0.45, -0.53, -0.51, -0.22),
    )
    post_lengthscales: tuple[tuple[float, ...], ...] = (
        (0.16,), (0.08, 0.02), (0.16, 2.95, 2.18, 11.60),
        (0.08, 9.49, 20.43, 25.16, 210.44, 33.52, 34.75, 82.24),
    )


@dataclass(frozen=True)
class D2l:
    """d2l's parametric attention pooling: w ~ U(0, 1), SGD at 0.5, 5 epochs, full-batch leave-one-out."""

    steps: int = 5
    learning_rate: float = 0.5
    optimizer: str = "sgd"
    seed: int = 0


@dataclass(frozen=True)
class D2lKotlin:
    """The Kotlin/DJL port's training of the same pooling: w = 1 at the start, SGD at 3, batches of 10 in
    order, 10 epochs, DJL's L2Loss (batch mean of ½ error²), each query's own pair among its keys."""

    epochs: int = 10
    learning_rate: float = 3.0
    batch_size: int = 10
    w0: float = 1.0
    include_self: bool = True


KERNEL_REGRESSION = KernelRegression()
MULTIHEAD = Multihead()
D2L = D2l()
D2L_KOTLIN = D2lKotlin()
