"""ftorch.nn.losses against mlx.nn.losses: values for every reduction and
default, gradients against mx.grad, stability for large logits, vmap
against a loop, jit against eager, errors."""

import inspect
import math

import mlx.core as mx
import mlx.nn.losses as ml
import numpy as np
import pytest
from harness import check_jvp_fd, check_vjp_dot, compiler_off
from harness import close as _close
from hypothesis import given
from hypothesis import strategies as st

import ftorch as ft
import ftorch.nn.losses as losses
import ftorch.numpy as fnp

_np = np.array
_LOOSE = dict(eps=1e-3, rtol=1e-3, atol=1e-4)  # MLX's float64 exp/log are float32-accurate


def _data(seed, n=6, c=5):
    """Float32 arrays for every loss: logits (n, c), integer classes,
    probability targets, binary targets, regression pairs, ..."""
    rng = np.random.default_rng(seed)

    def f(*shape, lo=None, hi=None):
        a = rng.standard_normal(shape) * 2 if lo is None else rng.uniform(lo, hi, shape)
        return mx.array(a.astype(np.float32))

    p = rng.random((n, c)) + 0.1
    return dict(
        logits=f(n, c), classes=mx.array(rng.integers(0, c, n).astype(np.int32)),
        probs=mx.array((p / p.sum(-1, keepdims=True)).astype(np.float32)),
        binary=mx.array(rng.integers(0, 2, (n, c)).astype(np.float32)),
        soft=f(n, c, lo=0.0, hi=1.0), p=f(n, c, lo=0.05, hi=0.95), x=f(n, c), y=f(n, c),
        z=f(n, c), w_rows=f(n, lo=0.1, hi=2.0), w=f(n, c, lo=0.1, hi=2.0),
        signs=mx.array(np.where(rng.random((n, c)) < 0.5, -1.0, 1.0).astype(np.float32)),
        vars=f(n, c, lo=0.01, hi=2.0),
        logp=mx.array(np.log(p / p.sum(-1, keepdims=True)).astype(np.float32)),
        logq=f(n, c) - 3.0,
    )


# (name, ftorch loss, mlx loss, argument names, keyword arguments, differentiable
# argument positions). Each is checked with every reduction and with its default.
LOSSES = [
    ("ce_classes", losses.cross_entropy, ml.cross_entropy, ("logits", "classes"), {}, (0,)),
    ("ce_classes_weights_axis", losses.cross_entropy, ml.cross_entropy,
     ("logits", "classes", "w_rows"), {}, (0, 2)),
    ("ce_smoothing", losses.cross_entropy, ml.cross_entropy, ("logits", "classes"),
     {"label_smoothing": 0.3}, (0,)),
    # (The gradient in probability targets: test_cross_entropy_probability_targets.)
    ("ce_probs", losses.cross_entropy, ml.cross_entropy, ("logits", "probs"), {}, (0,)),
    ("ce_probs_smoothing", losses.cross_entropy, ml.cross_entropy, ("logits", "probs"),
     {"label_smoothing": 0.1}, (0,)),
    ("bce_logits", losses.binary_cross_entropy, ml.binary_cross_entropy, ("x", "soft"), {},
     (0, 1)),
    ("bce_logits_weights", losses.binary_cross_entropy, ml.binary_cross_entropy,
     ("x", "binary", "w"), {}, (0, 2)),
    ("bce_probs", losses.binary_cross_entropy, ml.binary_cross_entropy, ("p", "soft"),
     {"with_logits": False}, (0, 1)),
    ("nll", losses.nll_loss, ml.nll_loss, ("logp", "classes"), {}, (0,)),
    ("kl_div", losses.kl_div_loss, ml.kl_div_loss, ("logq", "logp"), {}, (0, 1)),
    ("mse", losses.mse_loss, ml.mse_loss, ("x", "y"), {}, (0, 1)),
    ("l1", losses.l1_loss, ml.l1_loss, ("x", "y"), {}, (0, 1)),
    ("smooth_l1", losses.smooth_l1_loss, ml.smooth_l1_loss, ("x", "y"), {"beta": 0.7}, (0, 1)),
    ("huber", losses.huber_loss, ml.huber_loss, ("x", "y"), {"delta": 1.3}, (0, 1)),
    ("log_cosh", losses.log_cosh_loss, ml.log_cosh_loss, ("x", "y"), {}, (0, 1)),
    ("gaussian_nll", losses.gaussian_nll_loss, ml.gaussian_nll_loss, ("x", "y", "vars"), {},
     (0, 1, 2)),
    ("gaussian_nll_full", losses.gaussian_nll_loss, ml.gaussian_nll_loss, ("x", "y", "vars"),
     {"full": True, "eps": 0.05}, (0, 1, 2)),
    ("hinge", losses.hinge_loss, ml.hinge_loss, ("x", "signs"), {}, (0,)),
    ("margin_ranking", losses.margin_ranking_loss, ml.margin_ranking_loss, ("x", "y", "signs"),
     {"margin": 0.5}, (0, 1)),
    ("cosine_similarity", losses.cosine_similarity_loss, ml.cosine_similarity_loss, ("x", "y"),
     {}, (0, 1)),
    ("cosine_similarity_axis0", losses.cosine_similarity_loss, ml.cosine_similarity_loss,
     ("x", "y"), {"axis": 0}, (0, 1)),
    ("triplet", losses.triplet_loss, ml.triplet_loss, ("x", "y", "z"), {}, (0, 1, 2)),
    ("triplet_p1", losses.triplet_loss, ml.triplet_loss, ("x", "y", "z"),
     {"p": 1, "margin": 2.0}, (0, 1, 2)),
]
_IDS = [c[0] for c in LOSSES]


def _args(names, seed=0):
    d = _data(seed)
    return [d[n] for n in names]


def _call(fn, name, args, kwargs):
    if name == "ce_classes_weights_axis":  # weights by keyword, classes along axis 0
        logits, classes, w = args
        return fn(fnp.swapaxes(logits, 0, 1), classes, weights=w, axis=0, **kwargs)
    return fn(*args, **kwargs)


def test_same_names_and_defaults_as_mlx():
    for name in losses.__all__[1:]:
        ours, theirs = inspect.signature(getattr(losses, name)), inspect.signature(
            getattr(ml, name))
        assert list(ours.parameters) == list(theirs.parameters), name
        for p in ours.parameters.values():
            assert p.default == theirs.parameters[p.name].default, (name, p.name)


@pytest.mark.parametrize("name,fn,ref,names,kwargs,diff", LOSSES, ids=_IDS)
@given(seed=st.integers(0, 2**16))
def test_values_match_mlx(name, fn, ref, names, kwargs, diff, seed):
    args = _args(names, seed)
    for reduction in (None, "none", "mean", "sum"):
        kw = dict(kwargs) if reduction is None else {**kwargs, "reduction": reduction}
        got = _call(fn, name, args, kw)
        expected = _call(ref, name, args, kw)
        assert isinstance(got, mx.array) and got.dtype == expected.dtype
        _close(got, expected, rtol=2e-5, atol=2e-6)


@pytest.mark.parametrize("name,fn,ref,names,kwargs,diff", LOSSES, ids=_IDS)
def test_gradients_match_mx_grad(name, fn, ref, names, kwargs, diff):
    args = _args(names, 1)
    for reduction in ("mean", "sum"):
        kw = {**kwargs, "reduction": reduction}

        def loss(f):
            def g(*dargs):
                full = list(args)
                for i, a in zip(diff, dargs):
                    full[i] = a
                return _call(f, name, full, kw)
            return g

        primals = [args[i] for i in diff]
        argnums = tuple(range(len(diff)))
        got = ft.grad(loss(fn), argnums=argnums)(*primals)
        expected = mx.grad(loss(ref), argnums=argnums)(*primals)
        if len(diff) == 1:  # mx.grad gives one array for a 1-tuple of argnums
            expected = (expected,)
        assert len(got) == len(expected) == len(diff)
        for g, e in zip(got, expected):
            _close(g, e, rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize("name", ["ce_smoothing", "ce_probs", "bce_logits", "gaussian_nll",
                                  "log_cosh", "triplet", "cosine_similarity", "huber"])
def test_derivatives_float64(name):
    _, fn, _, names, kwargs, diff = LOSSES[_IDS.index(name)]
    args = [a.astype(mx.float64) if i in diff else a for i, a in enumerate(_args(names, 2))]
    f = lambda *a: _call(fn, name, a, {**kwargs, "reduction": "none"})
    check_jvp_fd(f, tuple(args), **_LOOSE)
    check_vjp_dot(f, tuple(args))


def test_cross_entropy_probability_targets():
    """``-sum(targets * log_softmax(logits))`` (as PyTorch and optax): equal
    to mlx.nn's value for targets that sum to 1; its gradient in the targets
    is ``-log_softmax(logits)`` (mlx.nn's shortcut formula has
    ``max(logits) - logits``, which differs along the ones vector)."""
    d = _data(7)
    logits, probs = d["logits"], d["probs"]
    logp = _np(logits).astype(np.float64)
    logp = logp - np.log(np.exp(logp).sum(-1, keepdims=True))
    _close(losses.cross_entropy(logits, probs), -(_np(probs) * logp).sum(-1), rtol=1e-5)
    g = ft.grad(lambda t: losses.cross_entropy(logits, t, reduction="sum"))(probs)
    _close(g, -logp, rtol=1e-5, atol=1e-6)
    # Unnormalised targets (e.g. a mask of several correct classes) keep the formula.
    t = d["binary"]
    _close(losses.cross_entropy(logits, t), -(_np(t) * logp).sum(-1), rtol=1e-5, atol=1e-6)


def test_large_logits_stay_finite_and_exact():
    logits = mx.array([[1e4, 0.0, -1e4], [-1e4, -1e4, 1e4]])
    classes = mx.array([0, 1])
    ce = losses.cross_entropy(logits, classes)
    _close(ce, [0.0, 2e4], rtol=1e-6)
    g = ft.grad(lambda v: losses.cross_entropy(v, classes, reduction="sum"))(logits)
    _close(g, [[0.0, 0.0, 0.0], [0.0, -1.0, 1.0]], atol=1e-6)
    x, t = mx.array([1000.0, -1000.0, 80.0, -80.0]), mx.array([0.0, 1.0, 1.0, 0.0])
    _close(losses.binary_cross_entropy(x, t, reduction="none"), [1000.0, 1000.0, 0.0, 0.0],
           atol=1e-6)
    g = ft.grad(lambda v: losses.binary_cross_entropy(v, t, reduction="sum"))(x)
    _close(g, [1.0, -1.0, 0.0, 0.0], atol=1e-6)
    # Probabilities at 0 and 1: each log is clipped at -100, as in MLX and PyTorch.
    p = mx.array([0.0, 1.0])
    _close(losses.binary_cross_entropy(p, mx.array([1.0, 0.0]), with_logits=False,
                                       reduction="none"), [100.0, 100.0])
    d = mx.array([0.0, 500.0, -500.0])
    _close(losses.log_cosh_loss(d, mx.zeros(3)), [0.0, 500 - math.log(2), 500 - math.log(2)],
           rtol=1e-6)
    _close(ft.grad(lambda v: losses.log_cosh_loss(v, mx.zeros(3)).sum())(d), [0.0, 1.0, -1.0])


def test_cross_entropy_forms_agree():
    d = _data(3)
    logits, classes = d["logits"], d["classes"]
    one_hot = mx.array(np.eye(5, dtype=np.float32)[_np(classes)])
    _close(losses.cross_entropy(logits, classes), losses.cross_entropy(logits, one_hot),
           rtol=1e-6, atol=1e-6)
    s = 0.2
    smoothed = one_hot * (1 - s) + s / 5
    _close(losses.cross_entropy(logits, classes, label_smoothing=s),
           losses.cross_entropy(logits, smoothed), rtol=1e-5, atol=1e-6)
    lp = _np(logits).astype(np.float64)
    lp = lp - np.log(np.exp(lp).sum(-1, keepdims=True))
    _close(losses.cross_entropy(logits, classes, reduction="mean"),
           -lp[np.arange(6), _np(classes)].mean(), rtol=1e-5)
    # Negative classes count from the end; classes out of range give nan.
    got = _np(losses.cross_entropy(logits[:2], mx.array([-1, 5])))
    _close(got[0], -lp[0, 4], rtol=1e-5)
    assert np.isnan(got[1])


def test_low_precision():
    d = _data(4)
    for dtype in (mx.float16, mx.bfloat16):
        logits = d["logits"].astype(dtype)
        got = losses.cross_entropy(logits, d["classes"])
        assert got.dtype == dtype
        _close(got.astype(mx.float32), ml.cross_entropy(logits, d["classes"]).astype(
            mx.float32), rtol=2e-2, atol=2e-2)
        x, y = d["x"].astype(dtype), d["y"].astype(dtype)
        for fn in (losses.mse_loss, losses.huber_loss, losses.smooth_l1_loss,
                   losses.log_cosh_loss, losses.binary_cross_entropy):
            assert fn(x, y).dtype == dtype, fn.__name__


def test_vmap_and_jit():
    d = _data(5)
    logits, classes, x, y = d["logits"], d["classes"], d["x"], d["y"]

    t = d["soft"]

    def f(logits, classes, x, y, t):
        return (losses.cross_entropy(logits, classes, label_smoothing=0.1, reduction="mean")
                + losses.huber_loss(x, y, reduction="sum")
                + losses.binary_cross_entropy(x, t)
                + losses.cosine_similarity_loss(x, y, reduction="sum"))

    args = (logits, classes, x, y, t)
    batched = [a.reshape(2, 3, *a.shape[1:]) for a in args]
    loop = mx.stack([f(*[a[i] for a in batched]) for i in range(2)])
    _close(ft.vmap(f)(*batched), loop, rtol=1e-6)
    with compiler_off():
        _close(ft.jit(f)(*args), f(*args), rtol=1e-6)
        g = ft.jit(ft.grad(f))(*args)
        _close(g, ft.grad(f)(*args), rtol=1e-6, atol=1e-7)


def test_errors():
    d = _data(6)
    logits, classes = d["logits"], d["classes"]
    with pytest.raises(ValueError, match=r"cross_entropy: reduction must be 'none', 'mean' or "
                                         r"'sum', got 'avg'"):
        losses.cross_entropy(logits, classes, reduction="avg")
    with pytest.raises(ValueError, match=r"cross_entropy: label_smoothing must be in \[0, 1\)"):
        losses.cross_entropy(logits, classes, label_smoothing=1.0)
    with pytest.raises(ValueError, match=r"cross_entropy: targets of shape \(5,\) are neither "
                                         r"class indices \(shape \(6,\)\) nor probabilities"):
        losses.cross_entropy(logits, classes[:5])
    with pytest.raises(TypeError, match=r"cross_entropy: class-index targets must be integers"):
        losses.cross_entropy(logits, classes.astype(mx.float32))
    with pytest.raises(ValueError, match=r"cross_entropy: weights of shape \(5,\) must have "
                                         r"the loss's shape \(6,\)"):
        losses.cross_entropy(logits, classes, weights=mx.ones(5))
    with pytest.raises(ValueError, match=r"cross_entropy: axis 2 is out of range"):
        losses.cross_entropy(logits, classes, axis=2)
    with pytest.raises(ValueError, match=r"binary_cross_entropy: the shapes must match, got "
                                         r"inputs \(6, 5\), targets \(6,\)"):
        losses.binary_cross_entropy(logits, classes)
    with pytest.raises(TypeError, match=r"binary_cross_entropy: with_logits must be True or "
                                        r"False"):
        losses.binary_cross_entropy(logits, logits, with_logits="yes")
    with pytest.raises(ValueError, match=r"mse_loss: the shapes must match, got predictions "
                                         r"\(6, 5\), targets \(5,\)"):
        losses.mse_loss(logits, logits[0])
    with pytest.raises(ValueError, match=r"nll_loss: targets of shape \(6, 5\) must be"):
        losses.nll_loss(logits, logits)
    with pytest.raises(TypeError, match=r"nll_loss: targets must be integer class indices"):
        losses.nll_loss(logits, classes.astype(mx.float32))
    with pytest.raises(ValueError, match=r"smooth_l1_loss: beta must be positive, got 0"):
        losses.smooth_l1_loss(logits, logits, beta=0)
    with pytest.raises(ValueError, match=r"huber_loss: delta must not be negative"):
        losses.huber_loss(logits, logits, delta=-1.0)
    with pytest.raises(ValueError, match=r"gaussian_nll_loss: the shapes must match"):
        losses.gaussian_nll_loss(logits, logits, logits[0])
    with pytest.raises(ValueError, match=r"margin_ranking_loss: the shapes must match"):
        losses.margin_ranking_loss(logits, logits, classes)
    with pytest.raises(ValueError, match=r"cosine_similarity_loss: x1 and x2 must have an "
                                         r"embedding axis"):
        losses.cosine_similarity_loss(mx.array(1.0), mx.array(2.0))
    with pytest.raises(ValueError, match=r"triplet_loss: p must be positive"):
        losses.triplet_loss(logits, logits, logits, p=0)
    with pytest.raises(ValueError, match=r"hinge_loss: reduction must be"):
        losses.hinge_loss(logits, logits, reduction=None)


# Arguments of each loss whose shapes do not fit together: (6, 5) against (4,)
# (which neither match nor broadcast); each loss names itself and every shape.
_A, _B = mx.zeros((6, 5)), mx.zeros((4,))
_MISFITS = {
    "cross_entropy": (_A, mx.zeros((4,), mx.int32)),
    "binary_cross_entropy": (_A, _B),
    "nll_loss": (_A, mx.zeros((4,), mx.int32)),
    "kl_div_loss": (_A, _B),
    "mse_loss": (_A, _B),
    "l1_loss": (_A, _B),
    "smooth_l1_loss": (_A, _B),
    "huber_loss": (_A, _B),
    "log_cosh_loss": (_A, _B),
    "gaussian_nll_loss": (_A, _A, _B),
    "hinge_loss": (_A, _B),
    "margin_ranking_loss": (_A, _A, _B),
    "cosine_similarity_loss": (_A, _B),
    "triplet_loss": (_A, _A, _B),
}


def test_every_loss_has_misfitting_arguments_below():
    assert set(_MISFITS) == set(losses.__all__) - {"Reduction"}


@pytest.mark.parametrize("name", sorted(_MISFITS))
def test_misfitting_shapes_name_the_loss_and_the_shapes(name):
    args = _MISFITS[name]
    with pytest.raises(ValueError) as info:
        getattr(losses, name)(*args)
    message = str(info.value)
    assert message.startswith(name + ":")
    assert all(str(a.shape) in message for a in args)
