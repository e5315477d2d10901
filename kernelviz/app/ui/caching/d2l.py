"""Cached calls for d2l's chapter as the dashboard shows it beyond chapter 2's training: the Kotlin/DJL
port's validation loss per epoch, and d2l's nonparametric attention pooling (w = 1 on its test inputs) for
chapter 1. Every call takes the ``Data`` first, hashed by its key (``cache.DATA_HASH_FUNCS``)."""

from __future__ import annotations

import numpy as np

from kernelviz.app import defaults, views
from kernelviz.app.ui.caching.cache import cached, parametric_view
from kernelviz.app.ui.widgets.sidebar import POINT_CHOICES, Data
from kernelviz.models.parametric import validation_losses

__all__ = ["CONSISTENCY_SIZES", "consistency", "kotlin_validation", "nonparametric"]

# The sizes of chapter 1's consistency sweep: the sidebar's, up to 1,000 (the exact leave-one-out optimum
# of 5,000 points alone takes seconds).
CONSISTENCY_SIZES = tuple(n for n in POINT_CHOICES if n <= 1000)


@cached()
def kotlin_validation(data: Data, kernel: str, epochs: int) -> np.ndarray | None:
    """The port's validation loss after each of ``epochs`` epochs of its training (``parametric_view``
    with the port's procedure): the noise-free curve f at the view's queries (arange(0, 5, 0.1) on d2l's
    data: the port's xVal, yVal = f(xVal)), scored as DJL does, L2Loss on batches of 10 averaged over the
    batches (``parametric.validation_losses``). None for data without a known curve."""
    view = parametric_view(data, kernel, True, epochs, defaults.D2L.seed)
    if view.truth is None:
        return None
    return validation_losses(view.x, view.y, view.queries, view.truth, view.w_epochs[1:], kernel,
                             batch_size=defaults.D2L_KOTLIN.batch_size)


@cached(heavy=True)
def nonparametric(data: Data) -> views.D2lPooling:
    """``views.d2l_pooling``: d2l's nonparametric attention pooling (w = 1) on d2l's test inputs."""
    return views.d2l_pooling(data.ds)


@cached()
def consistency(seed: int) -> views.Consistency:
    """``views.d2l_consistency`` over ``CONSISTENCY_SIZES`` for the noise seed ``seed``: d2l's exercise 1."""
    return views.d2l_consistency(CONSISTENCY_SIZES, int(seed))
