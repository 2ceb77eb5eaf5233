# Writes test/fixtures/pretokenize/tiktoken-pieces.json: where tiktoken itself (Python tiktoken,
# fancy-regex over the Rust `regex` crate) cuts hostile texts and chunks of the bundled corpora
# into pieces, for the tiktoken pattern families the scanners cover: r50k/p50k, cl100k_base and
# o200k_base (their pat_str read from tiktoken_ext.openai_public), Kimi K2 (tokenization_kimi.py)
# and GLM-4 (tokenization_chatglm.py).
#
# tiktoken reports token ids, not pieces. Each text gets a vocabulary of the 256 single bytes and
# every substring of the text: tiktoken encodes each piece the pattern matches as the one token
# that is the whole piece (it looks a piece up before merging), so the tokens are the pieces.
# Texts are at most ~160 code points (the corpora are cut into chunks of that size, each its own
# text) to keep the vocabularies small. tiktoken encodes only the matches: the script checks that
# the pieces tile every text (all these patterns match everywhere).
#
# Run: /work/venv/bin/python scripts/make-tiktoken-piece-fixtures.py   (tiktoken; about a minute)
import json
import os
import random

import tiktoken
import tiktoken_ext.openai_public as openai_public

ROOT = os.path.join(os.path.dirname(__file__), "..")
OUT = os.path.join(ROOT, "test", "fixtures", "pretokenize", "tiktoken-pieces.json")

# the OpenAI patterns, as tiktoken spells them (no rank file is read: the loader is stubbed)
openai_public.load_tiktoken_bpe = lambda *a, **k: {}
openai_public.data_gym_to_mergeable_bpe_ranks = lambda *a, **k: {}
PATTERNS = {
    "r50k": openai_public.r50k_base()["pat_str"],
    "cl100k": openai_public.cl100k_base()["pat_str"],
    "o200k": openai_public.o200k_base()["pat_str"],
    # tokenization_kimi.py, TikTokenTokenizer.pat_str
    "kimi": "|".join(
        [
            r"""[\p{Han}]+""",
            r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}&&[^\p{Han}]]*[\p{Ll}\p{Lm}\p{Lo}\p{M}&&[^\p{Han}]]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
            r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}&&[^\p{Han}]]+[\p{Ll}\p{Lm}\p{Lo}\p{M}&&[^\p{Han}]]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
            r"""\p{N}{1,3}""",
            r""" ?[^\s\p{L}\p{N}]+[\r\n]*""",
            r"""\s*[\r\n]+""",
            r"""\s+(?!\S)""",
            r"""\s+""",
        ]
    ),
    # tokenization_chatglm.py, ChatGLM4Tokenizer.__init__
    "glm4": "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
}

FRAGMENTS = [
    " ", "  ", "   ", "\n", "\n\n", " \n", "\r\n", "\r", "\t", "\t\t", "\u0085", "\ufeff", "\u00a0", "\u2028", "\u3000", "\u000b",
    "\u0000", "\u001b", "\u200b", "\u200d", "\u0301", "e\u0301", "\u0903", "\u20dd",
    "٣", "३", "߀", "𝟘", "Ⅻ", "²", "¼", "⑦", "〇", "٠١٢٣٤٥٦٧٨٩", "１２３", "12", "1234567",
    "'s", "'S", "'t", "'T", "'re", "'RE", "'Re", "'rE", "'ve", "'VE", "'m", "'M", "'ll", "'LL", "'lL", "'d", "'D", "'ſ", "'K", "’s",
    "ſ", "K", "Å", "ß", "ﬁ", "İ", "ǅ", "ʰ", "ª", "ABCdef", "ABC", "aBC", "\u0301abc", "A\u0301", "ʰA", "AʰB", "DON'T", "don't",
    "中文", "日本語", "한국어", "ア・イ", "ー", "々", "⺀", "𠀀", "𪜀", "〡", "Ωμέγα", "مرحبا", "שלום", "\u200f",
    ".abc", "..abc", "$x", "_a", "/", "//", "\n/", ".\n/x", "!\r\n", "?\n\n/", " /", "-->", " ...", "😀", "👩‍💻", "🇫🇷", "#️⃣",
    "<|endoftext|>", "<|im_start|>", "hello", "World", "x", "The", " the", "\U00011f04", "\U0001e4d0", "\u0378", "\ue000",
]


TAILS = [" ", "  ", "\n", " \n", "\n ", " \n  ", "\r\n", "\n\n\t", "\u3000\n", "\u0085", "\t"]

EDGES = [
    "", " ", "\n", "  \n  ", "a \n ", "a\n", "a \n", "x\r\n", "\n\n", "a  b", "a \n b", "a\t b", " 'll", "'s", "A'S", "ſ",
    "'ſ", "'K", "中文abc", "abc中文", "ﾟ", "1234", "12345 ", "AʰB'S", "\u0301", "a\u0301", " \u0301", ".\n/", "//\n",
]


def hostile(rng):
    parts = []
    if rng.random() < 0.3:
        parts.append(rng.choice(TAILS))
    for _ in range(rng.randint(0, 24)):
        r = rng.random()
        if r < 0.6:
            parts.append(rng.choice(FRAGMENTS))
        elif r < 0.75:
            parts.append(rng.choice([" ", "\n", "\t", "a", "A", "1", ".", "中", "\u0301", "'", "/"]) * rng.randint(2, 30))
        else:
            c = rng.randint(0, 0x10FFFF)
            while 0xD800 <= c <= 0xDFFF:
                c = rng.randint(0, 0x10FFFF)
            parts.append(chr(c))
    if rng.random() < 0.3:
        parts.append(rng.choice(TAILS))
    return "".join(parts)


def corpus_chunks(rng, count):
    strings = []

    def walk(v):
        if isinstance(v, str):
            strings.append(v)
        elif isinstance(v, list):
            for x in v:
                walk(x)
        elif isinstance(v, dict):
            for x in v.values():
                walk(x)

    for name in ["tau-bench-airline-20.jsonl", "swebench-agentic-coding-scikit-learn-26323.jsonl"]:
        with open(os.path.join(ROOT, "data", name), encoding="utf-8") as f:
            for line in f:
                if line.strip():
                    walk(json.loads(line))
    out = []
    while len(out) < count:
        s = rng.choice(strings)
        if not s:
            continue
        i = rng.randrange(0, len(s))
        out.append(s[i : i + rng.randint(20, 160)])
    return out


def pieces(pattern, text):
    ranks = {bytes([i]): i for i in range(256)}
    for i in range(len(text)):
        for j in range(i + 1, len(text) + 1):
            b = text[i:j].encode("utf-8")
            if b not in ranks:
                ranks[b] = len(ranks)
    enc = tiktoken.Encoding("pieces", pat_str=pattern, mergeable_ranks=ranks, special_tokens={})
    out = [enc.decode_single_token_bytes(t).decode("utf-8") for t in enc.encode_ordinary(text)]
    if "".join(out) != text:
        raise SystemExit(f"the pieces do not tile {text!r}")
    return out


def utf16_ends(ps):
    ends = []
    at = 0
    for p in ps:
        at += len(p.encode("utf-16-le")) // 2
        ends.append(at)
    return ends


rng = random.Random(20261204)
texts = EDGES + [hostile(rng) for _ in range(500)] + corpus_chunks(rng, 200)
cases = [{"text": t, "ends": {name: utf16_ends(pieces(pat, t)) for name, pat in PATTERNS.items()}} for t in texts]
os.makedirs(os.path.dirname(OUT), exist_ok=True)
with open(OUT, "w", encoding="utf-8") as f:
    json.dump({"tiktoken": tiktoken.__version__, "patterns": PATTERNS, "cases": cases}, f, ensure_ascii=False, separators=(",", ":"))
    f.write("\n")
print(len(cases), "cases", sum(len(c["ends"]["o200k"]) for c in cases), "o200k pieces")
