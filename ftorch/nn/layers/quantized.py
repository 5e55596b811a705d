"""Quantized layers, as ``mlx.nn``'s: ``QuantizedLinear``, ``QuantizedEmbedding``
and ``quantize``, which swaps a model's ``Linear`` and ``Embedding`` layers
for them and quantizes their parameters.

Their parameters have ``mlx.nn``'s names and layouts (``weight``: the
packed uint32 matrix; ``scales``; ``biases`` in the affine mode; ``bias``),
so they move both ways with ``mlx.nn.QuantizedLinear`` by name. Unlike
``mlx.nn``'s, nothing is frozen: they are plain pytrees, and the affine
``scales`` and ``biases`` are differentiable, so fine-tuning them is a
matter of taking ``ft.grad`` with respect to them (the packed integers never
are: asking for them is an error).

>>> import ftorch.nn as nn, ftorch.random as random, mlx.core as mx
>>> model = nn.Sequential(nn.Linear(64, 32), nn.ReLU(), nn.Linear(32, 10))
>>> params, _ = model.init(random.key(0), mx.zeros((1, 64)))
>>> qmodel, qparams = nn.quantize(model, params, group_size=32, bits=4)
>>> qmodel.layers[0]
QuantizedLinear(input_dims=64, output_dims=32, bias=True, group_size=32, bits=4, mode='affine')
>>> sorted(qparams["layers"][0])
['bias', 'biases', 'scales', 'weight']
>>> qmodel(qparams, mx.ones((2, 64))).shape
(2, 10)
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable

import ftorch.numpy as fnp
from ftorch.nn import init as initializers
from ftorch.nn._layer import Array, InputSpec, Key, Layer, Params, State, layer_error
from ftorch.nn.layers._checks import check_features, check_positive, checked_param
from ftorch.nn.layers.embedding import Embedding, _check_indices
from ftorch.nn.layers.linear import Linear
from ftorch.nn.utils import replace_layers
from ftorch.numpy._quantized import quantization_params

__all__ = ["QuantizedLinear", "QuantizedEmbedding", "quantize"]


def _quantized(layer: Layer, weight: Array) -> Params:
    """``{"weight", "scales"[, "biases"]}`` of ``weight``, quantized with ``layer``'s settings."""
    shape = weight.shape
    if shape[-1] % layer.group_size:
        raise layer_error(layer, f"group_size={layer.group_size} must divide the weight's last "
                          f"axis, of length {shape[-1]} (shape {tuple(shape)})")
    names = ("weight", "scales", "biases")
    return dict(zip(names, fnp.quantize(weight, layer.group_size, layer.bits, layer.mode)))


def _settings(owner: str, group_size: int | None, bits: int | None, mode: str) -> tuple:
    return (*quantization_params(group_size, bits, mode, owner), mode)


def _resolve_settings(layer: Layer, length_name: str) -> None:
    """Set ``layer``'s ``group_size`` and ``bits`` (the mode's defaults for
    ``None``), after checking them and that the group size divides the
    quantized axis (the field ``length_name``)."""
    owner = type(layer).__name__
    group_size, bits, _ = _settings(owner, layer.group_size, layer.bits, layer.mode)
    object.__setattr__(layer, "group_size", group_size)
    object.__setattr__(layer, "bits", bits)
    length = getattr(layer, length_name)
    if length % group_size:
        raise ValueError(f"{owner}: group_size={group_size} must divide {length_name}={length}")


def _packed_params(layer: Layer, params: Params, rows: int, cols: int) -> tuple:
    """The quantized matrix's parts in ``params``, checked against ``layer``."""
    packed = checked_param(layer, params, "weight", (rows, cols * layer.bits // 32))
    groups = (rows, cols // layer.group_size)
    scales = checked_param(layer, params, "scales", groups)
    biases = checked_param(layer, params, "biases", groups) if layer.mode == "affine" else None
    return packed, scales, biases


@dataclasses.dataclass(frozen=True)
class QuantizedLinear(Layer):
    r"""``Linear`` with a quantized weight, as ``mlx.nn.QuantizedLinear``:
    ``y = x @ dequantize(weight).T + bias``, computed by
    ``ftorch.numpy.quantized_matmul`` without forming the dense weight.

    Args:
        input_dims (int): The size of the input's last axis (a multiple of
            ``group_size``).
        output_dims (int): The size of the output's last axis.
        bias (bool, optional): Whether to add ``bias``. Default: ``True``.
        group_size (int, optional): Values per scale (see
            ``ftorch.numpy.quantize``). Default: the mode's (64 for affine).
        bits (int, optional): Bits per value. Default: the mode's (4 for affine).
        mode (str, optional): ``"affine"``, ``"mxfp4"``, ``"mxfp8"`` or
            ``"nvfp4"``. Default: ``"affine"``.

    Params: ``weight`` (uint32, ``(output_dims, input_dims * bits // 32)``),
    ``scales`` and, affine, ``biases`` (``(output_dims, input_dims //
    group_size)``), ``bias`` (``(output_dims,)``). ``init`` quantizes
    ``mlx.nn``'s :math:`\mathcal{U}(-k, k)` weight, :math:`k =
    1/\sqrt{\text{input\_dims}}`, and starts ``bias`` at zero.

    >>> import ftorch.nn as nn, ftorch.random as random, mlx.core as mx
    >>> layer = nn.QuantizedLinear(64, 8, bits=8)
    >>> params, _ = layer.init(random.key(0), mx.zeros(64))
    >>> params["weight"].shape, params["scales"].shape, layer(params, mx.ones((3, 64))).shape
    ((8, 16), (8, 1), (3, 8))
    """

    input_dims: int
    output_dims: int
    bias: bool = True
    group_size: int | None = None
    bits: int | None = None
    mode: str = "affine"

    def __post_init__(self) -> None:
        check_positive("QuantizedLinear", input_dims=self.input_dims,
                       output_dims=self.output_dims)
        _resolve_settings(self, "input_dims")

    def init(self, key: Key, x: InputSpec) -> tuple[Params, State]:
        r"""The quantized :math:`\mathcal{U}(-k, k)` weight and a zero bias; no state."""
        check_features(self, x, self.input_dims)
        scale = math.sqrt(1.0 / self.input_dims)
        weight = initializers.uniform(-scale, scale)(key, (self.output_dims, self.input_dims))
        params = _quantized(self, weight)
        if self.bias:
            params["bias"] = fnp.zeros((self.output_dims,))
        return params, {}

    def apply(self, params: Params, state: State, x: Array, *, key: Key | None = None,
              train: bool = False) -> tuple[Array, State]:
        """``(x @ dequantize(weight).T + bias, state)``."""
        check_features(self, x, self.input_dims)
        packed, scales, biases = _packed_params(self, params, self.output_dims, self.input_dims)
        y = fnp.quantized_matmul(x, packed, scales, biases, True, self.group_size, self.bits,
                                 self.mode)
        return (y + params["bias"] if self.bias else y), state

    @classmethod
    def from_linear(cls, layer: Linear, params: Params, group_size: int | None = None,
                    bits: int | None = None, mode: str = "affine") -> tuple[QuantizedLinear,
                                                                             Params]:
        """``layer`` and its ``params`` quantized: the ``QuantizedLinear`` and
        its params (the bias kept as it is)."""
        qlayer = cls(layer.input_dims, layer.output_dims, layer.bias, group_size, bits, mode)
        qparams = _quantized(qlayer, checked_param(layer, params, "weight",
                                                   (layer.output_dims, layer.input_dims)))
        if layer.bias:
            qparams["bias"] = params["bias"]
        return qlayer, qparams


@dataclasses.dataclass(frozen=True)
class QuantizedEmbedding(Layer):
    r"""``Embedding`` with a quantized table, as ``mlx.nn.QuantizedEmbedding``:
    ``y = dequantize(weight[x])``, only the looked-up rows dequantized.

    Args:
        num_embeddings (int): The size of the vocabulary.
        dims (int): The size of each vector (a multiple of ``group_size``).
        group_size, bits, mode: as ``QuantizedLinear``'s.

    ``as_linear(params, x)`` is ``x @ dequantize(weight).T`` (tied input and
    output embeddings), as a ``quantized_matmul``.

    >>> import ftorch.nn as nn, ftorch.random as random, mlx.core as mx
    >>> emb = nn.QuantizedEmbedding(100, 64, bits=8)
    >>> params, _ = emb.init(random.key(0), mx.array([0]))
    >>> emb(params, mx.array([[1, 2, 3]])).shape, emb.as_linear(params, mx.ones(64)).shape
    ((1, 3, 64), (100,))
    """

    num_embeddings: int
    dims: int
    group_size: int | None = None
    bits: int | None = None
    mode: str = "affine"

    def __post_init__(self) -> None:
        check_positive("QuantizedEmbedding", num_embeddings=self.num_embeddings, dims=self.dims)
        _resolve_settings(self, "dims")

    def init(self, key: Key, x: InputSpec) -> tuple[Params, State]:
        r"""The quantized :math:`\mathcal{N}(0, 1/\text{dims})` table; no state."""
        _check_indices(self, x)
        weight = initializers.normal(0.0, math.sqrt(1.0 / self.dims))(
            key, (self.num_embeddings, self.dims))
        return _quantized(self, weight), {}

    def apply(self, params: Params, state: State, x: Array, *, key: Key | None = None,
              train: bool = False) -> tuple[Array, State]:
        """``(dequantize(weight[x]), state)``: ``x``'s shape plus ``(dims,)``."""
        _check_indices(self, x)
        parts = [p for p in _packed_params(self, params, self.num_embeddings, self.dims)
                 if p is not None]
        rows = [fnp.take(p, x, axis=0) for p in parts]
        return fnp.dequantize(*rows, group_size=self.group_size, bits=self.bits,
                              mode=self.mode), state

    def as_linear(self, params: Params, x: Array) -> Array:
        """``x @ dequantize(weight).T``: scores of ``x`` against every embedding."""
        check_features(self, x, self.dims)
        packed, scales, biases = _packed_params(self, params, self.num_embeddings, self.dims)
        return fnp.quantized_matmul(x, packed, scales, biases, True, self.group_size, self.bits,
                                    self.mode)

    @classmethod
    def from_embedding(cls, layer: Embedding, params: Params, group_size: int | None = None,
                       bits: int | None = None, mode: str = "affine") -> tuple[QuantizedEmbedding,
                                                                                Params]:
        """``layer`` and its ``params`` quantized."""
        qlayer = cls(layer.num_embeddings, layer.dims, group_size, bits, mode)
        weight = checked_param(layer, params, "weight", (layer.num_embeddings, layer.dims))
        return qlayer, _quantized(qlayer, weight)


Predicate = Callable[[str, Layer], "bool | dict"]


def quantize(model: Layer, params: Params, *, group_size: int | None = None,
             bits: int | None = None, mode: str = "affine",
             predicate: Predicate | None = None) -> tuple[Layer, Params]:
    """``model`` with its ``Linear`` and ``Embedding`` layers quantized, and
    its params to match, as ``mlx.nn.quantize`` (which does it in place).

    ``predicate(path, layer)`` (``path`` is ``mlx.nn``'s dotted name, as
    ``"layers.0"``) chooses the layers: ``True`` quantizes with the given
    settings, a dict of ``group_size``/``bits``/``mode`` with those,
    ``False`` leaves the layer as it is. By default every ``Linear`` and
    ``Embedding`` is quantized, and one whose input size ``group_size`` does
    not divide is an error naming it. Other parameters (norms, biases) are
    kept as they are; the state is unchanged.

    >>> import ftorch.nn as nn, ftorch.random as random, mlx.core as mx
    >>> model = nn.Sequential(nn.Embedding(100, 64), nn.Linear(64, 100))
    >>> params, _ = model.init(random.key(0), mx.array([[1, 2]]))
    >>> qmodel, qparams = nn.quantize(model, params, bits=8,
    ...                               predicate=lambda path, layer: path != "layers.0")
    >>> [type(layer).__name__ for layer in qmodel.layers]
    ['Embedding', 'QuantizedLinear']
    """
    settings = dict(group_size=group_size, bits=bits, mode=mode)
    _settings("quantize", group_size, bits, mode)
    return replace_layers(model, params, _quantize_layer(settings, predicate))


def _quantize_layer(settings: dict, predicate: Predicate | None) -> Callable:
    """``replace_layers``'s function for ``quantize``."""

    def replace(path: str, layer: Layer, params: Params) -> tuple[Layer, Params] | None:
        if not isinstance(layer, (Linear, Embedding)):
            return None
        choice = True if predicate is None else predicate(path, layer)
        if choice is False:
            return layer, params
        if isinstance(choice, dict):
            unknown = set(choice) - set(settings)
            if unknown:
                raise ValueError(f"quantize: predicate returned unknown settings "
                                 f"{sorted(unknown)} for {path!r}; it may set {sorted(settings)}")
            chosen = {**settings, **choice}
        elif choice is True:
            chosen = settings
        else:
            raise TypeError(f"quantize: predicate must return a bool or a dict, got "
                            f"{type(choice).__name__} for {path!r}")
        convert = (QuantizedLinear.from_linear if isinstance(layer, Linear)
                   else QuantizedEmbedding.from_embedding)
        try:
            return convert(layer, params, **chosen)
        except ValueError as e:
            raise ValueError(f"quantize: cannot quantize {path or 'the model'!r} "
                             f"({type(layer).__name__}): {e}. Leave it out with predicate=") from e

    return replace
