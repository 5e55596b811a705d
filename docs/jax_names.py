"""JAX's and optax's public names, which of them ftorch means to have, and how many it has.

``docs/data/jax_names.json`` stores the public names of JAX's and optax's namespaces (so
neither the site build nor the tests need JAX to count), and
``docs/data/jax_out_of_scope.json`` the names ftorch leaves out on purpose, grouped by
why (devices and sharding, XLA's configuration, dtypes MLX lacks, ...). The coverage of a
namespace is the share of its other names that ftorch's namesake module exports.

The site's translation tables (``docs/hooks.py``), the README's coverage table and the JAX
oracle test (``tests/test_jax_oracle.py``) all read them from here. To refresh the stored
names, in an environment with JAX and optax: ``python docs/jax_names.py --refresh``.
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import re
import sys
from pathlib import Path

DATA = Path(__file__).resolve().parent / "data"
NAMES = DATA / "jax_names.json"
OUT_OF_SCOPE = DATA / "jax_out_of_scope.json"

# JAX's or optax's module -> ftorch's namesake.
STATS = ["bernoulli", "beta", "betabinom", "binom", "cauchy", "chi2", "dirichlet", "expon",
         "gamma", "gennorm", "geom", "gumbel_l", "gumbel_r", "laplace", "logistic",
         "multinomial", "multivariate_normal", "nbinom", "norm", "pareto", "poisson", "t",
         "truncnorm", "uniform", "vonmises", "wrapcauchy"]
NAMESPACES = {
    "jax": "ftorch",
    "jax.tree": "ftorch.tree",
    "jax.tree_util": "ftorch.tree",
    "jax.numpy": "ftorch.numpy",
    "jax.numpy.linalg": "ftorch.numpy.linalg",
    "jax.numpy.fft": "ftorch.numpy.fft",
    "jax.lax": "ftorch.lax",
    "jax.random": "ftorch.random",
    "jax.debug": "ftorch.debug",
    "jax.export": "ftorch.export",
    "jax.profiler": "ftorch.profiler",
    "jax.nn": "ftorch.nn.functional",
    "jax.nn.initializers": "ftorch.nn.initializers",
    "jax.scipy.linalg": "ftorch.scipy.linalg",
    "jax.scipy.special": "ftorch.scipy.special",
    "jax.scipy.stats": "ftorch.scipy.stats",
    **{f"jax.scipy.stats.{d}": f"ftorch.scipy.stats.{d}" for d in STATS},
    "optax": "ftorch.optim",
    "optax.losses": "ftorch.optim.losses",
}


def jax_names() -> dict[str, list[str]]:
    """Each stored namespace's public names (modules and deprecated names left out)."""
    return {k: v for k, v in json.loads(NAMES.read_text()).items() if not k.startswith("_")}


def versions() -> dict[str, str]:
    return json.loads(NAMES.read_text())["_versions"]


def out_of_scope() -> dict[str, dict[str, str]]:
    """``{namespace: {name: why}}``: the names ftorch leaves out on purpose. A reason's
    names may be regular expressions (``".*_p"``: JAX's primitive objects)."""
    table = json.loads(OUT_OF_SCOPE.read_text())
    names = jax_names()
    out: dict[str, dict[str, str]] = {}
    for namespace, reasons in table.items():
        if namespace.startswith("_"):
            continue
        out[namespace] = {}
        for why, patterns in reasons.items():
            for pattern in patterns:
                for name in names[namespace]:
                    if re.fullmatch(pattern, name):
                        out[namespace][name] = why
    return out


def public(module_name: str) -> list[str]:
    """A module's public names: its ``__all__``, else what ``dir`` shows (none if there is
    no such module)."""
    if importlib.util.find_spec(module_name) is None:
        return []
    module = importlib.import_module(module_name)
    names = getattr(module, "__all__", None)
    if names is None:
        names = [n for n in dir(module) if not n.startswith("_")]
    return list(dict.fromkeys(names))


def coverage() -> list[tuple[str, str, list[str], list[str]]]:
    """``(JAX namespace, ftorch namespace, in-scope names ftorch has, in-scope names it
    lacks)`` for every namespace."""
    names, skipped = jax_names(), out_of_scope()
    rows = []
    for jax_mod, ft_mod in NAMESPACES.items():
        ours = set(public(ft_mod))
        scope = [n for n in names[jax_mod] if n not in skipped.get(jax_mod, {})]
        rows.append((jax_mod, ft_mod, [n for n in scope if n in ours],
                     [n for n in scope if n not in ours]))
    return rows


def coverage_table() -> str:
    """The coverage as a Markdown table (the README's)."""
    lines = ["| JAX / optax | ftorch | names | coverage |", "|---|---|---|---|"]
    for jax_mod, ft_mod, have, lack in _grouped(coverage()):
        total = len(have) + len(lack)
        lines.append(f"| `{jax_mod}` | `{ft_mod}` | {len(have)} / {total} | "
                     f"{100 * len(have) / total:.0f}% |")
    return "\n".join(lines)


def _grouped(rows):
    """The coverage rows with the ``jax.scipy.stats.*`` distributions summed into one."""
    stats = [r for r in rows if r[0].startswith("jax.scipy.stats.")]
    others = [r for r in rows if not r[0].startswith("jax.scipy.stats.")]
    have = [f"{r[0]}.{n}" for r in stats for n in r[2]]
    lack = [f"{r[0]}.{n}" for r in stats for n in r[3]]
    return [*others, ("jax.scipy.stats.*", "ftorch.scipy.stats.*", have, lack)]


def _refresh() -> None:  # pragma: no cover (needs JAX)
    import types

    import jax
    import optax

    names = {}
    for jax_mod in NAMESPACES:
        module = importlib.import_module(jax_mod)
        deprecated = set(getattr(module, "_deprecations", {}) or {})
        names[jax_mod] = sorted(
            n for n in dir(module)
            if not n.startswith("_") and n not in deprecated
            and not isinstance(getattr(module, n, None), types.ModuleType))
    names["_versions"] = {"jax": jax.__version__, "optax": optax.__version__}
    NAMES.write_text(json.dumps(names, indent=0, sort_keys=True) + "\n")


if __name__ == "__main__":
    if sys.argv[1:] == ["--refresh"]:
        _refresh()
    else:
        print(coverage_table())
