"""``ftorch.lax``: the primitive layer under ``ftorch.numpy``, as JAX's
``lax`` is under ``jax.numpy``: a strict wrapper per primitive (operands as
they are, static params already normalised: ``lax.sum(x, (0,))``,
``lax.reshape(x, (2, 3))``, ``lax.astype(x, mx.float16)``; no dtype promotion
or axis parsing), control flow as higher-order primitives, and the
structured slicing ops that loops index with, with JAX's names and
semantics.

>>> import ftorch.lax as lax, mlx.core as mx
>>> carry, ys = lax.scan(lambda c, x: (c + x, c), mx.array(0.0), mx.arange(4.0))
>>> carry.item(), ys.tolist()
(6.0, [0.0, 0.0, 1.0, 3.0])
"""

from typing import Any

from ftorch import api_util, tree
from ftorch.lax import composites, contractions, convolution, windowed
from ftorch.lax.composites import *  # noqa: F403
from ftorch.lax.contractions import *  # noqa: F403
from ftorch.lax.convolution import *  # noqa: F403
from ftorch.lax.roots import custom_root
from ftorch.lax.windowed import *  # noqa: F403
from ftorch.primitives import (
    activations,
    barrier,
    bits,
    creation,
    decompositions,
    elementwise,
    fourier,
    indexing,
    linalg,
    orthogonal,
    reduction,
    shape,
    sorting,
    special,
)
from ftorch.primitives import conv as conv_family
from ftorch.primitives.activations import *  # noqa: F403
from ftorch.primitives.associative import associative_scan
from ftorch.primitives.barrier import *  # noqa: F403
from ftorch.primitives.barrier import optimization_barrier as _barrier
from ftorch.primitives.bits import *  # noqa: F403
from ftorch.primitives.conditionals import cond, switch
from ftorch.primitives.conv import *  # noqa: F403
from ftorch.primitives.creation import *  # noqa: F403
from ftorch.primitives.decompositions import *  # noqa: F403
from ftorch.primitives.elementwise import *  # noqa: F403
from ftorch.primitives.elementwise import erfinv as _erfinv
from ftorch.primitives.elementwise import stop_gradient as _stop_gradient
from ftorch.primitives.fourier import *  # noqa: F403
from ftorch.primitives.indexing import *  # noqa: F403
from ftorch.primitives.linalg import *  # noqa: F403
from ftorch.primitives.loops import fori_loop, map, scan, while_loop
from ftorch.primitives.orthogonal import *  # noqa: F403
from ftorch.primitives.parallel import (
    all_gather,
    all_to_all,
    axis_index,
    axis_size,
    pmax,
    pmean,
    pmin,
    ppermute,
    pshuffle,
    psum,
    psum_scatter,
    pswapaxes,
)
from ftorch.primitives.reduction import *  # noqa: F403
from ftorch.primitives.shape import *  # noqa: F403
from ftorch.primitives.slicing import (
    dynamic_index_in_dim,
    dynamic_slice,
    dynamic_slice_in_dim,
    dynamic_update_index_in_dim,
    dynamic_update_slice,
    dynamic_update_slice_in_dim,
    select,
)
from ftorch.primitives.solves import custom_linear_solve
from ftorch.primitives.sorting import *  # noqa: F403
from ftorch.primitives.special import *  # noqa: F403

# The strict wrapper of every primitive, family by family.
_strict_wrappers = [
    *creation.__all__, *elementwise.__all__, *reduction.__all__, *shape.__all__,
    *indexing.__all__, *linalg.__all__, *barrier.__all__, *conv_family.__all__,
    *decompositions.__all__, *orthogonal.__all__, *sorting.__all__, *fourier.__all__,
    *special.__all__, *activations.__all__, *bits.__all__,
]

# JAX's signatures where the strict wrapper takes its parameters another way:
# imported after the wrappers, which they replace.
from ftorch.lax import _jax_signatures  # noqa: E402
from ftorch.lax._jax_signatures import *  # noqa: E402,F403

__all__ = [
    "cond", "switch", "while_loop", "fori_loop", "scan", "map", "associative_scan",
    "dynamic_slice", "dynamic_slice_in_dim", "dynamic_index_in_dim", "dynamic_update_slice",
    "dynamic_update_slice_in_dim", "dynamic_update_index_in_dim", "select", "stop_gradient",
    "optimization_barrier", "psum", "pmean", "pmax", "pmin", "all_gather", "psum_scatter",
    "axis_index", "erf_inv", "axis_size", "ppermute", "pshuffle", "all_to_all", "pswapaxes",
    "custom_linear_solve", "custom_root",
    *(name for name in _strict_wrappers
      if name not in ("stop_gradient", "optimization_barrier", *_jax_signatures.__all__)),
    *_jax_signatures.__all__, *composites.__all__, *convolution.__all__, *contractions.__all__,
    *windowed.__all__,
]


def stop_gradient(x: Any) -> Any:
    """The identity whose derivative is zero, on every leaf of the pytree
    ``x``, as ``jax.lax.stop_gradient``.

    >>> import ftorch as ft, ftorch.lax as lax, mlx.core as mx
    >>> ft.grad(lambda x: x * lax.stop_gradient(x))(mx.array(3.0)).item()
    3.0
    """
    return tree.map(_stop_gradient, x)


def optimization_barrier(operand: Any) -> Any:
    """``operand`` (a pytree of arrays), unchanged, with every leaf made to
    depend on all of them, as ``jax.lax.optimization_barrier``: nothing
    computed from the result runs before every leaf is ready, and no pass
    merges work on the result with the same work on ``operand``.

    >>> import ftorch.lax as lax, mlx.core as mx
    >>> lax.optimization_barrier({"a": mx.array(1.0), "b": mx.array(2)})["b"].item()
    2
    """
    leaves, treedef = api_util.flatten_arrays(operand, "optimization_barrier operand")
    return tree.unflatten(treedef, _barrier(*leaves) if leaves else [])


def erf_inv(x: Any) -> Any:
    """The inverse error function on (-1, 1), as ``jax.lax.erf_inv``: JAX's
    name for ``erfinv`` (MLX's kernel; ``ndtri`` is accurate in the tails).

    >>> import ftorch.lax as lax, mlx.core as mx
    >>> f"{lax.erf_inv(mx.array(0.5)).item():.6f}"
    '0.476936'
    """
    return _erfinv(x)

