"""The import rules of pyproject's [tool.importlinter] hold: one test per contract, named by its id."""

from __future__ import annotations

import ast
import logging
import re
import tomllib
from contextlib import chdir
from pathlib import Path

import grimp
import pytest
from click.testing import CliRunner
from importlinter.cli import lint_imports_command

from tests.support.paths import REPO

CONTRACTS = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["importlinter"]["contracts"]


@pytest.fixture(scope="module")
def lint_output() -> str:
    """`lint-imports` over the checkout (graph built afresh: no cache), its whole report. It runs in this process
    (click's runner; the graph is built in a fraction of a second), from the checkout, where it reads its rules."""
    # The command configures logging with dictConfig, which would disable every logger made before it (the
    # gateway's warnings included) for the rest of the session: the loggers' state is put back afterwards.
    loggers = [logging.getLogger(name) for name in logging.root.manager.loggerDict]
    disabled = {id(logger): logger.disabled for logger in loggers}
    try:
        with chdir(REPO):
            output = CliRunner().invoke(lint_imports_command, ["--no-cache", "--no-logo"]).output
    finally:
        for logger in loggers:
            logger.disabled = disabled[id(logger)]
    assert re.search(r"Contracts: \d+ kept, \d+ broken", output), output  # it ran and checked
    return output


def test_every_contract_has_an_id() -> None:
    ids = [c.get("id") for c in CONTRACTS]
    assert len(CONTRACTS) >= 4 and all(ids) and len(set(ids)) == len(ids), ids


@pytest.mark.parametrize("contract", CONTRACTS, ids=[c.get("id", "?") for c in CONTRACTS])
def test_contract_is_kept(lint_output: str, contract: dict) -> None:
    line = re.search(rf"^{re.escape(contract['name'])}\s*(KEPT|BROKEN)\b", lint_output, re.M)
    assert line, f"contract {contract['id']!r} was not checked:\n{lint_output}"
    assert line.group(1) == "KEPT", (
        f"import rule {contract['id']!r} broken: {contract['name']}\n{_details(lint_output, contract['name'])}")


def _details(output: str, name: str) -> str:
    """This contract's part of the report's 'Broken contracts' section: each offending import chain."""
    broken = output[output.find("Broken contracts"):]
    header = re.search(rf"^{re.escape(name)}\n-+\n", broken, re.M)
    if not header:
        return output
    rest = broken[header.end():]
    following = [m.start() for c in CONTRACTS if c["name"] != name
                 for m in re.finditer(rf"^{re.escape(c['name'])}\n-+\n", rest, re.M)]
    return rest[:min(following, default=len(rest))].strip()


# ---- the layers as the contracts say, the tree holds, and the docs state ------------------------------------

PRODUCT = ("pipeline", "validators", "flows")  # the code folders of the `utcgen` package (the rest is data)
SETTINGS = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["importlinter"]
(LAYERS,) = [c["layers"] for c in CONTRACTS if c["type"] == "layers"]
ARCHITECTURE = REPO / "docs" / "architecture.md"
LAYERS_BEGIN, LAYERS_END = "<!-- layers: begin -->", "<!-- layers: end -->"
MAY_IMPORT = re.compile(r"^May import: (.*)$", re.M)


def short(module: str) -> str:
    """`utcgen.pipeline.core` -> `core`, `utcgen.validators` -> `validators`: a layer's name in the docs."""
    return module.removeprefix("utcgen.").removeprefix("pipeline.")


def layer_rows() -> list[list[str]]:
    """The layers contract, top to bottom, each row its packages' short names (`a | b` and `a : b` split)."""
    return [[short(m.strip()) for m in re.split(r"[|:]", row)] for row in LAYERS]


def folder(name: str) -> Path:
    return REPO / (name if name in ("validators", "flows") else f"pipeline/{name}")


def modules_of(name: str) -> list[str]:
    """What a layer holds, as the docs list it: its modules' names, a subpackage as `name/`."""
    root = folder(name)
    if not root.is_dir():  # a module of its own (api, __main__)
        return [name]
    out = [p.stem for p in sorted(root.glob("*.py")) if p.stem != "__init__"]
    return out + [f"{p.parent.name}/" for p in sorted(root.glob("*/__init__.py"))]


def may_import(name: str) -> list[str]:
    """The packages `name` may import by the contracts: every layer below its own, a sibling joined with `:`,
    less what a forbidden contract keeps from the whole package; bottom first."""
    rows = layer_rows()
    (at,) = [i for i, row in enumerate(rows) if name in row]
    allowed = [n for row in reversed(rows[at + 1:]) for n in row]
    if ":" in LAYERS[at]:
        allowed += [n for n in rows[at] if n != name]
    for contract in CONTRACTS:
        if contract["type"] == "forbidden" and any(short(s) == name for s in contract["source_modules"]):
            allowed = [n for n in allowed if n not in {short(f) for f in contract["forbidden_modules"]}]
    return allowed


def layers_section() -> str:
    """docs/architecture.md's layer list, as the contracts and the tree make it (what the test compares)."""
    lines = []
    for i, row in enumerate(layer_rows(), start=1):
        joint = " | " if "|" in LAYERS[i - 1] else " : "
        lines.append(f"{i}. " + joint.join(f"`{n}`" for n in row))
        for name in row:
            lines.append(f"   - `{name}`: {', '.join(modules_of(name))}. May import: "
                         f"{', '.join(may_import(name)) or 'nothing of utcgen'}.")
    return "\n".join(lines)


def product_modules() -> list[str]:
    out = []
    for top in PRODUCT:
        for path in sorted((REPO / top).rglob("*.py")):
            parts = path.relative_to(REPO).with_suffix("").parts
            out.append(".".join(("utcgen", *(parts[:-1] if parts[-1] == "__init__" else parts))))
    return out


def test_every_module_is_in_a_layer() -> None:
    """The layers name packages, so each module inside one is bound by it; only the package's own
    `__init__` (the root API, and utcgen.pipeline, which registers the scenario types) stand outside."""
    layers = [m.strip() for row in LAYERS for m in re.split(r"[|:]", row)]
    outside = [m for m in product_modules() if m != "utcgen.pipeline"
               and not any(m == layer or m.startswith(layer + ".") for layer in layers)]
    assert not outside, f"modules in no layer of pyproject's layers contract: {outside}"
    data = {f"utcgen.{p.parent.name}" for p in REPO.glob("*/__init__.py") if p.parent.name not in (*PRODUCT, "tests")}
    sources = {s for c in CONTRACTS if c["type"] == "forbidden" for s in c["source_modules"]}
    assert data <= sources, f"data packages in no contract: {sorted(data - sources)}"
    assert SETTINGS.get("exclude_type_checking_imports") is True  # only imports that run count


def test_the_package_roots_import_only_what_they_say() -> None:
    """`utcgen/__init__.py` imports the API only under TYPE_CHECKING (its names load on first use);
    `utcgen/pipeline/__init__.py` imports only the scenario registry (so records know the built-in types)."""
    def runtime_imports(path: Path) -> set[str]:
        tree = ast.parse(path.read_text())
        guarded = {id(n) for node in ast.walk(tree) if isinstance(node, ast.If)
                   and "TYPE_CHECKING" in ast.unparse(node.test) for n in ast.walk(node)}
        return {"." * n.level + (n.module or "") + ("" if n.module else ",".join(a.name for a in n.names))
                for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.level and id(n) not in guarded}
    assert runtime_imports(REPO / "__init__.py") == set()
    assert runtime_imports(REPO / "pipeline" / "__init__.py") == {".scenarios"}


def test_architecture_lists_the_layers_of_the_contracts() -> None:
    """docs/architecture.md's layer list is the contracts' layers, each with the modules its folder holds and
    the packages it may import; a line that disagrees is named with what it should say."""
    text = ARCHITECTURE.read_text()
    assert LAYERS_BEGIN in text and LAYERS_END in text, f"{ARCHITECTURE}: no {LAYERS_BEGIN} ... {LAYERS_END} block"
    first = text[:text.index(LAYERS_BEGIN)].count("\n") + 2
    written = text[text.index(LAYERS_BEGIN) + len(LAYERS_BEGIN):text.index(LAYERS_END)].strip("\n").splitlines()
    expected = layers_section().splitlines()
    for number, (have, want) in enumerate(zip(written, expected), start=first):
        assert have == want, f"docs/architecture.md:{number} disagrees with the contracts and the tree:\n" \
                             f"  written:  {have}\n  expected: {want}"
    assert len(written) == len(expected), \
        f"docs/architecture.md:{first + min(len(written), len(expected))}: the layer list has {len(written)} " \
        f"lines, the contracts make {len(expected)}:\n{layers_section()}"


@pytest.mark.parametrize("name", [n for row in layer_rows() for n in row if n != "__main__"])
def test_package_docstring_says_what_it_may_import(name: str) -> None:
    """Each package's docstring has a line `May import: ...` naming exactly what the contracts allow it."""
    path = folder(name) / "__init__.py" if folder(name).is_dir() else folder(name).with_suffix(".py")
    doc = ast.get_docstring(ast.parse(path.read_text())) or ""
    found = MAY_IMPORT.findall(doc)
    assert len(found) == 1, f"{path.relative_to(REPO)}: its docstring needs one line 'May import: ...'"
    want = ", ".join(may_import(name)) or "nothing of utcgen"
    assert found[0].rstrip(".") == want, f"{path.relative_to(REPO)}: 'May import: {found[0]}' disagrees with the " \
                                         f"contracts: 'May import: {want}.'"


def test_imports_inside_functions_are_few_and_say_why() -> None:
    """An import inside a function hides a dependency: only a heavy or optional one, or one that keeps
    `utcgen --help` fast, may be made there, with a `# lazy: <reason>` comment on its line; at most 20."""
    lazy, unsaid = [], []
    for top in PRODUCT:
        for path in sorted((REPO / top).rglob("*.py")):
            lines = path.read_text().splitlines()
            tree = ast.parse("\n".join(lines))
            inner = {n.lineno: n for fn in ast.walk(tree) if isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef)
                     for n in ast.walk(fn) if isinstance(n, ast.Import | ast.ImportFrom)}
            inner.update({n.lineno: n for n in ast.walk(tree) if isinstance(n, ast.Call)
                          and ast.unparse(n.func).endswith("import_module")
                          and any(isinstance(f, ast.FunctionDef) for f in ast.walk(tree))
                          and n.col_offset > 0})
            for number in sorted(inner):
                where = f"{path.relative_to(REPO)}:{number}"
                (lazy if "# lazy:" in lines[number - 1] else unsaid).append(where)
    assert not unsaid, f"imports inside functions without a '# lazy: <reason>' comment: {unsaid}"
    assert len(lazy) <= 20, f"{len(lazy)} imports inside functions (at most 20): {lazy}"


def _circles(imports: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected groups of more than one module (Tarjan), each sorted: the import circles."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        on_stack.add(module)
        for other in imports.get(module, ()):
            if other not in index:
                visit(other)
                low[module] = min(low[module], low[other])
            elif other in on_stack:
                low[module] = min(low[module], index[other])
        if low[module] == index[module]:
            group = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                group.append(top)
                if top == module:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for module in sorted(imports):
        if module not in index:
            visit(module)
    return found


def test_no_module_imports_back_into_one_that_imports_it() -> None:
    """No import circle between modules, inside a package as between packages (the layers contract sees only the
    latter); imports under TYPE_CHECKING are left out, as they never run."""
    graph = grimp.build_graph("utcgen", exclude_type_checking_imports=True, cache_dir=None)
    imports = {m: set(graph.find_modules_directly_imported_by(m)) for m in graph.modules}
    assert len(imports) > 150, "the graph should hold every module of the package"
    assert _circles(imports) == []


def test_the_circle_finder_finds_a_circle() -> None:
    assert _circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _circles({"a": {"b"}, "b": set()}) == []
