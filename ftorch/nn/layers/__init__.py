"""The layers of ``ftorch.nn``, one module per family (all exported by
``ftorch.nn``).

>>> import ftorch.nn.layers as layers
>>> layers.Linear(2, 3)
Linear(input_dims=2, output_dims=3, bias=True, weight_init=None, bias_init=None)
"""

from ftorch.nn.layers import (
    activations,
    attention,
    containers,
    conv,
    decoding,
    dropout,
    embedding,
    linear,
    low_rank,
    normalization,
    pooling,
    quantization_aware,
    quantized,
    recurrent,
    transformer,
)
from ftorch.nn.layers.activations import *  # noqa: F403
from ftorch.nn.layers.attention import *  # noqa: F403
from ftorch.nn.layers.containers import *  # noqa: F403
from ftorch.nn.layers.conv import *  # noqa: F403
from ftorch.nn.layers.decoding import *  # noqa: F403
from ftorch.nn.layers.dropout import *  # noqa: F403
from ftorch.nn.layers.embedding import *  # noqa: F403
from ftorch.nn.layers.linear import *  # noqa: F403
from ftorch.nn.layers.low_rank import *  # noqa: F403
from ftorch.nn.layers.normalization import *  # noqa: F403
from ftorch.nn.layers.pooling import *  # noqa: F403
from ftorch.nn.layers.quantization_aware import *  # noqa: F403
from ftorch.nn.layers.quantized import *  # noqa: F403
from ftorch.nn.layers.recurrent import *  # noqa: F403
from ftorch.nn.layers.transformer import *  # noqa: F403

__all__ = [
    *activations.__all__, *attention.__all__, *containers.__all__, *conv.__all__,
    *decoding.__all__,
    *dropout.__all__, *embedding.__all__, *linear.__all__, *low_rank.__all__,
    *normalization.__all__, *pooling.__all__, *quantization_aware.__all__, *quantized.__all__,
    *recurrent.__all__,
    *transformer.__all__,
]
