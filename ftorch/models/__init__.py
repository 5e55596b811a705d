"""Models built from ``ftorch.nn``'s layers, with the configuration fields
and parameter names of the libraries their weights come from:
``ftorch.models.llama`` (mlx-lm's Llama).

>>> from ftorch.models import llama
>>> llama.LlamaArgs(8, 1, 16, 2, 10).tie_word_embeddings
True
"""

from ftorch.models import llama

__all__ = ["llama"]
