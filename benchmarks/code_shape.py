"""The shape of the package, for closing notes of refactors (issue 43's "done when" is measured here).

    .venv/bin/python benchmarks/code_shape.py [--root TREE] [--before TREE] [--json]

`--root` is a source tree holding `memeval/` (default: this checkout); `--before` a second tree (a worktree at an
older commit) whose headline numbers are printed in a column beside the first's.

What is counted, and by which rule:
- modules, lines, longest functions; upward imports (the core reaching into `qa/` or `commands/`); the modules that
  spell a run directory's file names.
- import cycles between modules and between folders. Every `import` statement counts, also one inside a function
  (it runs when the function does); one under `if TYPE_CHECKING:` never runs, so cycles that need such an import
  are listed apart ("type-only"). A folder is a module's package (`memeval/llm/fit.py` is in `memeval.llm`, a
  package's `__init__` in itself); a top-level module (`memeval/cli.py`) is a folder of its own, so a loop running
  through one is still seen. The root `memeval/__init__.py` is left out.
- benchmark names in the shared machinery: a module outside `memeval.benchmarks` and outside the face
  (`memeval.commands`, `memeval.cli`, `memeval.api`) that imports a module inside `memeval.benchmarks.<name>`
  (the bare registry `memeval.benchmarks` is allowed: that is how shared code asks for benchmarks), or holds a
  string (not a docstring) naming one, dotted or slashed. Module names of a tree before the move are mapped to
  their names after it (`MOVES`), so the before number counts the same seams.
- run kinds in the shared machinery: a string (not a docstring) in such a module that is a run kind the benchmark
  declarations name (`tasks`, `kind_aliases`, `written_by`), or names one in backticks.
- run loops of their own: a module outside `memeval.rundir`, `memeval.engine` and `memeval.manifest` that imports
  the run directory's claim, lock or restart machinery (`DirectoryLock`, `claim`, `check`, `move_aside`,
  `LOCK_NAME`) or assembles a run manifest itself (`base_manifest`, `git_sha`, `package_versions`), i.e. claims,
  locks, resumes or writes a manifest instead of going through the engine.
- settings declared more than once: `add_argument(` calls in `memeval/`, all and outside the module that
  generates flags from the configurations' declarations (`GENERATORS`: memeval/settings.py), with `flag(`
  declarations beside them. `commands/arguments.py`'s shared flags (`--out`, `--data`, ...) count as written.
- `memeval --help`: a fresh `python -X importtime -m memeval --help` run from the tree; whether it imported numpy
  (or another heavy package) and how many memeval modules.
- the LLM client's shape (issue 44's "done when"), under `memeval/llm/`: classes over 200 lines and functions
  (methods and nested ones included) over 60, from `class`/`def` to their last line; import cycles among its
  modules, function-level and type-only ones listed with their kind; `**kwargs` parameters on the path from the
  CLI/API to the client: `make_client` / `checked_client` (CLIENT_DOORS) and every memeval function they call,
  transitively (a call resolved by name: a function of the same module or imported from memeval, `self.m()` a
  method of the same class, a class called is its `__init__`); and the calls anywhere in memeval that hand a door
  `**mapping` (settings travelling untyped).
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from itertools import islice
from pathlib import Path

import networkx as nx

TREE = Path(__file__).resolve().parent.parent
UPPER = ("memeval.qa", "memeval.commands", "memeval.cli")
CORE = ("memeval.scoring", "memeval.memaudit", "memeval.llm", "memeval.memory", "memeval.records",
        "memeval.rundir", "memeval.engine", "memeval.data", "memeval.reports")
RUN_FILES = ('"manifest.json"', '"answers.jsonl"', '"judgments.jsonl"')
BENCHMARKS = "memeval.benchmarks"
FACE = ("memeval.commands", "memeval.cli", "memeval.api")
RUN_LOOP_OWNERS = ("memeval.rundir", "memeval.engine", "memeval.manifest")
RUN_LOOP_NAMES = {"memeval.rundir": {"DirectoryLock", "claim", "check", "move_aside", "LOCK_NAME"},
                  "memeval.manifest": {"base_manifest", "git_sha", "package_versions"}}
GENERATORS = ("memeval.settings",)  # builds argparse arguments from the configurations' declarations
HEAVY = ("numpy", "pandas", "matplotlib", "scipy", "cvxpy", "highspy", "sklearn", "nltk", "anthropic")
CYCLE_LIMIT = 10_000  # simple cycles counted at most: past it the count is shown as "10000+"
# issue 43's move (old module or package -> new), so a tree before it is measured under the names after it
# (`git diff -M --name-status 45088f1 -- memeval` lists the renames)
MOVES = {
    "memeval.data.locomo": "memeval.benchmarks.locomo.data",
    "memeval.categories": "memeval.benchmarks.locomo.categories",
    "memeval.qa.locomo_run": "memeval.benchmarks.locomo.task",
    "memeval.qa.official": "memeval.benchmarks.locomo.paper_reader",
    "memeval.qa.importer": "memeval.benchmarks.locomo.imports",
    "memeval.qa.evermemos_reader": "memeval.benchmarks.locomo.evermemos_reader",
    "memeval.scoring.evermemos_judge": "memeval.benchmarks.locomo.evermemos_judge",
    "memeval.baselines": "memeval.benchmarks.locomo.baselines",
    "memeval.commands.locomo": "memeval.benchmarks.locomo.command",
    "memeval.reports.run_report": "memeval.benchmarks.locomo.report",
    "memeval.data.longmemeval": "memeval.benchmarks.longmemeval.data",
    "memeval.data.longmemeval_sample": "memeval.benchmarks.longmemeval.sample",
    "memeval.qa.longmemeval_run": "memeval.benchmarks.longmemeval.task",
    "memeval.scoring.longmemeval_judge": "memeval.benchmarks.longmemeval.judge",
    "memeval.scoring.longmemeval_metrics": "memeval.benchmarks.longmemeval.metrics",
    "memeval.baselines_longmemeval": "memeval.benchmarks.longmemeval.baselines",
    "memeval.reports.longmemeval": "memeval.benchmarks.longmemeval.report",
    "memeval.commands.longmemeval": "memeval.benchmarks.longmemeval.command",
    "memeval.natural.longmemeval_source": "memeval.benchmarks.longmemeval.natural_source",
    "memeval.graph80.study": "memeval.benchmarks.graph80.task",
    "memeval.graph80.generate": "memeval.benchmarks.graph80.data",
    "memeval.scoring.three_dim_judge": "memeval.benchmarks.graph80.judge",
    "memeval.reports.graph80": "memeval.benchmarks.graph80.report",
    "memeval.commands.graph80": "memeval.benchmarks.graph80.command",
    "memeval.graph80": "memeval.benchmarks.graph80",
    "memeval.audit": "memeval.benchmarks.locomo.audit",
    "memeval.published": "memeval.benchmarks.locomo.published",
    "memeval.scoring.keyed": "memeval.benchmarks.locomo.keyed",
    "memeval.scoring.calibration": "memeval.benchmarks.locomo.calibration",
    "memeval.reports.trust": "memeval.benchmarks.locomo.trust",
    "memeval.commands.trust": "memeval.benchmarks.locomo.trust_command",
    "memeval.reports.publication": "memeval.publication.tables",
    "memeval.reports.headline": "memeval.publication.headline",
}
MODULE_TEXT = re.compile(r"\bmemeval(?:[./][A-Za-z_]\w*)+")
LLM = "memeval.llm"
CLIENT_DOORS = ("memeval.llm.client.make_client", "memeval.llm.client.checked_client")
CLASS_LINES, FUNCTION_LINES = 200, 60


@dataclass(frozen=True)
class Import:
    source: str
    line: int
    targets: tuple[str, ...]  # the memeval modules and names the statement reaches, most specific last
    names: tuple[str, ...]  # what `from X import ...` takes
    where: str  # "top", "function" or "type_checking"


def renamed(name: str) -> str:
    for old in sorted(MOVES, key=len, reverse=True):
        if name == old or name.startswith(old + "."):
            return MOVES[old] + name[len(old):]
    return name


def within(name: str, prefixes) -> bool:
    return any(name == p or name.startswith(p + ".") for p in prefixes)


def module_name(path: Path, root: Path) -> str:
    parts = path.relative_to(root.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _from_module(node: ast.ImportFrom, name: str, is_package: bool) -> str:
    """The absolute module a `from ... import` in module `name` reads (relative imports resolved)."""
    base = node.module or ""
    if not node.level:
        return base
    package = name.split(".") if is_package else name.split(".")[:-1]
    return ".".join(package[: len(package) - node.level + 1] + ([base] if base else []))


def imports(tree: ast.AST, name: str, is_package: bool) -> list[Import]:
    """Every import statement reaching memeval, with where it runs: at import, inside a function, or never."""
    found: list[Import] = []

    def visit(node: ast.AST, where: str) -> None:
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("memeval"):
                    found.append(Import(name, node.lineno, (alias.name,), (), where))
            return
        if isinstance(node, ast.ImportFrom):
            base = _from_module(node, name, is_package)
            if base.startswith("memeval"):
                names = tuple(a.name for a in node.names)
                found.append(Import(name, node.lineno, (base, *(f"{base}.{n}" for n in names)), names, where))
            return
        if isinstance(node, ast.If) and _type_checking(node.test):
            for child in node.body:
                visit(child, "type_checking")
            for child in node.orelse:
                visit(child, where)
            return
        inner = "function" if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda) else where
        for child in ast.iter_child_nodes(node):
            visit(child, "type_checking" if where == "type_checking" else inner)

    visit(tree, "top")
    return found


def run_kinds(trees: dict) -> set[str]:
    """The run kinds a tree's benchmark declarations name (`tasks` and `kind_aliases` keys, `RunKind(written_by=)`),
    read from the `Benchmark(...)` calls in memeval/benchmarks/<name>/__init__.py."""
    kinds = set()
    for name, tree_ in trees.items():
        if not re.fullmatch(rf"{BENCHMARKS}\.\w+", name):
            continue
        for node in ast.walk(tree_):
            if isinstance(node, ast.keyword) and node.arg in ("tasks", "kind_aliases") and isinstance(node.value,
                                                                                                        ast.Dict):
                kinds |= {k.value for k in node.value.keys if isinstance(k, ast.Constant)}
            elif isinstance(node, ast.keyword) and node.arg == "written_by" and isinstance(node.value, ast.Tuple):
                kinds |= {e.value for e in node.value.elts if isinstance(e, ast.Constant)}
    return {k for k in kinds if isinstance(k, str)}


def docstrings(tree: ast.AST) -> set[int]:
    ids = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                ids.add(id(first.value))
    return ids


def folder(module: str, packages: set[str]) -> str:
    if module in packages:
        return module
    parent = module.rsplit(".", 1)[0]
    return module if parent == "memeval" else parent


def cycles(graph: nx.DiGraph) -> tuple[int | str, list[list[str]], int]:
    """(number of simple cycles, the shortest ones, nodes in a loop); past CYCLE_LIMIT the count is a floor."""
    count = sum(1 for _ in islice(nx.simple_cycles(graph), CYCLE_LIMIT))
    rotated = [c[c.index(min(c)):] + c[:c.index(min(c))] for c in nx.simple_cycles(graph, length_bound=4)]
    shortest = sorted(rotated, key=lambda c: (len(c), c))[:12]
    looped = sum(len(c) for c in nx.strongly_connected_components(graph) if len(c) > 1)
    return (f"{CYCLE_LIMIT}+" if count == CYCLE_LIMIT else count), shortest, looped


def cycle_text(cycle: list[str], kinds: dict) -> str:
    steps = list(zip(cycle, cycle[1:] + cycle[:1], strict=True))
    text = " -> ".join(cycle)
    if all("top" in kinds[s] for s in steps):
        return text
    if any(kinds[s] <= {"type_checking"} for s in steps):
        return text + "  (type-only)"
    return text + "  (closed inside a function)"


def help_imports(tree: Path) -> dict:
    """What a fresh `memeval --help` imports when run from `tree`."""
    env = {**os.environ, "PYTHONPATH": str(tree)}
    done = subprocess.run([sys.executable, "-X", "importtime", "-m", "memeval", "--help"], cwd=tree, env=env,
                          capture_output=True, text=True, check=False)
    loaded = {line.split("|")[-1].strip() for line in done.stderr.splitlines() if line.startswith("import time:")}
    return {"exit": done.returncode, "numpy": "numpy" in loaded,
            "heavy": sorted(h for h in HEAVY if h in loaded),
            "memeval_modules": sum(1 for m in loaded if m == "memeval" or m.startswith("memeval."))}


def main(tree: Path = TREE, run_help: bool = True) -> dict:
    root = tree / "memeval"
    files = sorted(root.rglob("*.py"))
    modules = {module_name(p, root): p for p in files}

    after_move = (root / "benchmarks" / "__init__.py").is_file()

    def moved(name: str) -> str:
        """A tree before the move is read under the new names; in a tree after it, a name the tree has is its own
        (memeval.categories is the shared CategorySet module there, LoCoMo's before it)."""
        if after_move and (name in modules or name.rsplit(".", 1)[0] in modules):
            return name
        return renamed(name)

    packages = {module_name(p, root) for p in files if p.name == "__init__.py"}
    trees = {name: ast.parse(path.read_text(encoding="utf-8")) for name, path in modules.items()}
    statements = [i for name, t in trees.items() for i in imports(t, name, name in packages)]

    kinds: dict[tuple[str, str], set[str]] = {}
    for imp in statements:
        for target in imp.targets:
            if target in modules and target != imp.source and "memeval" not in (target, imp.source):
                kinds.setdefault((imp.source, target), set()).add(imp.where)
    runtime = nx.DiGraph([e for e, k in kinds.items() if k - {"type_checking"}])
    runtime.add_nodes_from(m for m in modules if m != "memeval")
    typed = nx.DiGraph(list(kinds))
    folder_kinds: dict[tuple[str, str], set[str]] = {}
    for (a, b), k in kinds.items():
        fa, fb = folder(a, packages), folder(b, packages)
        if fa != fb:
            folder_kinds.setdefault((fa, fb), set()).update(k)
    folders = nx.DiGraph([e for e, k in folder_kinds.items() if k - {"type_checking"}])
    folders_typed = nx.DiGraph(list(folder_kinds))

    n_cycles, shortest, looped = cycles(runtime)
    n_typed, shortest_typed, _ = cycles(typed)
    n_folder, folder_shortest, looped_folders = cycles(folders)
    n_folder_typed, _, _ = cycles(folders_typed)

    shared_imports = set()
    for imp in statements:
        if within(moved(imp.source), (BENCHMARKS, *FACE)):
            continue
        reached = [moved(t) for t in imp.targets if t in modules]
        inside = [t for t in reached if within(t, (BENCHMARKS,)) and t != BENCHMARKS]
        shared_imports |= {f"{moved(imp.source)} -> {t}" for t in inside if not any(u.startswith(t + ".") for u in inside)}
    shared_imports = sorted(shared_imports)
    shared_strings = []
    kinds_declared = run_kinds(trees)
    kind_strings = []
    run_loops: dict[str, list[str]] = {}
    add_arguments: dict[str, int] = {}
    flags = 0
    functions = []
    naming = {}
    for name, tree_ in trees.items():
        new = moved(name)
        skip = docstrings(tree_)
        for node in ast.walk(tree_):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                functions.append((node.end_lineno - node.lineno + 1, f"{name}.{node.name}"))
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute | ast.Name):
                called = node.func.attr if isinstance(node.func, ast.Attribute) else node.func.id
                if called == "add_argument":
                    add_arguments[name] = add_arguments.get(name, 0) + 1
                elif called == "flag" and name not in ("memeval.invocation", "memeval.settings"):
                    flags += 1
            elif (isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in skip
                  and not within(new, (BENCHMARKS, *FACE))):
                for hit in MODULE_TEXT.findall(node.value):
                    dotted = moved(hit.replace("/", ".").removesuffix(".py"))
                    if within(dotted, (BENCHMARKS,)) and dotted != BENCHMARKS:
                        shared_strings.append(f"{new}:{node.lineno} {hit!r}")
                if node.value in kinds_declared or any(f"`{k}`" in node.value for k in kinds_declared):
                    kind_strings.append(f"{new}:{node.lineno} {node.value[:60]!r}")
        if not within(name, RUN_LOOP_OWNERS):
            for imp in statements:
                if imp.source == name and imp.targets[0] in RUN_LOOP_NAMES:
                    taken = sorted(RUN_LOOP_NAMES[imp.targets[0]] & set(imp.names))
                    if taken:
                        run_loops.setdefault(new, []).extend(taken)
        hits = sum(modules[name].read_text(encoding="utf-8").count(s) for s in RUN_FILES)
        if hits:
            naming[name] = hits
    upward = sorted(f"{a} -> {b}" for a, b in runtime.edges if a.startswith(CORE) and b.startswith(UPPER))
    functions.sort(reverse=True)
    outside = {m: n for m, n in add_arguments.items() if not within(m, GENERATORS)}
    return {
        "modules": len(modules), "lines": sum(len(p.read_text().splitlines()) for p in files),
        "longest_functions": [f"{n} lines {f}" for n, f in functions[:8]],
        "functions_over_60_lines": sum(1 for n, _ in functions if n > 60),
        "import_cycles": n_cycles, "modules_in_import_cycles": looped,
        "cycles": [cycle_text(c, kinds) for c in shortest],
        "type_only_import_cycles": _minus(n_typed, n_cycles),
        "type_only_cycles": [cycle_text(c, kinds) for c in shortest_typed
                             if not all(runtime.has_edge(a, b) for a, b in zip(c, c[1:] + c[:1], strict=True))][:6],
        "folder_cycles": n_folder, "folders_in_cycles": looped_folders,
        "folder_cycle_list": [cycle_text(c, folder_kinds) for c in folder_shortest],
        "type_only_folder_cycles": _minus(n_folder_typed, n_folder),
        "benchmark_imports_in_shared_modules": len(shared_imports),
        "shared_modules_importing_a_benchmark": len({s.split(" -> ")[0] for s in shared_imports}),
        "benchmark_imports": shared_imports,
        "benchmark_strings_in_shared_modules": len(shared_strings), "benchmark_strings": shared_strings,
        "run_kind_strings_in_shared_modules": len(kind_strings), "run_kind_strings": kind_strings,
        "run_loops_of_their_own": len(run_loops),
        "run_loop_modules": {m: sorted(set(n)) for m, n in sorted(run_loops.items())},
        "add_argument_calls": sum(add_arguments.values()),
        "add_argument_calls_outside_generators": sum(outside.values()),
        "add_argument_by_module": dict(sorted(outside.items(), key=lambda kv: -kv[1])),
        "flag_declarations": flags,
        "help": help_imports(tree) if run_help else None,
        "upward_imports": upward, "modules_naming_run_files": naming,
        **llm_shape(trees, packages, modules, kinds),
    }


def _definitions(trees: dict[str, ast.AST]) -> dict[str, tuple[ast.AST, str, str | None]]:
    """Every function and class by qualified name (module.Class.method): (node, module, enclosing class)."""
    found = {}

    def visit(node: ast.AST, prefix: str, module: str, cls: str | None) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.ClassDef):
                found[f"{prefix}.{child.name}"] = (child, module, cls)
                visit(child, f"{prefix}.{child.name}", module, f"{prefix}.{child.name}")
            elif isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                found[f"{prefix}.{child.name}"] = (child, module, cls)
                visit(child, f"{prefix}.{child.name}", module, None)
            else:
                visit(child, prefix, module, cls)

    for name, tree_ in trees.items():
        visit(tree_, name, name, None)
    return found


def _bound_names(tree_: ast.AST, name: str, is_package: bool, modules: dict) -> dict[str, str]:
    """What a module's names stand for: `from memeval.x import f` binds f to memeval.x.f, `import memeval.x as m`
    binds m to memeval.x (imports inside functions included: they bind when the function runs)."""
    bound = {}
    for node in ast.walk(tree_):
        if isinstance(node, ast.ImportFrom):
            base = _from_module(node, name, is_package)
            if base.startswith("memeval"):
                for alias in node.names:
                    bound[alias.asname or alias.name] = f"{base}.{alias.name}"
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("memeval") and alias.asname:
                    bound[alias.asname] = alias.name
    return bound


def llm_shape(trees: dict[str, ast.AST], packages: set[str], modules: dict, kinds: dict) -> dict:
    """Issue 44's measures of memeval/llm/ (see the module's docstring)."""
    defs = _definitions(trees)
    in_llm = {q: d for q, d in defs.items() if within(d[1], (LLM,))}
    size = {q: d[0].end_lineno - d[0].lineno + 1 for q, d in in_llm.items()}
    classes = sorted(((size[q], q) for q, d in in_llm.items() if isinstance(d[0], ast.ClassDef)
                      and size[q] > CLASS_LINES), reverse=True)
    functions = sorted(((size[q], q) for q, d in in_llm.items() if not isinstance(d[0], ast.ClassDef)
                        and size[q] > FUNCTION_LINES), reverse=True)
    bound = {name: _bound_names(t, name, name in packages, modules) for name, t in trees.items()}

    def resolve(target: str) -> str | None:
        if target in defs and isinstance(defs[target][0], ast.ClassDef):
            return f"{target}.__init__" if f"{target}.__init__" in defs else None
        return target if target in defs else None

    def callees(qualified: str) -> set[str]:
        node, module, cls = defs[qualified]
        out = set()
        for call in ast.walk(node):
            if not isinstance(call, ast.Call):
                continue
            f, target = call.func, None
            if isinstance(f, ast.Name):
                target = bound[module].get(f.id) or f"{module}.{f.id}"
            elif isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name):
                if f.value.id in ("self", "cls") and cls:
                    target = f"{cls}.{f.attr}"
                elif f.value.id in bound[module]:
                    target = f"{bound[module][f.value.id]}.{f.attr}"
                elif f"{module}.{f.value.id}" in defs:
                    target = f"{module}.{f.value.id}.{f.attr}"
            resolved = resolve(target) if target else None
            if resolved and resolved != qualified:
                out.add(resolved)
        return out

    path, todo = set(), [d for d in CLIENT_DOORS if d in defs]
    while todo:
        q = todo.pop()
        if q not in path:
            path.add(q)
            todo.extend(callees(q))
    kwargs = sorted(f"{q}(**{defs[q][0].args.kwarg.arg})" for q in path
                    if isinstance(defs[q][0], ast.FunctionDef | ast.AsyncFunctionDef) and defs[q][0].args.kwarg)
    doors = {d.rsplit(".", 1)[1] for d in CLIENT_DOORS} | {"LLMClient"}
    splats = sorted(f"{module}:{call.lineno} {ast.unparse(call.func)}(**{ast.unparse(k.value)})"
                    for module, t in trees.items() for call in ast.walk(t) if isinstance(call, ast.Call)
                    and (getattr(call.func, "id", None) or getattr(call.func, "attr", None)) in doors
                    for k in call.keywords if k.arg is None)
    llm_kinds = {e: k for e, k in kinds.items() if within(e[0], (LLM,)) and within(e[1], (LLM,))}
    graph = nx.DiGraph(list(llm_kinds))
    loops = [cycle_text(c[c.index(min(c)):] + c[:c.index(min(c))], llm_kinds)
             for c in islice(nx.simple_cycles(graph), CYCLE_LIMIT)]
    return {"llm_classes_over_200_lines": len(classes),
            "llm_classes_over_200": [f"{n} lines {q}" for n, q in classes],
            "llm_functions_over_60_lines": len(functions),
            "llm_functions_over_60": [f"{n} lines {q}" for n, q in functions],
            "llm_client_path_functions": len(path), "llm_client_path": sorted(path),
            "llm_kwargs_on_client_path": len(kwargs), "llm_kwargs_parameters": kwargs,
            "llm_kwargs_splats_into_client": len(splats), "llm_kwargs_splats": splats,
            "llm_import_cycles": len(loops), "llm_import_cycle_list": sorted(loops)}


def _minus(a: int | str, b: int | str) -> int | str:
    return a - b if isinstance(a, int) and isinstance(b, int) else "?"


HEADLINE = ("modules", "lines", "import_cycles", "modules_in_import_cycles", "type_only_import_cycles",
            "folder_cycles", "folders_in_cycles", "type_only_folder_cycles", "benchmark_imports_in_shared_modules",
            "shared_modules_importing_a_benchmark", "benchmark_strings_in_shared_modules",
            "run_kind_strings_in_shared_modules", "run_loops_of_their_own",
            "add_argument_calls", "add_argument_calls_outside_generators", "flag_declarations",
            "llm_classes_over_200_lines", "llm_functions_over_60_lines", "llm_kwargs_on_client_path",
            "llm_kwargs_splats_into_client", "llm_import_cycles")


def headline(result: dict) -> dict:
    row = {k: result[k] for k in HEADLINE}
    if result["help"] is not None:
        row["help_imports_numpy"] = result["help"]["numpy"]
        row["help_memeval_modules"] = result["help"]["memeval_modules"]
    return row


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, default=TREE, help="the source tree holding memeval/")
    parser.add_argument("--before", type=Path, help="a second tree, shown in a column beside --root's")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--no-help-run", action="store_true", help="skip the `memeval --help` subprocess")
    args = parser.parse_args()
    result = main(args.root.resolve(), not args.no_help_run)
    before = main(args.before.resolve(), not args.no_help_run) if args.before else None
    if args.json:
        print(json.dumps({"now": result, "before": before} if before else result, indent=2))
    else:
        for key, value in result.items():
            print(f"{key}: {json.dumps(value, indent=2) if isinstance(value, list | dict) else value}")
        if before:
            now, then = headline(result), headline(before)
            width = max(map(len, now))
            print(f"\n{'':{width}}  {'before':>8}  {'now':>8}")
            for key in now:
                print(f"{key:{width}}  {then.get(key)!s:>8}  {now[key]!s:>8}")
