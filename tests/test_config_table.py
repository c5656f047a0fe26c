"""The parameter table and the Config that holds one server's values, without a server.

Config is compiled, and a compiled class has exactly the attributes it declares: a parameter in
the table but not declared on Config works in the pure build and fails in the compiled one, so
the declarations are checked against the table here, from the source (the AST).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from brook.config.parameters import PARAMETERS

STORE = Path(__file__).resolve().parent.parent / "brook" / "config" / "store.py"


def _declared_attributes() -> dict[str, str]:
    """Config's class-level annotations: attribute name -> annotation text."""
    tree = ast.parse(STORE.read_text())
    (config,) = [node for node in tree.body
                 if isinstance(node, ast.ClassDef) and node.name == "Config"]
    return {node.target.id: ast.unparse(node.annotation) for node in config.body
            if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name)}


def test_config_declares_exactly_the_parameters_of_the_table() -> None:
    declared = _declared_attributes()
    in_table = [param.attr for param in PARAMETERS]
    assert len(set(in_table)) == len(in_table)
    assert sorted(declared) == sorted(in_table)


# What a parameter's value is, by kind (a special parameter's parser says what it returns).
_KIND_TYPES = {"int": "int", "memory": "int", "bool": "bool", "enum": "str", "string": "str"}


@pytest.mark.parametrize("param", PARAMETERS, ids=[param.name for param in PARAMETERS])
def test_declared_type_is_the_parsed_value_type(param) -> None:
    declared = _declared_attributes()[param.attr]
    default = param.parse(param.default)
    if param.kind in _KIND_TYPES:
        assert declared == _KIND_TYPES[param.kind]
    assert type(default).__name__ == declared.split("[", 1)[0]
    if isinstance(default, list) and default:
        assert declared == f"list[{type(default[0]).__name__}]"
