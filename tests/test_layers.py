"""The module structure: layers import downwards only, with no cycles and no late imports.

Read from the source (the AST), not by importing: a rule broken here is a rule broken in the
code, whatever the import order of a test run happens to hide. The layers are the ones
docs/architecture.md draws, read from that drawing: the picture and the rule cannot drift.
"""

from __future__ import annotations

import ast
import re
import tomllib
from pathlib import Path

import pytest

BROOK = Path(__file__).resolve().parent.parent / "brook"



def _module_name(path: Path) -> str:
    parts = list(path.relative_to(BROOK.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _imports(path: Path) -> tuple[set[str], set[str], list[str]]:
    """(runtime imports of brook modules, imports for type checking only, function-level
    imports) of one source file."""
    tree = ast.parse(path.read_text())
    runtime: set[str] = set()
    typing_only: set[str] = set()
    late: list[str] = []

    def names(node: ast.Import | ast.ImportFrom) -> list[str]:
        if isinstance(node, ast.Import):
            return [alias.name for alias in node.names]
        base = node.module or ""
        if node.level:  # relative imports are not used in Brook
            raise AssertionError(f"relative import in {path}")
        # "from brook.commands import registry" imports brook.commands.registry
        found = [f"{base}.{alias.name}" for alias in node.names]
        return [name if (BROOK.parent / name.replace(".", "/")).with_suffix(".py").exists()
                or (BROOK.parent / name.replace(".", "/")).is_dir() else base
                for name in found]

    for node in tree.body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            runtime.update(n for n in names(node) if n.startswith("brook"))
        elif isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for inner in ast.walk(node):
                if isinstance(inner, (ast.Import, ast.ImportFrom)):
                    typing_only.update(n for n in names(inner) if n.startswith("brook"))
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for inner in ast.walk(node):
                if isinstance(inner, (ast.Import, ast.ImportFrom)):
                    late.extend(n for n in names(inner) if n.startswith("brook"))
    return runtime, typing_only, late


SOURCES = sorted(BROOK.rglob("*.py"))
GRAPH = {_module_name(path): _imports(path) for path in SOURCES}


def _runtime_deps(module: str) -> set[str]:
    return {dep for dep in GRAPH[module][0] if dep in GRAPH and dep != module}


def _optional_packages() -> set[str]:
    """The packages only an optional extra installs (pyproject's ``spark`` extra)."""
    extras = tomllib.loads((BROOK.parent / "pyproject.toml").read_text())["project"][
        "optional-dependencies"]
    return {re.split(r"[<>=\[ ]", requirement, maxsplit=1)[0]
            for requirement in extras["spark"]} - {"redis"}


def _imports_an_optional_package(module: str) -> bool:
    path = (BROOK.parent / module.replace(".", "/")).with_suffix(".py")
    tree = ast.parse(path.read_text())
    optional = _optional_packages()
    return any(
        isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] in optional
        or isinstance(node, ast.Import)
        and any(alias.name.split(".")[0] in optional for alias in node.names)
        for node in tree.body)


def test_function_level_imports_only_defer_an_optional_extra() -> None:
    """A module is imported inside a function only when importing it needs a package of an
    optional extra (the Spark connector's pyspark, with Java behind it): never to dodge a
    cycle."""
    found = [(str(path.relative_to(BROOK)), name)
             for path in SOURCES for name in _imports(path)[2]
             if not _imports_an_optional_package(name)]
    assert not found, found


def test_no_runtime_import_cycles() -> None:
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(module: str) -> None:
        state[module] = 1
        path.append(module)
        for dep in sorted(_runtime_deps(module)):
            if state.get(dep) == 1:
                cycle = path[path.index(dep):] + [dep]
                raise AssertionError("import cycle: " + " -> ".join(cycle))
            if dep not in state:
                visit(dep)
        path.pop()
        state[module] = 2

    for module in sorted(GRAPH):
        if module not in state:
            visit(module)


# The layers as docs/architecture.md draws them: "N  name, name, ..." (names relative to
# ``brook``, a line ending in a comma continued on the next), read from its Layers block.
ARCHITECTURE = BROOK.parent / "docs" / "architecture.md"


def _drawn_layers() -> dict[str, int]:
    text = ARCHITECTURE.read_text()
    block = text[text.index("### Layers"):]
    block = block[block.index("```\n") + 4:]
    block = block[:block.index("```")]
    layers: dict[str, int] = {}
    number = 0
    continued = False
    for line in block.splitlines():
        heading = re.match(r"^(\d+)  (\S.*)$", line)
        if heading:
            number = int(heading.group(1))
            names = heading.group(2)
        elif continued and re.match(r"^   \S", line):
            names = line.strip()
        else:
            continued = False
            continue
        continued = names.endswith(",")
        for name in filter(None, (part.strip() for part in names.split(","))):
            assert name not in layers, f"{name} drawn twice"
            layers[f"brook.{name}"] = number
    return layers


LAYERS = _drawn_layers()


def _layer(module: str) -> int:
    """The layer of ``module``: that of the longest drawn name it is or lies under (the
    package's own ``__init__``, which holds only the version, is in the lowest)."""
    if module == "brook":
        return max(LAYERS.values())
    best = ""
    for name in LAYERS:
        if (module == name or module.startswith(name + ".")) and len(name) > len(best):
            best = name
    assert best, f"{module} is in no layer of docs/architecture.md"
    return LAYERS[best]


def test_every_module_is_drawn_in_a_layer() -> None:
    assert len(set(LAYERS.values())) >= 8
    for module in GRAPH:
        _layer(module)
    undrawn = [name for name in LAYERS if not any(
        module == name or module.startswith(name + ".") for module in GRAPH)]
    assert not undrawn, f"drawn but not in the source: {undrawn}"


def test_imports_go_to_the_same_layer_or_below() -> None:
    """Runtime and type-checking imports alike: no module names one above it."""
    offences = []
    for module, (runtime, typing_only, _late) in sorted(GRAPH.items()):
        for dep in sorted(runtime | typing_only):
            if dep in GRAPH and _layer(dep) < _layer(module):
                kind = "imports" if dep in runtime else "names for type checking"
                offences.append(f"{module} (layer {_layer(module)}) {kind} {dep} "
                                f"(layer {_layer(dep)})")
    assert not offences, offences


# Edges ruled out within a layer, or downwards past what the layer order allows, as
# docs/architecture.md lists them: (modules, what they may never import, at run time or for
# type checking).
INTRA_LAYER = [
    ("brook.acl", ("brook.session", "brook.keyspace")),
    ("brook.admission", ("brook.dispatch",)),
    ("brook.types", ("brook.protocol.resp",)),
    ("brook.protocol", ("brook.config",)),
]


@pytest.mark.parametrize(("layer", "forbidden"), INTRA_LAYER,
                         ids=[rule[0] for rule in INTRA_LAYER])
def test_edges_ruled_out_within_a_layer(layer: str, forbidden: tuple[str, ...]) -> None:
    offences = []
    for module, (runtime, typing_only, _late) in GRAPH.items():
        if module != layer and not module.startswith(layer + "."):
            continue
        for dep in runtime | typing_only:
            if any(dep == bad or dep.startswith(bad + ".") for bad in forbidden):
                offences.append(f"{module} imports {dep}")
    assert not offences, offences


def test_only_the_entry_points_import_the_composition_root() -> None:
    found = sorted(module for module, (runtime, typing_only, _late) in GRAPH.items()
                   if "brook.server" in runtime | typing_only
                   and module not in ("brook.cli", "brook.__main__"))
    assert not found, found


# Command families (FAMILIES in brook/commands/__init__.py) share code through the modules
# beside them that register no command (registry, args, common, list_args, stream_access...),
# never through one another.


def _command_families() -> set[str]:
    tree = ast.parse((BROOK / "commands" / "__init__.py").read_text())
    for node in tree.body:
        if isinstance(node, ast.Assign) and ast.unparse(node.targets[0]) == "FAMILIES":
            return {f"brook.commands.{name}" for name in ast.literal_eval(node.value)}
    raise AssertionError("no FAMILIES in brook/commands/__init__.py")


def test_command_families_import_no_other_family() -> None:
    families = _command_families()
    assert families <= set(GRAPH)
    found = set()
    for module, (runtime, typing_only, _late) in GRAPH.items():
        if not module.startswith("brook.commands.") or module == "brook.commands":
            continue
        for dep in (runtime | typing_only) & families - {module}:
            # a shared module (not a family) importing a family would hide the same coupling
            found.add((module.removeprefix("brook.commands."),
                       dep.removeprefix("brook.commands.")))
    assert not found, sorted(found)


def test_only_commands_import_command_families() -> None:
    """A family is reached through the command table (resolve, the dispatcher), never by
    importing it: what others share with families lives below them (registry, args...)."""
    families = _command_families()
    found = sorted((module, dep) for module, (runtime, typing_only, _late) in GRAPH.items()
                   if not module.startswith("brook.commands")
                   for dep in (runtime | typing_only) & families)
    assert not found, found


def test_commands_and_types_use_no_connection_at_run_time() -> None:
    """A command runs on a Session (brook.session); what it needs of the socket is a Session
    method the connection overrides."""
    for module, (runtime, _typing, _late) in GRAPH.items():
        if module.startswith(("brook.commands", "brook.types", "brook.blocking",
                              "brook.pubsub", "brook.notify", "brook.keyspace")):
            assert "brook.connection" not in runtime, module
            assert "brook.server" not in runtime, module


@pytest.mark.parametrize("package", sorted(str(path.parent.relative_to(BROOK.parent))
                                           for path in BROOK.rglob("__init__.py")
                                           if path.parent != BROOK))
def test_each_package_says_what_it_may_import(package: str) -> None:
    """A newcomer reads a package's boundaries in its opening docstring."""
    docstring = ast.get_docstring(ast.parse((BROOK.parent / package / "__init__.py").read_text()))
    assert docstring is not None and re.search(r"\bimports?\b", docstring, re.I), package


def test_the_stream_node_codec_is_below_the_stream() -> None:
    """brook.types.stream_node (one macro node and its sealed blob) is what the container,
    brook.types.stream, is built on: it imports neither the container nor what only the
    container needs, not even for type checking."""
    runtime, typing_only, _late = GRAPH["brook.types.stream_node"]
    above = ("brook.types.stream", "brook.types.groups", "brook.types.idmp", "brook.keyspace")
    assert not (runtime | typing_only) & set(above)


def test_config_imports_only_the_bottom_layer() -> None:
    """The configuration (DESIGN.md layer 8) knows no server: what a server does when a value
    changes is an apply step the server registers on its Config, never an import."""
    allowed = ("brook.config", "brook.protocol.requests", "brook.glob")
    for module, (runtime, typing_only, _late) in GRAPH.items():
        if module == "brook.config" or module.startswith("brook.config."):
            for dep in runtime | typing_only:
                assert any(dep == ok or dep.startswith(ok + ".") for ok in allowed), (module, dep)


def test_test_files_share_helpers_only_through_conftest_and_support() -> None:
    """A test file imports no other test file: what several need is in tests/conftest.py or
    tests/support/, where a newcomer looks for it."""
    tests = BROOK.parent / "tests"
    offences = []
    for path in sorted(tests.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module] + [f"{node.module}.{alias.name}" for alias in node.names]
            elif isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            else:
                continue
            if any(name.startswith("tests.") and name.rsplit(".", 1)[-1].startswith("test_")
                   for name in names):
                offences.append(f"{path.relative_to(tests)} imports {names[0]}")
    assert not offences, offences
