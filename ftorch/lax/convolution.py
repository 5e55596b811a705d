"""``jax.lax``'s convolutions on ``ftorch.primitives.conv``.

``conv_general_dilated`` takes JAX's layouts (dimension numbers), padding
strings, dilations and groups, and runs ``lax.conv_general`` (MLX's channels-last
convolution, with its own derivative and batching rules) between transposes:
the input goes to ``(N, *spatial, C)``, the kernel to ``(O, *spatial, I)``,
and the output comes back to the layout asked for. Batch groups become
feature groups (each batch group's examples side by side in the channels),
and MLX's missing grouped 3-d convolution runs group by group; everything
here is a composite of primitives, so it differentiates, batches and jits.

MLX convolves floating dtypes only: integer operands are a ``TypeError``
(JAX convolves them too).

>>> import ftorch.lax as lax, mlx.core as mx
>>> x = mx.arange(5.0).reshape(1, 1, 5)  # (N, C, W): JAX's default layout
>>> lax.conv_general_dilated(x, mx.ones((1, 1, 2)), (1,), "VALID").tolist()
[[[1.0, 3.0, 5.0, 7.0]]]
"""

from __future__ import annotations

import enum
import math
from collections.abc import Sequence
from typing import Any, NamedTuple

import mlx.core as mx

import ftorch.primitives as prim
from ftorch.core import as_array, aval_of, is_floating
from ftorch.dtypes import to_mlx_dtype
from ftorch.primitives.conv import dilated
from ftorch.primitives.creation import static_int
from ftorch.primitives.linalg import canonical_subscripts
from ftorch.typing import Array, ArrayLike, DTypeLike, Ints

__all__ = [
    "ConvDimensionNumbers", "conv_dimension_numbers", "conv_general_permutations",
    "conv_general_dilated", "conv", "conv_with_general_padding", "conv_transpose",
    "conv_general_dilated_patches", "conv_general_dilated_local", "conv_shape_tuple",
    "conv_general_shape_tuple", "conv_transpose_shape_tuple", "padtype_to_pads", "PaddingType",
]

Pairs = list[tuple[int, int]]


class ConvDimensionNumbers(NamedTuple):
    """Where a convolution's axes are, as ``jax.lax.ConvDimensionNumbers``:
    ``lhs_spec`` is (batch axis, feature axis, spatial axes...) of the
    input, ``rhs_spec`` (output feature axis, input feature axis, spatial
    axes...) of the kernel, ``out_spec`` (batch, feature, spatial...) of the
    output; the spatial axes pair up in order.

    >>> import ftorch.lax as lax
    >>> lax.ConvDimensionNumbers((0, 3, 1, 2), (3, 2, 0, 1), (0, 3, 1, 2)).rhs_spec
    (3, 2, 0, 1)
    """

    lhs_spec: Sequence[int]
    rhs_spec: Sequence[int]
    out_spec: Sequence[int]


class PaddingType(enum.Enum):
    """The padding strings as an enum, as ``jax.lax.PaddingType``."""

    VALID = 1
    SAME = 2
    SAME_LOWER = 3


# ----------------------------------------------------------------------------
# Dimension numbers and padding
# ----------------------------------------------------------------------------


def _default_specs(ndim: int) -> ConvDimensionNumbers:
    identity = tuple(range(ndim))
    return ConvDimensionNumbers(identity, identity, identity)


def conv_general_permutations(dimension_numbers: tuple[str, str, str]
                              ) -> tuple[Ints, Ints, Ints]:
    """The axis permutations that put an input, a kernel and an output laid
    out as the strings ``dimension_numbers`` (e.g. ``("NHWC", "HWIO",
    "NHWC")``) into (N, C, spatial...), (O, I, spatial...) and (N, C,
    spatial...), as ``jax.lax.conv_general_permutations``; the spatial axes
    are ordered as the kernel string names them.

    >>> import ftorch.lax as lax
    >>> lax.conv_general_permutations(("NHWC", "HWIO", "NCHW"))
    ((0, 3, 1, 2), (3, 2, 0, 1), (0, 1, 2, 3))
    """
    fname = "conv_general_permutations"
    if not (isinstance(dimension_numbers, (tuple, list)) and len(dimension_numbers) == 3
            and all(isinstance(s, str) for s in dimension_numbers)):
        raise TypeError(f"{fname}: dimension_numbers must be three strings (lhs, rhs, out), "
                        f"got {dimension_numbers!r}")
    lhs, rhs, out = dimension_numbers
    pairs = (("N", "C"), ("O", "I"), ("N", "C"))
    for spec, (a, b), what in zip(dimension_numbers, pairs, ("lhs", "rhs", "out")):
        if spec.count(a) != 1 or spec.count(b) != 1 or len(set(spec)) != len(spec):
            raise ValueError(f"{fname}: the {what} spec {spec!r} must name {a!r} and {b!r} once "
                             f"each and no axis twice")
    spatial = [set(s) - set(p) for s, p in zip(dimension_numbers, pairs)]
    if not spatial[0] == spatial[1] == spatial[2]:
        raise ValueError(f"{fname}: the lhs, rhs and out specs must name the same spatial "
                         f"axes, got {dimension_numbers!r}")
    rhs_spatial = [c for c in rhs if c not in "OI"]

    def permutation(spec: str, pair: tuple[str, str]) -> Ints:
        return (spec.index(pair[0]), spec.index(pair[1]), *(spec.index(c) for c in rhs_spatial))

    return tuple(permutation(s, p) for s, p in zip(dimension_numbers, pairs))


def conv_dimension_numbers(lhs_shape: Sequence[int], rhs_shape: Sequence[int],
                           dimension_numbers: Any) -> ConvDimensionNumbers:
    """``dimension_numbers`` (``None``: (N, C, spatial...) everywhere; three
    strings; or a ``ConvDimensionNumbers``) as a ``ConvDimensionNumbers``, as
    ``jax.lax.conv_dimension_numbers``.

    >>> import ftorch.lax as lax
    >>> lax.conv_dimension_numbers((1, 5, 5, 2), (3, 3, 2, 4), ("NHWC", "HWIO", "NHWC"))
    ConvDimensionNumbers(lhs_spec=(0, 3, 1, 2), rhs_spec=(3, 2, 0, 1), out_spec=(0, 3, 1, 2))
    """
    fname = "conv_dimension_numbers"
    if len(lhs_shape) != len(rhs_shape):
        raise ValueError(f"{fname}: the input and the kernel must have the same ndim, got "
                         f"shapes {tuple(lhs_shape)} and {tuple(rhs_shape)}")
    if dimension_numbers is None:
        return _default_specs(len(lhs_shape))
    if isinstance(dimension_numbers, ConvDimensionNumbers):
        return dimension_numbers
    specs = conv_general_permutations(dimension_numbers)
    if any(len(s) != len(lhs_shape) for s in dimension_numbers):
        raise ValueError(f"{fname}: each spec of {dimension_numbers!r} must name the "
                         f"{len(lhs_shape)} axes of the operands")
    return ConvDimensionNumbers(*specs)


def _padding_name(padding: Any) -> str | None:
    """A padding string or ``PaddingType`` as its upper-case name; None otherwise."""
    if isinstance(padding, PaddingType):
        return padding.name
    if isinstance(padding, str):
        name = padding.upper()
        if name not in PaddingType.__members__:
            raise ValueError(f"padding must be 'SAME', 'SAME_LOWER', 'VALID' or (lo, hi) pairs, "
                             f"got {padding!r}")
        return name
    return None


def padtype_to_pads(in_shape: Sequence[int], window_shape: Sequence[int],
                    window_strides: Sequence[int], padding: str | PaddingType) -> Pairs:
    """The ``(lo, hi)`` padding per axis that the padding string means, as
    ``jax.lax.padtype_to_pads``: ``"VALID"`` none, ``"SAME"`` enough for
    ``ceil(in / stride)`` outputs, split with the odd element at the end
    (``"SAME_LOWER"``: at the start).

    >>> import ftorch.lax as lax
    >>> lax.padtype_to_pads((5,), (2,), (2,), "SAME")
    [(0, 1)]
    >>> lax.padtype_to_pads((5,), (2,), (2,), "SAME_LOWER")
    [(1, 0)]
    """
    name = _padding_name(padding)
    if name is None:
        raise TypeError(f"padtype_to_pads: padding must be a string or PaddingType, got "
                        f"{padding!r}")
    if name == "VALID":
        return [(0, 0)] * len(in_shape)
    pads = []
    for n, k, s in zip(in_shape, window_shape, window_strides):
        total = max((-(-n // s) - 1) * s + k - n, 0)
        small, large = total // 2, total - total // 2
        pads.append((small, large) if name == "SAME" else (large, small))
    return pads


def explicit_pads(padding: Any, in_shape: Sequence[int], window: Sequence[int],
                   strides: Sequence[int], fname: str) -> Pairs:
    """``padding`` (a string or ``(lo, hi)`` pairs) as one pair per spatial axis."""
    if _padding_name(padding) is not None:
        return padtype_to_pads(in_shape, window, strides, padding)
    try:
        pads = [(static_int(lo, fname, "padding"), static_int(hi, fname, "padding"))
                for lo, hi in padding]
    except (TypeError, ValueError):
        raise TypeError(f"{fname}: padding must be 'SAME', 'SAME_LOWER', 'VALID' or a sequence "
                        f"of (lo, hi) pairs, got {padding!r}") from None
    if len(pads) != len(in_shape):
        raise ValueError(f"{fname}: padding needs one (lo, hi) pair per spatial axis "
                         f"({len(in_shape)}), got {padding!r}")
    return pads


def _per_axis(values: Any, n: int, fname: str, what: str) -> Ints:
    """``values`` (None: all ones) as ``n`` positive ints."""
    if values is None:
        return (1,) * n
    out = tuple(static_int(v, fname, what) for v in values)
    if len(out) != n or min(out, default=1) < 1:
        raise ValueError(f"{fname}: {what} must be {n} positive ints (one per spatial axis), "
                         f"got {values!r}")
    return out


# ----------------------------------------------------------------------------
# Shapes
# ----------------------------------------------------------------------------


def conv_shape_tuple(lhs_shape: Sequence[int], rhs_shape: Sequence[int], strides: Sequence[int],
                     pads: Sequence[tuple[int, int]], batch_group_count: int = 1) -> tuple:
    """The output shape (N, C, spatial...) of a convolution of an input
    (N, C, spatial...) with a kernel (O, I, spatial...) at ``strides`` with
    explicit ``pads``, as ``jax.lax.conv_shape_tuple``.

    >>> import ftorch.lax as lax
    >>> lax.conv_shape_tuple((1, 2, 5, 6), (4, 2, 3, 3), (1, 2), [(0, 0), (1, 1)])
    (1, 4, 3, 3)
    """
    if len(pads) != len(lhs_shape) - 2:
        raise ValueError(f"conv_shape_tuple: pads needs {len(lhs_shape) - 2} (lo, hi) pairs, "
                         f"got {pads!r}")
    spatial = tuple(max(0, (n + lo + hi - k) // s + 1)
                    for n, k, s, (lo, hi) in zip(lhs_shape[2:], rhs_shape[2:], strides, pads))
    return (lhs_shape[0] // batch_group_count, rhs_shape[0], *spatial)


def _take(shape: Sequence[int], perm: Sequence[int]) -> tuple[int, ...]:
    return tuple(shape[p] for p in perm)


def _untake(shape: Sequence[int], perm: Sequence[int]) -> tuple[int, ...]:
    """The inverse of ``_take``: ``out[perm[i]] = shape[i]``."""
    out = [0] * len(perm)
    for i, p in enumerate(perm):
        out[p] = shape[i]
    return tuple(out)


def conv_general_shape_tuple(lhs_shape: Sequence[int], rhs_shape: Sequence[int],
                             window_strides: Sequence[int], padding: Any,
                             dimension_numbers: Any) -> tuple:
    """The output shape of ``conv_general_dilated`` without dilations, as
    ``jax.lax.conv_general_shape_tuple``.

    >>> import ftorch.lax as lax
    >>> lax.conv_general_shape_tuple((1, 5, 6, 2), (3, 3, 2, 4), (1, 1), "SAME",
    ...                              ("NHWC", "HWIO", "NHWC"))
    (1, 5, 6, 4)
    """
    dn = conv_dimension_numbers(lhs_shape, rhs_shape, dimension_numbers)
    lhs, rhs = _take(lhs_shape, dn.lhs_spec), _take(rhs_shape, dn.rhs_spec)
    pads = explicit_pads(padding, lhs[2:], rhs[2:], window_strides, "conv_general_shape_tuple")
    return _untake(conv_shape_tuple(lhs, rhs, window_strides, pads), dn.out_spec)


def _transpose_pads(k: int, s: int, padding: Any) -> tuple[int, int]:
    """The padding of a transposed convolution with (dilated) kernel size
    ``k`` and stride ``s`` for the forward convolution's ``padding`` (a
    string or one forward ``(lo, hi)`` pair)."""
    if padding == "SAME":
        total = k + s - 2
        lo = k - 1 if s > k - 1 else -(-total // 2)
    elif padding == "VALID":
        total, lo = k + s - 2 + max(k - s, 0), k - 1
    elif isinstance(padding, str):
        raise ValueError(f"conv_transpose: padding must be 'SAME', 'VALID' or (lo, hi) pairs, "
                         f"got {padding!r}")
    else:  # the forward padding (lo, hi): k - 1 - p on each side
        lo, total = k - 1 - padding[0], 2 * (k - 1) - padding[0] - padding[1]
    return lo, total - lo


def conv_transpose_shape_tuple(lhs_shape: Sequence[int], rhs_shape: Sequence[int],
                               window_strides: Sequence[int], padding: Any,
                               dimension_numbers: Any) -> tuple:
    """The output shape of ``conv_transpose`` (without kernel dilation), as
    ``jax.lax.conv_transpose_shape_tuple``.

    >>> import ftorch.lax as lax
    >>> lax.conv_transpose_shape_tuple((1, 5, 6, 2), (3, 3, 2, 4), (2, 2), "SAME",
    ...                                ("NHWC", "HWIO", "NHWC"))
    (1, 10, 12, 4)
    """
    dn = conv_dimension_numbers(lhs_shape, rhs_shape, dimension_numbers)
    lhs, rhs = _take(lhs_shape, dn.lhs_spec), _take(rhs_shape, dn.rhs_spec)
    name = _padding_name(padding)
    if name is not None:
        padding = [_transpose_pads(k, s, name) for k, s in zip(rhs[2:], window_strides)]
    spatial = tuple((n - 1) * s - k + 2 + lo + hi
                    for n, k, s, (lo, hi) in zip(lhs[2:], rhs[2:], window_strides, padding))
    return _untake((lhs[0], rhs[0], *spatial), dn.out_spec)


# ----------------------------------------------------------------------------
# conv_general_dilated
# ----------------------------------------------------------------------------


def _channels_last(perm: Sequence[int]) -> tuple[int, ...]:
    """A (batch, feature, spatial...) spec as the permutation to (batch, spatial..., feature)."""
    return (perm[0], *perm[2:], perm[1])


def _grouped_conv(x: Array, w: Array, strides: Ints, pads: Pairs, lhs_dilation: Ints,
                  rhs_dilation: Ints, groups: int) -> Array:
    """``lax.conv_general`` on channels-last operands; MLX has no grouped
    3-d convolution, so there each group runs on its own."""
    lo, hi = tuple(p for p, _ in pads), tuple(q for _, q in pads)
    if len(strides) < 3 or groups == 1:
        return prim.conv_general(x, w, strides, (lo, hi), rhs_dilation, lhs_dilation, groups,
                                 False)
    c, o = aval_of(x).shape[-1] // groups, aval_of(w).shape[0] // groups
    outs = [prim.conv_general(prim.static_slice(x, (*(slice(None),) * 4, slice(g * c, g * c + c))),
                              prim.static_slice(w, (slice(g * o, g * o + o),)), strides,
                              (lo, hi), rhs_dilation, lhs_dilation, 1, False)
            for g in range(groups)]
    return prim.concatenate(outs, 4)


def _check_groups(n: int, c: int, o: int, i: int, feature_groups: int, batch_groups: int,
                  fname: str) -> None:
    if feature_groups < 1 or batch_groups < 1:
        raise ValueError(f"{fname}: feature_group_count and batch_group_count must be "
                         f"positive, got {feature_groups} and {batch_groups}")
    if feature_groups > 1 and batch_groups > 1:
        raise ValueError(f"{fname}: at most one of feature_group_count ({feature_groups}) and "
                         f"batch_group_count ({batch_groups}) may exceed 1")
    if c != i * feature_groups:
        raise ValueError(f"{fname}: the input's {c} features must be the kernel's {i} input "
                         f"features times feature_group_count={feature_groups}")
    if o % feature_groups or o % batch_groups:
        raise ValueError(f"{fname}: the kernel's {o} output features must be a multiple of "
                         f"feature_group_count={feature_groups} and "
                         f"batch_group_count={batch_groups}")
    if n % batch_groups:
        raise ValueError(f"{fname}: the input's batch of {n} must be a multiple of "
                         f"batch_group_count={batch_groups}")


def _conv_operands(lhs: ArrayLike, rhs: ArrayLike, fname: str) -> tuple[Array, Array]:
    lhs, rhs = as_array(lhs, f"{fname}: lhs"), as_array(rhs, f"{fname}: rhs")
    (ls, ld), (rs, rd) = aval_of(lhs), aval_of(rhs)
    if len(ls) != len(rs) or not 3 <= len(ls) <= 5:
        raise ValueError(f"{fname}: lhs and rhs must have the same ndim, 3 to 5 (1 to 3 "
                         f"spatial axes), got shapes {tuple(ls)} and {tuple(rs)}")
    if ld != rd:
        raise TypeError(f"{fname}: lhs and rhs must have the same dtype, got {ld} and {rd}")
    if not is_floating(ld):
        raise TypeError(f"{fname}: MLX convolves floating dtypes only, got {ld}")
    return lhs, rhs


def conv_general_dilated(lhs: ArrayLike, rhs: ArrayLike, window_strides: Sequence[int],
                         padding: str | Sequence[tuple[int, int]],
                         lhs_dilation: Sequence[int] | None = None,
                         rhs_dilation: Sequence[int] | None = None,
                         dimension_numbers: Any = None, feature_group_count: int = 1,
                         batch_group_count: int = 1, precision: Any = None,
                         preferred_element_type: DTypeLike | None = None) -> Array:
    """The general convolution of ``lhs`` with the kernel ``rhs``, as
    ``jax.lax.conv_general_dilated`` (a cross-correlation: the kernel is not
    flipped).

    Args:
        lhs: the input, (N, C, spatial...) unless ``dimension_numbers`` says otherwise.
        rhs: the kernel, (O, I, spatial...) unless ``dimension_numbers`` says
            otherwise, with ``I = C / feature_group_count``.
        window_strides: the step per spatial axis.
        padding: ``"SAME"``, ``"SAME_LOWER"``, ``"VALID"`` or a ``(lo, hi)``
            pair per spatial axis (negative: a crop); strings pad the dilated input.
        lhs_dilation: ``d - 1`` zeros between input elements per spatial
            axis (a transposed convolution). Default: 1.
        rhs_dilation: the kernel's dilation (atrous convolution). Default: 1.
        dimension_numbers: ``None``, three layout strings such as
            ``("NHWC", "HWIO", "NHWC")``, or a ``ConvDimensionNumbers``.
        feature_group_count: input features split into this many groups,
            each with its share of the output features.
        batch_group_count: the batch split into this many groups, each
            with its share of the output features (the output batch is
            ``N / batch_group_count``).
        precision: accepted for JAX's signature; MLX has one precision.
        preferred_element_type: the output dtype.

    >>> import ftorch.lax as lax, mlx.core as mx
    >>> x, w = mx.ones((1, 4, 4, 2)), mx.ones((3, 3, 2, 5))
    >>> lax.conv_general_dilated(x, w, (1, 1), "SAME",
    ...                          dimension_numbers=("NHWC", "HWIO", "NHWC")).shape
    (1, 4, 4, 5)
    """
    fname = "conv_general_dilated"
    lhs, rhs = _conv_operands(lhs, rhs, fname)
    ls, rs = aval_of(lhs).shape, aval_of(rhs).shape
    nd = len(ls) - 2
    dn = conv_dimension_numbers(ls, rs, dimension_numbers)
    strides = _per_axis(window_strides, nd, fname, "window_strides")
    lhs_dilation = _per_axis(lhs_dilation, nd, fname, "lhs_dilation")
    rhs_dilation = _per_axis(rhs_dilation, nd, fname, "rhs_dilation")
    feature_groups = static_int(feature_group_count, fname, "feature_group_count")
    batch_groups = static_int(batch_group_count, fname, "batch_group_count")
    x = prim.transpose(lhs, _channels_last(dn.lhs_spec))  # (N, *spatial, C)
    w = prim.transpose(rhs, _channels_last(dn.rhs_spec))  # (O, *kernel, I)
    xs, ws = aval_of(x).shape, aval_of(w).shape
    _check_groups(xs[0], xs[-1], ws[0], ws[-1], feature_groups, batch_groups, fname)
    if _padding_name(padding) is not None and max(lhs_dilation, default=1) > 1:
        raise ValueError(f"{fname}: a padding string with lhs_dilation is ambiguous (as in "
                         f"JAX): give explicit (lo, hi) pairs, or use conv_transpose")
    pads = explicit_pads(padding, [dilated(n, r) for n, r in zip(xs[1:-1], lhs_dilation)],
                          [dilated(k, d) for k, d in zip(ws[1:-1], rhs_dilation)], strides, fname)
    if batch_groups > 1:  # each batch group's examples side by side in the channels
        x = prim.reshape(x, (batch_groups, xs[0] // batch_groups, *xs[1:]))
        x = prim.transpose(x, (*range(1, nd + 2), 0, nd + 2))
        x = prim.reshape(x, (xs[0] // batch_groups, *xs[1:-1], batch_groups * xs[-1]))
    out_spatial = [max(0, (dilated(n, r) + lo + hi - dilated(k, d)) // s + 1)
                   for n, k, s, (lo, hi), r, d in zip(xs[1:-1], ws[1:-1], strides, pads,
                                                      lhs_dilation, rhs_dilation)]
    out_shape = (xs[0] // batch_groups, *out_spatial, ws[0])
    if 0 in out_shape or 0 in xs or 0 in ws:  # nothing to convolve: zeros, as XLA
        y = prim.zeros(out_shape, aval_of(x).dtype)
    else:
        y = _grouped_conv(x, w, strides, pads, lhs_dilation, rhs_dilation,
                          feature_groups * batch_groups)
    # (N, *spatial, O) to out_spec's layout: out axis out_spec[j] holds axis j
    # of (N, O, spatial...).
    canonical_to_ours = (0, nd + 1, *range(1, nd + 1))
    y = prim.transpose(y, _untake(canonical_to_ours, dn.out_spec))
    if preferred_element_type is not None:
        y = prim.astype(y, to_mlx_dtype(preferred_element_type,
                                        f"{fname}: preferred_element_type"))
    return y


def conv(lhs: ArrayLike, rhs: ArrayLike, window_strides: Sequence[int], padding: str,
         precision: Any = None, preferred_element_type: DTypeLike | None = None) -> Array:
    """``conv_general_dilated`` without dilation, in the (N, C, spatial...)
    and (O, I, spatial...) layouts, as ``jax.lax.conv``.

    >>> import ftorch.lax as lax, mlx.core as mx
    >>> lax.conv(mx.ones((1, 2, 5)), mx.ones((3, 2, 2)), (2,), "SAME").shape
    (1, 3, 3)
    """
    return conv_general_dilated(lhs, rhs, window_strides, padding, precision=precision,
                                preferred_element_type=preferred_element_type)


def conv_with_general_padding(lhs: ArrayLike, rhs: ArrayLike, window_strides: Sequence[int],
                              padding: str | Sequence[tuple[int, int]],
                              lhs_dilation: Sequence[int] | None,
                              rhs_dilation: Sequence[int] | None, precision: Any = None,
                              preferred_element_type: DTypeLike | None = None) -> Array:
    """``conv_general_dilated`` in the (N, C, spatial...) and (O, I,
    spatial...) layouts, as ``jax.lax.conv_with_general_padding``.

    >>> import ftorch.lax as lax, mlx.core as mx
    >>> lax.conv_with_general_padding(mx.ones((1, 1, 3)), mx.ones((1, 1, 2)), (1,),
    ...                               [(1, 1)], (2,), None).ravel().tolist()
    [1.0, 1.0, 1.0, 1.0, 1.0, 1.0]
    """
    return conv_general_dilated(lhs, rhs, window_strides, padding, lhs_dilation, rhs_dilation,
                                precision=precision,
                                preferred_element_type=preferred_element_type)


_TRANSPOSE_LAYOUTS = {2: ("NC", "IO", "NC"), 3: ("NHC", "HIO", "NHC"),
                      4: ("NHWC", "HWIO", "NHWC"), 5: ("NHWDC", "HWDIO", "NHWDC")}


def conv_transpose(lhs: ArrayLike, rhs: ArrayLike, strides: Sequence[int],
                   padding: str | Sequence[tuple[int, int]],
                   rhs_dilation: Sequence[int] | None = None, dimension_numbers: Any = None,
                   transpose_kernel: bool = False, precision: Any = None,
                   preferred_element_type: DTypeLike | None = None,
                   use_consistent_padding: bool = False) -> Array:
    """The transposed convolution (a fractionally strided one: the input
    dilated by ``strides``), as ``jax.lax.conv_transpose``.

    ``padding`` ``"SAME"`` or ``"VALID"`` is the forward convolution's, so
    that ``"SAME"`` gives ``in * stride`` outputs; ``(lo, hi)`` pairs pad the
    dilated input directly, unless ``use_consistent_padding``, where they
    too are the forward convolution's (``dilated kernel - 1 - p`` on each
    side, PyTorch's meaning). The default layouts are TensorFlow's
    (``("NHWC", "HWIO", "NHWC")`` in 2-d). ``transpose_kernel`` flips the
    kernel's spatial axes and swaps its I and O axes: the gradient of
    ``conv_general_dilated`` with that kernel.

    >>> import ftorch.lax as lax, mlx.core as mx
    >>> lax.conv_transpose(mx.ones((1, 3, 1)), mx.ones((2, 1, 1)), (2,), "SAME").ravel().tolist()
    [1.0, 1.0, 1.0, 1.0, 1.0, 1.0]
    """
    fname = "conv_transpose"
    lhs, rhs = _conv_operands(lhs, rhs, fname)
    ls, rs = aval_of(lhs).shape, aval_of(rhs).shape
    nd = len(ls) - 2
    if dimension_numbers is None:
        dimension_numbers = _TRANSPOSE_LAYOUTS[len(ls)]
    dn = conv_dimension_numbers(ls, rs, dimension_numbers)
    strides = _per_axis(strides, nd, fname, "strides")
    rhs_dilation = _per_axis(rhs_dilation, nd, fname, "rhs_dilation")
    kernel = [dilated(rs[a], d) for a, d in zip(dn.rhs_spec[2:], rhs_dilation)]
    name = _padding_name(padding)
    if name in ("SAME", "VALID"):
        pads = [_transpose_pads(k, s, name) for k, s in zip(kernel, strides)]
    elif use_consistent_padding:
        forward = explicit_pads(padding, kernel, kernel, strides, fname)
        pads = [_transpose_pads(k, s, p) for k, s, p in zip(kernel, strides, forward)]
    else:
        pads = padding
    if transpose_kernel:
        o, i = dn.rhs_spec[:2]
        rhs = prim.static_slice(rhs, tuple(slice(None, None, -1) if a in dn.rhs_spec[2:]
                                           else slice(None) for a in range(len(rs))))
        perm = list(range(len(rs)))
        perm[o], perm[i] = i, o
        rhs = prim.transpose(rhs, tuple(perm))
    return conv_general_dilated(lhs, rhs, (1,) * nd, pads, strides, rhs_dilation, dn,
                                precision=precision,
                                preferred_element_type=preferred_element_type)


# ----------------------------------------------------------------------------
# Patches and unshared (local) convolutions
# ----------------------------------------------------------------------------


def conv_general_dilated_patches(lhs: ArrayLike, filter_shape: Sequence[int],
                                 window_strides: Sequence[int],
                                 padding: str | Sequence[tuple[int, int]],
                                 lhs_dilation: Sequence[int] | None = None,
                                 rhs_dilation: Sequence[int] | None = None,
                                 dimension_numbers: Any = None, precision: Any = None,
                                 preferred_element_type: DTypeLike | None = None) -> Array:
    """The patches a convolution with a kernel of spatial shape
    ``filter_shape`` would see, as ``jax.lax.conv_general_dilated_patches``:
    the output has ``C * prod(filter_shape)`` features, channel-major (feature
    ``c * prod(filter_shape) + k`` is channel ``c`` at the ``k``-th filter
    position in row-major order), laid out as ``dimension_numbers``' output.
    It is a convolution with a one-hot kernel, as in JAX.

    >>> import ftorch.lax as lax, mlx.core as mx
    >>> x = mx.arange(4.0).reshape(1, 1, 4)
    >>> lax.conv_general_dilated_patches(x, (2,), (2,), "VALID").tolist()
    [[[0.0, 2.0], [1.0, 3.0]]]
    """
    fname = "conv_general_dilated_patches"
    lhs = as_array(lhs, f"{fname}: lhs")
    ls, dtype = aval_of(lhs)
    filter_shape = tuple(static_int(k, fname, "filter_shape") for k in filter_shape)
    if len(filter_shape) != len(ls) - 2:
        raise ValueError(f"{fname}: filter_shape needs {len(ls) - 2} sizes (one per spatial "
                         f"axis), got {filter_shape!r}")
    dn = conv_dimension_numbers(ls, ls, dimension_numbers)
    c, k = ls[dn.lhs_spec[1]], math.prod(filter_shape)
    # Kernel (C * K, 1, *filter) in (O, I, spatial...) order: output feature
    # c * K + j picks filter position j of channel c (channel c's group).
    one_hot = mx.broadcast_to(mx.eye(k, dtype=dtype).reshape(1, k, 1, *filter_shape),
                              (c, k, 1, *filter_shape)).reshape(c * k, 1, *filter_shape)
    rhs_spec = tuple(range(len(ls)))
    dn = ConvDimensionNumbers(dn.lhs_spec, rhs_spec, dn.out_spec)
    return conv_general_dilated(lhs, one_hot, window_strides, padding, lhs_dilation,
                                rhs_dilation, dn, feature_group_count=c, precision=precision,
                                preferred_element_type=preferred_element_type)


def conv_general_dilated_local(lhs: ArrayLike, rhs: ArrayLike, window_strides: Sequence[int],
                               padding: str | Sequence[tuple[int, int]],
                               filter_shape: Sequence[int],
                               lhs_dilation: Sequence[int] | None = None,
                               rhs_dilation: Sequence[int] | None = None,
                               dimension_numbers: Any = None, precision: Any = None) -> Array:
    """A convolution with a different kernel at every output position (an
    unshared, "locally connected" layer), as
    ``jax.lax.conv_general_dilated_local``.

    ``rhs`` has, in ``dimension_numbers``' kernel layout, O output features,
    ``C * prod(filter_shape)`` input features (ordered as
    ``conv_general_dilated_patches`` orders them) and the output's spatial
    shape: output position ``p`` contracts its patch with ``rhs[..., p]``.

    >>> import ftorch.lax as lax, mlx.core as mx
    >>> x = mx.arange(4.0).reshape(1, 1, 4)
    >>> w = mx.array([[[1.0, 0.0], [1.0, 2.0]]])  # (O=1, I=2, out=2)
    >>> lax.conv_general_dilated_local(x, w, (2,), "VALID", (2,)).tolist()
    [[[1.0, 6.0]]]
    """
    fname = "conv_general_dilated_local"
    lhs, rhs = _conv_operands(lhs, rhs, fname)
    ls, rs = aval_of(lhs).shape, aval_of(rhs).shape
    dn = conv_dimension_numbers(ls, rs, dimension_numbers)
    nd = len(ls) - 2
    canonical = ConvDimensionNumbers(dn.lhs_spec, dn.rhs_spec, tuple(range(nd + 2)))
    patches = conv_general_dilated_patches(lhs, filter_shape, window_strides, padding,
                                           lhs_dilation, rhs_dilation, canonical)
    w = prim.transpose(rhs, tuple(dn.rhs_spec))  # (O, I, *out)
    if aval_of(w).shape[1:] != aval_of(patches).shape[1:]:
        raise ValueError(f"{fname}: rhs must have C * prod(filter_shape) = "
                         f"{aval_of(patches).shape[1]} input features and the output's "
                         f"spatial shape {aval_of(patches).shape[2:]}, got the kernel shape "
                         f"{aval_of(w).shape} in (O, I, spatial...) order")
    space = [("s", a) for a in range(nd)]
    y = prim.einsum(canonical_subscripts([["n", "i", *space], ["o", "i", *space]],
                                         ["n", "o", *space]), patches, w)
    return prim.transpose(y, _untake(tuple(range(nd + 2)), dn.out_spec))
