"""Every view's settings and their controls, declared once (``kernelviz.app.views.settings``).

Each table starts from a record: a model's own request where the page trains a model (chapter 4's
``LayerRequest``, chapter 5's ``PretrainRequest``), else the page's record (chapter 2's ``MaskedSettings``,
chapter 3's ``HeadsSettings``).
Where the page starts a field elsewhere than the record's default, the line that does it says why. Each
``*_ROWS`` is how the page lays the controls out: rows of (field, relative column width; "" an empty
column).
"""

from __future__ import annotations

from typing import Any, NamedTuple

from kernelviz.app import defaults
from kernelviz.app.views.settings import Control, Controls
from kernelviz.app.views.training import ATTENTION_LEARNING_RATES, HeadsSettings, MaskedSettings
from kernelviz.app.views.values import lengthscale_options
from kernelviz.core.kernels import KERNELS, get_kernel
from kernelviz.data import tasks
from kernelviz.models.attention import D_QK_MAX, D_V_MAX
from kernelviz.models.attention.training import LayerRequest
from kernelviz.models.holdout import holdout_range
from kernelviz.models.incontext import BATCH, PretrainRequest
from kernelviz.models.smoothing import HEADS_MAX
from kernelviz.models.training import STEPS_MAX
from kernelviz.runtime.i18n import _

__all__ = [
    "FAMILIES",
    "IN_CONTEXT",
    "IN_CONTEXT_ROWS",
    "KERNEL_REGRESSION",
    "KINDS",
    "LAYER",
    "LAYER_ROWS",
    "MASKED",
    "MASKED_ROWS",
    "OWN_HEADS",
    "OWN_HEADS_ROWS",
    "POST_HEADS",
    "POST_HEADS_ROWS",
    "STARTS",
    "default_lengthscale",
]


def _holdouts(data: Any) -> tuple[int, int]:
    """The hold-out sizes a data set's training points allow (``holdout_range``)."""
    return holdout_range(len(data.train))


def _holdout(help: str) -> Control:
    """A hold-out size slider, from 1 to what the data's training points allow."""
    return Control(_("Hold-out size"), low=lambda d: _holdouts(d)[0], high=lambda d: _holdouts(d)[1],
                   help=help)


# ---------------------------------------------------------------------------------------------------------
# Chapter 1: Nadaraya–Watson at a chosen ℓ
# ---------------------------------------------------------------------------------------------------------

KR = defaults.KERNEL_REGRESSION
KERNEL_NAMES = {k: get_kernel(k).label for k in KERNELS}


class KernelRegressionSettings(NamedTuple):
    """Chapter 1's fit: the kernel, ℓ (the post's “reasonable choice” ℓ_post ≈ 0.25, in this package's
    convention and scaled to the data's span), the true band, the estimated band, and the baselines with
    the k of k-NN (kernelviz's: the smoothing post names no k)."""

    kernel: str = KR.kernel
    lengthscale: float = defaults.post_lengthscale(KR.post_lengthscale)
    true_band: bool = True
    fit_band: bool = True
    baselines: bool = False
    k: int = 10


def default_lengthscale(data: Any) -> float:
    """Chapter 1's starting ℓ: the blog post's ℓ_post = 0.25 in this package's convention (ℓ_post/√2),
    scaled from the post's data span 6 to the data's."""
    return defaults.post_lengthscale(KR.post_lengthscale, data.ds.span)


KERNEL_REGRESSION = Controls(KernelRegressionSettings(), "kr", {
    "kernel": Control(_("Kernel"), "selectbox", options=KERNELS, names=KERNEL_NAMES, notched=False,
                      help=_("The shape of the weights as a function of the scaled distance u = (x − xᵢ)/ℓ. "
                             "Gaussian, boxcar and triangular (which the lecture notes call Epanechnikov) "
                             "are the notes'; Epanechnikov 1 − u², tricube, Laplace and Cauchy are "
                             "kernelviz's.")),
    "lengthscale": Control(_("Lengthscale ℓ"), "select_slider", names=lambda v: f"{v:g}",
                           options=lambda d: lengthscale_options(d.ds.span),
                           opens_at=default_lengthscale,
                           help=_("Width of the kernel, in units of x (log scale). Small ℓ: wiggly fit; "
                                  "large ℓ: nearly flat.")),
    "true_band": Control(_("True band f(x) ± 2n(x)"), "toggle", disabled=lambda d: not d.synthetic,
                         help=_("The blog post's band. Only for the synthetic data sets, where the true "
                                "mean f and noise level n are known.")),
    "fit_band": Control(_("Estimated band m(x) ± 2s(x)"), "toggle",
                        help=_("kernelviz's own band (no source draws it): the kernel-weighted local "
                               "spread of the yᵢ.")),
    "baselines": Control(_("Baselines: average and k-NN"), "toggle"),
    "k": Control(_("Neighbours k (k-NN baseline)"), low=1, high=lambda d: max(1, min(d.n, 100)),
                 help=_("k-nearest-neighbour averaging (the smoothing post): the k closest points, equal "
                        "weights. The smoothing post names no k; kernelviz starts at 10.")),
})

# ---------------------------------------------------------------------------------------------------------
# Chapter 2: the post's masked training of one kernel
# ---------------------------------------------------------------------------------------------------------

MASKED = Controls(MaskedSettings(), "masked", {
    "kernel": Control(_("Kernel"), "selectbox", options=KERNELS, names=KERNEL_NAMES, notched=False,
                      whole_page=True, help=_("The post's GaussianKernel uses the Gaussian; the other "
                                              "kernels are kernelviz's, trained the same way.")),
    "holdout": _holdout(_("Points hidden and predicted at each step (k). 1 is stochastic leave-one-out. "
                          "kernelviz starts at 10; the post's train() defaults to 1 and its figure uses 1, "
                          "10, n/2 and 0.8 n.")),
    "steps": Control(_("Training steps"), low=50, high=STEPS_MAX, step=50, whole_page=True,
                     help=_("The post trains 100 steps.")),
    "learning_rate": Control(_("Learning rate"), "select_slider", options=defaults.LEARNING_RATES, url="lr",
                             whole_page=True, help=_("Adam's step size on log ℓ (the post: 0.2). Very large "
                                                     "values make training diverge.")),
    "seed": Control(_("Seed"), "number", low=0, high=defaults.SEED_MAX, step=1, whole_page=True,
                    help=_("The random key the hold-out sets are drawn from, PRNGKey(seed), split as the "
                           "post splits it. The post's is 2024: with it the four panels below re-run the "
                           "post's code with its keys.")),
})
MASKED_ROWS = ((("kernel", 1.3), ("holdout", 1.6), ("steps", 1.4), ("learning_rate", 1.4), ("seed", 1.0)),)

# ---------------------------------------------------------------------------------------------------------
# Chapter 3: the post's multi-head experiment, and the reader's own model
# ---------------------------------------------------------------------------------------------------------

MH = defaults.MULTIHEAD


def _rate_and_seed(prefix: str) -> dict[str, Control]:
    """Chapter 3's learning rate and seed (URL keys ``<prefix>lr`` and ``<prefix>seed``)."""
    return {
        "learning_rate": Control(_("Learning rate"), "select_slider", options=defaults.LEARNING_RATES,
                                 url=f"{prefix}lr", help=_("Adam's step size on log ℓₕ and uₕ (the blog "
                                                           "post: 0.2). Very large values make training "
                                                           "diverge.")),
        "seed": Control(_("Seed"), "number", low=0, high=defaults.SEED_MAX, step=1, url=f"{prefix}seed",
                        help=_("The random key the hold-out sets are drawn from, PRNGKey(seed), split as the "
                               "post splits it. The post's is 2024.")),
    }


POST_HEADS = Controls(  # the post trains its four models as it trains the one of chapter 3's own
    MaskedSettings(MH.kernel, MH.holdout, MH.steps, MH.learning_rate, MH.seed), "mh", {
        "kernel": Control(_("Kernel"), "selectbox", options=KERNELS, names=KERNEL_NAMES, notched=False,
                          help=_("The same kernel shape for every head of every model on this page. The blog "
                                 "post uses the Gaussian; the other kernels are kernelviz's.")),
        **_rate_and_seed(""),
    })
POST_HEADS_ROWS = ((("learning_rate", 1.0), ("seed", 1.0), ("", 1.0)),)
OWN_HEADS = Controls(HeadsSettings(), "mh", {
    "heads": Control(_("Number of heads"), low=1, high=HEADS_MAX,
                     help=_("H: how many kernel smoothers, each with its own lengthscale, are mixed.")),
    "holdout": _holdout(_("Points hidden and predicted at each step (the blog post: 1).")),
    "steps": Control(_("Training steps"), low=50, high=STEPS_MAX, step=50,
                     help=_("The blog post trains this model for 1,000 steps.")),
    **_rate_and_seed("own_"),
})
OWN_HEADS_ROWS = ((("heads", 1.0), ("holdout", 1.0), ("steps", 1.0)),
                  (("learning_rate", 1.0), ("seed", 1.0), ("", 1.0)))

# ---------------------------------------------------------------------------------------------------------
# Chapter 4: a trained attention layer
# ---------------------------------------------------------------------------------------------------------

STARTS = {"gaussian": _("Gaussian heads around ℓ*"), "post": _("the blog post's spread"),
          "random": _("random maps")}
LAYER = Controls(
    # kernelviz's own layer (no source trains one): four heads for 1,000 steps, where the library's default
    # is a quicker two for 500, so that the page's heads have room to split the work between them
    LayerRequest(heads=4, steps=1000), "attn", {
        "heads": Control(_("Number of heads H"), low=1, high=HEADS_MAX,
                         help=_("H attention heads, each with its own W_q, W_k, W_v and U.")),
        "d_qk": Control(_("Query/key size $d_{{qk}}$").format(), low=1, high=D_QK_MAX, url="dqk",
                        help=_("Length of the query and key vectors q(x), k(x′). The Gaussian needs 2.")),
        "d_v": Control(_("Value size $d_v$"), low=1, high=D_V_MAX, url="dv",
                       help=_("Length of each head's value vectors vᵢ = tᵢW_v and outputs x′ᵢ.")),
        "start": Control(_("Start"), "selectbox", options=tuple(STARTS), names=STARTS, notched=False,
                         help=_("Where training starts (see the text above).")),
        "holdout": _holdout(_("Points hidden and predicted at each training step.")),
        "steps": Control(_("Training steps"), low=50, high=STEPS_MAX, step=50),
        "seed": Control(_("Seed"), low=0, high=99,
                        help=_("The noise on the start and the random hold-out sets.")),
        "learning_rate": Control(_("Learning rate"), "select_slider", options=ATTENTION_LEARNING_RATES,
                                 url="lr", help=_("Adam's first step size; it decays to 0 over the run.")),
    })
LAYER_ROWS = ((("heads", 1.0), ("d_qk", 1.2), ("d_v", 1.0), ("start", 1.6)),
              (("holdout", 1.0), ("steps", 1.2), ("seed", 1.0), ("learning_rate", 1.6)))

# ---------------------------------------------------------------------------------------------------------
# Chapter 5: in context
# ---------------------------------------------------------------------------------------------------------

FAMILIES = {"sine": _("sines"), "gp": _("Gaussian-process draws")}
KINDS = {"softmax": _("softmax"), "linear": _("linear (no softmax)")}


def _slider(label: str, low: float, high: float, step: float, help: str) -> Control:
    return Control(label, low=low, high=high, step=step, help=help)


IN_CONTEXT = Controls(PretrainRequest(), "icl", {  # the page opens at the backend's defaults
    "family": Control(_("Family"), "segmented", options=tuple(FAMILIES), names=FAMILIES, notched=False,
                      help=_("Sines of random frequency, phase and amplitude, or Gaussian-process draws.")),
    "roughness": _slider(_("Task roughness"), *tasks.ROUGHNESS_RANGE, 0.5,
                         _("The typical frequency r of f in radians per unit of x.")),
    "noise": _slider(_("Label noise σ"), 0.0, tasks.NOISE_MAX, 0.05,
                     _("yᵢ = f(xᵢ) + σ εᵢ with εᵢ ~ N(0, 1).")),
    "n": _slider(_("Context size n"), tasks.N_MIN, tasks.N_MAX, 1, _("Points (xᵢ, yᵢ) in every prompt.")),
    "kind": Control(_("Attention"), "segmented", options=tuple(KINDS), names=KINDS, notched=False,
                    help=_("Softmax weights, or the scores divided by n with no normalisation.")),
    "steps": _slider(_("Pretraining steps"), 50, STEPS_MAX, 50,
                     _("Adam steps, each on {batch} fresh prompts.").format(batch=BATCH)),
    "heads": _slider(_("Number of heads"), 1, HEADS_MAX, 1,
                     _("Heads with their own score matrix A_h, mixed by learned u_h.")),
    "seed": _slider(_("Seed"), 0, 99, 1,
                    _("The start of the layer and the prompts drawn during pretraining.")),
})
IN_CONTEXT_ROWS = ((("family", 1.4), ("roughness", 1.2), ("noise", 1.0), ("n", 1.0)),
                   (("kind", 1.4), ("steps", 1.2), ("heads", 1.0), ("seed", 1.0)))
