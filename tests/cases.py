"""All rule cases, gathered from the per-family ``cases_*.py`` modules."""

import importlib
import pathlib

CASES = []
for _path in sorted(pathlib.Path(__file__).parent.glob("cases_*.py")):
    CASES += importlib.import_module(_path.stem).CASES
