"""ftorch.core is a package of modules, one job each, whose module-level
imports form a DAG; none imports the package itself (its __init__ only
re-exports their names)."""

import ast
import pathlib

import ftorch.core

CORE = pathlib.Path(ftorch.core.__file__).parent


def _core_imports(path: pathlib.Path) -> set[str]:
    """The ftorch.core modules imported at module level by ``path``
    ("ftorch.core" for the package itself)."""
    found = set()
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.startswith("ftorch.core")}
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("ftorch.core"):
            found.add(node.module)
    return found


def test_core_modules_form_a_dag_without_the_package():
    graph = {p.stem: _core_imports(p) for p in CORE.glob("*.py") if p.stem != "__init__"}
    assert len(graph) >= 6, sorted(graph)
    for name, imports in graph.items():
        assert "ftorch.core" not in imports, f"ftorch.core.{name} imports the package"
    deps = {name: {i.removeprefix("ftorch.core.") for i in imports}
            for name, imports in graph.items()}
    done: list[str] = []
    while len(done) < len(deps):
        ready = [n for n in deps if n not in done and deps[n] <= set(done)]
        assert ready, f"an import cycle among {sorted(set(deps) - set(done))}"
        done += sorted(ready)
