"""Chapter 1's scrub through ℓ: the fit and its band for every ℓ of the slider, computed in one call and
animated in the browser (``kf.add_scrub``); and ``prepare``, what chapter 1 draws from a data set, computed
ahead of the page."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from kernelviz.app.ui.caching.cache import (
    cached,
    empty_share,
    fit,
    heatmap_weights,
    lengthscale_panels,
    predict,
)
from kernelviz.app.ui.widgets.sidebar import Data
from kernelviz.app.views.training import MaskedSettings
from kernelviz.app.views.values import lengthscale_choice, lengthscale_options
from kernelviz.models.smoothing import nadaraya_watson_path
from kernelviz.runtime.shapes import even_indices

__all__ = ["SCRUB_POINTS", "TRAINING_FRAMES", "Path", "TrainingPath", "lengthscale_path", "prepare",
           "scrub_lengthscales", "training_path"]

SCRUB_POINTS = 96  # query points of each frame (fewer than the still figure's: the frames are sent at once)
SCRUB_STRIDE = 2  # every second ℓ of the slider: six frames per factor 10
# the frames' ℓ, as shares of the data's x-range: 31 or 32 of the slider's 12 a decade, one block of
# ``smoothing.PATH_BLOCK`` (from 1/300, the 33rd ℓ padded the path to 64: twice the work)
SCRUB_RANGE = (1 / 200, 2.0)
TRAINING_FRAMES = 50  # steps a training replay shows (at most: its path padded to 64 ℓ, two blocks)


@dataclass(frozen=True)
class Path:
    """m_ℓ(x) and s_ℓ(x) on ``grid`` for each ℓ in ``lengthscales`` (arrays (L, SCRUB_POINTS))."""

    grid: np.ndarray
    lengthscales: tuple[float, ...]
    means: np.ndarray
    stds: np.ndarray

    def nearest(self, ell: float) -> int:
        """The frame whose ℓ is nearest to ``ell`` in log scale."""
        return int(np.argmin([abs(math.log(v / ell)) for v in self.lengthscales]))

    def frames_around(self, ell: float) -> Path:
        """Every ``SCRUB_STRIDE``-th frame, counted from the one nearest to ``ell``: the frames sent with
        the chart, among which the scrub starts exactly at the page's ℓ (when it lies in the range)."""
        pick = slice(self.nearest(ell) % SCRUB_STRIDE, None, SCRUB_STRIDE)
        return Path(self.grid, self.lengthscales[pick], self.means[pick], self.stds[pick])


def scrub_lengthscales(span: float) -> tuple[float, ...]:
    """The slider's ℓ choices (``lengthscale_options``) between ``SCRUB_RANGE`` of the x-range ``span``."""
    return tuple(v for v in lengthscale_options(span) if SCRUB_RANGE[0] * span <= v <= SCRUB_RANGE[1] * span)


@cached()
def lengthscale_path(data: Data, kernel: str) -> Path:
    """The slider's ℓ choices between ``SCRUB_RANGE`` of the x-range, and the fit for each, from all the
    data (``nadaraya_watson_path``); the chart sends a part of them (``Path.frames_around``)."""
    ells = scrub_lengthscales(data.ds.span)
    grid = data.grid(SCRUB_POINTS)
    means, stds = nadaraya_watson_path(grid, data.ds.x, data.ds.y, ells, kernel)
    return Path(grid, ells, means.astype(np.float32), stds.astype(np.float32))


@dataclass(frozen=True)
class TrainingPath:
    """Chapter 2's training replayed: the fit m(x) on ``grid`` (the fit chart's; array (T, len(grid))) with
    the ℓ training had after each of ``steps`` (from 0, the start, to the last step run)."""

    grid: np.ndarray
    steps: tuple[int, ...]
    lengthscales: tuple[float, ...]
    means: np.ndarray


@cached()
def training_path(data: Data, kernel: str, holdout: int, steps: int, learning_rate: float,
                  seed: int) -> TrainingPath | None:
    """The fit at ``TRAINING_FRAMES`` evenly spaced steps of ``cache.fit``'s run, from its recorded
    trajectory of ℓ (training is not run again); None for a search (no steps to replay) or a run that
    stopped at its first step."""
    result = fit(data, MaskedSettings(kernel, holdout, steps, learning_rate, seed))
    traj = result.trajectory[:, 0]
    if result.method == "search" or traj.shape[0] < 2:
        return None
    at = even_indices(traj.shape[0], TRAINING_FRAMES)
    grid = data.grid()  # the still chart's: its frames send y alone, and the last is the chart itself
    means, _ = nadaraya_watson_path(grid, data.ds.x, data.ds.y, traj[at], kernel)
    return TrainingPath(grid, tuple(map(int, at)), tuple(map(float, traj[at])), means.astype(np.float32))


def prepare(data: Data, lengthscale: float, kernel: str) -> None:
    """What chapter 1 draws from ``data`` with ``kernel`` at ``lengthscale`` (snapped to the ℓ slider's
    options for this data's x-range, as the slider snaps it), into the caches: the fit, the scrub through ℓ,
    the share of empty windows, the heatmap's weights and the post's four lengthscales."""
    ell = lengthscale_choice(lengthscale, data.ds.span)
    predict(data, ell, kernel)
    lengthscale_path(data, kernel)
    empty_share(data, ell, kernel)
    heatmap_weights(data, ell, kernel)
    lengthscale_panels(data, kernel)
