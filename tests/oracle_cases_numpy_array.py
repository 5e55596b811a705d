"""JAX oracle cases for jax.numpy's array manipulation, indexing helpers, sets,
polynomials, statistics and creation from data (ftorch.numpy's ``_stacking``,
``_index_tricks``, ``_statistics``, ``_setops``, ``_polynomial`` modules and
``_creation``'s additions)."""

from hypothesis import strategies as st
from oracle import Oracle, arrays

N = "jax.numpy."


def _stack_args(min_dims: int):
    def draw_args(d):
        shape = tuple(d(st.lists(st.integers(1, 3), min_size=min_dims, max_size=3)))
        k = d(st.integers(1, 3))
        return ([d(arrays(shape=shape)) for _ in range(k)],), {}
    return draw_args


def _matrix(d, min_dims=2):
    return d(arrays(min_dims=min_dims, max_dims=3))


STACKING = [
    Oracle(N + "append", lambda d: ((d(arrays()), d(arrays())), {})),
    Oracle(N + "append", lambda d: (
        (x := d(arrays(min_dims=1)), d(arrays(shape=x.shape))), {"axis": -1}), id="axis"),
    Oracle(N + "atleast_1d", lambda d: ((d(arrays(max_dims=2)),), {})),
    Oracle(N + "atleast_2d", lambda d: ((d(arrays(max_dims=3)), d(arrays(max_dims=1))), {})),
    Oracle(N + "atleast_3d", lambda d: ((d(arrays(max_dims=2)),), {})),
    Oracle(N + "atleast_3d", lambda d: ((d(arrays(max_dims=4)), d(arrays(max_dims=1))), {}),
           id="many"),
    Oracle(N + "block", lambda d: ((d(arrays(shape=(2, 2))), d(arrays(shape=(2, 1))),
                                   d(arrays(shape=(3,)))), {}),
           run=lambda L, fn, a, b, c: fn([[a, b], [c]])),
    Oracle(N + "block", lambda d: ((d(arrays(shape=(2,))), d(arrays(shape=(1,)))), {}),
           run=lambda L, fn, a, b: fn([a, b, a]), id="1d"),
    Oracle(N + "column_stack", _stack_args(1)),
    Oracle(N + "concat", lambda d: (
        ([d(arrays(shape=(2, 3))), d(arrays(shape=(1, 3)))],), {}), id="axis0"),
    Oracle(N + "concat", lambda d: (
        ([d(arrays(shape=(2, 3))), d(arrays(shape=(2, 1)))],), {"axis": 1})),
    Oracle(N + "dstack", _stack_args(0)),
    Oracle(N + "hstack", _stack_args(0)),
    Oracle(N + "vstack", _stack_args(0)),
    Oracle(N + "vstack", lambda d: ((d(arrays(shape=(3, 2))),), {"dtype": "int32"}),
           id="array_dtype"),
    Oracle(N + "unstack", lambda d: (
        (x := d(arrays(min_dims=1)),), {"axis": d(st.integers(-x.ndim, x.ndim - 1))})),
    Oracle(N + "fliplr", lambda d: ((_matrix(d),), {})),
    Oracle(N + "flipud", lambda d: ((d(arrays(min_dims=1)),), {})),
    Oracle(N + "rot90", lambda d: ((_matrix(d),), {"k": d(st.integers(-5, 5)),
                                                   "axes": d(st.sampled_from([(0, 1), (1, 0),
                                                                              (-1, 0)]))})),
    Oracle(N + "rollaxis", lambda d: (
        (x := d(arrays(min_dims=1)),), {"axis": d(st.integers(-x.ndim, x.ndim - 1)),
                                        "start": d(st.integers(-x.ndim, x.ndim))})),
    Oracle(N + "permute_dims", lambda d: (
        (x := d(arrays()),), {"axes": tuple(d(st.permutations(range(x.ndim))))})),
    Oracle(N + "matrix_transpose", lambda d: ((_matrix(d),), {})),
    Oracle(N + "resize", lambda d: ((d(arrays()),), {
        "new_shape": tuple(d(st.lists(st.integers(0, 4), max_size=3)))})),
    Oracle(N + "broadcast_shapes", lambda d: (((2, 1), (3,), (1, 1, 1)), {}), grad=False),
    Oracle(N + "copy", lambda d: ((d(arrays()),), {})),
]

ORACLE = [*STACKING]

UNCHECKED: dict[str, str] = {}
