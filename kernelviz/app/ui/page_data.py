"""``Data``, the data set every page works on, in a module of its own: the sidebar builds it, controls and
cached calls take it, and neither has to import the other for it. No streamlit here."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

import kernelviz as kv
from kernelviz.app import defaults
from kernelviz.app.figures import Look, Points

__all__ = ["GRID_POINTS", "Data"]

GRID_POINTS = defaults.GRID_POINTS  # query grid of every fit figure (warmup compiles for it)


@dataclass(frozen=True)
class Data:
    """The data set every page works on.

    ``key`` identifies it for caches (("blog", n, seed) or ("csv", sha256, x column, y column)): cached
    functions hash a ``Data`` by its key alone (``DATA_HASH_FUNCS`` in ui/caching/cache.py), never by its
    arrays. ``ds`` is the whole set (predictions and plots use all of it); ``train`` is at most
    ``TRAIN_MAX_POINTS`` points (``subsample``) for training and leave-one-out.
    """

    key: tuple
    ds: kv.Dataset
    train: kv.Dataset

    @property
    def n(self) -> int:
        return len(self.ds)

    @property
    def subsampled(self) -> bool:
        """True when training uses fewer points than the data set has."""
        return len(self.train) < len(self.ds)

    @property
    def synthetic(self) -> bool:
        """True when the true mean f(x) and noise n(x) are known (the built-in data sets)."""
        return self.ds.true_mean is not None and self.ds.noise_sd is not None

    def grid(self, num: int = GRID_POINTS) -> np.ndarray:
        """``num`` query points over the data's x-range."""
        return self.ds.grid(num)

    def truth(self, num: int = GRID_POINTS) -> tuple[np.ndarray, np.ndarray] | None:
        """(f, n) on ``grid(num)`` for synthetic data, None for user data."""
        if not self.synthetic:
            return None
        g = self.grid(num)
        return np.asarray(self.ds.true_mean(g)), np.asarray(self.ds.noise_sd(g))

    def points(self, grid: np.ndarray | None = None, *, band: bool = False, train: bool = False) -> Points:
        """What a fit figure draws the curves over: the data set's points (the training points when
        ``train``), ``grid`` (by default ``grid()``, on which the truth is) and, for synthetic data, the true
        mean f(x) and, when ``band``, the noise level n(x)."""
        truth, pts = self.truth(), self.train if train else self.ds
        return Points(pts.x, pts.y, self.grid() if grid is None else grid,
                      truth=None if truth is None else truth[0],
                      noise_sd=None if truth is None or not band else truth[1])

    def look(self, title: str | None = None, legend_rows: int = 1) -> Look:
        """A figure's look whose axes are titled with the data set's labels of x and y, titled ``title``,
        its legend in ``legend_rows`` rows above the plot when it has no title."""
        return Look(title=title, x_title=self.ds.x_label, y_title=self.ds.y_label, legend_rows=legend_rows)
