"""The shape of the package that import-linter's contracts (pyproject.toml) cannot say: no import cycle between any two
files, no in-function import of our own modules, no other package's ``_private`` name, no second underscore on a
private module's names, no ``getattr`` probe of a transport, one job per module (a docstring first, Python and TypeScript), and TypeScript modules small (the front
end's own rule). What decides a Python module's split is its job, not its length (DESIGN.md's Layers).

Every import statement counts, wherever it sits: at the top, inside a function, or under ``TYPE_CHECKING``.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "ai_widgets"
MAX_TYPESCRIPT_LINES = 700


@dataclass(frozen=True)
class Import:
    importer: str
    line: int
    module: str
    names: tuple[str, ...]
    in_function: bool


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


MODULES = {module_name(path): path for path in sorted(PACKAGE.rglob("*.py"))}


def own_module(dotted: str) -> str | None:
    """The module of ours that ``dotted`` (a module, or a name in a module) lives in."""
    while dotted and dotted not in MODULES:
        dotted = dotted.rpartition(".")[0]
    return dotted or None


def imports_of(name: str) -> Iterator[Import]:
    path = MODULES[name]
    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]

    def walk(node: ast.AST, in_function: bool) -> Iterator[Import]:
        for child in ast.iter_child_nodes(node):
            inside = in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
            if isinstance(child, ast.Import):
                for alias in child.names:
                    yield Import(name, child.lineno, alias.name, (), inside)
            elif isinstance(child, ast.ImportFrom):
                base = package[: len(package) - child.level + 1] if child.level else []
                module = ".".join([*base, *([child.module] if child.module else [])])
                yield Import(name, child.lineno, module, tuple(alias.name for alias in child.names), inside)
            yield from walk(child, inside)

    yield from walk(ast.parse(path.read_text(encoding="utf-8")), False)


def own_edges(item: Import) -> set[str]:
    """The files of ours an import statement reaches (``from pkg import submodule`` reaches the submodule)."""
    targets = {own_module(item.module)} | {own_module(f"{item.module}.{name}") for name in item.names}
    return {target for target in targets if target and target != item.importer}


IMPORTS = [item for name in MODULES for item in imports_of(name)]


def strongly_connected(graph: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's components of more than one file, iteratively (no recursion limit to meet)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in graph:
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            for child in children:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))
    return found


def test_no_import_cycle_between_files() -> None:
    graph: dict[str, set[str]] = {name: set() for name in MODULES}
    for item in IMPORTS:
        graph[item.importer] |= own_edges(item)
    assert strongly_connected(graph) == []


def test_the_cycle_finder_finds_a_cycle() -> None:
    assert strongly_connected({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


#: The one own module imported inside a function: ``ChatSession.from_agent`` imports the pydantic-ai integration only
#: when a person asks for an agent, because pydantic-ai is an optional extra (the floors allow the import itself).
LAZY_OWN_IMPORTS = {("ai_widgets.session._chat", "ai_widgets.integrations")}


def test_no_own_module_is_imported_inside_a_function() -> None:
    """Imports inside functions are for laziness about third-party SDKs and IPython only, never around the floors
    (the optional integrations, imported by the one method that needs them, aside)."""
    inside = [
        f"{item.importer}:{item.line} imports {item.module}"
        for item in IMPORTS
        if item.in_function and (item.importer, item.module) not in LAZY_OWN_IMPORTS
    ]
    assert [line for line in inside if " imports ai_widgets" in line] == []


def room(name: str) -> str:
    """The top-level package or module a module belongs to (``ai_widgets.session._chat`` is in ``session``)."""
    return name.split(".")[1] if name.count(".") else name


def test_no_module_takes_another_packages_private_name() -> None:
    """Private modules are fine across floors (``transports._base``); private names are not (``tools._tool._X``)."""
    taken = [
        f"{item.importer}:{item.line} takes {item.module}.{name}"
        for item in IMPORTS
        if own_module(item.module)
        for name in item.names
        if name.startswith("_")
        and not name.startswith("__")
        and f"{item.module}.{name}" not in MODULES
        and room(own_module(item.module) or "") != room(item.importer)
    ]
    assert taken == []


def underscored_names(source: str) -> list[str]:
    """The module-level names ``source`` defines (functions, classes, assignments, imports, also under ``if`` and
    ``try``) that start with one underscore."""
    names: list[str] = []
    statements = list(ast.parse(source).body)
    while statements:
        node = statements.pop(0)
        if isinstance(node, (ast.If, ast.Try)):
            handlers = [handler.body for handler in node.handlers] if isinstance(node, ast.Try) else []
            finals = node.finalbody if isinstance(node, ast.Try) else []
            statements[:0] = [*node.body, *node.orelse, *finals, *(item for body in handlers for item in body)]
            continue
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            found = [node.name]
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            found = [(alias.asname or alias.name).partition(".")[0] for alias in node.names]
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            found = [name.id for target in targets for name in ast.walk(target) if isinstance(name, ast.Name)]
        else:
            found = []
        names += [f"{node.lineno}: {name}" for name in found if name.startswith("_") and not name.startswith("__")]
    return names


PRIVATE_MODULES = [path for path in MODULES.values() if path.name.startswith("_") and path.name != "__init__.py"]


def test_a_private_modules_names_carry_no_second_underscore() -> None:
    """The module is private already (DESIGN.md): ``_history_format.load``, not ``_history_format._load``."""
    underscored = [
        f"{path.relative_to(ROOT)}:{name}" for path in PRIVATE_MODULES for name in underscored_names(path.read_text())
    ]
    assert underscored == []


def test_the_underscore_finder_finds_module_level_names() -> None:
    source = (
        "import os as _os\n_A = 1\n_b: int = 2\nclass _C:\n    _d = 3\n    def _e(self): ...\n"
        "def _f():\n    _g = 4\ntry:\n    _h = 5\nexcept ImportError:\n    _i = None\n__all__ = []\nj = 6\n"
    )
    assert underscored_names(source) == ["1: _os", "2: _A", "3: _b", "4: _C", "7: _f", "10: _h", "12: _i"]


@pytest.mark.parametrize("path", sorted(MODULES.values()), ids=lambda path: str(path.relative_to(ROOT)))
def test_each_python_module_says_its_job_first(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    if text.strip():
        assert ast.get_docstring(ast.parse(text)), f"{path.name}: its first docstring says its one job"


def transport_probes(source: str) -> list[str]:
    """The ``getattr`` and ``hasattr`` calls in ``source`` that ask something named a transport what it might have."""
    return [
        f"{node.lineno}: {ast.unparse(node)}"
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id in {"getattr", "hasattr"}
        and node.args
        and "transport" in ast.unparse(node.args[0]).lower()
    ]


def test_nothing_probes_a_transport_with_getattr() -> None:
    """A transport declares what it is (``Transport.profile``), and the session reads that (DESIGN.md's Layers)."""
    probes = [
        f"{name}:{probe}" for name, path in MODULES.items() for probe in transport_probes(path.read_text("utf-8"))
    ]
    assert probes == []


def test_the_probe_finder_finds_a_probe() -> None:
    source = "w = getattr(self.transport, 'context_window', None)\nhasattr(transport, 'model')\ngetattr(x, 'y')\n"
    assert transport_probes(source) == [
        "1: getattr(self.transport, 'context_window', None)",
        "2: hasattr(transport, 'model')",
    ]


TYPESCRIPT = sorted((ROOT / "js" / "src").rglob("*.ts"))


@pytest.mark.parametrize("path", TYPESCRIPT, ids=lambda path: str(path.relative_to(ROOT)))
def test_each_typescript_module_says_its_job_first_and_is_small(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    assert text.count("\n") <= MAX_TYPESCRIPT_LINES, f"{path.name}: split it by job"
    assert text.lstrip().startswith(("//", "/*")), f"{path.name}: its first comment says its one job"


def test_the_walk_saw_the_whole_package() -> None:
    """Guards the checks above against passing on an empty tree."""
    assert len(MODULES) > 50
    assert len(PRIVATE_MODULES) > 50
    assert len(TYPESCRIPT) > 10
    assert any(item.in_function for item in IMPORTS)
