"""Fit a cubic polynomial to noisy data with ft.value_and_grad and gradient descent.

Run: python examples/regression.py   (a few seconds; exits 1 if the fit fails)
"""

import sys  # noqa: I001  (ftorch goes before mlx.core: it loads the fast BLAS)

import ftorch as ft
import ftorch.numpy as fnp
import mlx.core as mx

TRUE_W = [-1.0, 2.0, 0.7]  # coefficients of x, x^2, x^3
TRUE_B = 0.5


def features(x: mx.array) -> mx.array:
    """Columns x, x^2, x^3, ... (as many as TRUE_W has)."""
    return mx.stack([x**k for k in range(1, len(TRUE_W) + 1)], axis=1)


def predict(params: dict, feats) -> mx.array:
    # Broadcast (n, k) * (k,) and sum over k: a matrix-vector product.
    return fnp.sum(feats * params["w"], axis=1) + params["b"]


def loss(params: dict, feats, y) -> mx.array:
    r = predict(params, feats) - y
    return fnp.sum(r * r) / r.shape[0]


def main() -> int:
    mx.random.seed(0)
    x = mx.random.uniform(-1.0, 1.0, (256,))
    feats = features(x)
    y = feats @ mx.array(TRUE_W) + TRUE_B + 0.01 * mx.random.normal((256,))

    params = {"w": mx.zeros((len(TRUE_W),)), "b": mx.array(0.0)}
    step = ft.value_and_grad(loss)
    lr = 0.5
    for i in range(1001):
        value, grads = step(params, feats, y)
        # Plain gradient descent on the whole pytree of parameters.
        params = ft.tree.map(lambda p, g: p - lr * g, params, grads)
        if i % 100 == 0:
            mx.eval(params)
            print(f"step {i:5d}  loss {value.item():.6f}")

    w, b = params["w"].tolist(), params["b"].item()
    print("fitted w:", [round(v, 3) for v in w], " b:", round(b, 3))
    print("true   w:", TRUE_W, " b:", TRUE_B)
    error = max(abs(u - v) for u, v in zip(w + [b], TRUE_W + [TRUE_B]))
    final = loss(params, feats, y).item()
    if not (error < 0.05 and final < 1e-3):  # also catches NaN
        print(f"fit failed: max coefficient error {error:.4f}, loss {final:.2e}")
        return 1
    print(f"fit ok: max coefficient error {error:.4f}, loss {final:.2e}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
