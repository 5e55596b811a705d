"""``ftorch.data``: minibatches of arrays held in memory, shuffled by explicit keys.

``data`` is any pytree of arrays (``mx.array`` or NumPy) whose leaves share
their leading axis, the example axis: ``(X, y)``, ``{"x": X, "y": y}``,
nested containers, namedtuples. A batch is the same pytree with each leaf
cut to the batch's examples, as ``mx.array``. NumPy leaves are converted
once, up front, keeping their dtype: a float64 array stays float64 (which
MLX computes with on the CPU only), so cast with ``.astype(np.float32)``
first if you want float32; a dtype MLX lacks (complex128, strings,
objects, ...) is a ``TypeError`` naming the leaf. Shuffling draws
``ftorch.random.permutation(key, n)`` and gathers each batch with
``mx.take(leaf, indices, axis=0)``; in-order batches are slices. Nothing
here draws from a global random state: the same key gives the same order.

- ``batches(data, batch_size, key=...)``: one pass over the data.
- ``DataLoader(data, batch_size, shuffle=True, key=...)``: many epochs;
  epoch ``e`` is shuffled by ``fold_in(key, e)``.
- ``split(data, [0.8, 0.2], key=...)``: a random train/test split.
- ``shard(data, index, count)``: one process's share for data parallelism.

MLX's own loader, ``mlx-data``, is a separate C++ package of streaming
pipelines (files, images, audio), shuffled by a global random state; this
module needs nothing beyond MLX.

>>> import ftorch as ft, ftorch.data, mlx.core as mx
>>> data = {"x": mx.arange(10).reshape(5, 2), "y": mx.arange(5)}
>>> [b["y"].tolist() for b in ft.data.batches(data, 2)]
[[0, 1], [2, 3], [4]]
"""

from __future__ import annotations

import math
import operator
from collections.abc import Iterator, Sequence
from typing import Any

import mlx.core as mx
import numpy as np

from ftorch import random, tree
from ftorch.api_util import leaf_names
from ftorch.dtypes import from_numpy
from ftorch.random import _check_key

__all__ = ["batches", "DataLoader", "split", "shard"]


def _flatten(data: Any, fname: str) -> tuple[list[mx.array], Any, int]:
    """``data``'s leaves as mx.arrays (NumPy converted once), its structure
    and its number of examples, after checking that every leaf is an array
    with the same leading size."""
    leaves, treedef = tree.flatten(data)
    if not leaves:
        raise ValueError(f"{fname}: data has no arrays (got {data!r}); give a pytree of arrays "
                         "sharing a leading example axis, e.g. (X, y) or {'x': X, 'y': y}")
    names = leaf_names(treedef, "data")
    out = []
    for name, leaf in zip(names, leaves):
        if isinstance(leaf, np.ndarray):
            leaf = from_numpy(leaf, f"{fname}: {name}")
        elif not isinstance(leaf, mx.array):
            raise TypeError(f"{fname}: {name} must be an mx.array or a NumPy array, got "
                            f"{type(leaf).__name__}: {leaf!r}")
        if leaf.ndim == 0:
            raise ValueError(f"{fname}: {name} is a scalar (shape ()); every leaf of data needs "
                             "a leading example axis")
        out.append(leaf)
    sizes = [leaf.shape[0] for leaf in out]
    if len(set(sizes)) > 1:
        listing = ", ".join(f"{name}: {size}" for name, size in zip(names, sizes))
        raise ValueError(f"{fname}: the leaves of data must share their leading (example) axis, "
                         f"got leading sizes {listing}")
    if sizes[0] == 0:
        raise ValueError(f"{fname}: data is empty (its leaves have 0 examples)")
    return out, treedef, sizes[0]


def _positive_int(value: Any, what: str, fname: str) -> int:
    if isinstance(value, bool):
        raise TypeError(f"{fname}: {what} must be a positive int, got {value!r}")
    try:
        value = operator.index(value)
    except TypeError:
        raise TypeError(f"{fname}: {what} must be a positive int, got "
                        f"{type(value).__name__}: {value!r}") from None
    if value < 1:
        raise ValueError(f"{fname}: {what} must be a positive int, got {value}")
    return value


def _num_batches(n: int, batch_size: int, drop_last: bool, fname: str) -> int:
    if drop_last and batch_size > n:
        raise ValueError(f"{fname}: with drop_last, batch_size {batch_size} larger than the "
                         f"{n} examples would yield no batch; lower batch_size or set "
                         "drop_last=False")
    return n // batch_size if drop_last else -(-n // batch_size)


def _take(leaves: list[mx.array], treedef: Any, idx: Any) -> Any:
    """The pytree of the examples ``idx`` (a slice, or an index array gathered
    with ``mx.take`` along the example axis)."""
    if isinstance(idx, slice):
        return tree.unflatten(treedef, [leaf[idx] for leaf in leaves])
    return tree.unflatten(treedef, [mx.take(leaf, idx, axis=0) for leaf in leaves])


def _iterate(leaves: list[mx.array], treedef: Any, n: int, batch_size: int, key: Any,
             count: int) -> Iterator[Any]:
    order = None if key is None else random.permutation(key, n)
    for i in range(count):
        rows = slice(i * batch_size, min((i + 1) * batch_size, n))
        yield _take(leaves, treedef, rows if order is None else order[rows])


def batches(data: Any, batch_size: int, *, key: Any = None,
            drop_last: bool = False) -> Iterator[Any]:
    """The batches of one pass over ``data``: pytrees of ``mx.array`` with
    ``batch_size`` examples each, in order, or shuffled by ``key`` (the
    order ``ftorch.random.permutation(key, n)``). The last batch holds the
    remaining ``n % batch_size`` examples, unless ``drop_last`` drops it.
    ``data`` is checked (and NumPy leaves converted) when ``batches`` is
    called, not when the first batch is drawn.

    Args:
        data: a pytree of arrays sharing their leading (example) axis.
        batch_size: examples per batch, a positive int.
        key: a key (``ftorch.random.key(seed)``) to shuffle by. Default: in order.
        drop_last: drop a final batch smaller than ``batch_size``. Default: ``False``.

    >>> import ftorch as ft, ftorch.data, mlx.core as mx
    >>> X, y = mx.zeros((5, 3)), mx.arange(5)
    >>> [xb.shape for xb, yb in ft.data.batches((X, y), 2)]
    [(2, 3), (2, 3), (1, 3)]
    >>> sorted(sum((yb.tolist() for _, yb in ft.data.batches((X, y), 2, key=ft.random.key(0))),
    ...            []))
    [0, 1, 2, 3, 4]
    """
    leaves, treedef, n = _flatten(data, "batches")
    batch_size = _positive_int(batch_size, "batch_size", "batches")
    if key is not None:
        _check_key(key, "batches")
    count = _num_batches(n, batch_size, drop_last, "batches")
    return _iterate(leaves, treedef, n, batch_size, key, count)


class DataLoader:
    """Minibatches of ``data`` over many epochs, reproducibly shuffled.

    ``loader.epoch(e)`` gives epoch ``e``'s batches, as
    ``batches(data, batch_size, key=fold_in(key, e), drop_last=drop_last)``
    (in order when not ``shuffle``): each epoch has its own order, and the
    same key and epoch give the same order, whatever ran before. Iterating
    the loader itself runs the next epoch, as a PyTorch ``DataLoader``
    reshuffles on each pass: ``for batch in loader`` runs
    ``loader.epoch(loader.next_epoch)`` and counts it (when the loop starts,
    so an interrupted epoch counts too); set ``next_epoch`` to resume a run.
    ``loader.epoch(e)`` neither reads nor changes that count.

    Args:
        data: a pytree of arrays sharing their leading (example) axis; NumPy
            leaves are converted to ``mx.array`` once, here.
        batch_size: examples per batch, a positive int.
        shuffle: shuffle each epoch (needs ``key``). Default: ``False``.
        drop_last: drop each epoch's final batch when smaller than
            ``batch_size``. Default: ``False``.
        key: the key the epochs' orders derive from; unused when not
            ``shuffle``.

    ``len(loader)`` is the number of batches per epoch; ``num_examples`` the
    number of examples.

    >>> import ftorch as ft, ftorch.data, mlx.core as mx
    >>> loader = ft.data.DataLoader({"y": mx.arange(10)}, 4, shuffle=True, key=ft.random.key(0))
    >>> len(loader), loader.num_examples
    (3, 10)
    >>> [b["y"].shape for b in loader.epoch(0)]
    [(4,), (4,), (2,)]
    >>> first = [b["y"].tolist() for b in loader]  # epoch 0
    >>> first == [b["y"].tolist() for b in loader.epoch(0)], loader.next_epoch
    (True, 1)
    """

    def __init__(self, data: Any, batch_size: int, *, shuffle: bool = False,
                 drop_last: bool = False, key: Any = None) -> None:
        self._leaves, self._treedef, self.num_examples = _flatten(data, "DataLoader")
        self.batch_size = _positive_int(batch_size, "batch_size", "DataLoader")
        if shuffle and key is None:
            raise ValueError("DataLoader: shuffle=True needs a key: "
                             "DataLoader(data, batch_size, shuffle=True, "
                             "key=ftorch.random.key(seed))")
        if key is not None:
            _check_key(key, "DataLoader")
        self.shuffle = bool(shuffle)
        self.drop_last = bool(drop_last)
        self.key = key
        self.next_epoch = 0
        self._len = _num_batches(self.num_examples, self.batch_size, self.drop_last,
                                 "DataLoader")

    def __len__(self) -> int:
        return self._len

    def epoch(self, epoch: int) -> Iterator[Any]:
        """The batches of epoch ``epoch`` (a non-negative int), shuffled by
        ``ftorch.random.fold_in(key, epoch)`` when ``shuffle``.

        >>> import ftorch as ft, ftorch.data, mlx.core as mx
        >>> loader = ft.data.DataLoader(mx.arange(6), 3, shuffle=True, key=ft.random.key(1))
        >>> a, b = ([x.tolist() for x in loader.epoch(e)] for e in (0, 1))
        >>> a == [x.tolist() for x in loader.epoch(0)], a != b
        (True, True)
        """
        if isinstance(epoch, bool) or not isinstance(epoch, (int, np.integer)) or epoch < 0:
            raise ValueError(f"DataLoader.epoch: epoch must be a non-negative int, got {epoch!r}")
        key = random.fold_in(self.key, int(epoch)) if self.shuffle else None
        return _iterate(self._leaves, self._treedef, self.num_examples, self.batch_size, key,
                        self._len)

    def __iter__(self) -> Iterator[Any]:
        epoch, self.next_epoch = self.next_epoch, self.next_epoch + 1
        return self.epoch(epoch)

    def __repr__(self) -> str:
        return (f"DataLoader(num_examples={self.num_examples}, batch_size={self.batch_size}, "
                f"shuffle={self.shuffle}, drop_last={self.drop_last}, batches={self._len}, "
                f"next_epoch={self.next_epoch})")


def _split_sizes(sizes: Sequence[Any], n: int) -> list[int]:
    """Part sizes from sizes (ints summing to ``n``) or fractions (summing to
    1; the remainder after flooring goes one example each to the first
    parts, as ``torch.utils.data.random_split``)."""
    if isinstance(sizes, (str, bytes)) or not isinstance(sizes, Sequence) or not sizes:
        raise TypeError(f"split: sizes must be a non-empty sequence of ints (sizes) or floats "
                        f"(fractions), got {sizes!r}")
    if all(isinstance(s, (int, np.integer)) and not isinstance(s, bool) for s in sizes):
        out = [int(s) for s in sizes]
        if any(s < 0 for s in out) or sum(out) != n:
            raise ValueError(f"split: sizes {out} must be non-negative and sum to the number of "
                             f"examples, {n}")
        return out
    if not all(isinstance(s, (float, int, np.floating, np.integer)) and not isinstance(s, bool)
               for s in sizes):
        raise TypeError(f"split: sizes must be all ints (sizes) or numbers (fractions), "
                        f"got {sizes!r}")
    fractions = [float(s) for s in sizes]
    if any(not 0.0 <= f <= 1.0 for f in fractions) or not math.isclose(sum(fractions), 1.0,
                                                                         abs_tol=1e-6):
        raise ValueError(f"split: fractions {fractions} must lie in [0, 1] and sum to 1")
    out = [math.floor(n * f) for f in fractions]
    for i in range(n - sum(out)):
        out[i % len(out)] += 1
    return out


def split(data: Any, sizes: Sequence[int] | Sequence[float], *, key: Any) -> tuple[Any, ...]:
    """A random split of ``data``'s examples into disjoint parts, one pytree
    per entry of ``sizes``: ints are the parts' sizes (summing to the number
    of examples), floats their fractions (summing to 1; after rounding down,
    the leftover examples go one each to the first parts, as
    ``torch.utils.data.random_split``). The examples are shuffled by
    ``ftorch.random.permutation(key, n)`` and cut in that order, so each
    part is in shuffled order.

    >>> import ftorch as ft, ftorch.data, mlx.core as mx
    >>> data = {"x": mx.zeros((10, 3)), "y": mx.arange(10)}
    >>> train, test = ft.data.split(data, [0.8, 0.2], key=ft.random.key(0))
    >>> train["x"].shape, test["x"].shape
    ((8, 3), (2, 3))
    >>> sorted(train["y"].tolist() + test["y"].tolist()) == list(range(10))
    True
    """
    leaves, treedef, n = _flatten(data, "split")
    _check_key(key, "split")
    parts = _split_sizes(sizes, n)
    order = random.permutation(key, n)
    out, start = [], 0
    for size in parts:
        out.append(_take(leaves, treedef, order[start:start + size]))
        start += size
    return tuple(out)


def shard(data: Any, index: int, count: int, *, drop_last: bool = False) -> Any:
    """The ``index``-th of ``count`` equal shards of ``data``, with the
    semantics of PyTorch's ``DistributedSampler``: strided, so example ``i``
    goes to shard ``i % count``; the shards have equal sizes, by repeating
    examples from the start (``ceil(n / count)`` each: some examples appear
    twice across shards) or, with ``drop_last``, by leaving out the last
    ``n % count`` examples (``n // count`` each). Shard the data once and
    give each process its own loader; to shuffle before sharding, ``split``
    or ``batches`` with a key give a shuffled copy to shard.

    >>> import ftorch as ft, ftorch.data, mlx.core as mx
    >>> y = mx.arange(5)
    >>> [ft.data.shard(y, i, 2).tolist() for i in range(2)]
    [[0, 2, 4], [1, 3, 0]]
    >>> [ft.data.shard(y, i, 2, drop_last=True).tolist() for i in range(2)]
    [[0, 2], [1, 3]]
    """
    leaves, treedef, n = _flatten(data, "shard")
    count = _positive_int(count, "count", "shard")
    if isinstance(index, bool) or not isinstance(index, (int, np.integer)) or not (
            0 <= index < count):
        raise ValueError(f"shard: index must be an int in [0, {count}), got {index!r}")
    if drop_last and count > n:
        raise ValueError(f"shard: with drop_last, {count} shards of {n} examples would all be "
                         "empty; use fewer shards or drop_last=False (which repeats examples)")
    total = n // count * count if drop_last else -(-n // count) * count
    idx = mx.arange(int(index), total, count) % n
    return _take(leaves, treedef, idx)
