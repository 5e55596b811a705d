"""The stateless ops behind layers: activation functions and normalized
exponentials, ``one_hot`` and ``dropout``, normalisations (layer, RMS,
group, instance, batch) and scaled dot-product attention.

Names and defaults follow ``mlx.nn`` (and ``mlx.core.fast``), layouts are
channels-last as there, and randomness takes an explicit key as in JAX. All
but a few stability-critical activations (which are primitives with their
own rules) are composed from ``ftorch.numpy``, so every transform applies.

>>> import ftorch.nn.functional as F, mlx.core as mx
>>> F.softmax(mx.array([0.0, 0.0])).tolist()
[0.5, 0.5]
"""

from ftorch.nn._conv import (
    avg_pool1d,
    avg_pool2d,
    conv1d,
    conv2d,
    conv3d,
    conv_general,
    conv_transpose1d,
    conv_transpose2d,
    conv_transpose3d,
    max_pool1d,
    max_pool2d,
)
from ftorch.nn.functional.activations import (
    celu,
    elu,
    gelu,
    gelu_approx,
    gelu_fast_approx,
    glu,
    hard_shrink,
    hard_sigmoid,
    hard_silu,
    hard_swish,
    hard_tanh,
    hardswish,
    identity,
    leaky_relu,
    log1mexp,
    log_sigmoid,
    log_softmax,
    logmeanexp,
    mish,
    prelu,
    relu,
    relu2,
    relu6,
    selu,
    sigmoid,
    silu,
    soft_sign,
    softmax,
    softmin,
    softplus,
    softshrink,
    softsign,
    sparse_plus,
    sparse_sigmoid,
    squareplus,
    standardize,
    step,
    swiglu,
    swish,
)
from ftorch.nn.functional.attention import (
    dot_product_attention,
    scaled_dot_product_attention,
)
from ftorch.nn.functional.encoding import (
    dropout,
    one_hot,
    rope,
)
from ftorch.nn.functional.normalization import (
    batch_norm,
    batch_stats,
    group_norm,
    instance_norm,
    layer_norm,
    rms_norm,
)
from ftorch.nn.functional.quantization import (
    fake_quantize,
    fake_quantize_lsq,
    quantization_params,
    quantization_range,
)
from ftorch.numpy import logsumexp, tanh

__all__ = [
    "softmax", "log_softmax", "logsumexp", "sigmoid", "relu", "gelu", "silu", "softplus",
    "elu", "celu", "selu", "leaky_relu", "prelu", "relu6", "relu2", "hard_tanh",
    "hard_sigmoid", "hardswish", "hard_swish", "mish", "glu", "log_sigmoid", "softsign",
    "softshrink", "hard_shrink", "step", "softmin", "gelu_approx", "gelu_fast_approx", "tanh",
    "hard_silu", "swish", "soft_sign", "identity", "log1mexp", "logmeanexp", "sparse_plus",
    "sparse_sigmoid", "squareplus", "standardize", "swiglu",
    "one_hot", "dropout", "rope",
    "fake_quantize", "fake_quantize_lsq", "quantization_params", "quantization_range",
    "layer_norm", "rms_norm", "group_norm", "instance_norm", "batch_norm", "batch_stats",
    "scaled_dot_product_attention", "dot_product_attention",
    # Convolution and pooling (primitives with their rules: ftorch/primitives/conv.py).
    "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d",
    "conv_general", "max_pool1d", "max_pool2d", "avg_pool1d", "avg_pool2d",
]
