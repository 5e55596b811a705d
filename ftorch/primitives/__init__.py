"""The primitive layer, one module per family: each primitive's MLX
implementation, its rules (shape, JVP, VJP, batching) and its strict
wrapper side by side where it is defined; ``ftorch.core.registry`` lists
them all.

This package is the namespace of the strict wrappers, which rules call as
``lax.<name>`` (``import ftorch.primitives as lax``): operands as they are,
params already normalised (non-negative axis tuples, full shapes, MLX
dtypes), no promotion. ``ftorch.numpy`` is built on it, and ``ftorch.lax``
exports it.
"""

from ftorch.primitives import (
    barrier,
    conv,
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
from ftorch.primitives.barrier import *  # noqa: F403
from ftorch.primitives.conv import *  # noqa: F403
from ftorch.primitives.creation import *  # noqa: F403
from ftorch.primitives.decompositions import *  # noqa: F403
from ftorch.primitives.elementwise import *  # noqa: F403
from ftorch.primitives.fourier import *  # noqa: F403
from ftorch.primitives.indexing import *  # noqa: F403
from ftorch.primitives.linalg import *  # noqa: F403
from ftorch.primitives.orthogonal import *  # noqa: F403
from ftorch.primitives.reduction import *  # noqa: F403
from ftorch.primitives.shape import *  # noqa: F403
from ftorch.primitives.sorting import *  # noqa: F403
from ftorch.primitives.special import *  # noqa: F403

__all__ = [
    *creation.__all__, *elementwise.__all__, *reduction.__all__, *shape.__all__,
    *indexing.__all__, *linalg.__all__, *barrier.__all__, *conv.__all__,
    *decompositions.__all__, *orthogonal.__all__, *sorting.__all__, *fourier.__all__,
    *special.__all__,
]
