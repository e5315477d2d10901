"""Re-run the blog post's code ("From kernel regression to the transformer", ../shared/seeds/000_*) and
write what it computes to ``post_run.json`` beside this script.

The code below is the post's, with its plots and prints dropped and its numbers collected instead. It runs
as the post ran in January 2024: float32 (no x64) and JAX's threefry generator in its original form
(``jax_threefry_partitionable=False``, JAX's default until 0.5). Needs equinox (``pip install equinox``),
which kernelviz itself does not use::

    python tests/reference/post_run.py

``tests/test_post.py`` compares kernelviz's sample, key sequence and runs with the file.
"""

from __future__ import annotations

import json
from functools import partial
from pathlib import Path

import jax

jax.config.update("jax_threefry_partitionable", False)
jax.config.update("jax_platforms", "cpu")

import equinox as eqx  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import optax  # noqa: E402
from jax import random  # noqa: E402


def f(X):
    return 0.5 * jnp.sin(X) - 1 * jnp.sin(3 * X) + 0.2 * jnp.square(X)


def n(X):
    return 0.2 + 0.05 * jnp.abs(X)


class GaussianKernel(eqx.Module):
    _log_lengthscale: float

    def __init__(self, lengthscale: float) -> None:
        self._log_lengthscale = jnp.log(lengthscale)

    @property
    def lengthscale(self) -> float:
        return jnp.exp(self._log_lengthscale)

    def __call__(self, x, x_):
        return jnp.exp(-jnp.square((x - x_) / self.lengthscale))

    def predict(self, X_test, X_obs, Y_obs):
        kernel = self

        def predict_one(x):
            ks = jax.vmap(partial(kernel, x))(X_obs)
            ws = ks / (jnp.sum(ks) + 1e-16)
            return jnp.sum(Y_obs * ws)

        return jax.vmap(predict_one)(X_test)


class MultiheadGaussianKernel(eqx.Module):
    kernels: list
    weights: jax.Array

    def __init__(self, n_heads: int) -> None:
        self.weights = jnp.full(shape=(n_heads,), fill_value=1 / n_heads)
        self.kernels = [GaussianKernel(lengthscale=l) for l in jnp.linspace(0.1, 3, n_heads)]  # noqa: E741

    def predict(self, X_test, X_obs, Y_obs):
        preds = jnp.stack([k.predict(X_test=X_test, X_obs=X_obs, Y_obs=Y_obs) for k in self.kernels])
        return jnp.einsum("kn,k->n", preds, self.weights)


def train(key, model, X, Y, learning_rate=0.2, hold_out_size=1, n_steps=100):
    n_total = X.shape[0]

    def split_data(key):
        indices = random.permutation(key, jnp.arange(n_total))
        ind_test = indices[:hold_out_size]
        ind_obs = indices[hold_out_size:]
        return X[ind_obs], Y[ind_obs], X[ind_test], Y[ind_test], ind_test

    @jax.jit
    def step(model, opt_state, X_obs, Y_obs, X_test, Y_test):
        def loss_fn(model):
            preds = model.predict(X_test=X_test, X_obs=X_obs, Y_obs=Y_obs)
            return jnp.mean(jnp.square(preds - Y_test))

        loss, grads = jax.value_and_grad(loss_fn)(model)
        updates, opt_state = optimizer.update(grads, opt_state, model)
        model = optax.apply_updates(model, updates)
        return model, opt_state, loss

    optimizer = optax.adam(learning_rate=learning_rate)
    opt_state = optimizer.init(model)
    losses, first_held = [], []
    for _ in range(n_steps):
        key, subkey = random.split(key)
        X_obs, Y_obs, X_test, Y_test, ind_test = split_data(subkey)
        if len(first_held) < 5:
            first_held.append([int(i) for i in ind_test])
        model, opt_state, loss = step(model, opt_state, X_obs, Y_obs, X_test, Y_test)
        losses.append(float(loss))
    return model, losses, first_held


def main() -> None:
    n_points = 150
    key = random.PRNGKey(2024)
    key, subkey = random.split(key)
    X = jnp.linspace(-3, 3, n_points)
    Y = f(X) + n(X) * random.normal(subkey, shape=X.shape)
    out = {"x": [float(v) for v in X], "y": [float(v) for v in Y], "holdout": [], "heads": []}

    for holdout in [1, 10, n_points // 2, int(0.8 * n_points)]:
        key, subkey = random.split(key)
        model, losses, held = train(subkey, GaussianKernel(lengthscale=1.0), X, Y, hold_out_size=holdout,
                                    n_steps=100)
        out["holdout"].append({"holdout": holdout, "key": [int(k) for k in subkey],
                               "lengthscale_post": float(model.lengthscale), "losses": losses,
                               "first_held": held})

    for n_heads in [1, 2, 4, 8]:
        key, subkey = random.split(key)
        model, losses, held = train(subkey, MultiheadGaussianKernel(n_heads=n_heads), X, Y, hold_out_size=1,
                                    n_steps=1_000)
        out["heads"].append({"heads": n_heads, "key": [int(k) for k in subkey],
                             "mixing": [float(w) for w in model.weights],
                             "lengthscales_post": [float(k.lengthscale) for k in model.kernels],
                             "losses": losses, "first_held": held})
        print(f"Number of heads: {n_heads}")
        print("  Combination: ", ", ".join(f"{w:.2f}" for w in model.weights))
        print("  Lengthscales:", ", ".join(f"{k.lengthscale:.2f}" for k in model.kernels))
    print("Hold-out titles:", ", ".join(f"{r['lengthscale_post']:.2f}" for r in out["holdout"]))
    Path(__file__).with_name("post_run.json").write_text(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    main()
