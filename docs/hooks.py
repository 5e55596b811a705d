"""Build hooks for the documentation site (mkdocs ``hooks:``).

- The notebooks in ``notebooks/`` are added to the site as pages (rendered by
  mkdocs-jupyter, without executing them), so they are not copied into docs/.
- ``<!-- ftorch:names jax -->`` in a page is replaced by the JAX translation
  tables, built from ftorch's own namespaces (``__all__``) and the list of
  JAX's and optax's public names stored in ``docs/data/jax_names.json`` (JAX
  is not imported at build time). ``<!-- ftorch:names mlx -->`` does the same
  for ``mlx.core`` against ``ftorch.numpy``, introspecting MLX itself.
"""

from __future__ import annotations

import importlib
import json
from pathlib import Path

import mkdocs.plugins
from mkdocs.structure.files import File, Files

import ftorch  # noqa: F401  (before anything imports mlx.core: it loads the BLAS)

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"
JAX_NAMES = Path(__file__).resolve().parent / "data" / "jax_names.json"

# (ftorch module, its usual import, the JAX/optax module, its usual import)
NAMESPACES = [
    ("ftorch", "ft", "jax", "jax"),
    ("ftorch.tree", "ft.tree", "jax.tree", "jax.tree"),
    ("ftorch.numpy", "fnp", "jax.numpy", "jnp"),
    ("ftorch.numpy.linalg", "fnp.linalg", "jax.numpy.linalg", "jnp.linalg"),
    ("ftorch.numpy.fft", "fnp.fft", "jax.numpy.fft", "jnp.fft"),
    ("ftorch.lax", "lax", "jax.lax", "lax"),
    ("ftorch.random", "random", "jax.random", "jax.random"),
    ("ftorch.scipy.linalg", "ftorch.scipy.linalg", "jax.scipy.linalg", "jax.scipy.linalg"),
    ("ftorch.scipy.special", "ftorch.scipy.special", "jax.scipy.special", "jax.scipy.special"),
    ("ftorch.scipy.stats.norm", "ftorch.scipy.stats.norm", "jax.scipy.stats.norm",
     "jax.scipy.stats.norm"),
    ("ftorch.nn.functional", "nn.functional", "jax.nn", "jax.nn"),
    ("ftorch.nn.init", "nn.init", "jax.nn.initializers", "jax.nn.initializers"),
    ("ftorch.optim", "optim", "optax", "optax"),
    ("ftorch.optim.losses", "optim.losses", "optax.losses", "optax.losses"),
]

# Names both sides have whose arguments or meaning differ.
SAME_NAME_DIFFERENT = {
    "jax.lax": {
        "max": "a reduction, `lax.max(x, axes)`; JAX's `lax.max(x, y)` is `lax.maximum(x, y)`",
        "min": "a reduction, `lax.min(x, axes)`; JAX's `lax.min(x, y)` is `lax.minimum(x, y)`",
        "argmax": "`lax.argmax(x, axis, keepdims=False)`: no `index_dtype`",
        "argmin": "`lax.argmin(x, axis, keepdims=False)`: no `index_dtype`",
        "split": "`lax.split(x, indices, axis)` takes split points, JAX's takes sizes",
        "pad": "`lax.pad(x, value, pad_width)` with `(low, high)` pairs; no interior padding",
        "round": "`lax.round(x, decimals=0)`, no `rounding_method`",
        "top_k": "over the last axis only (no `axis=`)",
        "cumsum": "`axis` is required; also `inclusive=`",
        "cumprod": "`axis` is required; also `inclusive=`",
        "gather": "takes ftorch's indexing `spec`, not XLA's `dimension_numbers`",
        "scatter": "takes ftorch's indexing `spec`, not XLA's `dimension_numbers`",
        "scatter_add": "takes ftorch's indexing `spec`, not XLA's `dimension_numbers`",
        "scatter_mul": "takes ftorch's indexing `spec`, not XLA's `dimension_numbers`",
        "scatter_min": "takes ftorch's indexing `spec`, not XLA's `dimension_numbers`",
        "scatter_max": "takes ftorch's indexing `spec`, not XLA's `dimension_numbers`",
        "fft": "`fft_type` is a string (`lax.FFT_TYPES`)",
        "abs": "derivative 0 at 0 (JAX's is 1)",
    },
    # Edges where ftorch's answer differs from JAX's on purpose (tests/test_edge_values.py).
    "jax.numpy": {
        "abs": "derivative 0 at 0, a subgradient as in PyTorch (JAX's is 1); so also "
               "`linalg.norm(x, ord=1)` at a zero entry",
        "power": "derivative in `x` 0 where the exponent is 0, also at `x = 0` (JAX's is NaN)",
        "logaddexp": "derivative 0 in a finite operand beside a `+inf` one (JAX's is `exp(x)`)",
        "std": "gradient 0 where the standard deviation is 0 (JAX's is NaN)",
        "nanstd": "gradient 0 where the standard deviation is 0 (JAX's is NaN)",
        "var": "gradient 0 where no degrees of freedom are left (`ddof` >= the count; the "
               "value is NaN, as in JAX, whose gradient is NaN)",
        "argmax": "`uint32` indices, as MLX gives them (JAX's are `int32`)",
        "argmin": "`uint32` indices, as MLX gives them (JAX's are `int32`)",
        "sinc": "0 at `±inf` (its limit; JAX's is NaN)",
    },
    "jax.numpy.linalg": {
        "norm": "gradient 0 at 0 for the Euclidean and Frobenius norms, as in PyTorch (JAX's "
                "is NaN)",
        "vector_norm": "gradient 0 at 0 for `ord=2`, as in PyTorch (JAX's is NaN)",
        "matrix_norm": "gradient 0 at 0 for `ord='fro'`, as in PyTorch (JAX's is NaN)",
    },
    "jax.scipy.special": {
        "logsumexp": "gradient 0 over a slice that is all `-inf` (JAX's is NaN)",
        "ndtri": "derivative `+inf` at 0 and 1 (JAX's is 0)",
        "i0": "derivative 0 at 0, `i1(0)` (JAX's is 1)",
    },
    "jax.scipy.stats.norm": {
        "ppf": "derivative `+inf` at 0 and 1 (JAX's is 0)",
        "isf": "derivative `-inf` at 0 and 1 (JAX's is 0)",
    },
    "jax.nn": {
        "gelu": "`approximate=False` by default (the exact `x * Phi(x)`, as PyTorch and "
                "`mlx.nn.gelu`); JAX's default is `approximate=True`, the tanh form",
        "logsumexp": "gradient 0 over a slice that is all `-inf` (JAX's is NaN)",
        "selu": "`mlx.nn.selu`'s constants, rounded to 1.67326 and 1.0507 (JAX's have more "
                "digits: results about 2e-6 apart)",
        "softmax": "no `where=` (mask with `-inf` instead)",
        "log_softmax": "no `where=` (mask with `-inf` instead)",
        "one_hot": "integer labels only (JAX's also takes floats)",
    },
    "optax": {
        "add_noise": "the noise comes from `ftorch.random`'s streams: the same key draws other "
                     "values than optax",
        "noisy_sgd": "the noise comes from `ftorch.random`'s streams: the same key draws other "
                     "values than optax",
        "adadelta": "`learning_rate=None` is a step of 1 that descends (optax's ascends)",
    },
    "optax.losses": {
        "triplet_margin_loss": "distances from `|a - b| ** norm_degree` (optax leaves out the "
                               "`abs`: the same for even degrees)",
    },
}


@mkdocs.plugins.event_priority(100)  # before mkdocs-jupyter looks for notebooks
def on_files(files: Files, config) -> Files:
    for path in sorted(NOTEBOOKS.glob("*.ipynb")):
        files.append(File(f"notebooks/{path.name}", src_dir=str(ROOT),
                          dest_dir=config["site_dir"],
                          use_directory_urls=config["use_directory_urls"]))
    return files


def on_page_markdown(markdown: str, page, config, files) -> str:
    if "<!-- ftorch:names jax -->" in markdown:
        markdown = markdown.replace("<!-- ftorch:names jax -->", _jax_tables())
    if "<!-- ftorch:names mlx -->" in markdown:
        markdown = markdown.replace("<!-- ftorch:names mlx -->", _mlx_table())
    return markdown


def _public(module_name: str) -> list[str]:
    module = importlib.import_module(module_name)
    names = getattr(module, "__all__", None)
    if names is None:
        names = [n for n in dir(module) if not n.startswith("_")]
    return list(dict.fromkeys(names))


def _codes(names) -> str:
    return ", ".join(f"`{n}`" for n in names) if names else "(none)"


def _jax_tables() -> str:
    jax = json.loads(JAX_NAMES.read_text())
    versions = jax.pop("_versions")
    out = [f"Generated when this site was built, from ftorch's namespaces and the public "
           f"names of JAX {versions['jax']} and optax {versions.get('optax', '')}.", ""]
    for ft_mod, ft_as, jax_mod, jax_as in NAMESPACES:
        theirs = set(jax[jax_mod])
        ours = _public(ft_mod)
        different = SAME_NAME_DIFFERENT.get(jax_mod, {})
        same = [n for n in ours if n in theirs and n not in different]
        only_ours = [n for n in ours if n not in theirs]
        missing = sorted(n for n in theirs if n not in set(ours))
        out += [f"### `{jax_mod}` → `{ft_mod}`", "",
                f"`{jax_as}.NAME` is `{ft_as}.NAME` for these {len(same)} names:", "",
                _codes(same), ""]
        if different:
            out += ["The same name with other arguments or another meaning:", "",
                    "| name | in ftorch |", "|---|---|"]
            out += [f"| `{n}` | {note} |" for n, note in different.items() if n in ours]
            out.append("")
        if only_ours:
            out += [f"Only in `{ft_mod}` (no namesake in `{jax_mod}`): {_codes(only_ours)}", ""]
        out += [f'??? note "Names in `{jax_mod}` that `{ft_mod}` does not have ({len(missing)})"',
                "", "    " + _codes(missing), ""]
    return "\n".join(out)


def _mlx_table() -> str:
    import mlx.core as mx

    ours = _public("ftorch.numpy")
    theirs = {n for n in dir(mx) if not n.startswith("_") and callable(getattr(mx, n))}
    both = [n for n in ours if n in theirs]
    return "\n".join([
        f"`mx.NAME` has a differentiable, traceable namesake `fnp.NAME` for these {len(both)} "
        f"names (MLX {mx.__version__}; generated when this site was built):", "",
        _codes(both), "",
        f"Only in `ftorch.numpy`: {_codes([n for n in ours if n not in theirs])}", ""])
