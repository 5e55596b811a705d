"""Importing ftorch leaves ``mx.array`` as MLX made it but for ``x.at``: it
adds the methods ``ftorch/core/mlx_array.py`` documents, which MLX lacks,
replaces ``at`` alone, and what lets plain arrays meet tracers is in place
only while a transform runs."""

import json

import mlx.core as mx
import numpy as np
import pytest
from child import run_child

import ftorch as ft
import ftorch.numpy as fnp
from ftorch.core import mlx_array

# The names the module docstring (and docs/guides/sharp-bits.md) lists.
DOCUMENTED_METHODS = {"ravel", "clip", "take", "dot", "repeat", "conjugate", "trace"}
DOCUMENTED_REPLACED = ["at"]

# Run in a child that imports MLX alone first: each entry of the report is
# how mx.array's and mx.ArrayAt's attributes differ (by identity) from
# MLX's own at that point.
_SNAPSHOTS = """
import json
import mlx.core as mx

def attributes():
    return dict(vars(mx.array)), dict(vars(mx.ArrayAt))

def changes(before, now):
    return {"replaced": sorted(k for k in before if k in now and now[k] is not before[k]),
            "removed": sorted(k for k in before if k not in now),
            "added": sorted(k for k in now if k not in before)}

mlx_own = attributes()
mlx_own_at = mx.array.__dict__["at"]
report = {}

def record(label):
    now = attributes()
    report[label] = {"array": changes(mlx_own[0], now[0]), "at": changes(mlx_own[1], now[1])}

import ftorch as ft, ftorch.numpy as fnp
from ftorch.core import mlx_array
record("import")

w, table, x = mx.ones((2, 2)), mx.arange(6.0).reshape(3, 2), mx.array([1.0, 2.0])

def f(x):
    record("inside a transform")
    return fnp.sum(w @ x * 2.0 + w.at[0].set(x)[0])

ft.grad(f)(x)
record("after grad")
ft.vmap(lambda i: table[i])(mx.array([0, 2]))
record("after vmap")
ft.jit(f)(x), ft.jit(f)(x)
record("after jit")
ft.jvp(ft.grad(f), (x,), (x,))
record("after nested transforms")
try:
    ft.grad(lambda x: mx.sin(x))(x)
except TypeError:
    record("after a transform that raised")
print(json.dumps({"report": report, "added": mlx_array.ADDED_METHODS,
                  "replaced": mlx_array.REPLACED, "hooked": mlx_array.HOOKED,
                  "mlx_at_kept": mlx_array._MLX_OWN_AT is mlx_own_at}))
"""


def test_import_and_transforms_leave_mx_array_as_mlx_made_it():
    # (MLX before ftorch on purpose: FTORCH_BLAS=reference says the slow BLAS is fine.)
    out = json.loads(run_child(_SNAPSHOTS, prelude=False, env={"FTORCH_BLAS": "reference"})
                     .splitlines()[-1])
    report, added = out["report"], sorted(out["added"])
    assert set(added) <= DOCUMENTED_METHODS and added, added
    assert out["replaced"] == DOCUMENTED_REPLACED and "at" not in out["hooked"]
    assert out["mlx_at_kept"]  # mlx_at (the primitives' impls) still reaches MLX's own
    untouched = {"array": {"replaced": DOCUMENTED_REPLACED, "removed": [], "added": added},
                 "at": {"replaced": [], "removed": [], "added": []}}
    for label in ("import", "after grad", "after vmap", "after jit", "after nested transforms",
                  "after a transform that raised"):
        assert report[label] == untouched, label
    # While the transform ran, the hooks were in place (and only they).
    inside = report["inside a transform"]["array"]
    assert inside["replaced"] == sorted(out["hooked"] + DOCUMENTED_REPLACED)
    assert {"__add__", "__matmul__", "__iadd__", "__eq__", "__getitem__",
            "__setitem__"} <= set(inside["replaced"])
    assert inside["added"] == added and not inside["removed"]


def test_hooks_are_in_place_while_a_transform_runs_only():
    seen = []

    def f(x):
        seen.append(mx.array.__dict__["__matmul__"] is mlx_array._MLX_OWN["__matmul__"])
        return fnp.sum(mx.ones((2, 2)) @ x)

    ft.grad(f)(mx.ones(2))
    assert seen == [False]
    assert all(mx.array.__dict__[n] is v for n, v in mlx_array._MLX_OWN.items())
    with pytest.raises(ValueError):  # MLX's own operator: it refuses what it does not know
        mx.ones(2) + object()


def test_x_at_has_jax_updates_and_runs_mlx_own_for_mlx_names(monkeypatch):
    x = mx.arange(4.0)
    # JAX's methods, beside MLX's names, as fnp.at has them.
    public = {n for n in dir(fnp.at(x)[0]) if not n.startswith("_") and n not in ("x", "idx")}
    assert {n for n in dir(x.at[0]) if not n.startswith("_") and n not in ("x", "idx")} == public
    assert x.at[1:3].set(9.0).tolist() == [0.0, 9.0, 9.0, 3.0]
    assert x.at[2].get().item() == 2.0
    assert x.at[0].min(-1.0).tolist() == [-1.0, 1.0, 2.0, 3.0]
    assert x.at[0].max(7.0).tolist() == [7.0, 1.0, 2.0, 3.0]
    assert x.at[mx.array([0, 5])].add(1.0, mode="clip").tolist() == [1.0, 1.0, 2.0, 4.0]
    # What MLX refuses (a boolean mask, a NumPy index array) goes to fnp.at.
    assert x.at[x > 1.5].multiply(2.0).tolist() == [0.0, 1.0, 4.0, 6.0]
    assert x.at[np.array([0, 0])].add(1.0).tolist() == [2.0, 1.0, 2.0, 3.0]
    # MLX's names with plain arguments run MLX's own x.at[idx] and nothing of
    # ftorch's; keywords or a transform take fnp.at.
    calls = []
    monkeypatch.setattr(mlx_array, "array_api", lambda: calls.append(1) or fnp)
    i, v = mx.array([0, 0, 3]), mx.array([1.0, 2.0, 3.0])
    for name in ("add", "subtract", "multiply", "divide", "minimum", "maximum"):
        ours, mlx_own = getattr(x.at[i], name)(v), getattr(mlx_array.mlx_at(x)[i], name)(v)
        assert ours.tolist() == mlx_own.tolist(), name
    assert calls == []
    x.at[i].add(v, mode="drop")
    assert calls == [1]
    g = ft.grad(lambda s: fnp.sum(x.at[i].add(s) ** 2))(mx.array(1.0))
    assert g.item() == 2 * (2 * 2.0 + 4.0) and calls == [1, 1]  # y = [2, 1, 2, 4]


def test_x_at_inside_a_transform_is_fnp_at():
    # On plain arrays too: out-of-range updates are dropped, gradients flow.
    x = mx.zeros(3)
    g = ft.grad(lambda v: fnp.sum(x.at[1].set(v) ** 2))(mx.array(3.0))
    assert g.item() == 6.0
    out = ft.jit(lambda v: x.at[mx.array([0, 7])].add(v))(mx.array(1.0))
    assert out.tolist() == [1.0, 0.0, 0.0]


def test_install_is_idempotent():
    before = dict(vars(mx.array))
    mlx_array.install()
    now = vars(mx.array)
    assert now.keys() == before.keys() and all(now[k] is v for k, v in before.items())
