"""One model per chapter: Nadaraya–Watson and its lengthscale (``smoothing``, ``loo``), masked training
(``training``), multi-head kernel regression (``heads``, ``parametric``), dot-product attention
(``attention``) and in-context learning (``incontext``)."""
