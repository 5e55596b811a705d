"""Importing ftorch leaves ``mx.array`` as MLX made it: it only adds the
methods ``ftorch/core/mlx_array.py`` documents, which MLX lacks, and what
lets plain arrays meet tracers is in place only while a transform runs."""

import json

import mlx.core as mx
import pytest
from child import run_child

import ftorch as ft
import ftorch.numpy as fnp
from ftorch.core import mlx_array

# The names the module docstring (and docs/guides/sharp-bits.md) lists.
DOCUMENTED_METHODS = {"ravel", "clip", "take", "dot", "repeat", "conjugate", "trace"}
DOCUMENTED_AT_METHODS = {"set", "get", "min", "max"}

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
                  "added_at": mlx_array.ADDED_AT_METHODS, "hooked": mlx_array.HOOKED}))
"""


def test_import_and_transforms_leave_mx_array_as_mlx_made_it():
    # (MLX before ftorch on purpose: FTORCH_BLAS=reference says the slow BLAS is fine.)
    out = json.loads(run_child(_SNAPSHOTS, prelude=False, env={"FTORCH_BLAS": "reference"})
                     .splitlines()[-1])
    report, added = out["report"], sorted(out["added"])
    assert set(added) <= DOCUMENTED_METHODS and added, added
    assert set(out["added_at"]) == DOCUMENTED_AT_METHODS
    untouched = {"array": {"replaced": [], "removed": [], "added": added},
                 "at": {"replaced": [], "removed": [], "added": sorted(DOCUMENTED_AT_METHODS)}}
    for label in ("import", "after grad", "after vmap", "after jit", "after nested transforms",
                  "after a transform that raised"):
        assert report[label] == untouched, label
    # While the transform ran, the hooks were in place (and only they).
    inside = report["inside a transform"]["array"]
    assert inside["replaced"] == sorted(out["hooked"])
    assert {"__add__", "__matmul__", "__iadd__", "__eq__", "__getitem__", "__setitem__",
            "at"} <= set(inside["replaced"])
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


def test_jax_update_methods_on_mlx_at_say_to_use_fnp_at():
    x = mx.zeros(3)
    assert x.at[mx.array([0, 0])].add(1.0).tolist() == [2.0, 0.0, 0.0]  # MLX's own
    for name in sorted(DOCUMENTED_AT_METHODS):
        with pytest.raises(TypeError, match=rf"fnp.at\(x\)\[idx\]\.{name}"):
            getattr(x.at[0], name)(1.0)
    assert fnp.at(x)[1].set(5.0).tolist() == [0.0, 5.0, 0.0]
    # Inside a transform, x.at of a plain array is fnp.at(x).
    g = ft.grad(lambda v: fnp.sum(x.at[1].set(v) ** 2))(mx.array(3.0))
    assert g.item() == 6.0


def test_install_is_idempotent():
    before = dict(vars(mx.array))
    mlx_array.install()
    now = vars(mx.array)
    assert now.keys() == before.keys() and all(now[k] is v for k, v in before.items())
