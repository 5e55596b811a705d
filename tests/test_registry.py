"""Every primitive has all its rules and at least one rule case, and its
shape rule agrees with what MLX computes."""

import mlx.core as mx
import pytest
from cases import CASES
from harness import to_mx
from hypothesis import given
from hypothesis import strategies as st

import ftorch as ft  # (defines every primitive)
from ftorch.core import Primitive, ShapeDtypeStruct, Tracer, aval_of, registry

RULES = ("jvp", "vjp", "batch")


@pytest.mark.parametrize("name", sorted(registry))
def test_primitive_has_every_rule(name):
    prim = registry[name]
    missing = [r for r in RULES if getattr(prim, r) is None]
    assert not missing, f"primitive {name!r} lacks rules: {missing}"


@pytest.mark.parametrize("name", sorted(registry))
def test_primitive_has_a_rule_case(name):
    assert any(c.prim == name for c in CASES), f"primitive {name!r} has no case in tests/cases_*.py"


class _Recorder:
    """Records every eager primitive call: (primitive, args, params, output)."""

    def __init__(self):
        self.calls = []

    def __enter__(self):
        self.original = Primitive.bind
        recorder = self

        def bind(prim, *args, **params):
            out = recorder.original(prim, *args, **params)
            if not any(isinstance(a, Tracer) for a in args):  # eager calls (not staged by jit)
                recorder.calls.append((prim, args, params, out))
            return out

        Primitive.bind = bind
        return self

    def __exit__(self, *exc):
        Primitive.bind = self.original


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
@given(data=st.data())
def test_case_uses_its_primitive_and_shape_rule_agrees(case, data):
    args = to_mx(data.draw(case.args))
    with _Recorder() as rec:
        if case.prim == "jit":
            # Outside transforms a jitted function calls its mx.compile'd
            # dispatcher without binding jit_p; under jvp, jit_p is bound on
            # concrete arrays (with the JVP of the staged graph).
            ft.jvp(case.fn, tuple(args), tuple(mx.ones_like(a) for a in args))
        else:
            case.fn(*args)
    assert any(p.name == case.prim for p, *_ in rec.calls), (
        f"case {case.name} never calls primitive {case.prim!r}")
    for prim, pargs, params, out in rec.calls:
        avals = [ShapeDtypeStruct(tuple(a.shape), a.dtype) if isinstance(a, mx.array) else a
                 for a in pargs]
        expected = prim.abstract_eval(*avals, **params)
        outs = out if prim.multiple_results else [out]
        exps = expected if prim.multiple_results else [expected]
        for o, e in zip(outs, exps):
            got = aval_of(o)
            assert got == e, f"{prim.name}: shape rule says {e}, MLX gives {got}"


def test_rules_attach_only_through_def_methods():
    # One way to attach a rule: the primitive's def_<rule> method (the
    # helpers of primitives/_rules.py call them). Assigning the attributes
    # directly anywhere else would be a second way.
    import ast
    import pathlib

    rule_attributes = {"jvp", "vjp", "vjp_fwd", "batch", "named_batch", "_abstract_eval",
                       "lowering", "needs_host", "communicates"}
    root = pathlib.Path(__file__).resolve().parent.parent / "ftorch"
    found = []
    for path in sorted(root.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            targets = node.targets if isinstance(node, ast.Assign) else (
                [node.target] if isinstance(node, (ast.AnnAssign, ast.AugAssign)) else [])
            for target in targets:
                if (isinstance(target, ast.Attribute) and target.attr in rule_attributes
                        and not (isinstance(target.value, ast.Name) and target.value.id == "self")):
                    found.append(f"{path.relative_to(root.parent)}:{node.lineno}")
    assert not found, f"rules assigned directly instead of through def_<rule>: {found}"
