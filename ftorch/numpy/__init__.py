"""NumPy / jax.numpy-style ops on MLX arrays, differentiable under every
ftorch transform: the layer over the primitives (``ftorch.primitives``,
exported as ``ftorch.lax``) that promotes dtypes, parses axes and shapes,
checks arguments and builds composites.

>>> import ftorch.numpy as fnp, mlx.core as mx
>>> fnp.sum(fnp.exp(mx.zeros(3))).item()
3.0
"""

from ftorch.numpy._creation import *  # noqa: F403
from ftorch.numpy._dtypes import *  # noqa: F403
from ftorch.numpy._elementwise import *  # noqa: F403
from ftorch.numpy._math import *  # noqa: F403
from ftorch.numpy._bits import *  # noqa: F403
from ftorch.numpy._reduction import *  # noqa: F403
from ftorch.numpy._shape import *  # noqa: F403
from ftorch.numpy._indexing import *  # noqa: F403
from ftorch.numpy._linalg import *  # noqa: F403
from ftorch.numpy._sorting import *  # noqa: F403
from ftorch.numpy._windows import *  # noqa: F403
from ftorch.numpy._stacking import *  # noqa: F403
from ftorch.numpy._index_tricks import *  # noqa: F403
from ftorch.numpy._statistics import *  # noqa: F403
from ftorch.numpy._setops import *  # noqa: F403
from ftorch.numpy._polynomial import *  # noqa: F403
from ftorch.numpy._quantized import *  # noqa: F403
import sys

from ftorch.core import install_array_api
from ftorch.numpy import (
    _bits,
    _creation,
    _dtypes,
    _elementwise,
    _index_tricks,
    _indexing,
    _linalg,
    _math,
    _polynomial,
    _quantized,
    _reduction,
    _setops,
    _shape,
    _sorting,
    _stacking,
    _statistics,
    _windows,
)
from ftorch.numpy import fft, linalg  # noqa: E402  (the submodules)

__all__ = [
    *_creation.__all__, *_dtypes.__all__, *_elementwise.__all__, *_math.__all__, *_bits.__all__,
    *_reduction.__all__, *_shape.__all__, *_indexing.__all__, *_linalg.__all__,
    *_sorting.__all__, *_windows.__all__, *_stacking.__all__, *_index_tricks.__all__,
    *_statistics.__all__, *_setops.__all__, *_polynomial.__all__,
    *_quantized.__all__,
]

# Tracers' operators and methods, and mx.array's indexing, dispatch to this module.
install_array_api(sys.modules[__name__])
