"""benchmarks/code_shape.py counts what issue 43's closing note reports; checked on a small tree written here, where
every number is known: a cycle closed inside a function counts, one needing a TYPE_CHECKING import is apart, a
shared module naming a benchmark (by import or by string, before or after the move) counts, the face does not."""

from pathlib import Path

from benchmarks.code_shape import main

TREE = {
    "__init__.py": "",
    "cli.py": "from memeval.benchmarks.toy import command\n",
    "llm/__init__.py": "",
    "llm/a.py": "from memeval.llm import b\n",
    "llm/b.py": "def f():\n    from memeval.llm.a import x\n",
    "llm/c.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from memeval.llm.d import T\n",
    "llm/d.py": "from memeval.llm.c import y\n",
    "benchmarks/toy/__init__.py": "",
    "benchmarks/toy/command.py": "def register(sub):\n    sub.add_argument('--k')\n",
    "reports/__init__.py": "",
    "reports/table.py": ("from memeval.benchmarks import REGISTERED\nfrom memeval.benchmarks.toy import command\n"
                         "TASK = 'memeval.benchmarks.toy.task:Task'\n"),
    "memory/__init__.py": "",
    "memory/base.py": '"""Docstrings may name memeval.benchmarks.toy."""\nfrom memeval.data.locomo import Turn\n',
    "data/__init__.py": "",
    "data/locomo.py": "Turn = object\n",
    "sweep.py": "from memeval.rundir import DirectoryLock, identity_hash\n",
    "rundir.py": "DirectoryLock = identity_hash = None\n",
    "settings.py": "def build(parser):\n    parser.add_argument('--x')\n",
}


def _tree(root: Path) -> Path:
    for name, text in TREE.items():
        path = root / "memeval" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def test_every_count_on_a_tree_where_it_is_known(tmp_path):
    result = main(_tree(tmp_path), run_help=False)
    assert result["import_cycles"] == 1 and result["cycles"] == ["memeval.llm.a -> memeval.llm.b  (closed inside a function)"]
    assert result["type_only_import_cycles"] == 1 and "memeval.llm.c" in result["type_only_cycles"][0]
    # memory/base imports data/locomo, which the move puts in the benchmark: counted under its new name
    assert result["benchmark_imports"] == ["memeval.memory.base -> memeval.benchmarks.locomo.data",
                                           "memeval.reports.table -> memeval.benchmarks.toy.command"]
    assert result["benchmark_strings"] == ["memeval.reports.table:3 'memeval.benchmarks.toy.task'"]
    assert result["run_loop_modules"] == {"memeval.sweep": ["DirectoryLock"]}
    assert result["add_argument_calls"] == 2 and result["add_argument_calls_outside_generators"] == 1
    assert result["folder_cycles"] == 0 and result["help"] is None


def test_after_the_move_a_name_the_tree_has_is_its_own(tmp_path):
    """memeval.categories was LoCoMo's before the move and is the shared CategorySet module after it: in a tree
    with memeval/benchmarks/__init__.py, importing it is no benchmark import; a name gone from such a tree (a
    leftover old import) is still read under its new one."""
    files = {"__init__.py": "", "categories.py": "class CategorySet: ...\n",
             "benchmarks/__init__.py": "REGISTERED = ()\n", "benchmarks/locomo/__init__.py": "",
             "benchmarks/locomo/categories.py": "from memeval.categories import CategorySet\n",
             "scoring/__init__.py": "", "scoring/judge.py": "from memeval.categories import CategorySet\n"}
    for name, text in files.items():
        path = tmp_path / "memeval" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    assert main(tmp_path, run_help=False)["benchmark_imports"] == []


def test_a_run_kind_spelled_in_a_shared_module_counts(tmp_path):
    """A run kind the declarations name (a task's, an older spelling, a command writing its rows) written as a
    string in a shared module counts, exactly or in backticks; a docstring, the face and the benchmark do not."""
    files = {"__init__.py": "", "benchmarks/__init__.py": "REGISTERED = ('toy',)\n",
             "benchmarks/toy/__init__.py": ("BENCHMARK = Benchmark(name='toy', tasks={'toy run': RunKind('t', 'A', 'J', "
                                            "written_by=('toy import',))}, kind_aliases={'old toy': 'toy run'})\n"),
             "viewer.py": ('"""Reads `toy run` directories."""\nKIND = "toy run"\nOLD = "old toy"\n'
                           'ERROR = "expected a `toy import` directory"\nOTHER = "toy runs"\n'),
             "commands/__init__.py": "", "commands/view.py": "HELP = 'a `toy run` directory'\n"}
    for name, text in files.items():
        path = tmp_path / "memeval" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    result = main(tmp_path, run_help=False)
    assert result["run_kind_strings"] == ["memeval.viewer:2 'toy run'", "memeval.viewer:3 'old toy'",
                                          "memeval.viewer:4 'expected a `toy import` directory'"]
    assert result["run_kind_strings_in_shared_modules"] == 3


def test_the_llm_clients_shape_on_a_tree_where_it_is_known(tmp_path):
    """Issue 44's measures: a class of 201 lines counts and one of 200 does not, likewise a function of 61 and 60;
    `**kwargs` counts on the doors and what they call (a method through `self`, a class through its `__init__`, a
    function imported inside a function), not on a function off the path; a splat into a door counts wherever it
    is; a type-only cycle among memeval/llm/ modules is listed as such."""
    body = "    x = 1\n"
    files = {
        "__init__.py": "", "llm/__init__.py": "",
        "llm/client.py": ("def checked_client(backend, **kwargs):\n    return make_client(backend, **kwargs)\n\n\n"
                          "def make_client(backend, **options):\n    from memeval.llm.helper import build\n"
                          "    build()\n    return LLMClient(backend, **options)\n\n\n"
                          "class LLMClient:\n    def __init__(self, backend, **rest):\n        self.route()\n"
                          "    def route(self, **extra):\n        pass\n" + body * 196),  # class: 201 lines
        "llm/helper.py": "def build(**made):\n    pass\n\n\ndef unused(**off_path):\n" + body * 60,  # 61 lines
        "llm/sizes.py": "class Fits:\n" + body * 199 + "def fits():\n" + body * 59,  # 200 and 60 lines
        "llm/prices.py": "from memeval.llm.profiles import P\n",
        "llm/profiles.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from memeval.llm.prices import T\n",
        "api.py": "from memeval.llm.client import checked_client\n\n\ndef run(**settings):\n"
                  "    return checked_client('auto', **settings)\n",
    }
    for name, text in files.items():
        path = tmp_path / "memeval" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    result = main(tmp_path, run_help=False)
    assert result["llm_classes_over_200"] == ["201 lines memeval.llm.client.LLMClient"]
    assert result["llm_functions_over_60"] == ["61 lines memeval.llm.helper.unused"]
    assert result["llm_kwargs_parameters"] == [
        "memeval.llm.client.LLMClient.__init__(**rest)", "memeval.llm.client.LLMClient.route(**extra)",
        "memeval.llm.client.checked_client(**kwargs)", "memeval.llm.client.make_client(**options)",
        "memeval.llm.helper.build(**made)"]
    assert result["llm_kwargs_splats"] == ["memeval.api:5 checked_client(**settings)",
                                           "memeval.llm.client:2 make_client(**kwargs)",
                                           "memeval.llm.client:8 LLMClient(**options)"]
    assert result["llm_import_cycle_list"] == ["memeval.llm.prices -> memeval.llm.profiles  (type-only)"]
