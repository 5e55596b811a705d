"""Bad input and code written for JAX: every case gives the right answer or an
error that says what to do, never a crash or a silent wrong answer. One class
per kind of defect; crashes run in a child process (``run_child``), so that a
regression fails one test instead of killing the run."""

import dataclasses
import operator

import mlx.core as mx
import numpy as np
import pytest
from child import run_child

import ftorch as ft
import ftorch.numpy as fnp
from ftorch.core import _ARRAY_METHODS


def _eq(a, b):
    np.testing.assert_allclose(np.array(a), np.array(b), rtol=1e-6, atol=1e-6)


# Each transform as a way to call a function of one array and get a concrete
# result that must equal the plain call.
TRANSFORMS = {
    "jvp": lambda f, x: ft.jvp(f, (x,), (fnp.ones_like(x),))[0],
    "vjp": lambda f, x: ft.vjp(f, x)[0],
    "vmap": lambda f, x: ft.vmap(f)(x[None])[0],
    "jit": lambda f, x: ft.jit(f)(x),
}


class TestCrashes:
    """Inputs that used to kill the process: they now give JAX's results."""

    def test_scatter_out_of_range_is_dropped(self):
        out = run_child("""
            x = mx.zeros(3)
            y = fnp.at(x)[mx.array([5])].add(1.0)
            z = fnp.at(x)[mx.array([10**9, -10**9, 1])].set(2.0)
            mx.eval(y, z)
            print(y.tolist(), z.tolist())
        """)
        assert out.split() == ["[0.0,", "0.0,", "0.0]", "[0.0,", "2.0,", "0.0]"]

    def test_gather_and_its_gradient_clamp(self):
        out = run_child("""
            x = mx.array([1.0, 2.0, 3.0])
            g = ft.grad(lambda x: fnp.sum(x[[0, 5]]))(x)
            v = fnp.getitem(x, mx.array([10**9, -1, -10**9]))
            mx.eval(g, v)
            print(g.tolist(), v.tolist())
        """)
        assert out.split() == ["[1.0,", "0.0,", "1.0]", "[3.0,", "3.0,", "1.0]"]

    def test_take_fills_out_of_range(self):
        out = run_child("""
            x = mx.array([1.0, 2.0, 3.0])
            t = fnp.take(x, mx.array([7, -1, 10**9]))
            a = fnp.take_along_axis(x, mx.array([3]), axis=0)
            mx.eval(t, a)
            print(t.tolist(), a.tolist())
        """)
        assert out.split() == ["[nan,", "3.0,", "nan]", "[nan]"]


    def test_out_of_range_int_index_of_a_plain_array(self):
        # MLX reads past the end for x[5] and crashes for x[-7]; JAX raises. A
        # plain array's x[i] outside transforms is MLX's own (docs/guides/
        # sharp-bits.md): fnp.getitem checks, and so does x[i] inside a transform.
        out = run_child("""
            import functools, operator
            x = mx.arange(6.0).reshape(2, 3)

            def in_a_transform(path):
                return ft.grad(lambda s: s * fnp.sum(functools.reduce(operator.getitem, path, x)))(
                    mx.array(1.0))

            for get in (lambda path: functools.reduce(fnp.getitem, path, x), in_a_transform):
                for path in ((5,), (-7,), (0, 3), (1, -4)):
                    try:
                        mx.eval(get(path))
                    except IndexError as e:
                        print("IndexError" if "out of bounds for axis 0" in str(e) else e)

            def set_in_a_transform(i):
                def f(s):
                    x[i] = 1.0
                    return s
                return ft.grad(f)(mx.array(1.0))

            for i in (2, -3):
                try:
                    set_in_a_transform(i)
                except IndexError as e:
                    print("IndexError" if f"index {i} is out of bounds" in str(e) else e)
            x[-1] = 7.0
            print(x[-2].tolist(), x[1].tolist())
        """)
        rows = ["[0.0,", "1.0,", "2.0]", "[7.0,", "7.0,", "7.0]"]
        assert out.split() == ["IndexError"] * 10 + rows

    def test_allocations_beyond_memory_raise(self):
        # More cases, and a pretend small device: tests/test_creation_args.py.
        out = run_child("""
            for make in (lambda: fnp.zeros((10**6, 10**6)),
                         lambda: fnp.sum(fnp.ones((10**6, 10**6))),
                         lambda: ft.grad(lambda x: fnp.sum(fnp.broadcast_to(x, (10**6, 10**6))))(
                             mx.array(1.0)),
                         lambda: ft.jit(lambda x: x + fnp.zeros((10**6, 10**6)))(mx.ones(1))):
                try:
                    mx.eval(make())
                except MemoryError as e:
                    print("MemoryError" if "(1000000, 1000000)" in str(e) else e)
        """)
        assert out.split() == ["MemoryError"] * 4


class TestSilentWrongAnswers:
    def test_vmap_maps_keyword_arguments(self):
        x, y = mx.arange(15.0).reshape(5, 3), mx.ones((5, 3))
        out = ft.vmap(lambda x, y: x + y)(x, y=y)
        assert out.shape == (5, 3)
        _eq(out, np.array(x) + 1)
        # in_axes applies to positionals only; keywords are mapped over axis 0.
        out = ft.vmap(lambda x, y: x * y, in_axes=(None,))(mx.ones(3), y=x)
        _eq(out, np.array(x))
        with pytest.raises(ValueError, match=r"inconsistent sizes.*kwargs\['y'\]"):
            ft.vmap(lambda x, y: x + y)(x, y=mx.ones((4, 3)))

    def test_duplicated_argnums(self):
        for transform in (ft.grad, ft.value_and_grad, ft.jacfwd, ft.jacrev):
            with pytest.raises(ValueError, match=r"argnums=\(0, 0\) names argument 0 twice"):
                transform(lambda x: fnp.sum(x), argnums=(0, 0))(mx.ones(2))
        with pytest.raises(ValueError, match="names argument 1 twice"):
            ft.grad(lambda x, y: fnp.sum(x * y), argnums=(1, -1))(mx.ones(2), mx.ones(2))

    def test_vmap_refuses_global_random_state(self):
        with pytest.raises(RuntimeError, match="global random state.*key="):
            ft.vmap(lambda x: x + mx.random.normal((3,)))(mx.ones((2, 3)))
        with pytest.raises(RuntimeError, match="global random state"):
            ft.vmap(lambda x: x * mx.random.uniform(), in_axes=None, axis_size=2)(1.0)
        # A key that is not traced draws the same numbers for every example.
        key = mx.random.key(0)
        out = ft.vmap(lambda x: x + mx.random.normal((3,), key=key))(mx.ones((2, 3)))
        _eq(out[0], out[1])

    @pytest.mark.parametrize("size", [2.5, "2", True, -1])
    def test_vmap_axis_size_must_be_an_int(self, size):
        with pytest.raises(TypeError, match="axis_size must be a non-negative int"):
            ft.vmap(lambda x: x, in_axes=None, axis_size=size)


class TestErrorsSayWhatToDo:
    @pytest.mark.parametrize("transform", list(TRANSFORMS))
    @pytest.mark.parametrize("call, name", [
        (lambda x: mx.exp(x), "fnp.exp"), (lambda x: mx.sum(x), "fnp.sum"),
        (lambda x: np.sin(x), "fnp.sin"), (lambda x: mx.add(mx.ones(3), x), "ftorch.numpy"),
        (lambda x: mx.array(x), "fnp.array"),
    ])
    def test_mlx_and_numpy_functions_on_tracers(self, transform, call, name):
        with pytest.raises(TypeError, match=r"(?s)traced.*call ftorch.numpy instead") as info:
            TRANSFORMS[transform](call, mx.ones(3))
        assert name in str(info.value)
        assert "test_bad_inputs.py" in str(info.value)  # the user's line

    @pytest.mark.parametrize("transform", list(TRANSFORMS))
    @pytest.mark.parametrize("use", [
        lambda t: t[0], lambda t: t[mx.array([0])], lambda t: t.item(), lambda t: float(t),
        lambda t: mx.exp(t), lambda t: np.asarray(t), lambda t: t + 1, lambda t: mx.ones(3) * t,
        lambda t: t.sum(), lambda t: fnp.sin(t), lambda t: bool(t),
    ])
    def test_leaked_tracers(self, transform, use):
        leaked = []
        TRANSFORMS[transform](lambda x: (leaked.append(x), x * 2)[1], mx.ones(3))
        name = {"jvp": "ft.jvp", "vjp": "ft.grad/ft.vjp", "vmap": "ft.vmap", "jit": "ft.jit"}
        with pytest.raises(ft.LeakedTracerError, match=name[transform]):
            use(leaked[0])

    @pytest.mark.parametrize("transform", [
        ft.grad, ft.value_and_grad, ft.jacfwd, ft.jacrev, ft.hessian, ft.vmap, ft.jit,
        ft.make_graph, lambda f: ft.jvp(f, (mx.ones(1),), (mx.ones(1),)),
        lambda f: ft.vjp(f, mx.ones(1)), lambda f: ft.linearize(f, mx.ones(1)),
        lambda f: ft.eval_shape(f, mx.ones(1)),
    ])
    @pytest.mark.parametrize("bad", [3, "f", None, mx.ones(2)])
    def test_transforms_of_non_callables(self, transform, bad):
        with pytest.raises(TypeError, match="expected a function to transform"):
            transform(bad)

    def test_float_in_vmap_says_the_value_varies(self):
        with pytest.raises(TypeError, match="varies over the mapped axis") as info:
            ft.vmap(lambda x: x * float(x))(mx.ones(3))
        assert ".item()" not in str(info.value)
        with pytest.raises(TypeError, match="varies over the mapped axis"):
            ft.vmap(lambda x: x if x > 0 else -x)(mx.ones(3))

    @pytest.mark.parametrize("bad", [None, "a", object(), {"a": 1}])
    def test_non_array_operands_are_named(self, bad):
        with pytest.raises(TypeError, match=r"exp: operand 0 must be an array or a Python scalar"):
            fnp.exp(bad)
        with pytest.raises(TypeError, match=r"add: operand 1 must be an array"):
            ft.grad(lambda x: fnp.sum(fnp.add(x, bad)))(mx.ones(2))
        with pytest.raises(TypeError, match=r"add: operand 1 must be an array"):
            ft.jit(lambda x: fnp.add(x, bad))(mx.ones(2))


    @pytest.mark.parametrize("value, error, match", [
        (2**63, OverflowError, "the Python int 9223372036854775808 does not fit in int64"),
        ([[1, -2**70]], OverflowError, "the Python int -1180591620717411303424 does not fit"),
        ([1, [2]], ValueError, "cannot make an array of list"),
        ([[1, 2], [3]], ValueError, "nested lists must be rectangular"),
        (["a"], ValueError, "Invalid type str"),
    ])
    def test_python_values_mlx_cannot_hold(self, value, error, match):
        # MLX says "std::bad_cast" for a large int, naming nothing.
        with pytest.raises(error, match=match):
            fnp.asarray(value)

    def test_python_ints_beyond_int64_as_operands(self):
        with pytest.raises(OverflowError, match=r"add: operand 1: the Python int 9223372036"):
            fnp.add(mx.ones(1), 2**63)
        for transform in (ft.jit, ft.grad, ft.vmap):
            with pytest.raises(OverflowError, match=r"multiply: operand 0: the Python int -1844"):
                transform(lambda x: fnp.sum(fnp.multiply(-2**64, x)))(mx.ones(1))

    def test_creation_arguments(self):
        with pytest.raises(ft.ConcretizationError, match="arange: stop must be a static"):
            ft.jit(lambda n: fnp.arange(n))(mx.array(3))
        with pytest.raises(TypeError, match="varies over the mapped axis"):
            ft.vmap(lambda n: fnp.zeros((n,)))(mx.array([2, 3]))
        with pytest.raises(TypeError, match=r"zeros: dtype must be .*did you mean 'float32'"):
            fnp.zeros(3, dtype="flot32")
        with pytest.raises(TypeError, match=r"ones: shape .* got 2.5 at position 1"):
            fnp.ones((2, 2.5))


class TestJaxCodeRunsAsWritten:
    # One call of every array method tracers have, with arguments that suit it.
    METHOD_ARGS = {
        "reshape": (-1,), "swapaxes": (0, 1), "moveaxis": (0, 1), "astype": (mx.float16,),
        "clip": (0.2, 0.7), "take": (mx.array([0, 2]),), "split": (2,), "repeat": (2,),
        "dot": (mx.ones((4, 2)),), "logsumexp": (1,), "cumsum": (1,), "cumprod": (0,),
    }

    @pytest.mark.parametrize("transform", list(TRANSFORMS))
    @pytest.mark.parametrize("name", _ARRAY_METHODS)
    def test_every_array_method_under_every_transform(self, transform, name):
        x = mx.array(np.random.default_rng(0).uniform(0.1, 0.9, (2, 4)).astype(np.float32))
        args = self.METHOD_ARGS.get(name, ())

        def f(x):
            out = getattr(x, name)(*args)
            out = out[0] if isinstance(out, list) else out
            return out.astype(mx.float32) if out.dtype == mx.bool_ else out

        _eq(TRANSFORMS[transform](f, x), f(x))

    @pytest.mark.parametrize("transform", list(TRANSFORMS))
    @pytest.mark.parametrize("name", ["T", "mT", "shape", "ndim", "size", "dtype", "itemsize",
                                      "nbytes"])
    def test_every_array_property_under_every_transform(self, transform, name):
        x = mx.ones((2, 3))
        if name in ("T", "mT"):
            _eq(TRANSFORMS[transform](lambda x: getattr(x, name), x), getattr(x, name))
        else:
            seen = []
            TRANSFORMS[transform](lambda x: (seen.append(getattr(x, name)), x)[1], x)
            assert seen[0] == getattr(x, name)

    def test_var_method_under_staging(self):
        x = mx.array([1.0, 2.0, 4.0])
        _eq(ft.jit(lambda x: x.var())(x), np.var(np.array(x)))
        assert "var" in str(ft.make_graph(lambda x: x.var())(x))
        assert ft.eval_shape(lambda x: x.var(), x).shape == ()

    def test_static_argnames_take_the_default(self):
        def f(x, n=2, *, scale=1.0):
            return x * n * scale

        g = ft.jit(f, static_argnames=("n", "scale"))
        _eq(g(mx.ones(2)), [2.0, 2.0])
        _eq(g(mx.ones(2), n=3), [3.0, 3.0])
        _eq(g(mx.ones(2), scale=0.5), [1.0, 1.0])
        _eq(ft.jit(f, static_argnums=1)(mx.ones(2)), [2.0, 2.0])

    def test_python_scalar_arguments_to_jit(self):
        step = ft.jit(lambda params, grads, lr: ft.tree.map(lambda p, g: p - lr * g,
                                                            params, grads))
        p = {"w": mx.ones(2, mx.bfloat16)}
        out = step(p, p, 0.5)
        assert out["w"].dtype == mx.bfloat16
        _eq(out["w"].astype(mx.float32), [0.5, 0.5])
        step(p, p, 0.1)
        assert step.trace_count == 1

    def test_python_scalars_in_eval_shape_and_make_graph(self):
        x16 = ft.ShapeDtypeStruct((3,), mx.float16)
        assert ft.eval_shape(lambda x, s: x * s, x16, 0.5).dtype == mx.float16
        assert ft.eval_shape(lambda x, n: x * n, x16, 2).dtype == mx.float16
        assert "astype[dtype=f16]" in str(ft.make_graph(lambda x, s: x * s)(x16, 0.5))

    def test_at_and_boolean_masks_on_plain_arrays(self):
        # x.at is ftorch's on plain arrays too; x[mask] outside transforms is
        # MLX's own (docs/guides/sharp-bits.md): fnp.getitem takes boolean masks.
        x = mx.arange(6.0)
        _eq(x.at[1:3].set(9.0), [0, 9, 9, 3, 4, 5])
        _eq(x.at[mx.array([0, 0])].add(1.0), [2, 1, 2, 3, 4, 5])
        _eq(x.at[2].get(), 2.0)
        _eq(x.at[0].min(-1.0), [-1, 1, 2, 3, 4, 5])
        _eq(x.at[0].max(7.0), [7, 1, 2, 3, 4, 5])
        _eq(x.at[x > 2].set(0.0), [0, 1, 2, 0, 0, 0])
        _eq(fnp.getitem(x, x > 2), [3, 4, 5])
        _eq(fnp.getitem(x, np.arange(6) % 2 == 0), [0, 2, 4])

        def f(x):  # the same function under grad and called plainly
            return fnp.sum(fnp.getitem(x.at[0].set(0.0), x > 1.5) ** 2)

        _eq(f(mx.array([1.0, 2.0, 3.0])), 13.0)
        _eq(ft.grad(f)(mx.array([1.0, 2.0, 3.0])), [0.0, 4.0, 6.0])
        # Inside a transform, a plain array takes them as a traced one does.
        w = mx.array([1.0, 2.0, 3.0])
        _eq(ft.grad(lambda s: fnp.sum(w.at[0].set(s)[w > 1.5] * s))(mx.array(2.0)), 5.0)

    @pytest.mark.parametrize("dtype, expected", [
        (float, mx.float32), (int, mx.int32), (bool, mx.bool_), ("float16", mx.float16),
        (np.float32, mx.float32), (np.dtype("int8"), mx.int8), ("bfloat16", mx.bfloat16),
    ])
    def test_astype_spellings(self, dtype, expected):
        # mx.array.astype is MLX's own (MLX dtypes); fnp.astype and a traced
        # value's astype take JAX's spellings.
        assert fnp.astype(mx.ones(2), dtype).dtype == expected
        assert ft.vmap(lambda x: x.astype(dtype))(mx.ones(2)).dtype == expected

    def test_dtype_spellings_and_clip_keywords(self):
        assert fnp.ones((2, 2), dtype=bool).dtype == mx.bool_
        assert fnp.zeros(3, dtype=np.float32).dtype == mx.float32
        assert fnp.full((2,), 1.5, dtype="int32").tolist() == [1, 1]
        assert ft.grad(lambda x: fnp.sum(x.astype(float)))(mx.ones(2, mx.float16)).tolist() \
            == [1.0, 1.0]
        _eq(fnp.clip(mx.array([-2.0, 0.5, 3.0]), min=0.0, max=1.0), [0.0, 0.5, 1.0])
        with pytest.raises(TypeError):
            fnp.clip(mx.ones(2), a_min=0.0, min=0.0)

    def test_register_dataclass(self):
        @ft.tree.register_dataclass
        @dataclasses.dataclass
        class Linear:
            w: mx.array
            b: mx.array
            act: str = dataclasses.field(default="tanh", metadata={"static": True})

        layer = Linear(mx.ones((2, 2)), mx.zeros(2))
        assert len(ft.tree.leaves(layer)) == 2
        g = ft.grad(lambda p, x: fnp.sum(fnp.tanh(x @ p.w + p.b)))(layer, mx.zeros(2))
        assert isinstance(g, Linear) and g.act == "tanh"
        _eq(g.b, [1.0, 1.0])
        ft.tree.register_dataclass(
            dataclasses.make_dataclass("P", ["a", "n"]), data_fields=["a"], meta_fields=["n"])
        with pytest.raises(ValueError, match="missing"):
            ft.tree.register_dataclass(dataclasses.make_dataclass("Q", ["a", "n"]),
                                       data_fields=["a"], meta_fields=[])
        with pytest.raises(TypeError, match="not a dataclass"):
            ft.tree.register_dataclass(int)


class TestMxArrayWithTracers:
    """Every operator and method of a plain mx.array that can receive a tracer
    defers to ftorch, under every transform."""

    TABLE = mx.arange(12.0).reshape(4, 3)

    @pytest.mark.parametrize("transform", list(TRANSFORMS))
    @pytest.mark.parametrize("op", [
        operator.add, operator.sub, operator.mul, operator.truediv, operator.floordiv,
        operator.mod, operator.pow, operator.lt, operator.le, operator.gt, operator.ge,
        operator.eq, operator.ne, operator.iadd, operator.isub, operator.imul,
        operator.itruediv, operator.ipow,
    ])
    def test_operators(self, transform, op):
        a = mx.array([0.5, 1.5, 2.5])

        def f(x):
            out = op(a, x)
            return out.astype(mx.float32) if out.dtype == mx.bool_ else out

        x = mx.array([1.0, 2.0, 3.0])
        _eq(TRANSFORMS[transform](f, x), f(x))

    @pytest.mark.parametrize("transform", list(TRANSFORMS))
    def test_matmul_and_bitwise(self, transform):
        w = mx.ones((3, 3))
        _eq(TRANSFORMS[transform](lambda x: w @ x, mx.arange(3.0)), [3.0, 3.0, 3.0])
        if transform in ("vmap", "jit"):  # integer values: no derivative to take
            m = mx.array([1, 2, 3])
            for op in (operator.and_, operator.or_, operator.xor):
                _eq(TRANSFORMS[transform](lambda x: op(m, x), mx.array([3, 3, 3])),
                    op(m, mx.array([3, 3, 3])))

    @pytest.mark.parametrize("transform", ["vmap", "jit", "jvp", "vjp"])
    @pytest.mark.parametrize("index", [
        lambda i: i, lambda i: (i, 1), lambda i: (i, slice(1, None)),
        lambda i: (slice(None), i % 3), lambda i: i[None],
    ])
    def test_getitem_with_traced_indices(self, transform, index):
        table = self.TABLE

        def f(x):  # the index is computed from the traced value
            return table[index(fnp.astype(x, mx.int32))]

        i = mx.array(2.0)
        _eq(TRANSFORMS[transform](f, i), f(i))

    def test_embedding_lookup_in_a_per_example_function(self):
        idx = mx.array([3, 0, 2])
        _eq(ft.vmap(lambda i: self.TABLE[i])(idx), self.TABLE[idx])
        _eq(ft.vmap(lambda t, i: t[i], in_axes=(None, 0))(self.TABLE, idx), self.TABLE[idx])
        g = ft.grad(lambda w: fnp.sum(ft.vmap(lambda i: self.TABLE[i] * w)(idx)))(mx.array(1.0))
        _eq(g, float(np.array(self.TABLE)[[3, 0, 2]].sum()))

    def test_setitem_with_a_tracer_says_use_at(self):
        a = mx.zeros(3)
        for transform in TRANSFORMS.values():
            with pytest.raises(TypeError, match=r"x = x.at\[idx\].set\(value\)"):
                transform(lambda x: (a.__setitem__(0, x[0]), x)[1], mx.ones(3))
        assert a.tolist() == [0.0, 0.0, 0.0]
