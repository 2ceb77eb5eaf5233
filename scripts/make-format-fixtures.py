#!/usr/bin/env python3
"""Makes the reference fixtures of test/fixtures/formats/ (tokenizers that ship no tokenizer.json).

Run from the repository root with a Python that has transformers 5.18, tokenizers, tiktoken 0.14,
sentencepiece 0.2.2, protobuf and mistral-common (mistral-common may be installed --no-deps; the
one import it needs from pydantic-extra-types is stubbed below when that package is missing):

    /work/venv-formats/bin/python scripts/make-format-fixtures.py [--only sentencepiece,transformers-spm,unigram-json,kimi,glm4,tekken] \
        --kimi-py /path/to/tokenization_kimi.py --o200k /path/to/o200k_base.json --cl100k /path/to/cl100k_base.json

Inputs that are not in the repository:
- --kimi-py: moonshotai/Kimi-K2-Instruct's public tokenization_kimi.py (MIT), with its
  `bytes_to_unicode` import taken from transformers.convert_slow_tokenizer (transformers 5). It is
  run from a temporary directory and never copied into the repository.
- --o200k / --cl100k: the rank data of the npm `tiktoken` package (1.0.22, MIT):
  `encoders/o200k_base.json` and `encoders/cl100k_base.json` (`npm pack tiktoken@1.0.22`).
- mistral-common's bundled tekken_240911.json and mistral_instruct_tokenizer_240323.model.v3
  (Apache-2.0), found in the installed package.

The texts come from test/helpers/format-texts.ts (node --import tsx scripts/format-fixture-texts.ts),
so the tests and the references see the same strings. Training is single-threaded and seeded;
regenerating may still change the trained models if sentencepiece changes.
"""

import argparse
import base64
import hashlib
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import types
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "test" / "fixtures" / "formats"


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def ids_sha256(ids) -> str:
    return hashlib.sha256(b"".join(struct.pack("<I", i) for i in ids)).hexdigest()


def load_texts():
    out = subprocess.run(
        ["node", "--import", "tsx", "scripts/format-fixture-texts.ts"], cwd=ROOT, check=True, capture_output=True
    ).stdout
    data = json.loads(out)
    return data["corpus"], data["hostile"], data["long"]


def write_json(path: Path, value) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(value, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")


def short_hash(text: str) -> str:
    """First 16 hex digits of the UTF-8 text's sha256 (a test fixture key, not a security hash)."""
    return sha256_text(text)[:16]


def short_ids_hash(ids) -> str:
    return ids_sha256(ids)[:16]


FULL_HOSTILE = 60


def summarize(corpus, hostile, encode, decode=None, normalize=None):
    """Expectations of one encoder.

    corpus: one row per text, [count, ids hash, normalized hash?, decoded hash?] (hashes: short_hash);
    hostile: the first FULL_HOSTILE texts in full ({ids, normalized?, decoded?}), the rest as corpus rows.
    """
    def row_of(text, full):
        ids = list(encode(text))
        if full:
            row = {"ids": ids}
            if normalize is not None:
                row["normalized"] = normalize(text)
            if decode is not None:
                row["decoded"] = decode(ids)
            return row
        row = [len(ids), short_ids_hash(ids)]
        if normalize is not None:
            row.append(short_hash(normalize(text)))
        if decode is not None:
            row.append(short_hash(decode(ids)))
        return row

    return {
        "corpus": [row_of(t, False) for t in corpus],
        "hostile": [row_of(t, i < FULL_HOSTILE) for i, t in enumerate(hostile)],
    }


def write_compact(path: Path, value) -> None:
    """JSON with one top-level key per line and one list entry per line (small and diffable)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = ["{"]
    items = list(value.items())
    for k, (key, v) in enumerate(items):
        sep = "," if k < len(items) - 1 else ""
        if isinstance(v, list) and v:
            lines.append(f"{json.dumps(key)}: [")
            for i, entry in enumerate(v):
                lines.append(json.dumps(entry, ensure_ascii=False, separators=(",", ":")) + ("," if i < len(v) - 1 else ""))
            lines.append("]" + sep)
        else:
            lines.append(f"{json.dumps(key)}: {json.dumps(v, ensure_ascii=False, separators=(',', ':'))}{sep}")
    lines.append("}")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


# ---- SentencePiece ------------------------------------------------------------------------------

SP_MODELS = {
    # name: trainer options (besides input/model_prefix)
    "unigram-nfkc-bf": dict(
        model_type="unigram", vocab_size=1500, byte_fallback=True, normalization_rule_name="nmt_nfkc",
        user_defined_symbols=["<tool_call>", "</tool_call>"], control_symbols=["<|im_start|>"],
    ),
    "unigram-cf-noprefix": dict(
        model_type="unigram", vocab_size=1000, byte_fallback=False, normalization_rule_name="nmt_nfkc_cf",
        add_dummy_prefix=False, remove_extra_whitespaces=False,
    ),
    "bpe-identity-bf": dict(
        model_type="bpe", vocab_size=2000, byte_fallback=True, normalization_rule_name="identity",
        remove_extra_whitespaces=False, split_digits=True, allow_whitespace_only_pieces=True,
    ),
    "bpe-identity-suffix": dict(
        model_type="bpe", vocab_size=1200, byte_fallback=False, normalization_rule_name="identity",
        treat_whitespace_as_suffix=True, user_defined_symbols=["```", "<tool_call>"],
    ),
    "unigram-identity": dict(
        model_type="unigram", vocab_size=1200, byte_fallback=False, normalization_rule_name="identity",
        user_defined_symbols=["<tool_call>"],
    ),
}

# Pieces of these models re-typed UNUSED after training (every 37th NORMAL piece past 300), to
# exercise UNUSED handling (skipped by Unigram, split back by BPE).
SP_UNUSED_VARIANTS = {"bpe-identity-bf-unused": "bpe-identity-bf", "unigram-identity-unused": "unigram-identity"}


def make_sentencepiece(corpus, hostile, work: Path) -> None:
    import sentencepiece as spm
    from sentencepiece import sentencepiece_model_pb2 as model_pb2

    out_dir = OUT / "sentencepiece"
    out_dir.mkdir(parents=True, exist_ok=True)
    train_file = work / "corpus.txt"
    with open(train_file, "w", encoding="utf-8") as f:
        for text in corpus:
            for line in text.split("\n"):
                if line.strip():
                    f.write(line + "\n")
    models = {}
    for name, options in SP_MODELS.items():
        spm.SentencePieceTrainer.train(
            input=str(train_file), model_prefix=str(work / name), num_threads=1, hard_vocab_limit=False,
            seed_sentencepiece_size=100000, shuffle_input_sentence=False, minloglevel=2, **options,
        )
        models[name] = (work / f"{name}.model").read_bytes()
    for name, base in SP_UNUSED_VARIANTS.items():
        proto = model_pb2.ModelProto()
        proto.ParseFromString(models[base])
        normal_seen = 0
        for piece in proto.pieces:
            if piece.type == model_pb2.ModelProto.SentencePiece.NORMAL:
                normal_seen += 1
                if normal_seen > 300 and normal_seen % 37 == 0:
                    piece.type = model_pb2.ModelProto.SentencePiece.UNUSED
        models[name] = proto.SerializeToString()
    mistral = Path(__import__("mistral_common").__file__).parent / "data" / "mistral_instruct_tokenizer_240323.model.v3"
    models["mistral-v3"] = mistral.read_bytes()

    manifest = {}
    for name, data in models.items():
        path = out_dir / f"{name}.model"
        path.write_bytes(data)
        sp = spm.SentencePieceProcessor(model_proto=data)
        expect = summarize(corpus, hostile, sp.encode, decode=sp.decode, normalize=sp.normalize)
        expect["reference"] = f"sentencepiece {spm.__version__}"
        expect["model_sha256"] = hashlib.sha256(data).hexdigest()
        expect["piece_size"] = sp.get_piece_size()
        write_compact(out_dir / f"{name}.sentencepiece.json", expect)
        manifest[name] = {"bytes": len(data), "pieces": sp.get_piece_size()}
        print(f"sentencepiece {name}: {len(data)} bytes, {sp.get_piece_size()} pieces", file=sys.stderr)
    write_json(out_dir / "models.json", manifest)


# ---- transformers' conversion of SentencePiece models --------------------------------------------

SPM_CONVERSIONS = [
    # (model, tokenizer_config.json, label)
    ("bpe-identity-bf", {"tokenizer_class": "LlamaTokenizer", "legacy": True}, "llama-legacy"),
    ("bpe-identity-bf", {"tokenizer_class": "LlamaTokenizer", "legacy": False}, "llama"),
    ("mistral-v3", {"tokenizer_class": "LlamaTokenizer", "legacy": True}, "llama-legacy"),
    ("mistral-v3", {"tokenizer_class": "LlamaTokenizer", "legacy": False}, "llama"),
    ("unigram-nfkc-bf", {}, "generic"),
    ("unigram-cf-noprefix", {}, "generic"),
    ("bpe-identity-suffix", {}, "generic"),
]


def canonical_hash(value) -> str:
    return short_hash(json.dumps(value, ensure_ascii=False, separators=(",", ":")))


def without_charsmaps(value):
    """The normalizer JSON with each Precompiled charsmap (base64, ~300 KB) replaced by its short hash."""
    if isinstance(value, dict):
        return {k: ("sha:" + short_hash(v) if k == "precompiled_charsmap" else without_charsmaps(v)) for k, v in value.items()}
    if isinstance(value, list):
        return [without_charsmaps(v) for v in value]
    return value


def make_transformers_spm(corpus, hostile, work: Path) -> None:
    import transformers
    from transformers import AutoTokenizer

    out_dir = OUT / "sentencepiece"
    for name, config, label in SPM_CONVERSIONS:
        d = work / f"{name}-{label}"
        d.mkdir(parents=True, exist_ok=True)
        shutil.copy(out_dir / f"{name}.model", d / "tokenizer.model")
        (d / "tokenizer_config.json").write_text(json.dumps(config), encoding="utf-8")
        tok = AutoTokenizer.from_pretrained(str(d))
        js = json.loads(tok.backend_tokenizer.to_str())
        model = js["model"]
        expect = {
            "reference": f"transformers {transformers.__version__} AutoTokenizer over tokenizer.model with tokenizer_config.json {json.dumps(config)} ({type(tok).__name__})",
            "config": config,
            "tokenizer_json": {
                "added_tokens": js["added_tokens"],
                "normalizer": without_charsmaps(js["normalizer"]),
                "pre_tokenizer": js["pre_tokenizer"],
                "decoder": js["decoder"],
                "model": {k: v for k, v in model.items() if k not in ("vocab", "merges")},
                # Unigram scores are compared as float32: the Rust side re-parses them from JSON with
                # serde_json's fast float parser, which can land one double ulp off the proto's float.
                "vocab_sha": canonical_hash(model["vocab"] if model["type"] != "Unigram"
                                            else [[p, float(struct.unpack("<f", struct.pack("<f", sc))[0])] for p, sc in model["vocab"]]),
                "merges_sha": canonical_hash(model["merges"]) if "merges" in model else None,
            },
            "encode": summarize(corpus, hostile, lambda t: tok.encode(t, add_special_tokens=False),
                                decode=lambda ids: tok.decode(ids)),
        }
        write_compact(out_dir / f"{name}.{label}.transformers.json", expect)
        print(f"transformers {name} {label}: {type(tok).__name__}", file=sys.stderr)


def make_unigram_json(corpus, hostile, work: Path) -> None:
    """A Unigram tokenizer.json as transformers saves it (unigram-identity converted, then
    save_pretrained), and the ids transformers gives when it loads that directory back (the Rust
    crate then reads the scores from JSON)."""
    import transformers
    from transformers import AutoTokenizer

    src = work / "unigram-json-src"
    src.mkdir(parents=True, exist_ok=True)
    shutil.copy(OUT / "sentencepiece" / "unigram-identity.model", src / "tokenizer.model")
    (src / "tokenizer_config.json").write_text("{}", encoding="utf-8")
    saved = work / "unigram-json-saved"
    AutoTokenizer.from_pretrained(str(src)).save_pretrained(str(saved))
    out_dir = OUT / "unigram-json"
    out_dir.mkdir(parents=True, exist_ok=True)
    for f in ("tokenizer.json", "tokenizer_config.json"):
        shutil.copy(saved / f, out_dir / f)
    tok = AutoTokenizer.from_pretrained(str(out_dir))
    expect = {
        "reference": f"transformers {transformers.__version__} AutoTokenizer over the saved tokenizer.json ({type(tok).__name__}), tokenizers {__import__('tokenizers').__version__}",
        "encode": summarize(corpus, hostile, lambda t: tok.encode(t, add_special_tokens=False), decode=lambda ids: tok.decode(ids)),
    }
    write_compact(out_dir / "expect.json", expect)
    print(f"unigram-json: {type(tok).__name__}", file=sys.stderr)


# ---- tiktoken families ---------------------------------------------------------------------------

def npm_ranks(path: str, count: int):
    """The first `count` ranks of an npm `tiktoken` encoders/*.json file, as (token bytes, rank)."""
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    parts = data["bpe_ranks"].split(" ")
    offset = int(parts[1])
    tokens = [base64.b64decode(p) for p in parts[2:2 + count]]
    return [(t, offset + i) for i, t in enumerate(tokens)]


def write_rank_file(path: Path, ranks) -> None:
    path.write_bytes(b"".join(base64.b64encode(t) + b" " + str(r).encode() + b"\n" for t, r in ranks))


KIMI_RANKS = 20000
GLM4_RANKS = 16000

# Kimi K2's named specials, by offset from the rank count (the public tokenizer_config.json layout);
# the other offsets are <|reserved_token_{id}|>.
KIMI_NAMED = {
    0: ("[BOS]", True), 1: ("[EOS]", True), 2: ("<|im_end|>", True), 3: ("<|im_user|>", True),
    4: ("<|im_assistant|>", True), 6: ("<|start_header_id|>", True), 7: ("<|end_header_id|>", True),
    9: ("[EOT]", True), 10: ("<|im_system|>", True), 11: ("<|tool_calls_section_begin|>", True),
    12: ("<|tool_calls_section_end|>", True), 13: ("<|tool_call_begin|>", True),
    14: ("<|tool_call_argument_begin|>", True), 15: ("<|tool_call_end|>", True), 17: ("<|im_middle|>", True),
    19: ("<think>", False), 20: ("</think>", False), 254: ("[UNK]", True), 255: ("[PAD]", True),
}

KIMI_TEMPLATE = """{%- if tools -%}
<|im_system|>tool_declare<|im_middle|>{{ tools | tojson(separators=(',', ':')) }}<|im_end|>
{%- endif -%}
{%- for message in messages -%}
{%- if loop.first and message['role'] != 'system' -%}
<|im_system|>system<|im_middle|>You are Kimi, an AI assistant created by Moonshot AI.<|im_end|>
{%- endif -%}
{%- set role = message['role'] -%}
{%- if role == 'system' -%}<|im_system|>system<|im_middle|>
{%- elif role == 'user' -%}<|im_user|>user<|im_middle|>
{%- elif role == 'assistant' -%}<|im_assistant|>assistant<|im_middle|>
{%- else -%}<|im_system|>tool<|im_middle|>
{%- endif -%}
{%- if role == 'assistant' and message.get('tool_calls') -%}
{{ message['content'] or '' }}<|tool_calls_section_begin|>
{%- for call in message['tool_calls'] -%}
<|tool_call_begin|>functions.{{ call['function']['name'] }}:{{ loop.index0 }}<|tool_call_argument_begin|>
{%- if call['function']['arguments'] is string -%}{{ call['function']['arguments'] }}{%- else -%}{{ call['function']['arguments'] | tojson }}{%- endif -%}
<|tool_call_end|>
{%- endfor -%}
<|tool_calls_section_end|>
{%- elif role == 'tool' -%}
## Return of {{ message.get('tool_call_id', '') }}
{{ message['content'] }}
{%- else -%}
{{ message['content'] }}
{%- endif -%}
<|im_end|>
{%- endfor -%}
{%- if add_generation_prompt -%}<|im_assistant|>assistant<|im_middle|>{%- endif -%}
"""


def corpus_conversations():
    out = []
    for name in ["data/tau-bench-airline-20.jsonl", "data/swebench-agentic-coding-scikit-learn-26323.jsonl"]:
        for line in (ROOT / name).read_text(encoding="utf-8").splitlines():
            if line.strip():
                record = json.loads(line)
                out.append((record["messages"], record.get("tools")))
    return out


def make_kimi(corpus, hostile, long_texts, kimi_py: str, o200k: str, work: Path) -> None:
    from transformers import AutoTokenizer

    out_dir = OUT / "kimi"
    out_dir.mkdir(parents=True, exist_ok=True)
    ranks = npm_ranks(o200k, KIMI_RANKS)
    write_rank_file(out_dir / "tiktoken.model", ranks)
    n = len(ranks)
    added = {
        str(n + k): {"content": text, "lstrip": False, "normalized": False, "rstrip": False, "single_word": False, "special": special}
        for k, (text, special) in sorted(KIMI_NAMED.items())
    }
    config = {
        "added_tokens_decoder": added,
        "additional_special_tokens": ["<|im_end|>", "<|im_user|>", "<|im_assistant|>", "<|start_header_id|>",
                                      "<|end_header_id|>", "[EOT]", "<|im_system|>", "<|im_middle|>"],
        "auto_map": {"AutoTokenizer": ["tokenization_kimi.TikTokenTokenizer", None]},
        "bos_token": "[BOS]",
        "clean_up_tokenization_spaces": False,
        "eos_token": "[EOS]",
        "extra_special_tokens": {},
        "model_max_length": 1048576,
        "pad_token": "[PAD]",
        "tokenizer_class": "TikTokenTokenizer",
        "unk_token": "[UNK]",
    }
    write_json(out_dir / "tokenizer_config.json", config)
    (out_dir / "chat_template.jinja").write_text(KIMI_TEMPLATE, encoding="utf-8")
    ref_dir = work / "kimi"
    shutil.copytree(out_dir, ref_dir)
    shutil.copy(kimi_py, ref_dir / "tokenization_kimi.py")
    tok = AutoTokenizer.from_pretrained(str(ref_dir), trust_remote_code=True)
    split = type(tok)._split_whitespaces_or_nonwhitespaces

    def cuts(text):
        spans = []
        pos = 0
        for i in range(0, len(text), 400_000):
            for piece in split(text[i:i + 400_000], 25_000):
                spans.append([pos, pos + len(piece)])
                pos += len(piece)
        return spans

    expect = {
        "reference": f"transformers {__import__('transformers').__version__}, trust_remote_code tokenization_kimi.py over tiktoken {__import__('tiktoken').__version__}",
        "pat_str": tok.pat_str,
        "special_tokens": sorted([[i, t] for t, i in tok.special_tokens.items()]),
        "added_tokens": sorted([[i, t.content, t.special] for i, t in tok.added_tokens_decoder.items()]),
        "bos_token_id": tok.bos_token_id, "eos_token_id": tok.eos_token_id,
        # tok.encode(text): Kimi's own encode (tiktoken, specials allowed, long texts cut).
        "encode": summarize(corpus, hostile, tok.encode, decode=tok.decode),
        # tok.encode(text, add_special_tokens=False): keyword arguments send it down transformers'
        # slow path (split on added tokens, then Kimi's _tokenize on each part).
        "encode_slow": summarize(corpus, hostile, lambda t: tok.encode(t, add_special_tokens=False)),
        "call": summarize(corpus, hostile, lambda t: tok(t, add_special_tokens=False)["input_ids"]),
        "long": [],
        "chat": [],
    }
    for text in long_texts:
        ids = tok.encode(text)
        slow = tok.encode(text, add_special_tokens=False)
        expect["long"].append({"count": len(ids), "ids": short_ids_hash(ids), "cuts": cuts(text),
                               "slow_count": len(slow), "slow_ids": short_ids_hash(slow)})
    for messages, tools in corpus_conversations():
        rendered = tok.apply_chat_template(messages, tools=tools)
        ids = tok.apply_chat_template(messages, tools=tools, tokenize=True, return_dict=False)
        expect["chat"].append({"rendered": short_hash(rendered), "rendered_length": len(rendered),
                               "count": len(ids), "ids": short_ids_hash(ids),
                               "encode_count": len(tok.encode(rendered)), "encode_ids": short_ids_hash(tok.encode(rendered))})
    write_compact(out_dir / "expect.json", expect)
    print(f"kimi: {n} ranks", file=sys.stderr)


GLM4_TOKENIZATION = '''# A GLM-4-shaped tokenization file for deltatok's fixtures (made for deltatok, Apache-2.0): only
# the shapes deltatok reads from such a file. The pattern below is GLM-4's (tokenization_chatglm.py).
import tiktoken

VOCAB_FILES_NAMES = {"vocab_file": "tokenizer.model"}


class ChatGLM4Tokenizer:
    def __init__(self, vocab_file, **kwargs):
        pat_str = "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\\\r\\\\n\\\\p{L}\\\\p{N}]?\\\\p{L}+|\\\\p{N}{1,3}| ?[^\\\\s\\\\p{L}\\\\p{N}]+[\\\\r\\\\n]*|\\\\s*[\\\\r\\\\n]+|\\\\s+(?!\\\\S)|\\\\s+"
        self.pat_str = pat_str  # not a literal: skipped
'''

GLM4_SPECIALS = ["<|endoftext|>", "[MASK]", "[gMASK]", "[sMASK]", "<sop>", "<eop>", "<|system|>", "<|user|>",
                 "<|assistant|>", "<|observation|>", "<|begin_of_image|>", "<|end_of_image|>", "<|begin_of_video|>",
                 "<|end_of_video|>"]


def make_glm4(corpus, hostile, cl100k: str) -> None:
    import tiktoken

    out_dir = OUT / "glm4"
    out_dir.mkdir(parents=True, exist_ok=True)
    ranks = npm_ranks(cl100k, GLM4_RANKS)
    write_rank_file(out_dir / "tokenizer.model", ranks)
    (out_dir / "tokenization_chatglm.py").write_text(GLM4_TOKENIZATION, encoding="utf-8")
    n = len(ranks)
    specials = {t: n + k for k, t in enumerate(GLM4_SPECIALS)}
    write_json(out_dir / "tokenizer_config.json", {
        "added_tokens_decoder": {str(i): {"content": t, "lstrip": False, "normalized": False, "rstrip": False,
                                          "single_word": False, "special": True} for t, i in specials.items()},
        "auto_map": {"AutoTokenizer": ["tokenization_chatglm.ChatGLM4Tokenizer", None]},
        "eos_token": "<|endoftext|>", "pad_token": "<|endoftext|>", "tokenizer_class": "ChatGLM4Tokenizer",
    })
    src = (out_dir / "tokenization_chatglm.py").read_text(encoding="utf-8")
    scope = {}
    pat_line = [l for l in src.splitlines() if l.strip().startswith("pat_str = ")][0].strip()
    exec(pat_line, {}, scope)  # the generator's own file: one string assignment
    enc = tiktoken.Encoding("glm4-fixture", pat_str=scope["pat_str"], mergeable_ranks=dict(ranks), special_tokens=specials)
    expect = {
        "reference": f"tiktoken {tiktoken.__version__} Encoding over the same ranks, pattern and specials (ChatGLM4Tokenizer's layout)",
        "pat_str": scope["pat_str"],
        "special_tokens": sorted([[i, t] for t, i in specials.items()]),
        # ChatGLM4Tokenizer._tokenize (encode_special_tokens=False): specials in text are ordinary text.
        "encode_ordinary": summarize(corpus, hostile, lambda t: enc.encode(t, disallowed_special=()), decode=enc.decode),
        "encode_special": summarize(corpus, hostile, lambda t: enc.encode(t, allowed_special="all")),
    }
    write_compact(out_dir / "expect.json", expect)
    print(f"glm4: {n} ranks", file=sys.stderr)


TEKKEN_ENTRIES = 4000
TEKKEN_SPECIALS = ["<unk>", "<s>", "</s>", "[INST]", "[/INST]", "[AVAILABLE_TOOLS]", "[/AVAILABLE_TOOLS]", "[TOOL_RESULTS]",
                   "[/TOOL_RESULTS]", "[TOOL_CALLS]", "[IMG]", "<pad>", "[IMG_BREAK]", "[IMG_END]", "[PREFIX]", "[MIDDLE]",
                   "[SUFFIX]", "[SYSTEM_PROMPT]", "[/SYSTEM_PROMPT]", "[TOOL_CONTENT]", "[ARGS]", "[CALL_ID]",
                   "[THINK]", "[/THINK]"]


def stub_pydantic_extra_types() -> None:
    """mistral-common imports pydantic_extra_types.language_code for transcription requests only."""
    try:
        import pydantic_extra_types.language_code  # noqa: F401
    except ImportError:
        root = types.ModuleType("pydantic_extra_types")
        lc = types.ModuleType("pydantic_extra_types.language_code")
        lc.LanguageAlpha2 = str
        sys.modules["pydantic_extra_types"] = root
        sys.modules["pydantic_extra_types.language_code"] = lc


def make_tekken(corpus, hostile) -> None:
    stub_pydantic_extra_types()
    import mistral_common
    from mistral_common.tokens.tokenizers.tekken import Tekkenizer

    out_dir = OUT / "tekken"
    out_dir.mkdir(parents=True, exist_ok=True)
    source = json.loads((Path(mistral_common.__file__).parent / "data" / "tekken_240911.json").read_text(encoding="utf-8"))
    variants = {
        # v7 with its special tokens listed; default_vocab_size cuts the vocabulary 300 entries short.
        "tekken.json": {"config": {**source["config"], "version": "v7", "default_vocab_size": 1000 + TEKKEN_ENTRIES - 300,
                                   "num_vocab_tokens": TEKKEN_ENTRIES},
                        "vocab": source["vocab"][:TEKKEN_ENTRIES],
                        "special_tokens": [{"rank": i, "token_str": t, "is_control": True} for i, t in enumerate(TEKKEN_SPECIALS)]},
        # v3 without special_tokens: mistral-common's deprecated defaults, then <SPECIAL_i> fillers.
        "tekken-v3.json": {"config": {**source["config"], "version": "v3", "default_vocab_size": 1000 + 600,
                                      "num_vocab_tokens": 600},
                           "vocab": source["vocab"][:600]},
    }
    for name, data in variants.items():
        path = out_dir / name
        path.write_text(json.dumps(data, ensure_ascii=False) + "\n", encoding="utf-8")
        tok = Tekkenizer.from_file(str(path))
        specials = [[i, tok.id_to_piece(i)] for i in range(tok.num_special_tokens)]
        expect = {
            "reference": f"mistral-common {mistral_common.__version__} Tekkenizer.from_file",
            "num_special_tokens": tok.num_special_tokens, "n_words": tok.n_words,
            "special_tokens": specials,
            "bos_id": tok.bos_id, "eos_id": tok.eos_id,
            "encode": summarize(corpus, hostile, lambda t: tok.encode(t, bos=False, eos=False), decode=tok.decode),
            "pieces": [[i, base64.b64encode(tok.id_to_byte_piece(i)).decode()] for i in range(tok.num_special_tokens, tok.n_words, 97)],
        }
        write_compact(out_dir / (name.replace(".json", "") + ".expect.json"), expect)
        print(f"tekken {name}: {tok.n_words} ids", file=sys.stderr)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", default="sentencepiece,transformers-spm,unigram-json,kimi,glm4,tekken")
    parser.add_argument("--kimi-py")
    parser.add_argument("--o200k")
    parser.add_argument("--cl100k")
    args = parser.parse_args()
    only = set(args.only.split(","))
    corpus, hostile, long_texts = load_texts()
    write_compact(OUT / "texts.json", {"corpus": [short_hash(t) for t in corpus], "hostile": hostile})
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        if "sentencepiece" in only:
            make_sentencepiece(corpus, hostile, work)
        if "transformers-spm" in only:
            make_transformers_spm(corpus, hostile, work)
        if "unigram-json" in only:
            make_unigram_json(corpus, hostile, work)
        if "kimi" in only:
            make_kimi(corpus, hostile, long_texts, args.kimi_py, args.o200k, work)
        if "glm4" in only:
            make_glm4(corpus, hostile, args.cl100k)
        if "tekken" in only:
            make_tekken(corpus, hostile)


if __name__ == "__main__":
    main()
