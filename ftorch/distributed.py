"""``ftorch.distributed``: collectives across processes, and data-parallel training.

Processes are started by MLX's launcher, ``mlx.launch`` (for example
``mlx.launch -n 2 --backend ring script.py`` on one machine, or
``--hostfile`` across machines), and talk through ``mx.distributed``: the
ring backend (TCP: Ethernet, Thunderbolt, loopback), MPI, or NCCL on CUDA.
``init()`` joins the group the launcher set up; without a launcher the group
has one process and every collective is the identity, so code written for
many processes runs unchanged in one.

The collectives are primitives with JVP, VJP and batching rules, so they
work under ``grad``, ``vmap`` and ``jit`` (where ``mx.compile`` contains
them). Their derivatives follow JAX's ``psum`` and ``all_gather`` over a
named axis: the function being differentiated is the *sum over processes*
of each process's output, as in data parallelism where each process holds
one term of the loss. So the transpose of ``all_sum`` is ``all_sum`` (every
process's input reaches every output), and the cotangent of ``all_gather``
on process ``r`` is block ``r`` of the ``all_sum`` of the cotangents.
Under ``vmap`` a collective acts elementwise over the batch: the collective
of the batched array.

Every process must run the same collectives in the same order with the same
shapes and dtypes: one that differs or never arrives leaves the others
waiting (a process that exits makes the ring backend raise in the others,
and ``mlx.launch`` then stops them).

Data parallelism: ``shard_batch`` cuts this process's share of a global
batch, ``all_mean_grads`` averages gradients in a few large all-reduces
(buckets), ``check_identical`` verifies that the processes' parameters
agree, ``save`` writes a checkpoint from process 0 only. To shard a whole
dataset up front (PyTorch's ``DistributedSampler``), use
``ftorch.data.shard(data, rank(), size())``.

>>> import ftorch.distributed as dist, mlx.core as mx
>>> dist.size(), dist.rank()  # no launcher: one process
(1, 0)
>>> dist.all_sum(mx.array([1.0, 2.0])).tolist()
[1.0, 2.0]
"""

from __future__ import annotations

import math
import os
import zlib
from collections.abc import Sequence
from typing import Any

import mlx.core as mx
import numpy as np

import ftorch.primitives as lax
from ftorch import tree
from ftorch.api_util import check_axis, leaf_names
from ftorch.core import Tracer, aval_of, format_aval, is_inexact
from ftorch.primitives.distributed import all_gather_p, all_max_p, all_min_p, all_sum_p
from ftorch.serialization import save as _save_file
from ftorch.typing import PyTree

__all__ = [
    "init", "is_available", "is_initialized", "rank", "size", "all_sum", "all_mean",
    "all_max", "all_min", "all_gather", "broadcast", "barrier", "shard_batch", "all_mean_grads",
    "check_identical", "save",
]

Group = mx.distributed.Group

#: The group ``init`` joined (``None`` until the first call).
_world: Group | None = None

#: PyTorch DistributedDataParallel's default bucket size.
DEFAULT_BUCKET_BYTES = 25 * 2 ** 20


# ----------------------------------------------------------------------------
# The process group
# ----------------------------------------------------------------------------


def init(backend: str = "any", strict: bool = False) -> Group:
    """Join the group of processes the launcher started: ``mx.distributed.init``.

    Args:
        backend: ``"any"`` (the first backend that starts: the one the
            launcher's environment configures), ``"ring"``, ``"mpi"``,
            ``"nccl"`` or ``"jaccl"``. Default: ``"any"``.
        strict: raise when no backend can start, instead of returning a group
            of one process. Default: ``False``.

    Returns:
        the group of all processes (``rank()`` and ``size()`` read it). Later
        calls return the same group; collectives call ``init()`` themselves
        when it was never called.

    >>> import ftorch.distributed as dist
    >>> dist.init().size()
    1
    """
    global _world
    if not isinstance(backend, str):
        raise TypeError(f"init: backend must be a string, got {type(backend).__name__}")
    if _world is None:
        _world = mx.distributed.init(strict=strict, backend=backend)
    return _world


def is_available() -> bool:
    """Whether MLX was built with any communication backend
    (``mx.distributed.is_available``).

    >>> import ftorch.distributed as dist
    >>> isinstance(dist.is_available(), bool)
    True
    """
    return mx.distributed.is_available()


def is_initialized() -> bool:
    """Whether ``init`` has run (directly or through a collective).

    >>> import ftorch.distributed as dist
    >>> dist.init() is not None and dist.is_initialized()
    True
    """
    return _world is not None


def _group(group: Group | None) -> Group:
    """``group``, or the group of all processes (joined by ``init()`` if needed)."""
    if group is None:
        return init()
    if not isinstance(group, Group):
        raise TypeError(f"group must be an mx.distributed.Group or None, got "
                        f"{type(group).__name__}")
    return group


def rank(group: Group | None = None) -> int:
    """This process's index in ``group`` (default: all processes), from 0.

    >>> import ftorch.distributed as dist
    >>> dist.rank()
    0
    """
    return _group(group).rank()


def size(group: Group | None = None) -> int:
    """The number of processes in ``group`` (default: all processes).

    >>> import ftorch.distributed as dist
    >>> dist.size()
    1
    """
    return _group(group).size()


# ----------------------------------------------------------------------------
# Public collectives: pytrees in, pytrees out
# ----------------------------------------------------------------------------


def _as_array(x: Any, fname: str, name: str) -> Any:
    if isinstance(x, (mx.array, Tracer)):
        return x
    if isinstance(x, (np.ndarray, np.generic, bool, int, float, complex)):
        return mx.array(x)
    raise TypeError(f"{fname}: {name} must be an array, got {type(x).__name__}: {x!r}")


def _map_leaves(fname: str, x: PyTree, f: Any) -> PyTree:
    leaves, treedef = tree.flatten(x)
    names = leaf_names(treedef, "x")
    return tree.unflatten(treedef, [f(_as_array(leaf, fname, name), name)
                                    for leaf, name in zip(leaves, names)])


def all_sum(x: PyTree, *, group: Group | None = None) -> PyTree:
    """The sum over processes of ``x`` (an array or a pytree of arrays), on
    every process: ``mx.distributed.all_sum`` leaf by leaf. Booleans combine
    with ``or``. Its transpose is ``all_sum``: see the module docstring.

    >>> import ftorch as ft, ftorch.distributed as dist, mlx.core as mx
    >>> dist.all_sum({"a": mx.array([1.0, 2.0]), "b": mx.array(3)})["a"].tolist()
    [1.0, 2.0]
    >>> ft.grad(lambda w: (dist.all_sum(w) ** 2).sum())(mx.array([1.0, 2.0])).tolist()
    [2.0, 4.0]
    """
    g = _group(group)
    return _map_leaves("all_sum", x, lambda a, _: all_sum_p.bind(a, group=g))


def all_mean(x: PyTree, *, group: Group | None = None) -> PyTree:
    """The mean over processes of ``x`` (an array or a pytree of arrays), on
    every process. Floating and complex leaves keep their dtype; integer and
    boolean leaves are summed exactly and the sum divided in float32 (as
    ``jax.numpy.mean``'s default for integers).

    >>> import ftorch.distributed as dist, mlx.core as mx
    >>> dist.all_mean(mx.array([1, 2])).tolist()
    [1.0, 2.0]
    """
    g = _group(group)
    n = g.size()

    def mean(a, _):
        total = all_sum_p.bind(a, group=g)
        dtype = aval_of(total).dtype
        if not is_inexact(dtype):
            total, dtype = lax.astype(total, mx.float32), mx.float32
        return total if n == 1 else lax.multiply(total, mx.array(1.0 / n, dtype))

    return _map_leaves("all_mean", x, mean)


def all_max(x: PyTree, *, group: Group | None = None) -> PyTree:
    """The elementwise maximum over processes of ``x`` (an array or a pytree
    of arrays), on every process. Its derivative goes to the processes that
    hold the maximum, split equally among ties.

    >>> import ftorch.distributed as dist, mlx.core as mx
    >>> dist.all_max(mx.array([1.0, -2.0])).tolist()
    [1.0, -2.0]
    """
    g = _group(group)
    return _map_leaves("all_max", x, lambda a, _: all_max_p.bind(a, group=g))


def all_min(x: PyTree, *, group: Group | None = None) -> PyTree:
    """The elementwise minimum over processes of ``x`` (an array or a pytree
    of arrays), on every process; the derivative as ``all_max``'s.

    >>> import ftorch.distributed as dist, mlx.core as mx
    >>> dist.all_min(mx.array([1.0, -2.0])).tolist()
    [1.0, -2.0]
    """
    g = _group(group)
    return _map_leaves("all_min", x, lambda a, _: all_min_p.bind(a, group=g))


def all_gather(x: PyTree, *, tiled: bool = False, group: Group | None = None) -> PyTree:
    """Every process's ``x`` (an array or a pytree of arrays), in rank order,
    on every process: stacked along a new leading axis (shape
    ``(size(), *x.shape)``), or with ``tiled`` concatenated along axis 0 (shape
    ``(size() * x.shape[0], ...)``: ``mx.distributed.all_gather``), as
    ``jax.lax.all_gather``'s ``tiled``. Every process must pass the same
    shapes. The cotangent of process ``r``'s ``x`` is block ``r`` of the sum
    over processes of the cotangents (on the ring backend, which has no
    reduce-scatter, an all-reduce of the whole cotangent).

    >>> import ftorch.distributed as dist, mlx.core as mx
    >>> dist.all_gather(mx.array([1.0, 2.0])).shape
    (1, 2)
    >>> dist.all_gather(mx.array([1.0, 2.0]), tiled=True).shape
    (2,)
    """
    g = _group(group)

    def gather(a, name):
        if tiled:
            if aval_of(a).ndim == 0:
                raise ValueError(f"all_gather: with tiled=True, {name} needs at least one axis "
                                 "to concatenate along; got a scalar (use tiled=False to stack)")
            return all_gather_p.bind(a, group=g)
        return all_gather_p.bind(lax.expand_dims(a, (0,)), group=g)

    return _map_leaves("all_gather", x, gather)


def broadcast(x: PyTree, root: int = 0, *, group: Group | None = None) -> PyTree:
    """Process ``root``'s ``x`` (an array or a pytree of arrays), on every
    process (every process passes arrays of the same shapes and dtypes).

    It is one ``all_sum`` of ``x`` on ``root`` and zeros elsewhere: the cost
    of an all-reduce of ``x`` (on a ring, about twice the bytes a dedicated
    broadcast would send), with the all-reduce's derivative: the cotangent
    of ``root``'s ``x`` is the sum of all processes' cotangents, the others
    get zero.

    >>> import ftorch.distributed as dist, mlx.core as mx
    >>> dist.broadcast({"w": mx.array([1.0, 2.0])})["w"].tolist()
    [1.0, 2.0]
    """
    g = _group(group)
    n = g.size()
    if isinstance(root, bool) or not isinstance(root, (int, np.integer)) or not 0 <= root < n:
        raise ValueError(f"broadcast: root must be an int in [0, {n}) (a rank), got {root!r}")
    mine = mx.array(g.rank() == root)

    def send(a, _):
        # ``where`` rather than a product: a NaN or inf away from the root
        # must not reach the sum. Every process stages the same operations.
        return all_sum_p.bind(lax.where(mine, a, lax.zeros_like(a)), group=g)

    return _map_leaves("broadcast", x, send)


def barrier(*, group: Group | None = None) -> None:
    """Wait until every process of ``group`` reaches this call (a one-element
    ``all_sum``, evaluated).

    >>> import ftorch.distributed as dist
    >>> dist.barrier()
    """
    g = _group(group)
    if g.size() > 1:
        mx.eval(mx.distributed.all_sum(mx.array(1, mx.int32), group=g))


# ----------------------------------------------------------------------------
# Data parallelism
# ----------------------------------------------------------------------------


def shard_batch(batch: PyTree, axis: int = 0, *, group: Group | None = None) -> PyTree:
    """This process's share of a global batch: block ``rank()`` of
    ``size()`` equal contiguous blocks of every leaf along ``axis``. With
    equal blocks, the mean over processes of per-process mean losses is the
    global batch's mean loss, so averaged gradients equal the gradient on the
    whole batch. A size that ``size()`` does not divide is an error (drop or
    pad the last batch: ``DataLoader(..., drop_last=True)``).

    >>> import ftorch.distributed as dist, mlx.core as mx
    >>> dist.shard_batch({"x": mx.zeros((8, 3)), "y": mx.arange(8)})["x"].shape
    (8, 3)
    """
    g = _group(group)
    n, r = g.size(), g.rank()
    if isinstance(axis, bool) or not isinstance(axis, (int, np.integer)):
        raise TypeError(f"shard_batch: axis must be an int, got {axis!r}")
    leaves, treedef = tree.flatten(batch)
    names = leaf_names(treedef, "batch")
    out = []
    for leaf, name in zip(leaves, names):
        leaf = _as_array(leaf, "shard_batch", name)
        shape = aval_of(leaf).shape
        ax = check_axis(int(axis), len(shape), "shard_batch", of=f"{name} of shape {shape}")
        if shape[ax] % n:
            raise ValueError(
                f"shard_batch: {name} has {shape[ax]} examples along axis {ax}, which "
                f"{n} processes cannot share equally; make the global batch size a multiple "
                f"of {n} (for the last batch of an epoch: DataLoader(..., drop_last=True))")
        if n == 1:
            out.append(leaf)
            continue
        k = shape[ax] // n
        out.append(lax.static_slice(leaf, (slice(None),) * ax + (slice(r * k, (r + 1) * k),)))
    return tree.unflatten(treedef, out)


def _buckets(leaves: Sequence[Any], bucket_bytes: int) -> list[list[int]]:
    """Leaf indices grouped into buckets: consecutive leaves of one dtype up
    to ``bucket_bytes`` each (a larger leaf gets a bucket of its own)."""
    by_dtype: dict[Any, list[list[int]]] = {}
    filled: dict[Any, int] = {}
    for i, leaf in enumerate(leaves):
        a = aval_of(leaf)
        nbytes = math.prod(a.shape) * a.dtype.size
        groups = by_dtype.setdefault(a.dtype, [])
        if not groups or filled[a.dtype] + nbytes > bucket_bytes:
            groups.append([])
            filled[a.dtype] = 0
        groups[-1].append(i)
        filled[a.dtype] += nbytes
    return [b for groups in by_dtype.values() for b in groups if b]


def _reduce_in_buckets(leaves: Sequence[Any], bucket_bytes: int, reduce: Any) -> list[Any]:
    """``reduce`` (an elementwise function of a 1-d array) applied to the
    leaves packed into buckets: each bucket's leaves flattened and joined,
    reduced once, and cut back into leaves of the original shapes."""
    out: list[Any] = [None] * len(leaves)
    for bucket in _buckets(leaves, bucket_bytes):
        shapes = [aval_of(leaves[i]).shape for i in bucket]
        sizes = [math.prod(s) for s in shapes]
        flat = [lax.reshape(leaves[i], (n,)) for i, n in zip(bucket, sizes)]
        reduced = reduce(flat[0] if len(flat) == 1 else lax.concatenate(flat, 0))
        start = 0
        for i, shape, n in zip(bucket, shapes, sizes):
            piece = reduced if len(bucket) == 1 else lax.static_slice(
                reduced, (slice(start, start + n),))
            out[i] = lax.reshape(piece, shape)
            start += n
    return out


def all_mean_grads(grads: PyTree, *, bucket_bytes: int | None = DEFAULT_BUCKET_BYTES,
                   group: Group | None = None) -> PyTree:
    """The mean over processes of ``grads`` (a pytree of floating arrays),
    in a few large all-reduces: the leaves of each dtype are packed, in
    order, into buckets of up to ``bucket_bytes`` (a larger leaf is a bucket
    of its own), each bucket is summed across processes in one
    ``all_sum`` and scaled by ``1 / size()``, then cut back into leaves. One
    all-reduce per leaf pays the per-message latency once per leaf, which
    dominates for models of many small leaves.

    Use it inside the jitted train step, after ``grad``. With one process it
    returns ``grads`` unchanged.

    Args:
        grads: a pytree of floating (or complex) arrays.
        bucket_bytes: the largest bucket, in bytes; ``None``: one all-reduce
            per leaf. Default: 25 MiB (PyTorch DistributedDataParallel's).
        group: the processes to average over. Default: all.

    >>> import ftorch.distributed as dist, mlx.core as mx
    >>> grads = {"w": mx.ones((2, 2)), "b": mx.zeros(2)}
    >>> dist.all_mean_grads(grads)["w"].tolist()
    [[1.0, 1.0], [1.0, 1.0]]
    """
    g = _group(group)
    n = g.size()
    if bucket_bytes is not None and (isinstance(bucket_bytes, bool) or not isinstance(
            bucket_bytes, (int, np.integer)) or bucket_bytes < 1):
        raise ValueError(f"all_mean_grads: bucket_bytes must be a positive int or None, got "
                         f"{bucket_bytes!r}")
    leaves, treedef = tree.flatten(grads)
    names = leaf_names(treedef, "grads")
    leaves = [_as_array(leaf, "all_mean_grads", name) for leaf, name in zip(leaves, names)]
    for leaf, name in zip(leaves, names):
        if not is_inexact(aval_of(leaf).dtype):
            raise TypeError(f"all_mean_grads: {name} has dtype {aval_of(leaf).dtype}; "
                            "gradients are floating arrays")
    if n == 1:
        return tree.unflatten(treedef, leaves)

    def mean(flat):
        return lax.multiply(all_sum_p.bind(flat, group=g), mx.array(1.0 / n, flat.dtype))

    if bucket_bytes is None:
        return tree.unflatten(treedef, [mean(leaf) for leaf in leaves])
    return tree.unflatten(treedef, _reduce_in_buckets(leaves, int(bucket_bytes), mean))


def _fingerprint(a: mx.array) -> mx.array:
    """A 32-bit checksum of ``a``'s bytes (a uint32 scalar, wrapping): any
    change to one element changes it (each word is weighted by an odd, hence
    invertible, factor mod 2**32)."""
    a = mx.contiguous(a.reshape(-1))
    if a.dtype == mx.bool_:
        a = a.astype(mx.uint8)
    nbytes = a.size * a.dtype.size
    word = mx.uint32 if nbytes % 4 == 0 else mx.uint16 if nbytes % 2 == 0 else mx.uint8
    words = a.view(word).astype(mx.uint32)
    weights = mx.arange(words.size, dtype=mx.uint32) * mx.array(2, mx.uint32) + mx.array(
        1, mx.uint32)
    return mx.sum(words * weights)


def check_identical(x: PyTree, *, group: Group | None = None) -> None:
    """Raise if the processes' ``x`` (parameters, optimizer state: a pytree
    of arrays) are not bit-for-bit identical, naming the leaves that differ
    and the ranks that disagree with rank 0.

    Each process reduces each leaf to a 32-bit checksum of its bytes, and
    one ``all_gather`` of the checksums (plus one of a checksum of the tree's
    structure, shapes and dtypes, checked first) compares them: cheap enough
    to run every few hundred steps. Call it on concrete arrays, outside
    ``jit``; every process must call it.

    >>> import ftorch.distributed as dist, mlx.core as mx
    >>> dist.check_identical({"w": mx.ones(3)})
    """
    g = _group(group)
    leaves, treedef = tree.flatten(x)
    names = leaf_names(treedef, "x")
    arrays = []
    for leaf, name in zip(leaves, names):
        if isinstance(leaf, Tracer):
            raise TypeError(f"check_identical: {name} is a traced value; call it on concrete "
                            "arrays, outside jit, grad and vmap")
        arrays.append(_as_array(leaf, "check_identical", name))
    if g.size() == 1:
        return
    layout = repr([(name, format_aval(aval_of(a))) for name, a in zip(names, arrays)])
    sums = mx.distributed.all_gather(mx.array([zlib.crc32(layout.encode())], mx.uint32),
                                     group=g).tolist()
    if len(set(sums)) > 1:
        ranks = [r for r, s in enumerate(sums) if s != sums[0]]
        raise RuntimeError(f"check_identical: the processes' trees differ in structure, shapes "
                           f"or dtypes: ranks {ranks} differ from rank 0 (rank {g.rank()} has "
                           f"{layout[:500]})")
    if not arrays:
        return
    mine = mx.stack([_fingerprint(a) for a in arrays])
    table = mx.distributed.all_gather(mine[None], group=g).tolist()
    bad = [(name, [r for r in range(len(table)) if table[r][i] != table[0][i]])
           for i, name in enumerate(names)]
    bad = [(name, ranks) for name, ranks in bad if ranks]
    if bad:
        lines = "\n".join(f"  {name}: ranks {ranks} differ from rank 0" for name, ranks in bad)
        raise RuntimeError(f"check_identical: {len(bad)} of {len(names)} leaves differ across "
                           f"processes:\n{lines}")


def save(path: str | os.PathLike, x: PyTree, *, root: int = 0,
         group: Group | None = None) -> None:
    """``ftorch.save(path, x)`` on process ``root`` only, then a barrier, so
    that no process goes on (to read the file, or to exit) before it is
    written. If the write fails on ``root``, every process raises.

    >>> import ftorch as ft, ftorch.distributed as dist, mlx.core as mx, os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "ckpt.safetensors")
    >>> dist.save(path, {"w": mx.ones(2)})
    >>> ft.load(path)["w"].tolist()
    [1.0, 1.0]
    """
    g = _group(group)
    error = None
    if g.rank() == root:
        try:
            _save_file(path, x)
        except Exception as e:  # reported to every process below
            error = e
    if g.size() > 1:
        failed = mx.distributed.all_sum(mx.array(error is not None, mx.int32), group=g)
        if failed.item() and error is None:
            raise RuntimeError(f"save: writing {os.fspath(path)!r} failed on rank {root}")
    if error is not None:
        raise error
