"""Build hooks for the documentation site (mkdocs ``hooks:``).

- The notebooks in ``notebooks/`` are added to the site as pages, rendered by
  mkdocs-jupyter with their outputs: each from its executed copy in
  ``build/executed/notebooks/`` when that is current, else executed (at small
  sizes) as the site is built, unless ``FTORCH_DOCS_EXECUTE=0``;
  ``docs/notebook_outputs.py`` says how. They are not copied into docs/, and
  the download link of a page gives the notebook as committed.
- A notebook page's title and table of contents are taken from its rendered
  headings: mkdocs-jupyter's drop the code spans (`grad`) from headings'
  text, and link to anchors that do not exist when a heading has code.
- ``<!-- ftorch:names jax -->`` in a page is replaced by the JAX translation
  tables, built from ftorch's own namespaces (``__all__``) and JAX's and
  optax's public names as ``docs/jax_names.py`` stores and scopes them (JAX
  is not imported at build time). ``<!-- ftorch:names mlx -->`` does the same
  for ``mlx.core`` against ``ftorch.numpy``, introspecting MLX itself.
"""

from __future__ import annotations

import html
import logging
import os
import re
import shutil
import sys
from pathlib import Path

import mkdocs.plugins
from markdown.extensions.toc import nest_toc_tokens
from mkdocs.structure.files import File, Files
from mkdocs.structure.toc import get_toc

import ftorch  # noqa: F401  (before anything imports mlx.core: it loads the BLAS)

sys.path.insert(0, str(Path(__file__).resolve().parent))
import notebook_outputs  # noqa: E402
from jax_names import coverage, out_of_scope, public, versions  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"
log = logging.getLogger("mkdocs.hooks.notebooks")

# How each namespace is usually imported, for the tables' headings.
IMPORTED_AS = {"jax": "jax", "ftorch": "ft", "jax.numpy": "jnp", "ftorch.numpy": "fnp",
               "jax.numpy.linalg": "jnp.linalg", "ftorch.numpy.linalg": "fnp.linalg",
               "jax.numpy.fft": "jnp.fft", "ftorch.numpy.fft": "fnp.fft", "jax.lax": "lax",
               "ftorch.lax": "lax", "jax.random": "jax.random", "ftorch.random": "random",
               "ftorch.nn.functional": "nn.functional",
               "ftorch.nn.initializers": "nn.initializers", "ftorch.optim": "optim",
               "ftorch.optim.losses": "optim.losses"}

# Names both sides have whose arguments or meaning differ.
SAME_NAME_DIFFERENT = {
    "jax.lax": {
        "igamma": "0 for `a = inf` (SciPy's limit; JAX's is NaN)",
        "igammac": "1 for `a = inf` (SciPy's limit; JAX's is NaN)",
        "igamma_grad_a": "0 at `x = inf` (JAX's is NaN)",
        "betainc": "NaN for an infinite `a` or `b`, as SciPy (JAX's is 0 or 1)",
        "hyp2f1": "NaN outside `[-1, 1]`, where the series diverges (JAX's is `inf` or "
                  "unrelated); differentiable in `a`, `b` and `c` too (JAX's derivatives "
                  "there are 0)",
        "zeta": "differentiable in both arguments (JAX's `lax.zeta` is not; "
                "`jax.scipy.special.zeta` is); SciPy's values at the poles",
        "gather": "takes ftorch's indexing `spec`, not XLA's `dimension_numbers`",
        "scatter": "takes ftorch's indexing `spec`, not XLA's `dimension_numbers`",
        "scatter_add": "takes ftorch's indexing `spec`, not XLA's `dimension_numbers`",
        "scatter_mul": "takes ftorch's indexing `spec`, not XLA's `dimension_numbers`",
        "scatter_min": "takes ftorch's indexing `spec`, not XLA's `dimension_numbers`",
        "scatter_max": "takes ftorch's indexing `spec`, not XLA's `dimension_numbers`",
        "scatter_sub": "takes ftorch's indexing `spec`, not XLA's `dimension_numbers`",
        "scatter_apply": "`scatter_apply(x, func, *arrays, spec=)`: ftorch's indexing `spec`, "
                         "not XLA's `dimension_numbers`",
        "abs": "derivative 0 at 0 (JAX's is 1)",
        "rng_bit_generator": "Threefry-2x32 bits (ftorch.random's cipher), not XLA's: other "
                             "values than JAX's; `algorithm` is ignored",
        "mulhi": "operands of up to 32 bits (MLX has no 128-bit product)",
        "cbrt": "no `accuracy=`", "exp2": "no `accuracy=`", "logistic": "no `accuracy=`",
    },
    "jax": {
        "devices": "MLX's default device only (one device a process)",
        "device_put": "makes MLX arrays; `device` is checked, not used (unified memory)",
        "closure_convert": "hoists only traced closed-over values (JAX also hoists concrete "
                           "floating arrays)",
        "custom_gradient": "reverse mode runs the function again for its `vjp`",
        "fwd_and_bwd": "the residuals are the arguments: `bwd` runs the forward pass again",
        "make_jaxpr": "returns ftorch's graph IR (`ft.make_graph`), printed its own way",
        "typeof": "a `ShapeDtypeStruct`, not JAX's `ShapedArray`",
        "named_scope": "accepted, no effect: ftorch's graphs carry no names",
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
        "hypot": "derivative 0 at `(0, 0)` (JAX's is 1/2 in each)",
        "ldexp": "derivative `2 ** x2` in `x1` also at `x1 = 0` (JAX's is 1 there)",
        "float_power": "derivative in `x` 0 where the exponent is 0, as `power` (JAX's is "
                       "NaN at `0 ** 0`)",
        "logaddexp2": "derivatives as `logaddexp`'s beside `+inf`",
        "promote_types": "MLX's promotion, whose 64-bit results stay 64-bit: `uint32` with a "
                         "signed type is `int64` (JAX without x64 says `int32`)",
        "dtype": "a function giving an MLX dtype (JAX's is NumPy's `np.dtype` class)",
        "array_str": "NumPy's formatting (JAX prints float32 with float64's digits)",
        "array_repr": "prints `array(...)` with NumPy's formatting (JAX's `Array(...)`)",
        "vander": "gradient finite at `x = 0` (JAX's is NaN), as `power`'s",
        "vectorize": "keyword arguments not in `excluded` are vectorized, as in NumPy (JAX's "
                     "drops them)",
        "fromiter": "runs eagerly (JAX's raises `NotImplementedError`)",
        "roots": "eager only, on MLX's CPU (no general eigenvalues on the GPU, no derivative)",
        "einsum_path": "the report is NumPy's text (JAX's an `opt_einsum` `PathInfo`); the "
                       "path is the same list of tuples",
        **{name: "MLX's `DtypeCategory` (works with `issubdtype`), not a NumPy type"
           for name in ("generic", "number", "inexact", "floating", "complexfloating",
                        "integer", "signedinteger", "unsignedinteger")},
        **{name: f"the MLX dtype `{dtype}`, not a callable scalar type (write "
                 f"`fnp.asarray(x, fnp.{name})`)"
           for name, dtype in (("bool", "bool_"), ("int_", "int32"), ("uint", "uint32"),
                               ("float_", "float32"), ("single", "float32"),
                               ("double", "float64"), ("csingle", "complex64"))},
    },
    "jax.numpy.linalg": {
        "norm": "gradient 0 at 0 for the Euclidean and Frobenius norms, as in PyTorch (JAX's "
                "is NaN)",
        "vector_norm": "gradient 0 at 0 for `ord=2`, as in PyTorch (JAX's is NaN)",
        "matrix_norm": "gradient 0 at 0 for `ord='fro'`, as in PyTorch (JAX's is NaN)",
    },
    "jax.scipy.linalg": {
        "cholesky": "reads the `lower` (else upper) triangle and differentiates with respect to "
                    "it, as `lax.cholesky`; JAX's gradient also reaches the other triangle "
                    "(the same for symmetric perturbations)",
        "eigh": "reads the `lower` (else upper) triangle and differentiates with respect to it; "
                "JAX's gradient also reaches the other triangle (the same for symmetric "
                "perturbations)",
        "qr": "no `pivoting=True` and no `mode='raw'` (MLX has neither kernel)",
        "qr_multiply": "no `pivoting=True` (MLX has no column-pivoted QR)",
        "sqrtm": "from the eigendecomposition: diagonalizable matrices (JAX's Schur method "
                 "also takes defective ones)",
        "funm": "from the eigendecomposition: diagonalizable matrices (JAX's Schur recurrence "
                "also takes defective ones); `errest` is a commutation residual",
        "eigh_tridiagonal": "no `select='v'`; solved densely (differentiable)",
        "solve_sylvester": "a Kronecker-product solve, `O((m n)^3)`, differentiable (JAX's "
                           "Bartels-Stewart is not)",
        "polar": "from the SVD for either `method` (`eps` and `max_iterations` ignored); "
                 "reverse-differentiable",
    },
    "jax.scipy.special": {
        "logsumexp": "gradient 0 over a slice that is all `-inf` (JAX's is NaN)",
        "ndtri": "derivative `+inf` at 0 and 1 (JAX's is 0)",
        "i0": "derivative 0 at 0, `i1(0)` (JAX's is 1)",
        "gammainc": "0 for `a = inf` (SciPy's limit; JAX's is NaN), NaN at `a = x = inf`",
        "gammaincc": "1 for `a = inf` (SciPy's limit; JAX's is NaN), NaN at `a = x = inf`",
        "betainc": "NaN for an infinite `a` or `b`, as SciPy (JAX's is 0 or 1)",
        "hyp2f1": "NaN outside `[-1, 1]`, where the series diverges (JAX's is `inf` or "
                  "unrelated); differentiable in `a`, `b` and `c` too (JAX's derivatives "
                  "there are 0)",
        "boxcox": "derivative in `lmbda` at `lmbda = 0` is its limit `log(x)^2 / 2` (JAX's is "
                  "0, and NaN for tiny `lmbda`)",
        "boxcox1p": "derivative in `lmbda` at `lmbda = 0` is its limit `log1p(x)^2 / 2` (JAX's "
                    "is 0, and NaN for tiny `lmbda`)",
        "expi": "`-inf` at 0, as SciPy (JAX's is NaN)",
        "bessel_jn": "finite for every `z` and differentiable (JAX's is NaN for `|z|` below "
                     "about 4, and its derivative is not `J_k'`)",
        "expn": "`1/(n-1)` at `x = 0` for `n > 1`, as SciPy (JAX's is not); derivative at "
                "`n = 0` that of `e^-x / x` (JAX's is NaN)",
        "spence": "derivative `log(x) / (1 - x)` everywhere (JAX's is NaN on about (1, 3))",
        "loggamma": "`inf` at 0, as SciPy (JAX's is NaN); real arguments only",
        "zeta": "`inf` at the poles `q = 0, -1, ...` and 0 at `q = inf`, as SciPy (JAX's are "
                "NaN)",
    },
    "jax.scipy.stats.norm": {
        "ppf": "derivative `+inf` at 0 and 1 (JAX's is 0)",
        "isf": "derivative `-inf` at 0 and 1 (JAX's is 0)",
    },
    "jax.scipy.stats.truncnorm": {
        f: "gradient 0 outside the bounds (JAX's is sometimes NaN there)"
        for f in ["cdf", "logcdf", "sf", "logsf"]
    },
    "jax.scipy.stats.multinomial": {
        "logpmf": "counts that do not add up to `n` are checked row by row along the last "
                  "axis (JAX compares the sum of all of `x` with `n`)",
        "pmf": "as `logpmf`: the counts are checked row by row",
    },
    "jax.random": {
        "multinomial": "`unroll=` is accepted and ignored (the categories are unrolled)",
        "wrap_key_data": "`impl` must be `threefry2x32` and `dtype` None (raw uint32 keys)",
        "key_impl": "returns the name `'threefry2x32'` (JAX returns a `PRNGSpec`)",
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
        "power_iteration": "`precision` is accepted and unused (MLX's matmul has one); the "
                           "default start from `key` draws other values than optax",
        "multi_normal": "`sample` draws from `ftorch.random`'s streams: the same key draws "
                        "other values than optax",
    },
    "optax.losses": {
        "triplet_margin_loss": "distances from `|a - b| ** norm_degree` (optax leaves out the "
                               "`abs`: the same for even degrees)",
    },
}


@mkdocs.plugins.event_priority(100)  # before mkdocs-jupyter looks for notebooks
def on_files(files: Files, config) -> Files:
    execute = os.environ.get("FTORCH_DOCS_EXECUTE", "1") != "0"
    for path in notebook_outputs.notebooks():
        src = notebook_outputs.executed_copy(path)
        if src is None and execute:
            log.info(f"Executing notebooks/{path.name} at small sizes (no current copy in "
                     f"build/executed/notebooks/)")
            try:
                notebook_outputs.run(path)
                src = notebook_outputs.executed_copy(path)
            except Exception as e:
                lines = str(e).strip().splitlines()
                log.warning(f"notebooks/{path.name} failed at small sizes; shown without "
                            f"outputs: {lines[-1] if lines else type(e).__name__}")
        elif src is None:
            log.info(f"notebooks/{path.name}: no current executed copy, shown without outputs "
                     f"(FTORCH_DOCS_EXECUTE=0)")
        # build/executed/ mirrors the repository; a File's path must be
        # src_dir/src_uri (mkdocs-jupyter's wrapper of a File reads src_dir).
        files.append(File(f"notebooks/{path.name}",
                          src_dir=str(ROOT if src is None else notebook_outputs.EXECUTED.parent),
                          dest_dir=config["site_dir"],
                          use_directory_urls=config["use_directory_urls"]))
    return files


_HEADING = re.compile(r"<h([1-6])\b([^>]*)>(.*?)</h\1>", re.S)
_ID = re.compile(r'\bid="([^"]*)"')
_ANCHOR_LINK = re.compile(r'<a class="anchor-link"[^>]*>.*?</a>', re.S)


def _text(inner_html: str) -> str:
    """A heading's text as mkdocs and Python-Markdown take it: tags (``<code>``
    included) stripped, their text kept, entities left escaped."""
    return " ".join(re.sub(r"<[^>]*>", "", inner_html).split())


def on_page_content(output: str, page, config, files) -> str:
    if not page.file.src_uri.endswith(".ipynb"):
        return output
    tokens = []
    for level, attrs, inner in _HEADING.findall(output):
        anchor = _ID.search(attrs)
        if anchor is None:
            continue
        inner = _ANCHOR_LINK.sub("", inner)
        tokens.append({"level": int(level), "id": html.unescape(anchor.group(1)),
                       "name": _text(inner), "html": inner, "data-toc-label": ""})
    title = next((t["name"] for t in tokens if t["level"] == 1), None)
    if title:
        page.title = title
    page.toc = get_toc(nest_toc_tokens(tokens))
    return output


@mkdocs.plugins.event_priority(-100)  # after mkdocs-jupyter copies the rendered notebook
def on_post_page(output: str, page, config) -> str:
    if page.file.src_uri.startswith("notebooks/") and page.file.src_uri.endswith(".ipynb"):
        name = Path(page.file.src_uri).name
        target = Path(page.file.abs_dest_path).parent / name
        if target.exists():  # the download link offers the notebook as committed
            shutil.copyfile(NOTEBOOKS / name, target)
    return output


def on_serve(server, config, builder):
    server.watch(str(NOTEBOOKS))  # outside docs_dir
    return server


def on_page_markdown(markdown: str, page, config, files) -> str:
    if "<!-- ftorch:names jax -->" in markdown:
        markdown = markdown.replace("<!-- ftorch:names jax -->", _jax_tables())
    if "<!-- ftorch:names mlx -->" in markdown:
        markdown = markdown.replace("<!-- ftorch:names mlx -->", _mlx_table())
    return markdown


def _codes(names) -> str:
    return ", ".join(f"`{n}`" for n in names) if names else "(none)"


def _jax_tables() -> str:
    v = versions()
    skipped = out_of_scope()
    out = [f"Generated when this site was built, from ftorch's namespaces and the public "
           f"names of JAX {v['jax']} and optax {v['optax']}.", ""]
    for jax_mod, ft_mod, have, lack in coverage():
        ft_as, jax_as = IMPORTED_AS.get(ft_mod, ft_mod), IMPORTED_AS.get(jax_mod, jax_mod)
        different = SAME_NAME_DIFFERENT.get(jax_mod, {})
        same = [n for n in have if n not in different]
        theirs = set(have) | set(lack) | set(skipped.get(jax_mod, {}))
        only_ours = [n for n in public(ft_mod) if n not in theirs]
        total = len(have) + len(lack)
        out += [f"### `{jax_mod}` → `{ft_mod}`", "",
                f"{len(have)} of {total} names ({100 * len(have) / max(total, 1):.0f}%). "
                f"`{jax_as}.NAME` is `{ft_as}.NAME` for these {len(same)}:", "",
                _codes(same), ""]
        if different:
            out += ["The same name with other arguments or another meaning:", "",
                    "| name | in ftorch |", "|---|---|"]
            out += [f"| `{n}` | {note} |" for n, note in different.items() if n in have]
            out.append("")
        if only_ours:
            out += [f"Only in `{ft_mod}` (no namesake in `{jax_mod}`): {_codes(only_ours)}", ""]
        out += [f'??? note "Names in `{jax_mod}` that `{ft_mod}` does not have ({len(lack)})"',
                "", "    " + _codes(lack), ""]
        if skipped.get(jax_mod):
            reasons: dict[str, list[str]] = {}
            for name, why in skipped[jax_mod].items():
                reasons.setdefault(why, []).append(name)
            out += [f'??? note "Left out of `{ft_mod}` on purpose '
                    f'({len(skipped[jax_mod])})"', ""]
            out += [f"    - {why}: {_codes(names)}" for why, names in reasons.items()]
            out.append("")
    return "\n".join(out)


def _mlx_table() -> str:
    import mlx.core as mx

    ours = public("ftorch.numpy")
    theirs = {n for n in dir(mx) if not n.startswith("_") and callable(getattr(mx, n))}
    both = [n for n in ours if n in theirs]
    return "\n".join([
        f"`mx.NAME` has a differentiable, traceable namesake `fnp.NAME` for these {len(both)} "
        f"names (MLX {mx.__version__}; generated when this site was built):", "",
        _codes(both), "",
        f"Only in `ftorch.numpy`: {_codes([n for n in ours if n not in theirs])}", ""])
