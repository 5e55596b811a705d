"""ftorch.numpy's further math, bit, window and dtype functions beyond the JAX oracle
(tests/oracle_cases_numpy_math.py): printing against NumPy, transforms of the composites
built on loops and bit casts, and argument errors."""

import mlx.core as mx
import numpy as np
import pytest

import ftorch as ft
import ftorch.lax as lax
import ftorch.numpy as fnp


def test_array_str_and_repr_format_as_numpy_under_its_print_options():
    x = np.float32([[0.123456, -2.25], [3.0, 1e-9]])
    assert fnp.array_str(mx.array(x)) == np.array_str(x)
    assert fnp.array_repr(mx.array(x), precision=3) == np.array_repr(x, precision=3)
    assert fnp.array_str(mx.array(2.5)) == np.array_str(np.array(2.5, np.float32))
    with fnp.printoptions(precision=2, suppress=True):
        assert fnp.get_printoptions()["precision"] == 2
        assert fnp.array_str(mx.array(x)) == "[[ 0.12 -2.25]\n [ 3.    0.  ]]"
    assert fnp.get_printoptions()["precision"] == 8
    assert fnp.array_repr(mx.array([1.5], mx.bfloat16)) == "array([1.5], dtype=bfloat16)"


def test_gcd_lcm_jit_and_vmap_agree_with_numpy():
    a = np.array([[12, -8, 0, 7], [9, 0, 35, -64]], np.int32)
    b = np.array([[18, 12, 0, -21], [6, 5, 14, 48]], np.int32)
    for f, ref in ((fnp.gcd, np.gcd), (fnp.lcm, np.lcm)):
        expected = ref(a, b)
        np.testing.assert_array_equal(np.array(ft.jit(f)(mx.array(a), mx.array(b))), expected)
        np.testing.assert_array_equal(np.array(ft.vmap(f)(mx.array(a), mx.array(b))), expected)


def test_float_pieces_match_numpy_under_jit_and_vmap():
    x = np.float32([[0.3, -5.5, 1e30, 6e-39], [-0.0, 2.0, -1e-3, 7.0]])
    mantissa, exponent = ft.vmap(ft.jit(fnp.frexp))(mx.array(x))
    m_ref, e_ref = np.frexp(x)
    np.testing.assert_array_equal(np.array(mantissa), m_ref)
    np.testing.assert_array_equal(np.array(exponent), e_ref)
    np.testing.assert_array_equal(np.array(fnp.ldexp(mantissa, exponent)), x)
    y = np.roll(x, 1)
    np.testing.assert_array_equal(np.array(ft.jit(fnp.nextafter)(mx.array(x), mx.array(y))),
                                  np.nextafter(x, y))
    np.testing.assert_array_equal(np.array(fnp.spacing(mx.array(x[0, :3]))),
                                  np.spacing(x[0, :3]))


def test_packbits_round_trips_under_vmap():
    bits = np.random.default_rng(0).integers(0, 2, (3, 2, 13)).astype(np.uint8)
    packed = ft.vmap(lambda b: fnp.packbits(b, axis=-1))(mx.array(bits))
    np.testing.assert_array_equal(np.array(packed), np.packbits(bits, axis=-1))
    back = fnp.unpackbits(packed, axis=-1, count=13)
    np.testing.assert_array_equal(np.array(back), bits)


def test_integer_widths_of_shifts_and_counts():
    for np_dtype in (np.int8, np.uint16, np.int64, np.uint64):
        x = np.array([0, 1, 5, np.iinfo(np_dtype).max, np.iinfo(np_dtype).min], np_dtype)
        np.testing.assert_array_equal(np.array(fnp.bitwise_count(mx.array(x))),
                                      np.bitwise_count(x))
        np.testing.assert_array_equal(np.array(fnp.right_shift(mx.array(x), 1)), x >> 1)
        np.testing.assert_array_equal(np.array(fnp.left_shift(mx.array(x), 2)),
                                      (x << np_dtype(2)).astype(np_dtype))


def test_kaiser_is_differentiable_in_beta():
    slope = ft.grad(lambda b: fnp.sum(fnp.kaiser(6, b)))(mx.array(2.0))
    eps = 1e-3
    numeric = (np.sum(np.kaiser(6, 2.0 + eps)) - np.sum(np.kaiser(6, 2.0 - eps))) / (2 * eps)
    np.testing.assert_allclose(slope.item(), numeric, rtol=1e-3)


@pytest.mark.parametrize("call, error, match", [
    (lambda: fnp.gcd(mx.array([1.0]), 2), TypeError, "gcd: arguments must be integers"),
    (lambda: fnp.ldexp(1.0, mx.array([1.5])), TypeError, "ldexp: x2 must be an integer"),
    (lambda: fnp.left_shift(mx.array([1.0]), 1), TypeError, "left_shift: x and y must be"),
    (lambda: fnp.packbits(mx.array([1.0])), TypeError, "packbits: a must be an integer"),
    (lambda: fnp.packbits(mx.array([1]), bitorder="middle"), ValueError, "bitorder"),
    (lambda: fnp.unpackbits(mx.array([1])), TypeError, "unpackbits: a must be a uint8"),
    (lambda: fnp.unpackbits(mx.array([1], mx.uint8), count=-9), ValueError, "count=-9"),
    (lambda: fnp.packbits(mx.array([[1]]), axis=2), ValueError, "packbits"),
    (lambda: fnp.isdtype(mx.float32, "floaty"), TypeError, "isdtype: kind"),
    (lambda: fnp.finfo(mx.int32), TypeError, "finfo: dtype must be floating"),
    (lambda: fnp.iinfo("float32"), TypeError, "iinfo: int_type must be an integer"),
    (lambda: fnp.can_cast(1, mx.int8), TypeError, "can_cast: from_ must be a dtype"),
    (lambda: fnp.hypot(mx.array([1j]), 1.0), TypeError, "hypot: complex arguments"),
    (lambda: fnp.array_equiv(mx.ones(2), mx.ones(3)), ValueError, "array_equiv: shapes"),
    (lambda: fnp.size(mx.ones(2), 1), ValueError, "size"),
    (lambda: fnp.fmod(mx.array([True]), True), TypeError, "fmod: boolean"),
    (lambda: lax.bitcast_convert_type(mx.ones(3), mx.int64), ValueError,
         "wider mlx.core.int64 needs a last axis of length 2, got shape \\(3,\\)"),
])
def test_bad_arguments_name_the_function(call, error, match):
    with pytest.raises(error, match=match):
        call()
