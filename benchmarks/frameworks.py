"""The frameworks a benchmark row compares, behind one small interface.

Each framework turns the shared NumPy inputs into its own arrays on the
chosen device, and waits for a result (every framework here is lazy or
asynchronous on some backend). Only the ones installed are used; ``ftorch``
is always first to import so that it can load the fast CPU BLAS before
``mlx.core`` starts.
"""

from __future__ import annotations  # noqa: I001  (ftorch before mlx.core: it loads the BLAS)

import importlib.util
import os
import warnings
from typing import Any

import ftorch as ft
import mlx.core as mx
import numpy as np
import optree

#: Column order of the table; "ftorch" is the one the ratios are about.
NAMES = ("mlx", "ftorch", "jax", "torch")
#: What runs in each column, per mode.
LABELS = {
    "eager": {"mlx": "mlx", "ftorch": "ftorch", "torch": "torch.func"},
    "jit": {"mlx": "mx.compile", "ftorch": "ft.jit", "jax": "jax.jit", "torch": "torch.compile"},
}


class Framework:
    name = ""

    def __init__(self, device: str):
        self.device = device

    def array(self, a: np.ndarray) -> Any:
        raise NotImplementedError

    def sync(self, out: Any) -> None:
        raise NotImplementedError

    def to_numpy(self, x: Any) -> np.ndarray:
        return np.asarray(x)

    def version(self) -> str:
        raise NotImplementedError

    def peak_memory(self, step: Any) -> float | None:
        """Bytes allocated at the peak of one call of ``step``, beyond what
        was allocated before it; ``None`` where the framework cannot tell."""
        return None


class MLX(Framework):
    name = "mlx"

    def __init__(self, device: str):
        super().__init__(device)
        mx.set_default_device(mx.gpu if device == "gpu" else mx.cpu)

    def array(self, a):
        return mx.array(a)

    def sync(self, out):
        mx.eval(out)

    def to_numpy(self, x):
        return np.asarray(x.astype(mx.float32) if x.dtype == mx.bfloat16 else x)

    def version(self):
        return f"mlx {mx.__version__} on {mx.default_device()}"

    def peak_memory(self, step):
        mx.synchronize()
        mx.reset_peak_memory()
        base = mx.get_active_memory()
        out = step()
        mx.eval(out)
        return mx.get_peak_memory() - base


class FTorch(MLX):
    """ftorch, with jitted functions compiled from their first call (as
    ``mx.compile``) unless ``FTORCH_JIT_COMPILE_AFTER`` says otherwise: the
    rows time steady-state compiled speed; ``--first-call`` also times the
    default policy."""

    name = "ftorch"

    def __init__(self, device: str):
        super().__init__(device)
        if "FTORCH_JIT_COMPILE_AFTER" not in os.environ:
            ft.config.jit_compile_after = 0

    def version(self):
        return f"ftorch {ft.__version__}"


class JAX(Framework):
    name = "jax"

    def __init__(self, device: str):
        super().__init__(device)
        import jax

        self.jax = jax
        self.target = jax.devices("gpu" if device == "gpu" else "cpu")[0]

    def array(self, a):
        return self.jax.device_put(a, self.target)

    def sync(self, out):
        self.jax.block_until_ready(out)

    def version(self):
        return f"jax {self.jax.__version__} on {self.target}"


class Torch(Framework):
    name = "torch"

    def __init__(self, device: str):
        super().__init__(device)
        import logging

        import torch

        # torch.compile's C++ toolchain probe warns that there is no CUDA on a CPU machine.
        logging.getLogger("torch.utils.cpp_extension").setLevel(logging.ERROR)
        warnings.filterwarnings("ignore", category=FutureWarning, module="torch.jit")
        self.torch = torch
        self.target = torch.device("cuda" if device == "gpu" else "cpu")

    def array(self, a):
        # (ascontiguousarray makes 0-d arrays 1-d: restore the shape)
        return self.torch.from_numpy(np.ascontiguousarray(a).reshape(np.shape(a))).to(self.target)

    def sync(self, out):
        if self.target.type == "cuda":
            self.torch.cuda.synchronize()

    def to_numpy(self, x):
        return x.detach().cpu().numpy()

    def version(self):
        return (f"torch {self.torch.__version__} on {self.target} "
                f"({self.torch.get_num_threads()} threads)")


_CLASSES = {"mlx": MLX, "ftorch": FTorch, "jax": JAX, "torch": Torch}


def installed(name: str) -> bool:
    return name in ("mlx", "ftorch") or importlib.util.find_spec(name) is not None


def load(names: list[str], device: str) -> dict[str, Framework]:
    """The requested frameworks that are installed, by name."""
    if "jax" in names and device == "cpu":
        os.environ.setdefault("JAX_PLATFORMS", "cpu")  # no probing for accelerators
    return {n: _CLASSES[n](device) for n in NAMES if n in names and installed(n)}


def leaves(out: Any) -> list:
    """The arrays of a result pytree (optree knows tuples, lists and dicts)."""
    return optree.tree_leaves(out)
