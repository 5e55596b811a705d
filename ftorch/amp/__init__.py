"""Mixed precision, after PyTorch's ``torch.autocast``/``GradScaler`` and
DeepMind's jmp: ``autocast`` (a transform), dtype ``Policy``s and loss scales.

>>> import ftorch as ft, mlx.core as mx
>>> policy = ft.amp.get_policy("params=float32,compute=bfloat16,output=float32")
>>> policy.cast_to_compute({"w": mx.ones(2), "step": mx.array(3)})["w"].dtype
mlx.core.bfloat16
"""

from ftorch.amp._loss_scale import (
    DynamicLossScale,
    LossScale,
    NoOpLossScale,
    StaticLossScale,
    all_finite,
    select_tree,
)
from ftorch.amp._policy import (
    Policy,
    cast_to_full,
    cast_to_half,
    get_policy,
    half_dtype,
)
from ftorch.transforms.autocast import autocast

__all__ = [
    "autocast", "Policy", "get_policy", "cast_to_full", "cast_to_half", "half_dtype",
    "NoOpLossScale", "StaticLossScale", "DynamicLossScale", "LossScale", "all_finite",
    "select_tree",
]
