#!/usr/bin/env python3
"""RL rollouts into training arrays: for each conversation, the training sequences deltatok
builds from every turn's exact prompt ids and the ids the server sampled (an assistant
message's "sampled_ids" and "sampled_logprobs"; its canonical tokens where it has none), split
where the template rewrote history, turned into input ids, a loss mask and logprobs:

    python3 rollout_arrays.py rollouts.jsonl [--tokenizer qwen3] [--date 2026-11-30]
                              [--parse-tool-arguments] [--torch]

A corpus line is {"id", "messages", "tools"?, "chat_template_kwargs"?}. Prints one line per
conversation ({"id", "sequences": [{"tokens", "trained", "turns"}], "splits": [reason, ...],
"drift": n} or "error") and a summary. With --torch (and torch installed), each sequence
becomes torch tensors (input_ids int64, loss_mask bool, logprobs float32), as a trainer takes them.
"""
import argparse
import json
import os
import sys

try:
    import deltatok  # noqa: F401  (pip install ./clients/python)
except ImportError:
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src"))

from deltatok import AutoTokenizer, DeltatokError, training_arrays  # noqa: E402


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("corpus")
    ap.add_argument("--tokenizer", default="qwen3")
    ap.add_argument("--date", default=None, help="what strftime_now sees (YYYY-MM-DD)")
    ap.add_argument("--parse-tool-arguments", action="store_true")
    ap.add_argument("--torch", action="store_true", help="make torch tensors of every sequence")
    a = ap.parse_args(argv)
    torch = None
    if a.torch:
        import torch  # noqa: F811  (only with --torch)
    options = {"parse_tool_arguments": a.parse_tool_arguments}
    if a.date:
        options["date"] = a.date
    totals = {"conversations": 0, "errors": 0, "sequences": 0, "tokens": 0, "trained": 0, "splits": {}, "drifted": 0}
    with AutoTokenizer.from_pretrained(a.tokenizer, **options) as tok, open(a.corpus, encoding="utf-8") as f:
        for line in f:
            if not line.strip():
                continue
            c = json.loads(line)
            totals["conversations"] += 1
            try:
                r = tok.tokenize_rollout(c["messages"], tools=c.get("tools"), **(c.get("chat_template_kwargs") or {}))
            except DeltatokError as e:
                totals["errors"] += 1
                print(json.dumps({"id": c.get("id"), "error": {"code": e.code, "message": e.message}}))
                continue
            out = []
            for seq in r["sequences"]:
                arr = training_arrays(seq)
                trained = sum(arr["mask"])
                if torch is not None:
                    batch = {
                        "input_ids": torch.tensor(arr["ids"], dtype=torch.int64),
                        "loss_mask": torch.tensor(arr["mask"], dtype=torch.bool),
                    }
                    if arr["logprobs"] is not None:
                        batch["logprobs"] = torch.tensor(arr["logprobs"], dtype=torch.float32)
                    assert int(batch["loss_mask"].sum()) == trained
                out.append({"tokens": len(arr["ids"]), "trained": trained, "turns": len(arr["turns"])})
                totals["sequences"] += 1
                totals["tokens"] += len(arr["ids"])
                totals["trained"] += trained
            for s in r["splits"]:
                totals["splits"][s["reason"]] = totals["splits"].get(s["reason"], 0) + 1
            totals["drifted"] += len(r["drift"])
            print(json.dumps({"id": c.get("id"), "sequences": out, "splits": [s["reason"] for s in r["splits"]], "drift": len(r["drift"])}))
    print(json.dumps({"summary": totals}), file=sys.stderr)
    return 0 if totals["errors"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
