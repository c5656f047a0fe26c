"""Rules the compiled build (setup.py's COMPILED modules, built with mypyc) needs of the source
that the pure build does not: a break shows only in the compiled build, so it is checked here
from the source (the AST), for both builds.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_compiled_modules_bind_one_type_per_exception_name() -> None:
    """mypyc gives a local one type, taken from its first binding: ``except A as err`` and
    later ``except B as err`` in one function make the second a TypeError at run time in the
    compiled build (a bug's traceback once cost the connection instead of one reply)."""
    compiled = re.findall(r'"(brook/[^"]+\.py)"', (ROOT / "setup.py").read_text())
    clashes = []
    for path in compiled:
        tree = ast.parse((ROOT / path).read_text())
        for function in ast.walk(tree):
            if not isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            types: dict[str, set[str]] = {}
            for node in ast.walk(function):
                if isinstance(node, ast.ExceptHandler) and node.name and node.type:
                    types.setdefault(node.name, set()).add(ast.unparse(node.type))
            clashes += [f"{path}:{function.lineno} {function.name}: {name} {sorted(bound)}"
                        for name, bound in types.items() if len(bound) > 1]
    assert compiled and not clashes
