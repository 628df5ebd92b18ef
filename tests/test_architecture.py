"""The shape of the code base: stages import one way, the core imports no stage, bench/ uses public names.

Imports are read with `ast` from every module of core/, ingest/, index/, assistant/ and ui.py, at module
level and inside functions alike (a function-level import is still a dependency, only a later one).
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("core", "ingest", "index", "assistant")
STAGES = ("ingest", "index", "assistant", "ui")


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _project_modules() -> dict[str, Path]:
    files = [p for pkg in PACKAGES for p in sorted((ROOT / pkg).rglob("*.py"))] + [ROOT / "ui.py"]
    return {_module_name(p): p for p in files}


def _imported_names(path: Path, module: str) -> list[tuple[str, str | None]]:
    """(module, imported name or None) for every import statement anywhere in the file."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    is_package = path.name == "__init__.py"
    out: list[tuple[str, str | None]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.extend((alias.name, None) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = module.split(".")
                anchor = anchor[: len(anchor) - node.level + (1 if is_package else 0)]
                base = ".".join([*anchor, base] if base else anchor)
            out.extend((base, alias.name) for alias in node.names)
    return out


def _resolve(name: str, modules: dict[str, Path]) -> str | None:
    """The project module a dotted name refers to (its longest known prefix), or None for third-party code."""
    while name and name not in modules:
        name = name.rpartition(".")[0]
    return name or None


def import_graph() -> dict[str, set[str]]:
    modules = _project_modules()
    graph: dict[str, set[str]] = {}
    for module, path in modules.items():
        deps: set[str] = set()
        for base, name in _imported_names(path, module):
            full = f"{base}.{name}" if name and name != "*" else base
            target = full if full in modules else _resolve(base, modules)
            if target and target != module:
                deps.add(target)
        graph[module] = deps
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle as a path that starts and ends at the same module, or None."""
    state: dict[str, int] = {}  # 1 = on the current path, 2 = finished
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for dep in sorted(graph.get(node, ())):
            if state.get(dep) == 1:
                return [*path[path.index(dep):], dep]
            if dep not in state and (cycle := visit(dep)):
                return cycle
        path.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (cycle := visit(node)):
            return cycle
    return None


def test_the_project_import_graph_has_no_cycle() -> None:
    cycle = find_cycle(import_graph())
    assert cycle is None, "import cycle: " + " → ".join(cycle or [])


def test_the_cycle_finder_reports_a_cycle_it_is_given() -> None:
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set(), "c": {"a", "b"}}) is None


def test_function_level_imports_count_as_dependencies() -> None:
    graph = import_graph()
    # assistant/cli.py starts the app with a function-level `import ui`.
    assert "ui" in graph["assistant.cli"]


def test_core_imports_none_of_the_stages() -> None:
    graph = import_graph()
    offending = {
        module: sorted(d for d in deps if d.split(".")[0] in STAGES)
        for module, deps in graph.items()
        if module.split(".")[0] == "core"
    }
    assert not {m: d for m, d in offending.items() if d}, offending


# Each stage may import the core and the stages before it, never a later one (the CLI starts the app).
LATER = {"ingest": ("index", "assistant", "ui"), "index": ("assistant", "ui"), "assistant": ("ui",)}


def test_no_stage_imports_a_later_stage() -> None:
    graph = import_graph()
    backwards = sorted(
        f"{module} → {dep}"
        for module, deps in graph.items()
        for dep in deps
        if dep.split(".")[0] in LATER.get(module.split(".")[0], ()) and (module, dep) != ("assistant.cli", "ui")
    )
    assert backwards == [], backwards


def test_nothing_imports_the_cli() -> None:
    graph = import_graph()
    importers = sorted(m for m, deps in graph.items() if "assistant.cli" in deps)
    assert importers == [], f"the CLI is the outer shell; these modules import it: {importers}"


def test_bench_scripts_import_no_private_project_names() -> None:
    modules = _project_modules()
    private: list[str] = []
    for path in sorted((ROOT / "bench").glob("*.py")):
        for base, name in _imported_names(path, f"bench.{path.stem}"):
            if _resolve(base, modules) is None:
                continue  # the standard library, third-party code, or bench's own helpers
            dotted = f"{base}.{name}" if name else base
            if any(part.startswith("_") and not part.startswith("__") for part in dotted.split(".")):
                private.append(f"{path.name}: {dotted}")
    assert private == [], f"bench/ should use public functions only: {private}"


def test_bench_scripts_touch_no_private_attributes_of_project_objects() -> None:
    """A benchmark that reaches into `searcher._cache` breaks silently when the class changes; it goes
    through the public method the class offers for it instead."""
    private: list[str] = []
    for path in sorted((ROOT / "bench").glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if not isinstance(node, ast.Attribute):
                continue
            if not node.attr.startswith("_") or node.attr.startswith("__"):
                continue
            if isinstance(node.value, ast.Name) and node.value.id in {"self", "cls"}:
                continue  # the script's own classes
            private.append(f"{path.name}:{node.lineno}: .{node.attr}")
    assert private == [], f"bench/ should use public methods only: {private}"


# --- one way to put a file into place ----------------------------------------------------------------------
# core/files.py writes a temp file and renames it into place (removing it on failure); index/swap.py swaps
# whole index directories. Any other product module that renames files on its own is a second copy of that
# helper, with its own ways to leave half-written or temp files behind.
RENAMERS_ALLOWED = {"core.files", "index.swap"}


def _renames(path: Path) -> list[int]:
    """Lines that rename a file: os.replace/os.rename/shutil.move, or a one-argument `.replace`/`.rename` call
    (Path.replace(target); str.replace always takes two)."""
    lines = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
            continue
        owner = node.func.value.id if isinstance(node.func.value, ast.Name) else None
        attr = node.func.attr
        if (owner, attr) in {("os", "replace"), ("os", "rename"), ("shutil", "move")} or (
            attr in {"replace", "rename"} and owner not in {"os", "shutil"} and len(node.args) == 1 and not node.keywords
        ):
            lines.append(node.lineno)
    return lines


def test_only_the_write_helper_and_the_index_swap_rename_files_into_place() -> None:
    renamers = {module: lines for module, path in _project_modules().items() if (lines := _renames(path))}
    assert set(renamers) <= RENAMERS_ALLOWED, {m: ln for m, ln in renamers.items() if m not in RENAMERS_ALLOWED}
    assert len(renamers) <= 2


def test_the_rename_finder_sees_each_way_of_renaming(tmp_path: Path) -> None:
    source = tmp_path / "m.py"
    source.write_text("import os, shutil\nos.replace(a, b)\ntmp.replace(path)\np.rename(q)\nshutil.move(a, b)\n"
                      "text.replace('a', 'b')\n", encoding="utf-8")
    assert _renames(source) == [2, 3, 4, 5]


# The shells (the CLI, the app's wiring and handlers) reach the stages through the front object,
# assistant/guide.py: none of them runs a stage's entry point itself, so every operation has one
# implementation and a setting reaches each shell the same way.
SHELLS = ("assistant.cli", "ui", "assistant.app")
STAGE_ENTRY_POINTS = {
    "index.build", "index.search", "ingest.pipeline", "ingest.listsync", "ingest.refresh", "assistant.jobs",
    "assistant.chain.Assistant", "assistant.planner.plan_next", "assistant.digest.DigestMaker",
}


def test_the_shells_call_the_stages_through_the_front_object() -> None:
    modules = _project_modules()
    direct: list[str] = []
    for module, path in modules.items():
        if not any(module == shell or module.startswith(shell + ".") for shell in SHELLS):
            continue
        for base, name in _imported_names(path, module):
            full = f"{base}.{name}" if name else base
            if {full, base} & STAGE_ENTRY_POINTS:
                direct.append(f"{module}: {full}")
    assert direct == [], f"go through assistant.guide.Guide instead: {direct}"
