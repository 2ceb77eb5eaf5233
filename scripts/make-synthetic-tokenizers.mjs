// Writes small hand-made tokenizers that exercise the edge cases of the reuse invariant
// (test/fixtures/tokenizers/<name>/tokenizer.json). Run: node scripts/make-synthetic-tokenizers.mjs
import { mkdirSync, writeFileSync } from "node:fs";

const CHARS = [..."abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 .,:;!?'\"()[]{}<>|/\\_-+=*&^%$#@~`\n\t▁"];
function bpe({ merges }) {
  const vocab = { "<unk>": 0 };
  for (const c of CHARS) vocab[c] ??= Object.keys(vocab).length;
  for (const m of merges) vocab[m.replace(" ", "")] ??= Object.keys(vocab).length;
  return { type: "BPE", dropout: null, unk_token: "<unk>", continuing_subword_prefix: null, end_of_word_suffix: null,
    fuse_unk: true, byte_fallback: false, ignore_merges: false, vocab, merges };
}
const added = (id, content, extra = {}) => ({ id, content, single_word: false, lstrip: false, rstrip: false, normalized: false, special: true, ...extra });
// Added-token ids follow the vocabulary, as the Rust library assigns them.
const base = (model, added_tokens, pre, normalizer = null) => {
  const n = Object.keys(model.vocab).length;
  added_tokens.forEach((t, i) => (t.id = n + i));
  return { version: "1.0", truncation: null, padding: null, added_tokens, normalizer, pre_tokenizer: pre, post_processor: null, decoder: null, model };
};
const merges = ["▁ h", "▁h e", "▁ w", "h e", "l l", "o ▁"];
const tokenizers = {
  // Llama-2 / Mistral style: "▁" prepended to the first section only.
  "metaspace-first": base(bpe({ merges }), [added(1000, "<s>"), added(1001, "</s>"), added(1002, "[INST]"), added(1003, "[/INST]")],
    { type: "Metaspace", replacement: "▁", prepend_scheme: "first", split: false }),
  // An added token that is a prefix of another, one that starts inside another, and one that
  // starts before a boundary token and ends after it.
  "overlapping-added": base(bpe({ merges }), [added(1000, "<t>"), added(1001, "<t>x"), added(1002, "t>y", { special: false }), added(1003, "<u>"),
    added(1004, "q<t>r", { special: false })],
    { type: "Whitespace" }),
  // lstrip / rstrip flags on added tokens.
  "stripping-added": base(bpe({ merges }), [added(1000, "<a>", { rstrip: true }), added(1001, "<b>", { lstrip: true }), added(1002, "<c>")],
    { type: "Metaspace", replacement: "▁", prepend_scheme: "always", split: false }),
  // Metaspace with split: true. @huggingface/tokenizers 0.2 splits trailing runs of spaces
  // differently from Rust ("yo  "): kept to document that divergence (see COMPATIBILITY.md).
  "metaspace-split": base(bpe({ merges }), [added(1000, "<s>")],
    { type: "Metaspace", replacement: "▁", prepend_scheme: "always", split: true }),
};
for (const [name, json] of Object.entries(tokenizers)) {
  const dir = new URL(`../test/fixtures/tokenizers/${name}/`, import.meta.url);
  mkdirSync(dir, { recursive: true });
  writeFileSync(new URL("tokenizer.json", dir), JSON.stringify(json, null, 1) + "\n");
  writeFileSync(new URL("tokenizer_config.json", dir), JSON.stringify({ bos_token: "<s>", eos_token: "</s>",
    chat_template: "{% for m in messages %}[INST]{{ m.role }}: {{ m.content }}[/INST]{% endfor %}{% if add_generation_prompt %}<s>{% endif %}" }, null, 1) + "\n");
}
