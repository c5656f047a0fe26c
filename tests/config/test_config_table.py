"""The parameter table and the Config that holds one server's values, without a server.

Config is compiled, and a compiled class has exactly the attributes it declares: a parameter in
the table but not declared on Config works in the pure build and fails in the compiled one, so
the declarations are checked against the table here, from the source (the AST).
"""

from __future__ import annotations

import ast

import pytest

from brook.config.errors import ConfigError, ConfigSetError
from brook.config.parameters import PARAMETERS, PARAMETERS_BY_NAME
from brook.config.store import Config
from tests.conftest import ROOT

STORE = ROOT / "brook" / "config" / "store.py"


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


def test_apply_steps_run_in_the_order_config_set_names_the_parameters() -> None:
    config = Config()
    ran: list[str] = []
    config.on_apply("hz", lambda: ran.append(f"hz={config.hz}"))
    config.on_apply("maxmemory", lambda: ran.append(f"maxmemory={config.maxmemory}"))
    config.on_apply("hz", lambda: ran.append("hz again"))
    config.set_many([("maxmemory", "1mb"), ("hz", "20"), ("timeout", "5")])
    assert ran == ["maxmemory=1048576", "hz=20", "hz again"]
    assert (config.maxmemory, config.hz, config.timeout) == (1048576, 20, 5)


def test_a_refused_apply_step_restores_every_parameter_and_applies_them_again() -> None:
    config = Config()
    ran: list[str] = []

    def refuse_big_timeout() -> None:
        ran.append(f"timeout={config.timeout}")
        if config.timeout > 100:
            raise ConfigError("too long")

    config.on_apply("hz", lambda: ran.append(f"hz={config.hz}"))
    config.on_apply("timeout", refuse_big_timeout)
    config.on_apply("maxmemory", lambda: ran.append(f"maxmemory={config.maxmemory}"))
    with pytest.raises(ConfigSetError) as failure:
        config.set_many([("hz", "20"), ("timeout", "500"), ("maxmemory", "1mb")])
    assert str(failure.value) == (
        "CONFIG SET failed (possibly related to argument 'timeout') - too long")
    assert (config.hz, config.timeout, config.maxmemory) == (10, 0, 0)
    # The steps after the refusal did not run; then every parameter's steps ran again on the
    # restored values.
    assert ran == ["hz=20", "timeout=500", "hz=10", "timeout=0", "maxmemory=0"]


def test_apply_steps_are_registered_under_the_canonical_name() -> None:
    config = Config()
    assert PARAMETERS_BY_NAME["slave-read-only"].name == "replica-read-only"
    with pytest.raises(ValueError):
        config.on_apply("slave-read-only", lambda: None)
    with pytest.raises(KeyError):
        config.on_apply("no-such-parameter", lambda: None)
    ran: list[str] = []
    config.on_apply("replica-read-only", lambda: ran.append("applied"))
    config.set_many([("slave-read-only", "no")])
    assert ran == ["applied"] and config.replica_read_only is False


def test_each_config_has_its_own_apply_steps() -> None:
    """Two servers in one process: one's CONFIG SET never runs the other's steps."""
    first, second = Config(), Config()
    ran: list[str] = []
    first.on_apply("hz", lambda: ran.append("first"))
    second.set_many([("hz", "30")])
    assert ran == [] and first.hz == 10 and second.hz == 30
