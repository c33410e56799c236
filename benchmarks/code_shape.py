"""The shape of the package, for closing notes of refactors: modules, longest functions, import cycles (counting
imports inside functions too), upward imports (the core reaching into `qa/` or `commands/`) and the modules that
spell a run directory's file names.

    .venv/bin/python benchmarks/code_shape.py [--json]
"""

from __future__ import annotations

import ast
import json
import sys
from pathlib import Path

import networkx as nx

ROOT = Path(__file__).resolve().parent.parent / "memeval"
UPPER = ("memeval.qa", "memeval.commands", "memeval.cli")
CORE = ("memeval.scoring", "memeval.memaudit", "memeval.llm", "memeval.memory", "memeval.records",
        "memeval.rundir", "memeval.engine", "memeval.data", "memeval.reports")
RUN_FILES = ('"manifest.json"', '"answers.jsonl"', '"judgments.jsonl"')


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports(tree: ast.AST, name: str) -> set[str]:
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            base = node.module
            if node.level:
                base = ".".join(name.split(".")[: -node.level] + [node.module])
            out.add(base)
            out |= {f"{base}.{a.name}" for a in node.names}
    return {m for m in out if m.startswith("memeval")}


def main() -> dict:
    files = sorted(ROOT.rglob("*.py"))
    modules = {module_name(p): p for p in files}
    graph = nx.DiGraph()
    functions = []
    naming = {}
    for name, path in modules.items():
        text = path.read_text(encoding="utf-8")
        tree = ast.parse(text)
        graph.add_node(name)
        for target in imports(tree, name):
            if target in modules and target != name:
                graph.add_edge(name, target)
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                functions.append((node.end_lineno - node.lineno + 1, f"{name}.{node.name}"))
        hits = sum(text.count(s) for s in RUN_FILES)
        if hits:
            naming[name] = hits
    cycles = [c for c in nx.simple_cycles(graph) if len(c) > 1 and not any(m == "memeval" for m in c)]
    upward = sorted(f"{a} -> {b}" for a, b in graph.edges if a.startswith(CORE) and b.startswith(UPPER))
    functions.sort(reverse=True)
    return {"modules": len(modules), "lines": sum(len(p.read_text().splitlines()) for p in files),
            "longest_functions": [f"{n} lines {f}" for n, f in functions[:8]],
            "functions_over_60_lines": sum(1 for n, _ in functions if n > 60),
            "import_cycles": len(cycles), "cycles": [" -> ".join(c) for c in sorted(cycles, key=len)[:10]],
            "upward_imports": upward, "modules_naming_run_files": naming}


if __name__ == "__main__":
    result = main()
    if "--json" in sys.argv:
        print(json.dumps(result, indent=2))
    else:
        for key, value in result.items():
            print(f"{key}: {json.dumps(value, indent=2) if isinstance(value, list | dict) else value}")
