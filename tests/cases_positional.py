"""Rule cases for rope (rotary position embeddings): both pair layouts, a
partial rotation (dims < D), scalar, array and per-batch offsets, and
given frequencies. MLX differentiates mx.fast.rope in x, so it is an oracle."""

import mlx.core as mx
import numpy as np
from harness import Case, floats
from hypothesis import strategies as st

import ftorch.nn.functional as F


def _x(d=8):
    return st.sampled_from([(1, 3, d), (2, 2, 3, d)]).flatmap(floats)


def _case(name, traditional=False, dims=8, offset=0, base=10000.0, scale=1.0, freqs=None):
    kw = dict(traditional=traditional, base=base, scale=scale)

    def fn(x, *rest):
        off = rest[0].astype(mx.int32) if rest else offset
        return F.rope(x, dims, offset=off, freqs=freqs, **({**kw, "base": None} if freqs
                                                            is not None else kw))

    def mlx_fn(x, *rest):
        off = rest[0].astype(mx.int32) if rest else offset
        return mx.fast.rope(x, dims, offset=off, freqs=freqs,
                            **({**kw, "base": None} if freqs is not None else kw))

    args = _x().map(lambda x: (x,))
    if offset == "per_batch":  # one offset per batch entry (an integer array)
        args = _x().map(lambda x: (x, np.arange(2, 2 + x.shape[0]).astype(np.int32)))
    return Case("rope", fn, args, mlx_fn=mlx_fn, name=name)


CASES = [
    _case("rope"),
    _case("rope_traditional", traditional=True, offset=3),
    _case("rope_partial", dims=4, base=500.0, scale=0.5, offset=2),
    _case("rope_per_batch_offset", offset="per_batch"),
    _case("rope_freqs", freqs=mx.array([1.0, 0.5, 0.25, 0.125])),
]
