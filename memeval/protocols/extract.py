"""Templates out of a peer's Python source, by parsing it (`ast`): the file is never imported or run (a YAML
file, EverMemOS's, is read with `yaml.safe_load`, as that project reads it).

Each extractor knows where its file keeps its prompts (a module constant, a string assigned in a branch of a
function) and returns them as `str.format` templates exactly as the file would fill them in; an f-string becomes a
template with a named field per expression name. A file laid out otherwise raises `ExtractionError` naming what
was not found, so a changed upstream file fails loudly instead of yielding a wrong prompt.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator


class ExtractionError(ValueError):
    """The source does not hold the template where its pinned layout keeps it."""


def template_of(node: ast.AST) -> str | None:
    """A string literal, an f-string whose fields are plain names, or a `+` of those, as a format template."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        parts = []
        for value in node.values:
            if isinstance(value, ast.Constant) and isinstance(value.value, str):
                parts.append(value.value.replace("{", "{{").replace("}", "}}"))
            elif (isinstance(value, ast.FormattedValue) and isinstance(value.value, ast.Name)
                  and value.conversion == -1 and value.format_spec is None):
                parts.append("{" + value.value.id + "}")
            else:
                return None
        return "".join(parts)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = template_of(node.left), template_of(node.right)
        return None if left is None or right is None else left + right
    return None


def module_constants(tree: ast.Module) -> dict[str, str]:
    """Top-level `NAME = "..."` strings (the last assignment wins, as when the module runs)."""
    found = {}
    for statement in tree.body:
        if isinstance(statement, ast.Assign) and len(statement.targets) == 1 \
                and isinstance(statement.targets[0], ast.Name):
            text = template_of(statement.value)
            if text is not None:
                found[statement.targets[0].id] = text
    return found


def function(tree: ast.Module, name: str, origin: str) -> ast.FunctionDef:
    for statement in tree.body:
        if isinstance(statement, ast.FunctionDef) and statement.name == name:
            return statement
    raise ExtractionError(f"{origin}: no function {name}()")


def assigned(statements: list[ast.stmt], target: str) -> str | None:
    """The string first assigned to `target` among these statements (not inside nested blocks)."""
    for statement in statements:
        if isinstance(statement, ast.Assign) and any(isinstance(t, ast.Name) and t.id == target
                                                     for t in statement.targets):
            text = template_of(statement.value)
            if text is not None:
                return text
    return None


def if_chain(statement: ast.If) -> Iterator[ast.If]:
    """An `if / elif / elif ...` chain, one `If` node per branch."""
    while True:
        yield statement
        if len(statement.orelse) == 1 and isinstance(statement.orelse[0], ast.If):
            statement = statement.orelse[0]
        else:
            return


def names_in(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


def strings_compared(test: ast.AST) -> list[str]:
    """`x == 'a'` → ['a']; `x in ['a', 'b']` → ['a', 'b']."""
    out = []
    for node in ast.walk(test):
        if isinstance(node, ast.Compare):
            for comparator in node.comparators:
                if isinstance(comparator, ast.Constant) and isinstance(comparator.value, str):
                    out.append(comparator.value)
                elif isinstance(comparator, (ast.List, ast.Tuple, ast.Set)):
                    out += [e.value for e in comparator.elts if isinstance(e, ast.Constant)
                            and isinstance(e.value, str)]
    return out


def parse(source: str, origin: str) -> ast.Module:
    try:
        return ast.parse(source)
    except SyntaxError as exc:
        raise ExtractionError(f"{origin}: not Python source ({exc.msg}, line {exc.lineno})") from None


def require(found: dict[str, str], wanted: tuple[str, ...], origin: str) -> dict[str, str]:
    missing = [w for w in wanted if w not in found]
    if missing:
        raise ExtractionError(f"{origin}: no template for {', '.join(missing)}")
    return {w: found[w] for w in wanted}


def require_fields(templates: dict[str, str], fields: dict[str, tuple[str, ...]], origin: str) -> None:
    """Each template must have the fields its caller fills in (named, or `{}` counted positionally)."""
    import string

    for name, wanted in fields.items():
        have = [f for _, f, _, _ in string.Formatter().parse(templates[name]) if f is not None]
        expected = list(wanted)
        if sorted(have) != sorted(expected):
            raise ExtractionError(f"{origin}: template {name} has fields {have}, expected {expected}")


# ---- the pinned files -------------------------------------------------------------------------------------------

MEM0_FIELDS = ("question", "gold_answer", "generated_answer")


def mem0_judge(source: str, origin: str = "llm_judge.py") -> dict[str, str]:
    """`ACCURACY_PROMPT`, a module constant filled with `.format(question=, gold_answer=, generated_answer=)`."""
    constants = module_constants(parse(source, origin))
    found = require({"accuracy": constants["ACCURACY_PROMPT"]} if "ACCURACY_PROMPT" in constants else {},
                    ("accuracy",), origin)
    require_fields(found, {"accuracy": MEM0_FIELDS}, origin)
    return found


LONGMEMEVAL_TYPES = ("single-session-user", "single-session-assistant", "multi-session", "temporal-reasoning",
                     "knowledge-update", "single-session-preference")
ABSTENTION = "abstention"


def longmemeval_judge(source: str, origin: str = "evaluate_qa.py") -> dict[str, str]:
    """`get_anscheck_prompt`: under `if not abstention`, an if/elif chain on `task` assigning `template` per
    question type; in its `else`, the abstention template. Each is filled positionally (question, answer,
    response)."""
    body = function(parse(source, origin), "get_anscheck_prompt", origin)
    found: dict[str, str] = {}
    for statement in ast.walk(body):
        if not isinstance(statement, ast.If):
            continue
        if "abstention" in names_in(statement.test) and isinstance(statement.test, ast.UnaryOp):
            text = assigned(statement.orelse, "template")
            if text is not None:
                found[ABSTENTION] = text
        if "task" in names_in(statement.test):
            text = assigned(statement.body, "template")
            for task in strings_compared(statement.test):
                if text is not None and task not in found:
                    found[task] = text
    templates = require(found, (*LONGMEMEVAL_TYPES, ABSTENTION), origin)
    require_fields(templates, {name: ("", "", "") for name in templates}, origin)
    return templates


def longmemeval_reader(source: str, origin: str = "run_generation.py") -> dict[str, str]:
    """`prepare_prompt`: with no key expansion (`merge_key_expansion_into_value` None or 'none'), `if cot:` assigns
    the step-by-step template and its `else` the plain one (history, current date, question, positionally); the
    block each session becomes is a `'...### Session {}...'.format(number, date, content)` string."""
    body = function(parse(source, origin), "prepare_prompt", origin)
    found: dict[str, str] = {}
    for statement in ast.walk(body):
        if isinstance(statement, ast.If) and "merge_key_expansion_into_value" in names_in(statement.test) \
                and "none" in strings_compared(statement.test) and "answer" not in found:
            for inner in statement.body:
                if isinstance(inner, ast.If) and names_in(inner.test) == {"cot"}:
                    cot, plain = assigned(inner.body, "answer_prompt_template"), \
                        assigned(inner.orelse, "answer_prompt_template")
                    if cot is not None and plain is not None:
                        found["answer"], found["answer_cot"] = plain, cot
        if isinstance(statement, ast.Call) and isinstance(statement.func, ast.Attribute) \
                and statement.func.attr == "format" and "session" not in found:
            text = template_of(statement.func.value)
            if text is not None and "### Session" in text:
                found["session"] = text
    templates = require(found, ("answer", "answer_cot", "session"), origin)
    require_fields(templates, {name: ("", "", "") for name in templates}, origin)
    return templates


def locomo_reader(source: str, origin: str = "evaluate_claude.py") -> dict[str, str]:
    """Module constants `QA_PROMPT`, `QA_PROMPT_CAT_5` and `CONV_START_PROMPT`; from `get_answers`, the text added to
    a category-2 question, the choice text added to a category-5 one, and the "not mentioned" option."""
    tree = parse(source, origin)
    constants = module_constants(tree)
    found = {key: constants[name] for key, name in (("qa", "QA_PROMPT"), ("qa_choice", "QA_PROMPT_CAT_5"),
                                                     ("conversation_start", "CONV_START_PROMPT"))
             if name in constants}
    body = function(tree, "get_answers", origin)
    for statement in ast.walk(body):
        if isinstance(statement, ast.If) and "qa" in names_in(statement.test):
            categories = [c.value for n in ast.walk(statement.test) if isinstance(n, ast.Compare)
                          for c in n.comparators if isinstance(c, ast.Constant)]
            if categories == [2] and "date_hint" not in found:
                suffix = _added_to_question(statement.body)
                if suffix is not None:
                    found["date_hint"] = suffix
            if categories == [5] and "choice" not in found:
                suffix = _added_to_question(statement.body)
                option = _first_format_constant(statement.body)
                if suffix is not None and option is not None:
                    found["choice"], found["not_mentioned"] = suffix, option
    templates = require(found, ("qa", "qa_choice", "conversation_start", "date_hint", "choice", "not_mentioned"),
                        origin)
    require_fields(templates, {"qa": ("",), "qa_choice": ("",), "conversation_start": ("", ""), "date_hint": (),
                               "choice": ("", ""), "not_mentioned": ()}, origin)
    return templates


def _added_to_question(statements: list[ast.stmt]) -> str | None:
    """The literal in `qa['question'] + '...'` (first one, in source order)."""
    for statement in statements:
        for node in ast.walk(statement):
            if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add) and isinstance(node.left, ast.Subscript) \
                    and isinstance(node.left.slice, ast.Constant) and node.left.slice.value == "question":
                return template_of(node.right)
    return None


def _first_format_constant(statements: list[ast.stmt]) -> str | None:
    """The first string literal passed to a `.format(...)` call."""
    for statement in statements:
        for node in ast.walk(statement):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "format":
                for arg in node.args:
                    if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                        return arg.value
    return None


EVERMEMOS_ANSWERS = ("mem0", "memos", "cot")


def evermemos_prompts(source: str, origin: str = "prompts.yaml") -> dict[str, str]:
    """EverMemOS keeps its prompts in YAML, read with `yaml.safe_load` (src/utils/prompts.py,
    src/utils/config.py). Its judge takes `llm_judge.system_prompt` and `.user_prompt` through `get_prompt`, which
    strips them; its adapters (online_base.py `answer`) fill `online_api.default.answer_prompt_<name>` as stored,
    unstripped, with `.format(context=, question=)`. The templates are kept in exactly those forms."""
    import yaml

    try:
        doc = yaml.safe_load(source)
    except yaml.YAMLError as exc:
        raise ExtractionError(f"{origin}: not YAML ({str(exc).splitlines()[0]})") from None

    def at(*keys: str) -> str | None:
        node = doc
        for key in keys:
            node = node.get(key) if isinstance(node, dict) else None
        return node if isinstance(node, str) else None

    found = {name: text for name, text in (
        ("judge_system", at("llm_judge", "system_prompt")), ("judge_user", at("llm_judge", "user_prompt")),
        *((f"answer_{a}", at("online_api", "default", f"answer_prompt_{a}")) for a in EVERMEMOS_ANSWERS))
        if text is not None}
    for name in ("judge_system", "judge_user"):
        if name in found:
            found[name] = found[name].strip()
    templates = require(found, ("judge_system", "judge_user", *(f"answer_{a}" for a in EVERMEMOS_ANSWERS)), origin)
    require_fields(templates, {"judge_system": (), "judge_user": ("question", "golden_answer", "generated_answer"),
                               **{f"answer_{a}": ("context", "question") for a in EVERMEMOS_ANSWERS}}, origin)
    return templates


EXTRACTORS: dict[str, Callable[[str, str], dict[str, str]]] = {
    "mem0_judge": mem0_judge, "longmemeval_judge": longmemeval_judge, "longmemeval_reader": longmemeval_reader,
    "locomo_reader": locomo_reader, "evermemos_prompts": evermemos_prompts,
}
