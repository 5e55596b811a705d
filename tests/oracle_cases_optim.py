"""Oracle cases for ``optax`` and ``optax.losses`` (tests/oracle.py): the losses' values
and gradients on drawn arguments, and each optimizer's parameters after a few steps on
drawn gradients."""

import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from oracle import Oracle, arrays

L = "optax.losses"


def _f32(lo, hi):
    """A float32 number in ``[lo, hi]``."""
    return st.floats(float(np.float32(lo)), float(np.float32(hi)), width=32)


def _shape(d, min_dims=1, max_dims=3, min_side=1, max_side=4):
    return d(hnp.array_shapes(min_dims=min_dims, max_dims=max_dims, min_side=min_side,
                              max_side=max_side))


def _pair(lo=-3.0, hi=3.0, lo2=None, hi2=None, min_dims=0):
    """Two float arrays of one drawn shape."""
    def draw(d):
        s = _shape(d, min_dims=min_dims)
        return (d(arrays(s, lo=lo, hi=hi)),
                d(arrays(s, lo=lo if lo2 is None else lo2, hi=hi if hi2 is None else hi2)))
    return draw


def _probs(d, shape, axis=-1):
    """Probabilities along ``axis`` (positive, summing to 1)."""
    x = d(arrays(shape, lo=0.1, hi=1.0))
    return (x / x.sum(axis=axis, keepdims=True)).astype(np.float32)


def _labels(d, shape, classes):
    return d(arrays(shape, dtype="int32", lo=0, hi=classes - 1))


def _mask(d, shape):
    return d(arrays(shape, dtype="bool"))


def _elementwise(name, lo=-3.0, hi=3.0, targets=True, **kw):
    def args(d):
        p, t = _pair(lo, hi)(d)
        return ((p, t) if targets and d(st.booleans()) else (p,)), {}
    return Oracle(f"{L}.{name}", args, **kw)


def _axis_where(name, first, second, where=True, **kw):
    """``name(a, b, axis=..., where=...)`` with ``first(d, shape)``, ``second(d, shape)``.
    A mask keeps an element of each slice along ``axis``: over a slice it masks whole,
    JAX's gradients are NaN and ftorch's 0 (``logsumexp`` in docs/hooks.py)."""
    def args(d):
        s = _shape(d, min_dims=1)
        kwargs = {"axis": d(st.integers(-len(s), len(s) - 1))}
        if where and d(st.booleans()):
            mask = _mask(d, s)
            np.moveaxis(mask, kwargs["axis"], 0)[0] = True
            kwargs["where"] = mask
        return (first(d, s), second(d, s)), kwargs
    return Oracle(f"{L}.{name}", args, **kw)


def _floats(lo=-3.0, hi=3.0):
    return lambda d, s: d(arrays(s, lo=lo, hi=hi))


def _scores_labels(name, min_dims=1, **kw):
    def args(d):
        s = _shape(d, min_dims=min_dims, max_dims=2, min_side=2)
        return (d(arrays(s)), _labels(d, s[:-1], s[-1])), {}
    return Oracle(f"{L}.{name}", args, **kw)


def _integer_ce(d):
    s = _shape(d, min_dims=1, max_dims=3, min_side=2)
    axis = d(st.integers(-len(s), len(s) - 1))
    labels = _labels(d, tuple(n for i, n in enumerate(s) if i != axis % len(s)), s[axis])
    kwargs = {"axis": axis}
    if d(st.booleans()):
        kwargs["where"] = _mask(d, s)
    return (d(arrays(s)), labels), kwargs


def _ctc(d):
    batch, frames, classes = d(st.integers(1, 3)), d(st.integers(2, 6)), d(st.integers(2, 4))
    n = d(st.integers(1, 3))
    logits = d(arrays((batch, frames, classes)))
    logit_pad = np.zeros((batch, frames), np.float32)
    label_pad = np.zeros((batch, n), np.float32)
    for b in range(batch):
        logit_pad[b, d(st.integers(1, frames)):] = 1.0
        label_pad[b, d(st.integers(1, n)):] = 1.0
    labels = _labels(d, (batch, n), classes)
    return (logits, logit_pad, labels, label_pad), {"blank_id": d(st.integers(0, classes - 1))}


def _ntxent(d):
    n = d(st.integers(2, 6))
    labels = _labels(d, (n,), 2)
    labels[:2] = 0  # at least one positive pair
    return (d(arrays((n, 3), lo=0.2, hi=3.0)), labels), {"temperature": 0.5}


def _triplet(d):
    s = _shape(d, min_dims=1, max_dims=2)
    a, p, n = (d(arrays(s)) for _ in range(3))
    return (a, p, n), {"axis": d(st.integers(-len(s), len(s) - 1)),
                       "margin": d(_f32(0.0, 2.0))}


def _ranking(d):
    s = _shape(d, min_dims=1, max_dims=2, min_side=2)
    kwargs = {}
    if d(st.booleans()):  # each list keeps an item (JAX's gradient is NaN on an empty one)
        kwargs["where"] = _mask(d, s)
        kwargs["where"][..., 0] = True
    elif d(st.booleans()):  # (JAX's gradient in a masked item's weight is NaN)
        kwargs["weights"] = d(arrays(s, lo=0.0, hi=2.0))
    return (d(arrays(s)), d(arrays(s, lo=0.0, hi=2.0))), kwargs


def _dice(d):
    batch, spatial, classes = d(st.integers(1, 3)), d(st.integers(1, 4)), d(st.integers(1, 3))
    targets = np.eye(classes, dtype=np.float32)[_labels(d, (batch, spatial), classes)]
    kwargs = {"smooth": d(_f32(0.5, 2.0)),
              "reduction": d(st.sampled_from(["mean", "sum", "none"])),
              "ignore_background": d(st.booleans())}
    if d(st.booleans()):
        kwargs["class_weights"] = d(arrays((classes,), lo=0.1, hi=2.0))
    return (d(arrays((batch, spatial, classes))), targets), kwargs


def _generalized_dice(d):
    batch, spatial, classes = d(st.integers(1, 3)), d(st.integers(1, 4)), d(st.integers(2, 3))
    targets = np.eye(classes, dtype=np.float32)[_labels(d, (batch, spatial), classes)]
    return (d(arrays((batch, spatial, classes))), targets), {
        "ignore_background": d(st.booleans())}


def _binary_dice(d):
    s = (d(st.integers(1, 3)), d(st.integers(1, 5)))
    targets = d(arrays(s, dtype="bool")).astype(np.float32)
    return (d(arrays(s)), targets), {"smooth": d(_f32(0.5, 2.0))}


def _fenchel_young(L, fn, scores, targets):
    return fn(L.scipy.special.logsumexp)(scores, targets)


def _fy_args(d):
    s = _shape(d, min_dims=1, max_dims=3)
    return (d(arrays(s)), _probs(d, s)), {}


LOSSES = [
    _elementwise("squared_error"),
    _elementwise("l2_loss"),
    Oracle(f"{L}.huber_loss", lambda d: (_pair()(d), {"delta": d(_f32(0.1, 2.0))})),
    _elementwise("log_cosh"),
    _axis_where("cosine_similarity", _floats(0.1, 3.0), _floats(), rtol=1e-4, atol=1e-4),
    _axis_where("cosine_distance", _floats(0.1, 3.0), _floats(), rtol=1e-4, atol=1e-4),
    Oracle(f"{L}.hinge_loss", lambda d: (_pair()(d), {})),
    Oracle(f"{L}.perceptron_loss", lambda d: (_pair()(d), {})),
    _scores_labels("multiclass_hinge_loss"),
    _scores_labels("multiclass_perceptron_loss"),
    _scores_labels("multiclass_sparsemax_loss", min_dims=2, rtol=1e-4, atol=1e-4),
    Oracle(f"{L}.sparsemax_loss", lambda d: (
        (lambda s: (d(arrays(s)), d(arrays(s, dtype="bool")).astype(np.int32)))(_shape(d)), {})),
    Oracle(f"{L}.sigmoid_binary_cross_entropy", lambda d: (_pair(lo2=0.0, hi2=1.0)(d), {})),
    Oracle(f"{L}.sigmoid_focal_loss", lambda d: (_pair(lo2=0.0, hi2=1.0)(d), {
        "alpha": d(st.none() | _f32(0.1, 0.9)),
        "gamma": d(_f32(0.0, 3.0))}), rtol=1e-4, atol=1e-5),
    _axis_where("softmax_cross_entropy", _floats(), lambda d, s: d(arrays(s, lo=0.0, hi=1.0))),
    Oracle(f"{L}.softmax_cross_entropy_with_integer_labels", _integer_ce),
    Oracle(f"{L}.safe_softmax_cross_entropy", lambda d: (
        (lambda s: (d(arrays(s)), _probs(d, s)))(_shape(d)), {})),
    Oracle(f"{L}.poly_loss_cross_entropy", lambda d: (
        (lambda s: (d(arrays(s)), _probs(d, s)))(_shape(d)),
        {"epsilon": d(_f32(-1.0, 3.0))})),
    _axis_where("kl_divergence", _floats(-3.0, -0.1), _floats(0.1, 1.0)),
    _axis_where("kl_divergence_with_log_targets", _floats(-3.0, -0.1), _floats(-3.0, -0.1)),
    _axis_where("generalized_kl_divergence", _floats(-3.0, 1.0), _floats(0.1, 2.0)),
    _axis_where("convex_kl_divergence", _floats(-3.0, 1.0), _floats(0.1, 2.0)),
    Oracle(f"{L}.smooth_labels", lambda d: (
        (lambda s: (_probs(d, s), d(_f32(0.0, 1.0))))(_shape(d)),
        {"axis": -1})),
    # float32 sums of log_epsilon (-1e5) and log probabilities: gradients agree to ~1e-3.
    Oracle(f"{L}.ctc_loss", _ctc, rtol=1e-3, atol=1e-3),
    Oracle(f"{L}.ctc_loss_with_forward_probs", _ctc, rtol=1e-3, atol=1e-3),
    Oracle(f"{L}.ntxent", _ntxent, rtol=1e-4, atol=1e-4),
    Oracle(f"{L}.triplet_margin_loss", _triplet, rtol=1e-4, atol=1e-4),
    Oracle(f"{L}.ranking_softmax_loss", _ranking, rtol=1e-4, atol=1e-5),
    Oracle(f"{L}.dice_loss", _dice, rtol=1e-4, atol=1e-5),
    Oracle(f"{L}.multiclass_generalized_dice_loss", _generalized_dice, rtol=1e-4, atol=1e-5),
    Oracle(f"{L}.binary_dice_loss", _binary_dice, rtol=1e-4, atol=1e-5),
    Oracle(f"{L}.make_fenchel_young_loss", _fy_args, run=_fenchel_young, rtol=1e-4,
           atol=1e-5),
]

# optax exports these losses at its top level too: the same functions.
TOP_LEVEL_LOSSES = [
    "convex_kl_divergence", "cosine_distance", "cosine_similarity", "ctc_loss",
    "ctc_loss_with_forward_probs", "generalized_kl_divergence", "hinge_loss", "huber_loss",
    "kl_divergence", "l2_loss", "log_cosh", "ntxent", "safe_softmax_cross_entropy",
    "sigmoid_binary_cross_entropy", "sigmoid_focal_loss", "smooth_labels",
    "softmax_cross_entropy", "softmax_cross_entropy_with_integer_labels", "squared_error",
]

# ---------------------------------------------------------------------------
# Optimizers: parameters after a few steps on drawn gradients
# ---------------------------------------------------------------------------

OPTAX = "optax"


def _params_grads(d, steps=3):
    """A parameter dict and ``steps`` gradient dicts like it."""
    shapes = {"w": (d(st.integers(1, 3)), d(st.integers(1, 3))), "b": (d(st.integers(1, 3)),)}
    params = {k: _no_tiny(d(arrays(s))) for k, s in shapes.items()}
    grads = [{k: _no_tiny(d(arrays(s))) for k, s in shapes.items()} for _ in range(steps)]
    return params, grads


def _no_tiny(x):
    """``x`` with entries below 1e-3 in size set to 0: XLA's CPU flushes the
    subnormal numbers their products make to 0, MLX keeps them (a sign
    differs)."""
    return np.where(np.abs(x) < 1e-3, 0.0, x).astype(x.dtype)


def _descend(L, fn, params, grads, factory_kwargs=None, **kwargs):
    """``params`` after one update of ``fn(**kwargs)`` per gradient."""
    opt = fn(**kwargs)
    state = opt.init(params)
    for g in grads:
        updates, state = opt.update(g, state, params)
        params = L.optim.apply_updates(params, updates)
    return params


def optimizer(name, rtol=1e-4, atol=1e-5, values=True, **draws):
    """``name(**kwargs)`` run for three steps; ``draws`` maps each keyword to a
    strategy (or a fixed value)."""
    def args(d):
        params, grads = _params_grads(d)
        kwargs = {k: d(v) if isinstance(v, st.SearchStrategy) else v for k, v in draws.items()}
        return (params, grads), kwargs
    return Oracle(f"{OPTAX}.{name}", args, run=_descend, grad=False, rtol=rtol, atol=atol,
                  values=values)


LR = _f32(0.01, 0.3)
DECAY = _f32(0.5, 0.99)

OPTIMIZERS = [
    optimizer("sgd", learning_rate=LR, momentum=st.none() | DECAY, nesterov=st.booleans()),
    optimizer("adam", learning_rate=LR, b1=DECAY, b2=DECAY, nesterov=st.booleans()),
    optimizer("adamw", learning_rate=LR, weight_decay=_f32(0.0, 0.5)),
    optimizer("nadam", learning_rate=LR),
    optimizer("nadamw", learning_rate=LR, weight_decay=_f32(0.0, 0.5)),
    optimizer("amsgrad", learning_rate=LR, b2=DECAY),
    optimizer("adamax", learning_rate=LR),
    optimizer("lion", learning_rate=LR, weight_decay=_f32(0.0, 0.5)),
    optimizer("rmsprop", learning_rate=LR, decay=DECAY, centered=st.booleans(),
              momentum=st.none() | DECAY),
    optimizer("adagrad", learning_rate=LR),
    optimizer("adadelta", learning_rate=LR, rho=DECAY),
    optimizer("adafactor", learning_rate=LR, min_dim_size_to_factor=2, rtol=1e-3, atol=1e-4),
    optimizer("lamb", learning_rate=LR, rtol=1e-3, atol=1e-4),
    optimizer("lars", learning_rate=LR, rtol=1e-3, atol=1e-4),
    optimizer("adabelief", learning_rate=LR, b1=DECAY, b2=DECAY, nesterov=st.booleans(),
              rtol=1e-3, atol=1e-4),
    optimizer("adamaxw", learning_rate=LR, weight_decay=_f32(0.0, 0.5)),
    optimizer("adan", learning_rate=LR, weight_decay=_f32(0.0, 0.5), rtol=1e-3, atol=1e-4),
    optimizer("novograd", learning_rate=LR, weight_decay=_f32(0.0, 0.5), rtol=1e-3,
              atol=1e-4),
    optimizer("radam", learning_rate=LR, b2=_f32(0.3, 0.99), nesterov=st.booleans(),
              rtol=1e-3, atol=1e-4),
    optimizer("rprop", learning_rate=LR),
    optimizer("sm3", learning_rate=LR, rtol=1e-3, atol=1e-4),
    optimizer("yogi", learning_rate=LR, b1=DECAY, b2=DECAY, rtol=1e-3, atol=1e-4),
    optimizer("fromage", learning_rate=LR, rtol=1e-3, atol=1e-4),
    optimizer("sign_sgd", learning_rate=LR),
    optimizer("signum", learning_rate=LR, beta=DECAY),
    optimizer("optimistic_gradient_descent", learning_rate=LR, alpha=_f32(0.5, 2.0),
              beta=_f32(0.0, 2.0)),
    optimizer("optimistic_adam", learning_rate=LR, rtol=1e-3, atol=1e-4),
    optimizer("optimistic_adam_v2", learning_rate=LR, alpha=_f32(0.5, 2.0),
              beta=_f32(0.0, 2.0), rtol=1e-3, atol=1e-4),
]


# L-BFGS on a drawn least-squares problem with a quartic term: the line search's iterates.

def _lbfgs_problem(d):
    n = d(st.integers(2, 4))
    a = d(arrays((n + 1, n), lo=-2.0, hi=2.0)) + 3.0 * np.eye(n + 1, n, dtype=np.float32)
    return (d(arrays((n,), lo=-1.0, hi=1.0)), a, d(arrays((n + 1,)))), {}


def _minimize(L, fn, x0, a, b, steps=4, **kwargs):
    """``x`` after ``steps`` steps of ``fn(**kwargs)`` (a line-search optimizer) on
    ``|a x - b|^2 / 2 + sum(x^4) / 4``."""
    def f(x):
        r = a @ x - b
        return 0.5 * L.numpy.sum(r * r) + 0.25 * L.numpy.sum(x ** 4)

    opt = fn(**kwargs)
    state = opt.init(x0)
    value_and_grad = L.optim.value_and_grad_from_state(f)
    x = x0
    for _ in range(steps):
        value, grad = value_and_grad(x, state=state)
        updates, state = opt.update(grad, state, x, value=value, grad=grad, value_fn=f)
        x = L.optim.apply_updates(x, updates)
    return x


def _linesearch_run(linesearch):
    """Gradient descent with ``linesearch`` for three steps (``fn`` is the line search)."""
    def run(L, fn, x0, a, b):
        def f(x):
            r = a @ x - b
            return 0.5 * L.numpy.sum(r * r) + 0.25 * L.numpy.sum(x ** 4)

        opt = L.optim.chain(L.optim.sgd(1.0), linesearch(fn))
        state, x = opt.init(x0), x0
        for _ in range(3):
            value, grad = L.jax.value_and_grad(f)(x)
            updates, state = opt.update(grad, state, x, value=value, grad=grad, value_fn=f)
            x = L.optim.apply_updates(x, updates)
        return x
    return run


def _polyak_run(L, fn, x0, a, b):
    """Three steps of ``fn()`` given the objective's value."""
    def f(x):
        r = a @ x - b
        return 0.5 * L.numpy.sum(r * r) + 0.25 * L.numpy.sum(x ** 4)

    opt = fn()
    state, x = opt.init(x0), x0
    for _ in range(3):
        value, grad = L.jax.value_and_grad(f)(x)
        updates, state = opt.update(grad, state, x, value=value)
        x = L.optim.apply_updates(x, L.jax.tree.map(lambda u: -0.1 * u, updates)
                                  if fn.__name__ == "scale_by_polyak" else updates)
    return x


LINE_SEARCHES = [
    Oracle(f"{OPTAX}.polyak_sgd", _lbfgs_problem, run=_polyak_run, grad=False, rtol=1e-3,
           atol=1e-4),
    Oracle(f"{OPTAX}.scale_by_polyak", _lbfgs_problem, run=_polyak_run, grad=False,
           rtol=1e-3, atol=1e-4),
    Oracle(f"{OPTAX}.lbfgs", _lbfgs_problem, run=_minimize, grad=False, rtol=1e-3, atol=1e-4),
    Oracle(f"{OPTAX}.scale_by_zoom_linesearch", _lbfgs_problem, grad=False, rtol=1e-3, atol=1e-4,
           run=_linesearch_run(lambda fn: fn(max_linesearch_steps=15))),
    Oracle(f"{OPTAX}.scale_by_backtracking_linesearch", _lbfgs_problem, grad=False, rtol=1e-3,
           atol=1e-4, run=_linesearch_run(lambda fn: fn(max_backtracking_steps=15))),
    Oracle(f"{OPTAX}.value_and_grad_from_state", _lbfgs_problem, grad=False, rtol=1e-3, atol=1e-4,
           run=lambda L, fn, x0, a, b: _minimize(L, lambda: L.optim.lbfgs(), x0, a, b)),
    Oracle(f"{OPTAX}.scale_by_lbfgs", lambda d: (_params_grads(d, steps=4), {
        "memory_size": d(st.integers(1, 3)), "scale_init_precond": d(st.booleans())}),
        run=_descend, grad=False, rtol=1e-3, atol=1e-4),
]



def transform(name, rtol=1e-4, atol=1e-5, **draws):
    """The building block ``name(**kwargs)`` for three steps (its updates added
    to the parameters)."""
    return optimizer(name, rtol=rtol, atol=atol, **draws)


TRANSFORMS = [
    transform("scale", step_size=_f32(-2.0, 2.0)),
    transform("scale_by_learning_rate", learning_rate=LR, flip_sign=st.booleans()),
    transform("scale_by_schedule", step_size_fn=st.just(lambda count: 0.5 / (count + 1))),
    transform("trace", decay=DECAY, nesterov=st.booleans()),
    transform("ema", decay=DECAY, debias=st.booleans()),
    transform("scale_by_adam", b1=DECAY, b2=DECAY, nesterov=st.booleans(), rtol=1e-3,
              atol=1e-4),
    transform("scale_by_amsgrad", b1=DECAY, b2=DECAY, rtol=1e-3, atol=1e-4),
    transform("scale_by_adamax", rtol=1e-3, atol=1e-4),
    transform("scale_by_rms", decay=DECAY, eps_in_sqrt=st.booleans(),
              bias_correction=st.booleans(), rtol=1e-3, atol=1e-4),
    transform("scale_by_stddev", decay=DECAY, initial_scale=st.just(1.0), rtol=1e-3,
              atol=1e-4),
    transform("scale_by_rss", rtol=1e-3, atol=1e-4),
    transform("scale_by_lion", b1=DECAY, b2=DECAY),
    transform("scale_by_adadelta", rho=DECAY, rtol=1e-3, atol=1e-4),
    transform("scale_by_factored_rms", min_dim_size_to_factor=2, rtol=1e-3, atol=1e-4),
    transform("scale_by_param_block_norm", rtol=1e-4, atol=1e-4),
    transform("scale_by_param_block_rms", rtol=1e-4, atol=1e-4),
    transform("scale_by_trust_ratio", rtol=1e-4, atol=1e-4),
    transform("scale_by_sign"),
    transform("add_decayed_weights", weight_decay=_f32(0.0, 0.5)),
    transform("clip", max_delta=_f32(0.1, 2.0)),
    transform("clip_by_global_norm", max_norm=_f32(0.1, 5.0)),
    transform("clip_by_block_rms", threshold=_f32(0.1, 2.0)),
    transform("identity"),
    transform("set_to_zero"),
    transform("scale_by_belief", b1=DECAY, b2=DECAY, nesterov=st.booleans(), rtol=1e-3,
              atol=1e-4),
    transform("scale_by_yogi", rtol=1e-3, atol=1e-4),
    transform("scale_by_radam", b2=_f32(0.3, 0.99), nesterov=st.booleans(), rtol=1e-3,
              atol=1e-4),
    transform("scale_by_adan", rtol=1e-3, atol=1e-4),
    transform("scale_by_novograd", rtol=1e-3, atol=1e-4),
    transform("scale_by_sm3", rtol=1e-3, atol=1e-4),
    transform("scale_by_rprop", learning_rate=LR),
    transform("scale_by_optimistic_gradient", alpha=_f32(0.5, 2.0), beta=_f32(0.0, 2.0)),
    transform("scale_by_distance_over_gradients", rtol=1e-3, atol=1e-4),
    transform("normalize_by_update_norm", rtol=1e-4, atol=1e-5),
    transform("apply_every", k=st.integers(1, 3)),
    transform("centralize"),
    transform("keep_params_nonnegative"),
    transform("zero_nans"),
    Oracle(f"{OPTAX}.noisy_sgd", lambda d: (_params_grads(d), {"learning_rate": 0.1, "key": 0}),
           run=_descend, grad=False, values=False),
    Oracle(f"{OPTAX}.add_noise", lambda d: (_params_grads(d), {"eta": 0.01, "gamma": 0.55,
                                                                 "key": 0}),
           run=_descend, grad=False, values=False),
]


def _chain_run(L, fn, params, grads):
    return _descend(L, lambda: fn(L.optim.trace(0.9), L.optim.scale(-0.1)), params, grads)


def _named_chain_run(L, fn, params, grads):
    return _descend(L, lambda: fn(("momentum", L.optim.trace(0.9)),
                                  ("lr", L.optim.scale(-0.1))), params, grads)


def _lookahead_run(L, fn, params, grads, sync_period, slow_step_size):
    opt = fn(L.optim.adam(0.1), sync_period=sync_period, slow_step_size=slow_step_size)
    both = L.optim.LookaheadParams.init_synced(params)
    state = opt.init(both)
    for g in grads:
        updates, state = opt.update(g, state, both)
        both = L.optim.apply_updates(both, updates)
    return both


def _masked_run(L, fn, params, grads):
    return _descend(L, lambda: fn(L.optim.sgd(0.1), {"w": True, "b": False}), params, grads)


def _tree_pair(d):
    params, grads = _params_grads(d, steps=1)
    return (grads[0], params), {}


def _conditional_run(L, fn, params, grads):
    return _descend(L, lambda: fn(L.optim.adam(0.1), lambda step: step % 2 == 1), params,
                    grads)


def _per_example(d):
    n = d(st.integers(1, 4))
    return ({"w": d(arrays((n, 2, 2))), "b": d(arrays((n, 3)))}, d(_f32(0.1, 3.0))), {}


WRAPPERS = [
    Oracle(f"{OPTAX}.conditionally_transform", lambda d: (_params_grads(d), {}),
           run=_conditional_run, grad=False, rtol=1e-4, atol=1e-5),
    Oracle(f"{OPTAX}.conditionally_mask", lambda d: (_params_grads(d), {}),
           run=_conditional_run, grad=False, rtol=1e-4, atol=1e-5),
    Oracle(f"{OPTAX}.per_example_global_norm_clip", _per_example, rtol=1e-4, atol=1e-5,
           dtypes=False),
    Oracle(f"{OPTAX}.chain", lambda d: (_params_grads(d), {}), run=_chain_run, grad=False),
    Oracle(f"{OPTAX}.named_chain", lambda d: (_params_grads(d), {}), run=_named_chain_run,
           grad=False),
    Oracle(f"{OPTAX}.masked", lambda d: (_params_grads(d), {}), run=_masked_run, grad=False),
    Oracle(f"{OPTAX}.lookahead", lambda d: (_params_grads(d, steps=4), {
        "sync_period": d(st.integers(1, 3)), "slow_step_size": d(_f32(0.1, 0.9))}),
        run=_lookahead_run, grad=False, rtol=1e-3, atol=1e-4),
    Oracle(f"{OPTAX}.apply_updates", _tree_pair),
    Oracle(f"{OPTAX}.global_norm", lambda d: ((_params_grads(d, steps=1)[0],), {})),
    Oracle(f"{OPTAX}.incremental_update", lambda d: (
        (*_tree_pair(d)[0], d(_f32(0.0, 1.0))), {})),
    Oracle(f"{OPTAX}.bias_correction", lambda d: (
        (_params_grads(d, steps=1)[0], d(DECAY), d(st.integers(1, 5))), {})),
    Oracle(f"{OPTAX}.update_moment", lambda d: (
        (*_tree_pair(d)[0], d(DECAY), d(st.integers(1, 2))), {})),
    Oracle(f"{OPTAX}.update_moment_per_elem_norm", lambda d: (
        (*_tree_pair(d)[0], d(DECAY), d(st.integers(1, 2))), {}), grad=False),
    Oracle(f"{OPTAX}.update_infinity_moment", lambda d: (
        (*_tree_pair(d)[0], d(DECAY), 1e-3), {}), grad=False),
    Oracle(f"{OPTAX}.safe_norm", lambda d: ((d(arrays(_shape(d), lo=-1.0, hi=1.0)),
                                             d(_f32(0.0, 2.0))), {}), rtol=1e-4, atol=1e-5),
    Oracle(f"{OPTAX}.safe_root_mean_squares", lambda d: (
        (d(arrays(_shape(d), lo=-1.0, hi=1.0)), d(_f32(0.0, 2.0))), {}), rtol=1e-4, atol=1e-5),
    Oracle(f"{OPTAX}.scale_gradient", lambda d: ((d(arrays(_shape(d))), d(_f32(-2.0, 2.0))),
                                                 {})),
]


def _agc_draw(d):
    """Parameters and gradients with leaves of 1 to 4 axes (each unit rule of
    ``adaptive_grad_clip``), and its keywords."""
    shape = _shape(d, min_dims=1, max_dims=4)
    params = {"w": _no_tiny(d(arrays(shape))), "b": _no_tiny(d(arrays(shape[-1:])))}
    grads = [{k: _no_tiny(d(arrays(v.shape))) for k, v in params.items()} for _ in range(2)]
    return (params, grads), {"clipping": d(_f32(0.01, 2.0)), "eps": d(_f32(1e-3, 0.1))}


def _agc_axis_run(L, fn, params, grads):
    return _descend(L, lambda: fn(0.3, axis=0), params, grads)


def _flatten_run(L, fn, params, grads):
    return _descend(L, lambda: fn(L.optim.adam(0.1)), params, grads)


def _monitor_run(L, fn, params, grads):
    """The measurements after each update: a plain measure and an averaged one."""
    opt = fn({"norm": L.optim.global_norm,
              "ema": L.optim.measure_with_ema(L.optim.global_norm, 0.7)})
    state, seen = opt.init(params), []
    for g in grads:
        _, state = opt.update(g, state, params)
        seen.append(state.measurements)
    return seen


def _measure_with_ema_run(L, fn, params, grads, debias):
    measure = fn(L.optim.global_norm, 0.6, debias=debias)
    state, seen = measure.init(params), []
    for g in grads:
        value, state = measure.update(g, state, params)
        seen.append(value)
    return seen


def _snapshot_run(L, fn, params, grads):
    opt = fn("norm", L.optim.global_norm)
    state = opt.init(params)
    seen = [state.measurement]
    for g in grads:
        _, state = opt.update(g, state, params)
        seen.append(state.measurement)
    return seen


def _tree_map_params_run(L, fn, params, grads):
    """``scale_by_adam``'s moments mapped with the gradients (``rest``), its count
    by ``transform_non_params``."""
    opt = L.optim.scale_by_adam()
    state = opt.init(params)
    _, state = opt.update(grads[0], state, params)
    mapped = fn(opt, lambda v, g: v * 2.0 + g, state, grads[1],
                transform_non_params=lambda c: c + 5)
    return mapped.count, mapped.mu, mapped.nu


def _layer_clip(d):
    (grads, bound), _ = _per_example(d)
    return (grads, bound), {"uniform": d(st.booleans())}


def _power_iteration_draw(d):
    """A symmetric positive matrix with a clear top eigenvalue (power iteration
    converges to it from any start) and a start ``v0``."""
    n = d(st.integers(1, 4))
    q, _ = np.linalg.qr(d(arrays((n, n), lo=-1.0, hi=1.0)) + 3 * np.eye(n))
    values = np.array([4.0] + [d(_f32(0.1, 2.0)) for _ in range(n - 1)])
    matrix = ((q * values) @ q.T).astype(np.float32)
    v0 = (d(arrays((n,), lo=0.5, hi=1.0)) + q[:, 0] * np.sign(q[:, 0].sum() or 1)).astype(
        np.float32)
    return (matrix,), {"v0": v0, "num_iters": d(st.sampled_from([1, 2, 200]))}


def _multi_normal_run(L, fn, loc, log_scale, x):
    d = fn(loc, log_scale)
    return d.log_prob(x), d.params, d.sample((2, 3), L.random.key(0)).shape


def _multi_normal_draw(d):
    n = d(st.integers(1, 4))
    return (d(arrays((n,))), d(arrays((n,), lo=-1.0, hi=1.0)), d(arrays((n,)))), {}


UTILITIES = [
    Oracle(f"{OPTAX}.adaptive_grad_clip", _agc_draw, run=_descend, grad=False, rtol=1e-4,
           atol=1e-5),
    Oracle(f"{OPTAX}.adaptive_grad_clip", lambda d: (_params_grads(d, steps=2), {}),
           run=_agc_axis_run, grad=False, rtol=1e-4, atol=1e-5),
    Oracle(f"{OPTAX}.flatten", lambda d: (_params_grads(d), {}), run=_flatten_run, grad=False,
           rtol=1e-3, atol=1e-4),
    Oracle(f"{OPTAX}.monitor", lambda d: (_params_grads(d), {}), run=_monitor_run, grad=False,
           rtol=1e-4, atol=1e-5),
    Oracle(f"{OPTAX}.measure_with_ema", lambda d: (_params_grads(d), {"debias": d(
        st.booleans())}), run=_measure_with_ema_run, grad=False, rtol=1e-4, atol=1e-5),
    Oracle(f"{OPTAX}.snapshot", lambda d: (_params_grads(d), {}), run=_snapshot_run,
           grad=False, rtol=1e-4, atol=1e-5),
    Oracle(f"{OPTAX}.tree_map_params", lambda d: (_params_grads(d, steps=2), {}),
           run=_tree_map_params_run, grad=False, rtol=1e-4, atol=1e-5),
    Oracle(f"{OPTAX}.per_example_layer_norm_clip", _layer_clip, rtol=1e-4, atol=1e-5,
           dtypes=False),
    Oracle(f"{OPTAX}.power_iteration", _power_iteration_draw, grad=False, rtol=1e-3,
           atol=1e-4),
    Oracle(f"{OPTAX}.multi_normal", _multi_normal_draw, run=_multi_normal_run, grad=False),
    Oracle(f"{OPTAX}.WrappedSchedule", lambda d: ((d(st.integers(0, 50)),), {}), grad=False,
           dtypes=False, run=lambda L, fn, count: fn(lambda c: 0.5 / (c + 1))(
               L.optim.ScaleByScheduleState(L.numpy.asarray(count)))),
]


def schedule(name, **draws):
    """``name(**kwargs)`` at steps 0, 3, ..., 30."""
    def args(d):
        return (), {k: d(v) if isinstance(v, st.SearchStrategy) else v
                    for k, v in draws.items()}
    return Oracle(f"{OPTAX}.{name}", args, grad=False, dtypes=False, rtol=1e-4, atol=1e-6,
                  run=lambda L, fn, **kw: [fn(**kw)(n) for n in range(0, 31, 3)])


STEPS = st.integers(1, 20)
SCHEDULES = [
    schedule("constant_schedule", value=LR),
    schedule("linear_schedule", init_value=LR, end_value=LR, transition_steps=STEPS,
             transition_begin=st.integers(0, 5)),
    schedule("polynomial_schedule", init_value=LR, end_value=LR, power=_f32(0.5, 3.0),
             transition_steps=STEPS),
    schedule("exponential_decay", init_value=LR, transition_steps=STEPS, decay_rate=DECAY,
             staircase=st.booleans()),
    schedule("cosine_decay_schedule", init_value=LR, decay_steps=STEPS, alpha=_f32(0.0, 0.5)),
    schedule("piecewise_constant_schedule", init_value=LR,
             boundaries_and_scales=st.just({5: 0.5, 12: 0.1})),
    schedule("warmup_cosine_decay_schedule", init_value=LR, peak_value=_f32(0.3, 1.0),
             warmup_steps=st.integers(1, 10), decay_steps=st.integers(11, 40)),
    schedule("warmup_constant_schedule", init_value=LR, peak_value=_f32(0.3, 1.0),
             warmup_steps=st.integers(1, 10)),
    schedule("warmup_exponential_decay_schedule", init_value=LR, peak_value=_f32(0.3, 1.0),
             warmup_steps=st.integers(1, 10), transition_steps=STEPS, decay_rate=DECAY),
    schedule("linear_onecycle_schedule", transition_steps=st.integers(10, 40),
             peak_value=_f32(0.3, 1.0)),
    schedule("cosine_onecycle_schedule", transition_steps=st.integers(10, 40),
             peak_value=_f32(0.3, 1.0)),
    schedule("piecewise_interpolate_schedule", interpolate_type=st.sampled_from(
        ["linear", "cosine"]), init_value=LR, boundaries_and_scales=st.just({5: 2.0, 12: 0.1})),
    schedule("sgdr_schedule", cosine_kwargs=st.just([
        {"init_value": 0.1, "peak_value": 1.0, "warmup_steps": 3, "decay_steps": 10},
        {"init_value": 0.1, "peak_value": 0.5, "warmup_steps": 2, "decay_steps": 12}])),
]

ORACLE = [*LOSSES, *OPTIMIZERS, *LINE_SEARCHES, *TRANSFORMS, *WRAPPERS, *UTILITIES,
          *SCHEDULES]

_TYPES = ("a type (a state, a protocol or an alias): no values to compare; "
          "tests/test_optim_*.py use it")
_WRAPPED = "a wrapper: tests/test_optim_wrappers.py checks it"

UNCHECKED = {
    **{f"optax.{n}": "the function of optax.losses of that name, checked there"
       for n in TOP_LEVEL_LOSSES},
    **{f"optax.{n}": _TYPES for n in (
        "AddDecayedWeightsState", "AddNoiseState", "ApplyEvery", "ApplyIfFiniteState",
        "ClipByGlobalNormState", "ClipState", "EmaState", "EmptyState", "FactoredState",
        "GradientTransformation", "GradientTransformationExtraArgs", "InjectHyperparamsState",
        "LookaheadParams", "LookaheadState", "MaskedNode", "MaskedState", "MultiStepsState",
        "MultiTransformState", "NonNegativeParamsState", "OptState", "Params",
        "PartitionState", "ScalarOrSchedule", "ScaleByAdaDeltaState", "ScaleByAdamState",
        "ScaleByAdanState", "ScaleByAmsgradState", "ScaleByBacktrackingLinesearchState",
        "ScaleByBeliefState", "ScaleByDistanceOverGradientsState", "ScaleByLBFGSState",
        "ScaleByLionState", "ScaleByNovogradState", "ScaleByOptimisticGradientState",
        "ScaleByRStdDevState", "ScaleByRmsState", "ScaleByRpropState", "ScaleByRssState",
        "ScaleBySM3State", "ScaleByScheduleState", "ScaleByTrustRatioState",
        "ScaleByZoomLinesearchState", "Schedule", "ShouldSkipUpdateFunction", "TraceState",
        "TransformInitFn", "TransformUpdateExtraArgsFn", "TransformUpdateFn", "Updates",
        "ZeroNansState", "ZoomLinesearchInfo", "ConditionallyMaskState",
        "ConditionallyTransformState", "AdaptiveGradClipState", "ScaleState",
        "MaskOrFn", "SnapshotState", "MonitorState")},
    **{f"optax.{n}": _WRAPPED for n in (
        "MultiSteps", "apply_if_finite", "freeze", "inject_hyperparams", "multi_transform",
        "partition", "periodic_update", "selective_transform", "skip_large_updates",
        "skip_not_finite", "with_extra_args_support", "stateless", "stateless_with_tree_map",
        "init_empty_state", "join_schedules")},
    "optax.safe_increment": "a counter's increment: tests/test_optim_optimizers.py",
    "optax.safe_int32_increment": "a counter's increment: its doctest checks the saturation",
}
