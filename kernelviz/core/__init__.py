"""The formulas every chapter shares: the kernels, the scores they give, and the pooling that turns scores
into weights and weights into a mean and a band."""
