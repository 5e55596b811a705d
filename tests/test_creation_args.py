"""Arguments of the creation ops and of every op that takes a dtype or a
shape: allocations beyond the device's memory, bad shapes and dtypes, traced
sizes, every spelling of a dtype, and ``clip``'s two sets of keywords."""

import mlx.core as mx
import numpy as np
import pytest
from child import run_child
from hypothesis import given
from hypothesis import strategies as st

import ftorch as ft
import ftorch.numpy as fnp
from ftorch import memory
from ftorch.dtypes import to_mlx_dtype

HUGE = (10**6, 10**6)  # 4 TB of float32: more than any device has

# ----------------------------------------------------------------------------
# Allocations beyond memory
# ----------------------------------------------------------------------------

# Each evaluates an array of shape HUGE; before the check, each crashed the
# process (MLX allocates lazily and does not check the allocation).
HUGE_ALLOCATIONS = {
    "zeros": "mx.eval(fnp.zeros((10**6, 10**6)))",
    "ones": "mx.eval(fnp.ones((10**6, 10**6)))",
    "empty": "mx.eval(fnp.empty((10**6, 10**6)))",
    "full": "mx.eval(fnp.full((10**6, 10**6), 2.0))",
    "eye": "mx.eval(fnp.eye(10**6))",
    "identity": "mx.eval(fnp.identity(10**6))",
    "zeros_like": "mx.eval(fnp.zeros_like(mx.broadcast_to(mx.array(1.0), (10**6, 10**6))))",
    "broadcast_to": "mx.eval(fnp.broadcast_to(mx.ones(10**6), (10**6, 10**6)) + 1)",
    "tile": "mx.eval(fnp.tile(mx.ones(10**6), (10**6, 1)))",
    "repeat": "mx.eval(fnp.repeat(mx.ones(10**6), 10**6))",
    "pad": "mx.eval(fnp.pad(mx.ones((1, 1)), 10**6 // 2))",
    # The sum, grad and jit versions of the issue's reproduction.
    "sum of zeros": "mx.eval(fnp.sum(fnp.zeros((10**6, 10**6))))",
    "matmul with zeros": "mx.eval(fnp.zeros((10**6, 10**6)) @ mx.ones(10**6))",
    "grad of broadcast_to":
        "mx.eval(ft.grad(lambda x: fnp.sum(fnp.broadcast_to(x, (10**6, 10**6))))(mx.array(1.0)))",
    "grad of full":
        "mx.eval(ft.grad(lambda v: fnp.sum(fnp.full((10**6, 10**6), v)))(mx.array(1.0)))",
    "jit of zeros":
        "mx.eval(ft.jit(lambda x: fnp.sum(fnp.zeros((10**6, 10**6))) + x)(mx.ones(())))",
    "jit of broadcast_to":
        "mx.eval(ft.jit(lambda x: fnp.sum(fnp.broadcast_to(x, (10**6, 10**6))))(mx.ones(())))",
    "jit of grad": "mx.eval(ft.jit(ft.grad(lambda x: fnp.sum(fnp.broadcast_to(x, (10**6, 10**6)))))"
                   "(mx.ones(())))",
}


@pytest.fixture
def small_device(monkeypatch):
    """A pretend device of 1 MB: arrays past it are refused before MLX is
    asked, so a broken check allocates a few MB here, not terabytes."""
    monkeypatch.setattr(memory, "_memory", (10**6, "a pretend device"))
    monkeypatch.setattr(memory, "_ELEMENTS_THAT_ALWAYS_FIT", 0)


BIG = (1000, 1000)  # 4 MB of float32: more than the pretend device
x1000, one = mx.ones(1000), mx.array(1.0)

# Each makes an array of shape BIG; the error names the first word of the key.
CHECKED_PATHS = {
    "zeros": lambda: fnp.zeros(BIG),
    "ones": lambda: fnp.ones(BIG),
    "empty": lambda: fnp.empty(BIG),
    "full": lambda: fnp.full(BIG, 1.0),
    "zeros_like": lambda: fnp.zeros_like(mx.broadcast_to(mx.array(1.0), BIG)),
    "ones_like": lambda: fnp.ones_like(mx.broadcast_to(mx.array(1.0), BIG)),
    "empty_like": lambda: fnp.empty_like(mx.broadcast_to(mx.array(1.0), BIG)),
    "full_like": lambda: fnp.full_like(mx.broadcast_to(mx.array(1.0), BIG), 2.0),
    "eye": lambda: fnp.eye(1000),
    "identity": lambda: fnp.identity(1000),
    "arange": lambda: fnp.arange(10**6),
    "linspace": lambda: fnp.linspace(0, 1, 10**6),
    "broadcast_to": lambda: fnp.broadcast_to(x1000, BIG),
    "tile": lambda: fnp.tile(x1000, (1000, 1)),
    "repeat": lambda: fnp.repeat(x1000, 1000),
    "pad": lambda: fnp.pad(mx.ones((998, 998)), 1),
    "concatenate": lambda: fnp.concatenate([mx.ones((500, 1000))] * 2),
    # Under transforms: at trace time for jit, in the batching rule for vmap.
    "grad of broadcast_to": lambda: ft.grad(lambda x: fnp.sum(fnp.broadcast_to(x, BIG)))(one),
    "jit of broadcast_to": lambda: ft.jit(lambda x: fnp.sum(fnp.broadcast_to(x, BIG)))(one),
    "jit of zeros": lambda: ft.jit(lambda x: x + fnp.sum(fnp.zeros(BIG)))(one),
    # Each example fits; the batch does not.
    "vmap of broadcast_to": lambda: ft.vmap(lambda x: fnp.broadcast_to(x, (1000,)))(x1000),
}


class TestAllocationsBeyondMemory:
    @pytest.mark.parametrize("name", HUGE_ALLOCATIONS)
    def test_huge_allocation_is_a_memory_error(self, name):
        out = run_child(f"""
            try:
                {HUGE_ALLOCATIONS[name]}
            except MemoryError as e:
                print("MemoryError:", e)
            else:
                print("no error")
        """, timeout=60)
        assert out.startswith("MemoryError:"), out
        # What was asked for, how much that is and how much there is.
        assert "shape (" in out and "float32" in out, out
        assert "bytes" in out and "available" in out, out

    def test_message_names_function_shape_dtype_and_bytes(self):
        with pytest.raises(MemoryError) as info:
            fnp.zeros(HUGE, dtype=mx.int8)
        message = str(info.value)
        assert message.startswith("zeros: an array of shape (1000000, 1000000) and dtype int8")
        assert "1.0 TB (1000000000000 bytes)" in message
        size, _ = memory.device_memory()
        assert memory._bytes(size) in message

    def test_device_memory_is_read_once(self, monkeypatch):
        size, source = memory.device_memory()
        assert size > 2**20 and source
        monkeypatch.setattr(memory, "_read_device_memory", lambda: pytest.fail("read again"))
        assert memory.device_memory() == (size, source)

    @pytest.mark.parametrize("name", CHECKED_PATHS)
    def test_refused_before_mlx_is_asked(self, small_device, name):
        function = name.split()[-1]
        with pytest.raises(MemoryError, match=rf"^{function}\b.*shape \((1000, 1000|1000000,)\) "
                                              r"and dtype (float32|int32) needs 4\.0 MB \(4000000 "
                                              r"bytes\), more than the 1\.0 MB available"):
            CHECKED_PATHS[name]()

    def test_what_fits_is_not_refused(self, small_device):
        assert fnp.zeros((500, 500)).shape == (500, 500)  # exactly 1 MB
        assert fnp.broadcast_to(x1000, (250, 1000)).shape == (250, 1000)
        with pytest.raises(MemoryError, match="int8"):
            fnp.zeros((1001, 1000), dtype="int8")
        assert fnp.zeros((1000, 1000), dtype="int8").dtype == mx.int8


# ----------------------------------------------------------------------------
# Argument errors
# ----------------------------------------------------------------------------

SHAPED = {
    "zeros": lambda shape: fnp.zeros(shape),
    "ones": lambda shape: fnp.ones(shape),
    "empty": lambda shape: fnp.empty(shape),
    "full": lambda shape: fnp.full(shape, 1.0),
    "broadcast_to": lambda shape: fnp.broadcast_to(mx.array(1.0), shape),
}


class TestArgumentErrors:
    @pytest.mark.parametrize("fname", SHAPED)
    def test_float_in_a_shape(self, fname):
        with pytest.raises(TypeError, match=rf"^{fname}: shape must be an int or a sequence of "
                                            r"ints, got 2\.5 at position 1$"):
            SHAPED[fname]((2, 2.5))
        with pytest.raises(TypeError, match=rf"^{fname}: shape .* got 3\.0$"):
            SHAPED[fname](3.0)

    @pytest.mark.parametrize("fname", SHAPED)
    @pytest.mark.parametrize("shape", [None, "ab", object(), [2, None], (mx.array(1.5),)])
    def test_other_non_ints_in_a_shape(self, fname, shape):
        with pytest.raises(TypeError, match=rf"^{fname}: shape must be an int or a sequence"):
            SHAPED[fname](shape)

    @pytest.mark.parametrize("fname", SHAPED)
    def test_negative_size(self, fname):
        with pytest.raises(ValueError, match=rf"^{fname}: sizes in shape must not be negative, "
                                             r"got -1 at position 1$"):
            SHAPED[fname]((2, -1))
        with pytest.raises(ValueError, match=rf"^{fname}: shape must not be negative, got -3"):
            SHAPED[fname](-3)

    @pytest.mark.parametrize("fname", SHAPED)
    def test_size_beyond_mlx_dimensions(self, fname):
        with pytest.raises(ValueError, match=r"at most 2\*\*31 - 1 .* got 2147483648 at pos"):
            SHAPED[fname]((2**31, 0))

    @pytest.mark.parametrize("fname", SHAPED)
    @pytest.mark.parametrize("shape", [
        (np.int64(2), 3), (mx.array(2), np.array(3)), [2, 3], np.array([2, 3]), mx.array([2, 3]),
    ])
    def test_integer_like_sizes_are_accepted(self, fname, shape):
        assert SHAPED[fname](shape).shape == (2, 3)

    @given(st.lists(st.integers(0, 4), max_size=4))
    def test_any_valid_shape(self, dims):
        for make in SHAPED.values():
            assert make(dims).shape == tuple(dims)
            assert make(tuple(np.int32(d) for d in dims)).shape == tuple(dims)

    @pytest.mark.parametrize("call, error, match", [
        (lambda: fnp.eye(2.5), TypeError, r"^eye: N must be an int, got 2\.5$"),
        (lambda: fnp.eye(2, 1.5), TypeError, r"^eye: M must be an int"),
        (lambda: fnp.eye(2, k=0.5), TypeError, r"^eye: k must be an int"),
        (lambda: fnp.eye(-1), ValueError, r"^eye: N must not be negative, got -1$"),
        (lambda: fnp.identity(None), TypeError, r"^identity: n must be an int, got None$"),
        (lambda: fnp.linspace(0, 1, 2.5), TypeError, r"^linspace: num must be an int"),
        (lambda: fnp.linspace(0, 1, -2), ValueError, r"^linspace: num must not be negative"),
        (lambda: fnp.linspace("a", 1), TypeError, r"^linspace: start must be a real number"),
        (lambda: fnp.arange("a"), TypeError, r"^arange: stop must be a real number, got 'a'$"),
        (lambda: fnp.arange(0, 1j), TypeError, r"^arange: stop must be a real number"),
        (lambda: fnp.arange(2**31 + 5), ValueError, r"^arange: the length of the result must "
                                                    r"be at most 2\*\*31 - 1"),
        (lambda: fnp.reshape(mx.ones(6), (2, 3.0)), TypeError, r"^reshape: shape must be an "
                                                              r"integer, got 3\.0$"),
        (lambda: fnp.tile(mx.ones(2), 1.5), TypeError, r"^tile: reps must be an int"),
    ])
    def test_sizes_of_other_ops(self, call, error, match):
        with pytest.raises(error, match=match):
            call()

    def test_numpy_and_mlx_scalars_as_sizes_and_bounds(self):
        assert fnp.eye(np.int64(2), mx.array(3)).shape == (2, 3)
        assert fnp.arange(np.float32(1.5), mx.array(4)).tolist() == [1.5, 2.5, 3.5]
        assert fnp.linspace(np.float64(0), mx.array(1.0), np.int8(3)).tolist() == [0.0, 0.5, 1.0]

    @pytest.mark.parametrize("spelling", ["flot32", "float31", "xyz"])
    @pytest.mark.parametrize("fname, call", [
        ("zeros", lambda d: fnp.zeros(2, dtype=d)),
        ("ones", lambda d: fnp.ones(2, d)),
        ("full", lambda d: fnp.full(2, 1.0, d)),
        ("zeros_like", lambda d: fnp.zeros_like(mx.ones(2), d)),
        ("arange", lambda d: fnp.arange(3, dtype=d)),
        ("linspace", lambda d: fnp.linspace(0, 1, dtype=d)),
        ("eye", lambda d: fnp.eye(2, dtype=d)),
        ("asarray", lambda d: fnp.asarray([1, 2], d)),
        ("astype", lambda d: fnp.astype(mx.ones(2), d)),
        ("astype", lambda d: ft.grad(lambda x: fnp.sum(x.astype(d)))(mx.ones(2))),
        ("sum", lambda d: fnp.sum(mx.ones(2), dtype=d)),
        ("cumsum", lambda d: fnp.cumsum(mx.ones(2), dtype=d)),
        ("result_type", lambda d: fnp.result_type(mx.ones(2), d)),
    ])
    def test_bad_dtype_string(self, fname, call, spelling):
        with pytest.raises(TypeError, match=rf"^{fname}: (dtype|argument 1) must be an MLX dtype "
                                            r"\(mx\.float32\), a Python type .*a dtype name "
                                            rf".*got '{spelling}'"):
            call(spelling)

    def test_bad_dtype_suggests_the_name_meant(self):
        with pytest.raises(TypeError, match=r"got 'flot32' \(did you mean 'float32'\?\)$"):
            fnp.zeros(2, dtype="flot32")

    @pytest.mark.parametrize("dtype, match", [
        (object, r"NumPy's object, which MLX does not have"),
        ("U5", r"MLX does not have"),
        (np.longdouble if np.dtype(np.longdouble).itemsize > 8 else "float128", r"MLX"),
        (3, r"got 3$"),
        ([mx.float32], r"got \[mlx\.core\.float32\]$"),
        (np.complex128, r"MLX has no complex128; use complex64"),
        ("complex128", r"MLX has no complex128; use complex64"),
    ])
    def test_dtypes_mlx_cannot_represent(self, dtype, match):
        with pytest.raises(TypeError, match=rf"^zeros: dtype.*{match}"):
            fnp.zeros(2, dtype=dtype)

    # Traced sizes: each call's first argument is traced; ``fname`` and
    # ``what`` are how the error names the function and the argument.
    TRACED_SIZES = [
        ("arange", "stop", lambda n: fnp.arange(n)),
        ("arange", "step", lambda n: fnp.arange(0, 5, n)),
        ("zeros", "shape at position 0", lambda n: fnp.zeros((n, 2))),
        ("zeros", "shape", lambda n: fnp.zeros(n)),
        ("ones", "shape at position 1", lambda n: fnp.ones([2, n])),
        ("empty", "shape", lambda n: fnp.empty(n)),
        ("full", "shape at position 0", lambda n: fnp.full((n,), 1.0)),
        ("linspace", "num", lambda n: fnp.linspace(0, 1, n)),
        ("eye", "N", lambda n: fnp.eye(n)),
        ("eye", "M", lambda n: fnp.eye(2, n)),
        ("eye", "k", lambda n: fnp.eye(2, k=n)),
        ("identity", "n", lambda n: fnp.identity(n)),
        ("broadcast_to", "shape at position 0", lambda n: fnp.broadcast_to(1.0, (n,))),
        ("tile", "reps", lambda n: fnp.tile(mx.ones(2), n)),
        ("repeat", "repeats", lambda n: fnp.repeat(mx.ones(2), n)),
        ("reshape", "shape", lambda n: fnp.reshape(mx.ones(6), (n, -1))),
    ]

    @pytest.mark.parametrize("fname, what, call", TRACED_SIZES)
    def test_traced_size_under_jit(self, fname, what, call):
        with pytest.raises(ft.ConcretizationError) as info:
            ft.jit(call)(mx.array(2))
        message = str(info.value)
        assert message.startswith(f"{fname}: {what} must be a static Python "), message
        # The ConcretizationError's own advice follows.
        assert "static_argnums" in message and "while ft.jit traces" in message, message

    @pytest.mark.parametrize("fname, what, call", TRACED_SIZES)
    def test_traced_size_under_vmap(self, fname, what, call):
        with pytest.raises(TypeError) as info:
            ft.vmap(call)(mx.array([2, 3]))
        message = str(info.value)
        assert message.startswith(f"{fname}: {what} must be a static Python "), message
        assert "varies over the mapped axis" in message, message

    @pytest.mark.parametrize("fname, what, call", TRACED_SIZES)
    def test_traced_size_with_a_concrete_value(self, fname, what, call):
        # Under grad and jvp a traced integer has its value: the op runs.
        def f(x):
            n = fnp.astype(x * 0 + 2, mx.int32)
            return fnp.sum(call(n) * x)

        value = f(mx.array(1.5))
        assert ft.grad(f)(mx.array(1.5)).item() == pytest.approx(value.item() / 1.5)
        primal, tangent = ft.jvp(f, (mx.array(1.5),), (mx.array(1.0),))
        assert primal.item() == pytest.approx(value.item())

    @pytest.mark.parametrize("call", [lambda n: fnp.arange(n), lambda n: fnp.zeros(n),
                                      lambda n: fnp.eye(n)])
    def test_static_argnums_is_the_remedy(self, call):
        assert ft.jit(call, static_argnums=0)(3).shape[0] == 3

    def test_traced_float_bounds_of_arange(self):
        with pytest.raises(ft.ConcretizationError, match=r"^arange: start must be a static "
                                                         r"Python number, not a traced value"):
            ft.jit(lambda a: fnp.arange(a, 5.0))(mx.array(1.0))
        with pytest.raises(TypeError, match=r"^arange: stop .*varies over the mapped axis"):
            ft.vmap(lambda b: fnp.arange(0.0, b))(mx.array([1.0, 2.0]))
        g = ft.grad(lambda a: fnp.sum(fnp.arange(a, 3.0)) * a)(mx.array(0.5))
        assert g.item() == pytest.approx(0.5 + 1.5 + 2.5)

    def test_non_integer_traced_size(self):
        with pytest.raises(TypeError, match=r"^zeros: shape must be an int or a sequence of "
                                            r"ints, got a traced f32\[\] array"):
            ft.jit(lambda x: fnp.zeros(x))(mx.array(2.0))
        with pytest.raises(TypeError, match=r"^eye: N must be an int, got a traced f32\[2\]"):
            ft.grad(lambda x: fnp.sum(fnp.eye(x)))(mx.ones(2))

    def test_linspace_bounds_may_be_traced(self):
        def f(a, b):
            return fnp.sum(fnp.linspace(a, b, 5) ** 2)

        a, b = mx.array(1.0), mx.array(3.0)
        points = np.linspace(1.0, 3.0, 5)
        np.testing.assert_allclose(ft.jit(f)(a, b).item(), np.sum(points ** 2), rtol=1e-6)
        grads = ft.grad(f, argnums=(0, 1))(a, b)
        weights = np.linspace(0.0, 1.0, 5)
        np.testing.assert_allclose([g.item() for g in grads],
                                   [np.sum(2 * points * (1 - weights)),
                                    np.sum(2 * points * weights)], rtol=1e-6)
        ends = ft.vmap(lambda b: fnp.linspace(0.0, b, 3))(mx.array([1.0, 2.0]))
        assert ends.tolist() == [[0.0, 0.5, 1.0], [0.0, 1.0, 2.0]]
        # Array bounds, as in jax.numpy: the points run along a new leading axis.
        g = ft.grad(lambda b: fnp.sum(fnp.linspace(0.0, b, 3)))(mx.ones(2))
        assert g.tolist() == [1.5, 1.5]


# ----------------------------------------------------------------------------
# dtype arguments
# ----------------------------------------------------------------------------

SPELLINGS = [
    (float, mx.float32), (int, mx.int32), (bool, mx.bool_), (complex, mx.complex64),
    (np.float32, mx.float32), (np.float64, mx.float64), (np.float16, mx.float16),
    (np.int8, mx.int8), (np.int64, mx.int64), (np.uint8, mx.uint8), (np.bool_, mx.bool_),
    (np.complex64, mx.complex64), (np.dtype("int64"), mx.int64), (np.dtype(np.uint32), mx.uint32),
    ("float32", mx.float32), ("bfloat16", mx.bfloat16), ("int8", mx.int8), ("bool", mx.bool_),
    ("float64", mx.float64), ("uint16", mx.uint16), ("float", mx.float32), ("int", mx.int32),
    ("f2", mx.float16), ("<i8", mx.int64), (mx.float16, mx.float16), (mx.bfloat16, mx.bfloat16),
]
spelling_ids = [getattr(s, "__name__", str(s)) for s, _ in SPELLINGS]

# Functions taking a dtype, with whether they take every kind (some MLX ops
# refuse bool, complex or integer outputs).
DTYPE_TAKERS = {
    "zeros": lambda d: fnp.zeros(3, dtype=d),
    "ones": lambda d: fnp.ones((2, 2), d),
    "empty": lambda d: fnp.empty(2, dtype=d),
    "full": lambda d: fnp.full((2,), 1, dtype=d),
    "zeros_like": lambda d: fnp.zeros_like(mx.ones(2), dtype=d),
    "ones_like": lambda d: fnp.ones_like(mx.ones(2), d),
    "empty_like": lambda d: fnp.empty_like(mx.ones(2), dtype=d),
    "full_like": lambda d: fnp.full_like(mx.ones(2), 1, dtype=d),
    "arange": lambda d: fnp.arange(3, dtype=d),
    "linspace": lambda d: fnp.linspace(0, 2, 3, dtype=d),
    "eye": lambda d: fnp.eye(2, dtype=d),
    "identity": lambda d: fnp.identity(2, d),
    "asarray": lambda d: fnp.asarray([1, 0], dtype=d),
    "array": lambda d: fnp.array(np.ones(2), d),
    "asarray of an array": lambda d: fnp.asarray(mx.ones(2), dtype=d),
    "astype": lambda d: fnp.astype(mx.ones(2), d),
    "astype method": lambda d: ft.vmap(lambda x: x.astype(d))(mx.ones(2)),
    "sum": lambda d: fnp.sum(mx.ones((2, 2)), axis=0, dtype=d),
    "mean": lambda d: fnp.mean(mx.ones(2), dtype=d),
    "prod": lambda d: fnp.prod(mx.ones(2), dtype=d),
    "var": lambda d: fnp.var(mx.ones(2), dtype=d),
    "std": lambda d: fnp.std(mx.ones(2), dtype=d),
    "cumsum": lambda d: fnp.cumsum(mx.ones(2), dtype=d),
    "cumprod": lambda d: fnp.cumprod(mx.ones(2), dtype=d),
}
REFUSED_KINDS = {"arange": (mx.bool_,)}  # MLX: "bool not supported for arange"


class TestDtypeArguments:
    @pytest.mark.parametrize("spelling, expected", SPELLINGS, ids=spelling_ids)
    def test_to_mlx_dtype(self, spelling, expected):
        assert to_mlx_dtype(spelling, "f: dtype") == expected

    def test_an_mlx_dtype_is_returned_as_it_is(self):
        for dtype in (mx.float32, mx.int8, mx.bool_, mx.complex64):
            assert to_mlx_dtype(dtype, "f: dtype") is dtype

    @pytest.mark.parametrize("fname", DTYPE_TAKERS)
    @pytest.mark.parametrize("spelling, expected", SPELLINGS, ids=spelling_ids)
    def test_every_spelling_everywhere(self, fname, spelling, expected):
        if expected in REFUSED_KINDS.get(fname, ()):
            pytest.skip(f"MLX has no {fname} of {expected}")
        out = DTYPE_TAKERS[fname](spelling)
        assert out.dtype == expected

    @pytest.mark.parametrize("fill, dtype, expected", [
        (1.5, mx.int32, [1, 1]), (1, bool, [True, True]), (0, "bool", [False, False]),
        (mx.array(2.7), int, [2, 2]), (np.float64(0.5), mx.float16, [0.5, 0.5]),
    ])
    def test_full_casts_the_fill_value(self, fill, dtype, expected):
        # mx.full alone keeps a float fill's dtype for an int dtype, and an
        # int fill's for bool.
        for out in (fnp.full((2,), fill, dtype), fnp.full_like(mx.ones(2), fill, dtype)):
            assert out.dtype == to_mlx_dtype(dtype, "") and out.tolist() == expected

    def test_issue_examples(self):
        assert fnp.ones((2, 2), dtype=bool).tolist() == [[True, True], [True, True]]
        assert fnp.zeros(3, dtype=np.float32).dtype == mx.float32
        assert fnp.zeros(3, dtype="float32").dtype == mx.float32
        g = ft.grad(lambda x: fnp.sum(x.astype(float) ** 2))(mx.array([1.0, 2.0], mx.float16))
        assert g.dtype == mx.float16 and g.tolist() == [2.0, 4.0]

    @pytest.mark.parametrize("transform", ["grad", "jvp", "vmap", "jit", "jit of grad"])
    @pytest.mark.parametrize("spelling", [float, np.float32, "float32", np.dtype("float32")])
    def test_under_transforms(self, transform, spelling):
        def f(x):
            # A float16 input, cast by the method and by the function, plus
            # constants made with the same spelling.
            y = x.astype(spelling) * fnp.ones(x.shape, dtype=spelling)
            y = fnp.astype(y, "float16").astype(spelling)
            return fnp.sum(y * fnp.full(x.shape, 2.0, spelling), dtype=spelling)

        x = mx.array([1.0, 2.0, 3.0], mx.float16)
        if transform == "grad":
            out = ft.grad(f)(x)
            assert out.dtype == mx.float16 and out.tolist() == [2.0, 2.0, 2.0]
        elif transform == "jvp":
            out, tangent = ft.jvp(f, (x,), (mx.ones(3, mx.float16),))
            assert out.dtype == tangent.dtype == mx.float32 and tangent.item() == 6.0
        elif transform == "vmap":
            out = ft.vmap(f)(mx.stack([x, 2 * x]))
            assert out.dtype == mx.float32 and out.tolist() == [12.0, 24.0]
        elif transform == "jit":
            out = ft.jit(f)(x)
            assert out.dtype == mx.float32 and out.item() == 12.0
        else:
            out = ft.jit(ft.grad(f))(x)
            assert out.dtype == mx.float16 and out.tolist() == [2.0, 2.0, 2.0]

    def test_reduction_dtype_casts_input_and_result(self):
        x = mx.array([1, 2, 4])
        assert fnp.mean(x, dtype=int).tolist() == 2  # 7 / 3 computed, then cast
        assert fnp.sum(mx.array([0.6, 0.6]), dtype=int).item() == 0  # cast first, as NumPy
        assert fnp.cumsum(x, dtype="float16").dtype == mx.float16
        g = ft.grad(lambda v: fnp.sum(v, dtype="float32"))(mx.ones(2, mx.float16))
        assert g.dtype == mx.float16 and g.tolist() == [1.0, 1.0]

    @pytest.mark.parametrize("args, expected", [
        ((mx.ones(1, mx.float16), float), mx.float16),  # a Python type is weak, as in JAX
        ((mx.ones(1, mx.int8), int), mx.int8),
        (("int8", float), mx.float32),
        (("int8", "float16"), mx.float16),
        ((np.int16, np.dtype("int32")), mx.int32),
        ((mx.float16, "float32"), mx.float32),
        ((bool,), mx.bool_),
        ((np.float64, mx.ones(1)), mx.float64),
    ])
    def test_result_type(self, args, expected):
        assert fnp.result_type(*args) == expected

    def test_result_type_of_nothing(self):
        with pytest.raises(ValueError, match="result_type: give at least one"):
            fnp.result_type()


# ----------------------------------------------------------------------------
# clip
# ----------------------------------------------------------------------------


class TestClip:
    x = mx.array([-2.0, 0.5, 3.0])

    @pytest.mark.parametrize("kwargs, expected", [
        ({"min": 0.0, "max": 1.0}, [0.0, 0.5, 1.0]),
        ({"a_min": 0.0, "a_max": 1.0}, [0.0, 0.5, 1.0]),
        ({"a_min": 0.0, "max": 1.0}, [0.0, 0.5, 1.0]),
        ({"min": 0.0, "a_max": 1.0}, [0.0, 0.5, 1.0]),
        ({"min": 0.0}, [0.0, 0.5, 3.0]),
        ({"max": 1.0}, [-2.0, 0.5, 1.0]),
        ({"a_max": 1.0}, [-2.0, 0.5, 1.0]),
        ({"min": 0.0, "max": None}, [0.0, 0.5, 3.0]),
    ])
    def test_keywords(self, kwargs, expected):
        assert fnp.clip(self.x, **kwargs).tolist() == expected

    def test_positional(self):
        assert fnp.clip(self.x, 0.0, 1.0).tolist() == [0.0, 0.5, 1.0]
        assert fnp.clip(self.x, None, 1.0).tolist() == [-2.0, 0.5, 1.0]

    @pytest.mark.parametrize("call, names", [
        (lambda x: fnp.clip(x, a_min=0.0, min=0.0), "a_min and min"),
        (lambda x: fnp.clip(x, 0.0, min=0.0), "a_min and min"),
        (lambda x: fnp.clip(x, a_max=1.0, max=1.0), "a_max and max"),
        (lambda x: fnp.clip(x, None, 1.0, max=2.0), "a_max and max"),
    ])
    def test_both_spellings_of_a_bound(self, call, names):
        with pytest.raises(TypeError, match=rf"^clip: {names} are two names for the same bound"):
            call(self.x)

    def test_no_bound(self):
        with pytest.raises(ValueError, match=r"^clip: give at least one bound"):
            fnp.clip(self.x)

    @pytest.mark.parametrize("transform", ["grad", "jit", "vmap"])
    def test_method_with_numpy_2_names_under_transforms(self, transform):
        def f(x):
            return fnp.sum(x.clip(min=0.0, max=1.0) * 2.0)

        if transform == "grad":
            assert ft.grad(f)(self.x).tolist() == [0.0, 2.0, 0.0]
        elif transform == "jit":
            assert ft.jit(f)(self.x).item() == 3.0
        else:
            assert ft.vmap(f)(mx.stack([self.x, -self.x])).tolist() == [3.0, 2.0]

    @given(st.floats(-3, 3), st.floats(-3, 3))
    def test_spellings_agree(self, low, high):
        expected = fnp.clip(self.x, low, high).tolist()
        assert fnp.clip(self.x, min=low, max=high).tolist() == expected
        assert fnp.clip(self.x, a_min=low, a_max=high).tolist() == expected
        assert fnp.clip(self.x, min=low, a_max=high).tolist() == expected
