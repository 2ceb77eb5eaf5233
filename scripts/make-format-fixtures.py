#!/usr/bin/env python3
"""Makes the reference fixtures of test/fixtures/formats/ (tokenizers that ship no tokenizer.json).

Run from the repository root with a Python that has transformers 5.18, tokenizers, tiktoken 0.14,
sentencepiece 0.2.2, protobuf and mistral-common (mistral-common may be installed --no-deps; the
one import it needs from pydantic-extra-types is stubbed below when that package is missing):

    /work/venv-formats/bin/python scripts/make-format-fixtures.py [--only sentencepiece,kimi,glm4,tekken] \
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
    return data["corpus"], data["hostile"]


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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", default="sentencepiece,transformers-spm,kimi,glm4,tekken")
    parser.add_argument("--kimi-py")
    parser.add_argument("--o200k")
    parser.add_argument("--cl100k")
    args = parser.parse_args()
    only = set(args.only.split(","))
    corpus, hostile = load_texts()
    write_compact(OUT / "texts.json", {"corpus": [short_hash(t) for t in corpus], "hostile": hostile})
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        if "sentencepiece" in only:
            make_sentencepiece(corpus, hostile, work)


if __name__ == "__main__":
    main()
