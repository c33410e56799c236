"""llama-cpp-python's OpenAI-compatible server as `LocalServer` and `memeval serve-local` start it: the library's own
server (`python -m memeval.llm.local_launch ...` takes the same arguments as `python -m llama_cpp.server`) with one
chat format added, `gemma-system`.

Why: llama-cpp-python's built-in `gemma` format drops every system message (it logs at debug level only:
llama_cpp/llama_chat_format.py `format_gemma`, 0.3.36), so a protocol's system prompt — Mem0's 33,600-character
extraction prompt, a judge's instructions — would never reach the model while the reply still came back. Gemma has
no system role; Google's formatting guide says to give system-level instructions at the start of the first user
turn, separated by a blank line (ai.google.dev/gemma/docs/formatting, "System instructions"). `gemma-system` does
exactly that and is otherwise the built-in `gemma` format: `<start_of_turn>user` / `<start_of_turn>model` turns,
each closed by `<end_of_turn>\\n`, the reply prompted by `<start_of_turn>model\\n`, the BOS token added by the
tokenizer as before.
"""

from __future__ import annotations

CHAT_FORMAT = "gemma-system"


def gemma_prompt(messages: list[dict]) -> str:
    """The Gemma prompt of OpenAI-style messages, system text opening the first user turn."""
    system = "\n\n".join(str(m.get("content") or "") for m in messages if m.get("role") == "system")
    turns = [m for m in messages if m.get("role") != "system"]
    parts = []
    for i, message in enumerate(turns):
        role = "model" if message.get("role") == "assistant" else "user"
        content = str(message.get("content") or "")
        if system and role == "user" and not any(t.get("role") != "assistant" for t in turns[:i]):
            content = f"{system}\n\n{content}"
            system = ""
        parts.append(f"<start_of_turn>{role}\n{content}<end_of_turn>\n")
    if system:  # a system message with no user turn after it: it is the first user turn
        parts.insert(0, f"<start_of_turn>user\n{system}<end_of_turn>\n")
    return "".join(parts) + "<start_of_turn>model\n"


def register() -> None:
    from llama_cpp import llama_chat_format as formats

    @formats.register_chat_format(CHAT_FORMAT)
    def format_gemma_system(messages, **kwargs):
        return formats.ChatFormatterResponse(prompt=gemma_prompt(list(messages)), stop="<end_of_turn>\n")


def main() -> None:
    register()
    from llama_cpp.server.__main__ import main as serve

    serve()


if __name__ == "__main__":
    main()
