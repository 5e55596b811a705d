"""The package's layer map, read from its import graph: each layer imports
only the layers below it, no module imports another in a circle at import
time, and every primitive is defined in the primitive layer
(``docs/contributing.md`` draws the map)."""

from __future__ import annotations

import ast
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent / "ftorch"

# Bottom to top. A module may import its own layer and the layers below.
LAYERS: list[tuple[str, set[str]]] = [
    ("settings and dtypes", {"ftorch.config", "ftorch.dtypes", "ftorch.memory", "ftorch.typing"}),
    ("core: registry, traces, tracers", {"ftorch.core"}),
    ("graph IR", {"ftorch.graph"}),
    # Platform code: the BLAS (loaded by ``import ftorch`` before mlx.core,
    # importing nothing of ftorch), and the lowering of graphs to MLX with the
    # fast CPU math and the graph rewrites for MLX's kernels.
    ("backend", {"ftorch.backend"}),
    # The interpreters call primitives' strict wrappers, and the higher-order
    # primitives (loops, conditionals) are built from the graph transforms:
    # one level, whose modules import one another without a circle.
    ("primitives and transforms", {"ftorch.primitives", "ftorch.transforms", "ftorch.tree",
                                   "ftorch.api_util"}),
    # The differentiation API built on the interpreters (JAX's api.py).
    ("derived transforms", {"ftorch.api"}),
    ("custom rules", {"ftorch.custom", "ftorch.custom_batching", "ftorch.extend"}),
    ("lax", {"ftorch.lax"}),
    ("numpy", {"ftorch.numpy"}),
    ("array libraries", {"ftorch.random", "ftorch.scipy", "ftorch.ops", "ftorch.test_util"}),
    # Tools over staged graphs and running code: host callbacks, export, the profiler.
    ("debugging, export and profiling", {"ftorch.debug", "ftorch.export", "ftorch.profiler"}),
    ("models and training", {"ftorch.nn", "ftorch.optim", "ftorch.data"}),
    ("checkpoints", {"ftorch.serialization"}),
    ("distributed training", {"ftorch.distributed"}),
    ("the package", {"ftorch", "ftorch.info", "ftorch.runtime"}),
]

# Packages whose __init__ is a public face re-exporting names of a layer above
# their own modules': ftorch.transforms exports ftorch.api's grad, jacfwd, ...
# beside its interpreters' jit and vmap. They sit in that layer, by name only.
FACES = {"ftorch.transforms": "derived transforms"}

# Higher-order primitives that belong to a transform (as jax's pjit_p and
# remat_p live beside jit and checkpoint), not to the primitive layer.
TRANSFORM_PRIMITIVES = {
    "ftorch.transforms.jit", "ftorch.transforms.remat", "ftorch.custom",
    "ftorch.custom_batching",
}


def _module_name(path: pathlib.Path) -> str:
    parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_module_name(p): p for p in sorted(ROOT.rglob("*.py"))}


def _deferred(tree: ast.AST) -> set[int]:
    """The nodes inside function bodies: they run when called, not on import."""
    inside = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            inside.update(id(n) for n in ast.walk(node) if n is not node)
    return inside


def _imports(name: str) -> tuple[set[str], set[str]]:
    """The ftorch modules ``name`` imports on import, and those it imports
    inside functions. ``from a import b`` names ``a.b`` when that is a module.
    A module's parent packages are not counted: Python runs them first for
    every submodule, and a package re-exporting its modules is no circle."""
    path = MODULES[name]
    tree = ast.parse(path.read_text())
    deferred = _deferred(tree)
    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    on_import, in_functions = set(), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(package[:len(package) - node.level + 1] + ([base] if base else []))
            targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in MODULES else base
                       for a in node.names]
        else:
            continue
        for target in targets:
            while target not in MODULES and "." in target:
                target = target.rsplit(".", 1)[0]
            if target in MODULES and target != name:
                (in_functions if id(node) in deferred else on_import).add(target)
    return on_import, in_functions


IMPORTS = {name: _imports(name) for name in MODULES}


def _layer(name: str) -> int:
    if name in FACES:
        return [title for title, _ in LAYERS].index(FACES[name])
    best = None
    for level, (_, groups) in enumerate(LAYERS):
        for group in groups:
            if name == group or name.startswith(group + "."):
                if best is None or len(group) > best[1]:
                    best = (level, len(group))
    assert best is not None, f"{name} is in no layer: add it to LAYERS"
    return best[0]


@pytest.mark.parametrize("name", sorted(MODULES))
def test_imports_go_down_the_layers(name):
    on_import, in_functions = IMPORTS[name]
    level = _layer(name)
    upward = sorted(t for t in on_import | in_functions if _layer(t) > level)
    assert not upward, (
        f"{name} (layer {LAYERS[level][0]!r}) imports "
        + ", ".join(f"{t} (layer {LAYERS[_layer(t)][0]!r})" for t in upward))


def test_the_primitive_layer_imports_nothing_above_it():
    above = {"ftorch.numpy", "ftorch.nn", "ftorch.lax", "ftorch.random", "ftorch.scipy",
             "ftorch.optim", "ftorch.custom", "ftorch.custom_batching"}
    for name in MODULES:
        if name.startswith("ftorch.primitives"):
            on_import, in_functions = IMPORTS[name]
            bad = sorted(t for t in on_import | in_functions
                         if any(t == a or t.startswith(a + ".") for a in above))
            assert not bad, f"{name} imports {bad}"


def test_no_import_circles():
    # Tarjan's strongly connected components of the on-import graph.
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    circles = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in IMPORTS[v][0]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                circles.append(sorted(component))

    for name in MODULES:
        if name not in index:
            visit(name)
    assert not circles, f"modules importing each other in a circle: {circles}"


def _defines_primitives(name: str) -> bool:
    tree = ast.parse(MODULES[name].read_text())
    return any(isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
               and node.func.id in ("Primitive", "AxisPrimitive") for node in ast.walk(tree))


def test_primitives_are_defined_in_the_primitive_layer():
    allowed = TRANSFORM_PRIMITIVES | {"ftorch.extend"}  # extend's docstring makes one
    outside = sorted(name for name in MODULES
                     if not name.startswith(("ftorch.primitives", "ftorch.core"))
                     and name not in allowed and _defines_primitives(name))
    assert not outside, f"primitives defined outside ftorch.primitives: {outside}"
    # The scan finds the families that define primitives, whatever their kind.
    inside = {name for name in MODULES if name.startswith("ftorch.primitives.")
              and _defines_primitives(name)}
    assert {f"ftorch.primitives.{family}" for family in (
        "elementwise", "activations", "sampling", "distributed", "loops", "parallel")} <= inside
