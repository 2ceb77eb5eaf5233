// Writes src/encoder/regex/oniguruma-tables.ts: the code point sets of the Oniguruma that the Rust
// `tokenizers` crate runs (npm `tokenizers`, a devDependency), read off the binding itself. Every
// set is enumerated by running `\p{name}` (or `[[:name:]]`, `\s`, ...) as a `Split` pre-tokenizer
// with behavior "Removed" over a text holding every Unicode scalar value once: the code points the
// pattern removed are its members. No Unicode data file is read, so the tables are Oniguruma's own,
// whatever Unicode version the running Node's ICU has.
//
// Run: node scripts/make-oniguruma-tables.mjs   (about a minute; rewrites the file)
import { writeFileSync } from "node:fs";
import { createRequire } from "node:module";

const require = createRequire(import.meta.url);
const { Tokenizer } = require("tokenizers");
const bindingVersion = require("tokenizers/package.json").version;

const MAX = 0x110000;
const isSurrogate = (c) => c >= 0xd800 && c <= 0xdfff;
const scalars = [];
for (let c = 0; c < MAX; c++) if (!isSurrogate(c)) scalars.push(c);

function textOf(cps) {
  let s = "";
  for (let i = 0; i < cps.length; i += 20_000) s += String.fromCodePoint(...cps.slice(i, i + 20_000));
  return s;
}
const ALL = textOf(scalars);

function splitter(pattern) {
  const json = {
    version: "1.0", truncation: null, padding: null, added_tokens: [], normalizer: null,
    pre_tokenizer: { type: "Split", pattern: { Regex: pattern }, behavior: "Removed", invert: false },
    post_processor: null, decoder: null, model: { type: "WordLevel", vocab: { a: 0 }, unk_token: "a" },
  };
  return Tokenizer.fromString(JSON.stringify(json)).getPreTokenizer();
}

/** Membership (Uint8Array over 0..0x10FFFF) of a one-code-point pattern, or null when Oniguruma rejects it. */
function members(pattern, universe = scalars, text = ALL) {
  let pre;
  try {
    pre = splitter(pattern);
  } catch {
    return null;
  }
  const m = new Uint8Array(MAX);
  for (const c of universe) m[c] = 1;
  // offsets are code point indexes into the text
  for (const [, [s, e]] of pre.preTokenizeString(text)) for (let i = s; i < e; i++) m[universe[i]] = 0;
  return m;
}

const same = (a, b) => a.every((v, i) => v === b[i]);
const key = (name) => name.toLowerCase().replace(/[ _-]/g, "");

function rangesOf(m) {
  const out = [];
  for (let c = 0; c < MAX; c++) {
    if (!m[c]) continue;
    let e = c;
    while (e + 1 < MAX && m[e + 1]) e++;
    out.push([c, e]);
    c = e;
  }
  return out;
}
/** Ranges as base-36 deltas: gap from the previous end, then length − 1, comma-separated. */
function encodeRanges(rs) {
  let prev = -1;
  const parts = [];
  for (const [s, e] of rs) {
    parts.push((s - prev - 1).toString(36), (e - s).toString(36));
    prev = e;
  }
  return parts.join(",");
}

// ---- General_Category: a partition of the code space --------------------------------------------
const GC = {
  Lu: "Uppercase_Letter", Ll: "Lowercase_Letter", Lt: "Titlecase_Letter", Lm: "Modifier_Letter", Lo: "Other_Letter",
  Mn: "Nonspacing_Mark", Mc: "Spacing_Mark", Me: "Enclosing_Mark",
  Nd: "Decimal_Number", Nl: "Letter_Number", No: "Other_Number",
  Pc: "Connector_Punctuation", Pd: "Dash_Punctuation", Ps: "Open_Punctuation", Pe: "Close_Punctuation",
  Pi: "Initial_Punctuation", Pf: "Final_Punctuation", Po: "Other_Punctuation",
  Sm: "Math_Symbol", Sc: "Currency_Symbol", Sk: "Modifier_Symbol", So: "Other_Symbol",
  Zs: "Space_Separator", Zl: "Line_Separator", Zp: "Paragraph_Separator",
  Cc: "Control", Cf: "Format", Co: "Private_Use", Cn: "Unassigned", Cs: "Surrogate",
};
const GC_GROUPS = {
  L: ["Letter", ["Lu", "Ll", "Lt", "Lm", "Lo"]], LC: ["Cased_Letter", ["Lu", "Ll", "Lt"]], M: ["Mark", ["Mn", "Mc", "Me"]],
  N: ["Number", ["Nd", "Nl", "No"]], P: ["Punctuation", ["Pc", "Pd", "Ps", "Pe", "Pi", "Pf", "Po"]],
  S: ["Symbol", ["Sm", "Sc", "Sk", "So"]], Z: ["Separator", ["Zs", "Zl", "Zp"]], C: ["Other", ["Cc", "Cf", "Co", "Cn", "Cs"]],
};
const gcNames = Object.keys(GC);
const gcOf = new Uint8Array(MAX).fill(255);
for (let i = 0; i < gcNames.length; i++) {
  const short = gcNames[i];
  if (short === "Cs") continue;
  const m = members(`\\p{${short}}`);
  if (m === null) throw new Error(`Oniguruma rejects \\p{${short}}`);
  const long = members(`\\p{${GC[short]}}`);
  if (long === null || !same(m, long)) throw new Error(`\\p{${GC[short]}} differs from \\p{${short}}`);
  for (let c = 0; c < MAX; c++) if (m[c]) {
    if (gcOf[c] !== 255) throw new Error(`U+${c.toString(16)} in two categories`);
    gcOf[c] = i;
  }
}
for (let c = 0xd800; c <= 0xdfff; c++) gcOf[c] = gcNames.indexOf("Cs");
for (let c = 0; c < MAX; c++) if (gcOf[c] === 255) throw new Error(`U+${c.toString(16)} has no category`);
for (const [g, [long, leaves]] of Object.entries(GC_GROUPS)) {
  const want = new Uint8Array(MAX);
  for (let c = 0; c < MAX; c++) if (!isSurrogate(c)) want[c] = leaves.includes(gcNames[gcOf[c]]) ? 1 : 0;
  for (const n of [g, long]) {
    const got = members(`\\p{${n}}`);
    if (got === null || !same(got, want)) throw new Error(`\\p{${n}} is not the union of ${leaves.join(" ")}`);
  }
}

function runsOf(ofArray, names) {
  const parts = [];
  for (let c = 0; c < MAX; ) {
    let e = c;
    while (e + 1 < MAX && ofArray[e + 1] === ofArray[c]) e++;
    parts.push(names[ofArray[c]] + (e - c).toString(36));
    c = e + 1;
  }
  return parts.join(",");
}

// ---- Script: a partition too (Unknown for unassigned code points) ------------------------------
// [long name, short name]; Unicode 16.0's scripts (Oniguruma rejects names it does not know, which
// the generator reports).
const SCRIPTS = [
  ["Adlam", "Adlm"], ["Ahom", "Ahom"], ["Anatolian_Hieroglyphs", "Hluw"], ["Arabic", "Arab"], ["Armenian", "Armn"],
  ["Avestan", "Avst"], ["Balinese", "Bali"], ["Bamum", "Bamu"], ["Bassa_Vah", "Bass"], ["Batak", "Batk"], ["Bengali", "Beng"],
  ["Bhaiksuki", "Bhks"], ["Bopomofo", "Bopo"], ["Brahmi", "Brah"], ["Braille", "Brai"], ["Buginese", "Bugi"], ["Buhid", "Buhd"],
  ["Canadian_Aboriginal", "Cans"], ["Carian", "Cari"], ["Caucasian_Albanian", "Aghb"], ["Chakma", "Cakm"], ["Cham", "Cham"],
  ["Cherokee", "Cher"], ["Chorasmian", "Chrs"], ["Common", "Zyyy"], ["Coptic", "Copt"], ["Cuneiform", "Xsux"], ["Cypriot", "Cprt"],
  ["Cypro_Minoan", "Cpmn"], ["Cyrillic", "Cyrl"], ["Deseret", "Dsrt"], ["Devanagari", "Deva"], ["Dives_Akuru", "Diak"],
  ["Dogra", "Dogr"], ["Duployan", "Dupl"], ["Egyptian_Hieroglyphs", "Egyp"], ["Elbasan", "Elba"], ["Elymaic", "Elym"],
  ["Ethiopic", "Ethi"], ["Garay", "Gara"], ["Georgian", "Geor"], ["Glagolitic", "Glag"], ["Gothic", "Goth"], ["Grantha", "Gran"],
  ["Greek", "Grek"], ["Gujarati", "Gujr"], ["Gunjala_Gondi", "Gong"], ["Gurmukhi", "Guru"], ["Gurung_Khema", "Gukh"], ["Han", "Hani"],
  ["Hangul", "Hang"], ["Hanifi_Rohingya", "Rohg"], ["Hanunoo", "Hano"], ["Hatran", "Hatr"], ["Hebrew", "Hebr"], ["Hiragana", "Hira"],
  ["Imperial_Aramaic", "Armi"], ["Inherited", "Zinh"], ["Inscriptional_Pahlavi", "Phli"], ["Inscriptional_Parthian", "Prti"],
  ["Javanese", "Java"], ["Kaithi", "Kthi"], ["Kannada", "Knda"], ["Katakana", "Kana"], ["Kawi", "Kawi"], ["Kayah_Li", "Kali"],
  ["Kharoshthi", "Khar"], ["Khitan_Small_Script", "Kits"], ["Khmer", "Khmr"], ["Khojki", "Khoj"], ["Khudawadi", "Sind"],
  ["Kirat_Rai", "Krai"], ["Lao", "Laoo"], ["Latin", "Latn"], ["Lepcha", "Lepc"], ["Limbu", "Limb"], ["Linear_A", "Lina"],
  ["Linear_B", "Linb"], ["Lisu", "Lisu"], ["Lycian", "Lyci"], ["Lydian", "Lydi"], ["Mahajani", "Mahj"], ["Makasar", "Maka"],
  ["Malayalam", "Mlym"], ["Mandaic", "Mand"], ["Manichaean", "Mani"], ["Marchen", "Marc"], ["Masaram_Gondi", "Gonm"],
  ["Medefaidrin", "Medf"], ["Meetei_Mayek", "Mtei"], ["Mende_Kikakui", "Mend"], ["Meroitic_Cursive", "Merc"],
  ["Meroitic_Hieroglyphs", "Mero"], ["Miao", "Plrd"], ["Modi", "Modi"], ["Mongolian", "Mong"], ["Mro", "Mroo"], ["Multani", "Mult"],
  ["Myanmar", "Mymr"], ["Nabataean", "Nbat"], ["Nag_Mundari", "Nagm"], ["Nandinagari", "Nand"], ["New_Tai_Lue", "Talu"],
  ["Newa", "Newa"], ["Nko", "Nkoo"], ["Nushu", "Nshu"], ["Nyiakeng_Puachue_Hmong", "Hmnp"], ["Ogham", "Ogam"], ["Ol_Chiki", "Olck"],
  ["Ol_Onal", "Onao"], ["Old_Hungarian", "Hung"], ["Old_Italic", "Ital"], ["Old_North_Arabian", "Narb"], ["Old_Permic", "Perm"],
  ["Old_Persian", "Xpeo"], ["Old_Sogdian", "Sogo"], ["Old_South_Arabian", "Sarb"], ["Old_Turkic", "Orkh"], ["Old_Uyghur", "Ougr"],
  ["Oriya", "Orya"], ["Osage", "Osge"], ["Osmanya", "Osma"], ["Pahawh_Hmong", "Hmng"], ["Palmyrene", "Palm"],
  ["Pau_Cin_Hau", "Pauc"], ["Phags_Pa", "Phag"], ["Phoenician", "Phnx"], ["Psalter_Pahlavi", "Phlp"], ["Rejang", "Rjng"],
  ["Runic", "Runr"], ["Samaritan", "Samr"], ["Saurashtra", "Saur"], ["Sharada", "Shrd"], ["Shavian", "Shaw"], ["Siddham", "Sidd"],
  ["SignWriting", "Sgnw"], ["Sinhala", "Sinh"], ["Sogdian", "Sogd"], ["Sora_Sompeng", "Sora"], ["Soyombo", "Soyo"],
  ["Sundanese", "Sund"], ["Sunuwar", "Sunu"], ["Syloti_Nagri", "Sylo"], ["Syriac", "Syrc"], ["Tagalog", "Tglg"],
  ["Tagbanwa", "Tagb"], ["Tai_Le", "Tale"], ["Tai_Tham", "Lana"], ["Tai_Viet", "Tavt"], ["Takri", "Takr"], ["Tamil", "Taml"],
  ["Tangsa", "Tnsa"], ["Tangut", "Tang"], ["Telugu", "Telu"], ["Thaana", "Thaa"], ["Thai", "Thai"], ["Tibetan", "Tibt"],
  ["Tifinagh", "Tfng"], ["Tirhuta", "Tirh"], ["Todhri", "Todr"], ["Toto", "Toto"], ["Tulu_Tigalari", "Tutg"], ["Ugaritic", "Ugar"],
  ["Vai", "Vaii"], ["Vithkuqi", "Vith"], ["Wancho", "Wcho"], ["Warang_Citi", "Wara"], ["Yezidi", "Yezi"], ["Yi", "Yiii"],
  ["Zanabazar_Square", "Zanb"], ["Unknown", "Zzzz"],
];
const EXTRA_SCRIPT_ALIASES = { Qaac: "Coptic", Qaai: "Inherited" };
// Unassigned and private-use code points are all Unknown (checked below), so the scripts are
// enumerated over the other code points only: seven times less text.
const cn = gcNames.indexOf("Cn");
const co = gcNames.indexOf("Co");
const assigned = scalars.filter((c) => gcOf[c] !== cn && gcOf[c] !== co);
const ASSIGNED = textOf(assigned);
const unknownAll = members("\\p{Unknown}");
for (const c of scalars) if ((gcOf[c] === cn || gcOf[c] === co) !== (unknownAll[c] === 1)) throw new Error(`U+${c.toString(16)}: Unknown is not Cn + Co`);
const scriptOf = new Uint8Array(MAX).fill(255);
const scriptNames = [];
for (const [long, short] of SCRIPTS) {
  const m = long === "Unknown" ? unknownAll : members(`\\p{${long}}`, assigned, ASSIGNED);
  if (m === null) throw new Error(`Oniguruma rejects \\p{${long}}`);
  const s = long === "Unknown" ? members(`\\p{${short}}`) : members(`\\p{${short}}`, assigned, ASSIGNED);
  if (s === null || !same(m, s)) throw new Error(`\\p{${short}} differs from \\p{${long}}`);
  const idx = scriptNames.length;
  scriptNames.push(long);
  for (let c = 0; c < MAX; c++) if (m[c]) {
    if (scriptOf[c] !== 255) throw new Error(`U+${c.toString(16)} in two scripts`);
    scriptOf[c] = idx;
  }
}
for (const [alias, long] of Object.entries(EXTRA_SCRIPT_ALIASES)) {
  const m = members(`\\p{${alias}}`, assigned, ASSIGNED);
  const idx = scriptNames.indexOf(long);
  if (m === null || !assigned.every((c) => m[c] === (scriptOf[c] === idx ? 1 : 0))) throw new Error(`\\p{${alias}} is not ${long}`);
}
const unknown = scriptNames.indexOf("Unknown");
for (let c = 0; c < MAX; c++) if (scriptOf[c] === 255) {
  if (!isSurrogate(c)) throw new Error(`U+${c.toString(16)} has no script`);
  scriptOf[c] = unknown;
}
// a later Unicode version's script must not be known to this Oniguruma (else the list above is short)
for (const later of ["Beria_Erfe", "Chisoi", "Sidetic", "Tai_Yo", "Tolong_Siki"]) {
  if (members(`\\p{${later}}`) !== null) throw new Error(`Oniguruma knows \\p{${later}}: add the newer scripts`);
}

// ---- other sets: escapes, POSIX brackets, Oniguruma's ctype names, binary properties -------------
// Oniguruma answers some of these differently inside a bracket: below U+0100 an escape or ctype
// name outside a class reads the Latin-1 ctype table (where ² ³ ¹ ¼ ½ ¾ are word characters),
// inside one the Unicode ranges (where they are not). So each is enumerated both ways; "in:" keys
// hold the bracketed form.
const SETS = {
  // escapes and their own classes
  "\\s": "\\s", "\\w": "\\w", "\\d": "\\d", "\\h": "\\h",
  "in:\\s": "[\\s]", "in:\\w": "[\\w]", "in:\\d": "[\\d]", "in:\\h": "[\\h]",
  // POSIX brackets (inside a character class)
  ...Object.fromEntries(["alnum", "alpha", "ascii", "blank", "cntrl", "digit", "graph", "lower", "print", "punct", "space", "upper", "xdigit", "word"]
    .map((n) => [`[:${n}:]`, `[[:${n}:]]`])),
};
// \p{...} names whose sets are not General_Category or Script values
const PROPERTY_NAMES = [
  "Alnum", "Alpha", "Blank", "Cntrl", "Digit", "Graph", "Lower", "Print", "Punct", "Space", "Upper", "XDigit", "Word", "ASCII", "Any", "Assigned",
  "Alphabetic", "Uppercase", "Lowercase", "White_Space", "WSpace", "Cased", "Dash",
  "Emoji", "Emoji_Component", "Emoji_Modifier", "Emoji_Modifier_Base", "Emoji_Presentation", "Extended_Pictographic",
  "Hex_Digit", "ASCII_Hex_Digit", "Ideographic", "Unified_Ideograph", "Join_Control", "Math", "Pattern_White_Space",
  "Quotation_Mark", "Regional_Indicator", "Variation_Selector", "Default_Ignorable_Code_Point",
];
// Oniguruma knows more binary properties (ID_Start, Grapheme_Base, ...) and the blocks (In_...);
// they are left out to keep the tables small, and a pattern naming one is not translated.
for (const n of PROPERTY_NAMES) {
  SETS[n] = `\\p{${n}}`;
  SETS[`in:${n}`] = `[\\p{${n}}]`;
}

const sets = {};
const encodedByValue = new Map();
const aliases = {};
for (const [name, pattern] of Object.entries(SETS)) {
  const m = members(pattern);
  if (m === null) throw new Error(`Oniguruma rejects ${pattern}`);
  const enc = encodeRanges(rangesOf(m));
  const existing = encodedByValue.get(enc);
  const k = name.startsWith("\\") || name.startsWith("[:") || name.startsWith("in:\\") ? name : name.startsWith("in:") ? `in:${key(name.slice(3))}` : key(name);
  if (existing !== undefined) aliases[k] = existing;
  else {
    encodedByValue.set(enc, k);
    sets[k] = enc;
  }
}

// negations are complements, in both contexts
const complementOf = (m) => m.map((v, c) => (isSurrogate(c) ? 0 : 1 - v));
for (const [neg, pos] of [["\\S", "\\s"], ["\\W", "\\w"], ["\\D", "\\d"], ["\\H", "\\h"], ["[\\S]", "[\\s]"], ["[\\W]", "[\\w]"], ["[^\\w]", "[\\w]"], ["\\P{Word}", "\\p{Word}"], ["[\\P{Alpha}]", "[\\p{Alpha}]"]]) {
  const a = members(neg);
  const b = members(pos);
  if (a === null || b === null || !same(a, complementOf(b))) throw new Error(`${neg} is not the complement of ${pos}`);
}
// General_Category and Script values mean the same inside a bracket (checked on a sample)
for (const n of ["L", "Lu", "N", "Nd", "No", "P", "S", "M", "Zs", "Cc", "Han", "Latin", "Common"]) {
  if (!same(members(`\\p{${n}}`), members(`[\\p{${n}}]`))) throw new Error(`[\\p{${n}}] differs from \\p{${n}}`);
}

// a property name that is a GC or script value must not shadow another set (Oniguruma resolves
// each name to one set; the translator looks GC names up first, then scripts, then these)
for (const n of Object.keys(sets)) if (!n.startsWith("\\") && !n.startsWith("[:") && !n.startsWith("in:")) {
  if (gcNames.some((g) => key(g) === n) || scriptNames.some((s) => key(s) === n)) throw new Error(`${n} is ambiguous`);
}

// ---- the Whitespace pre-tokenizer: the `regex` crate, not Oniguruma -----------------------------
// tokenizers' Whitespace keeps the matches of `\w+|[^\w\s]+` compiled by the `regex` crate,
// whose \w and \s are its own tables. Read off the pre-tokenizer itself: with every code point
// followed by a space, a code point missing from the pieces is \s; followed by "a" and a space, a
// \w code point makes one piece with the "a", any other two.
function whitespacePieces(text) {
  const json = {
    version: "1.0", truncation: null, padding: null, added_tokens: [], normalizer: null, pre_tokenizer: { type: "Whitespace" },
    post_processor: null, decoder: null, model: { type: "WordLevel", vocab: { a: 0 }, unk_token: "a" },
  };
  return Tokenizer.fromString(JSON.stringify(json)).getPreTokenizer().preTokenizeString(text);
}
const rxSpace = new Uint8Array(MAX);
const rxWord = new Uint8Array(MAX);
{
  for (const c of scalars) rxSpace[c] = 1;
  let text = "";
  const parts = [];
  for (const c of scalars) parts.push(String.fromCodePoint(c), " ");
  for (let i = 0; i < parts.length; i += 40_000) text += parts.slice(i, i + 40_000).join("");
  for (const [, [st]] of whitespacePieces(text)) rxSpace[scalars[st / 2]] = 0;
  const parts2 = [];
  for (const c of scalars) parts2.push(String.fromCodePoint(c), "a ");
  let text2 = "";
  for (let i = 0; i < parts2.length; i += 40_000) text2 += parts2.slice(i, i + 40_000).join("");
  for (const [, [st, en]] of whitespacePieces(text2)) if (st % 3 === 0 && en - st === 2) rxWord[scalars[st / 3]] = 1;
  if (rxSpace[0x20] !== 1 || rxWord[0x61] !== 1 || rxWord[0x21] !== 0) throw new Error("the Whitespace enumeration went wrong");
}
sets["rx:\\w"] = encodeRanges(rangesOf(rxWord));
sets["rx:\\s"] = encodeRanges(rangesOf(rxSpace));

const unicodeVersion = (() => {
  // the newest version whose first new letters Oniguruma knows
  const lt = gcNames.indexOf("Lo");
  if (gcOf[0x10d4a] === lt) return "16.0"; // Garay, new in 16.0
  if (gcOf[0x2ebf0] === lt) return "15.1"; // CJK Extension I
  return "older than 15.1";
})();

const wrap = (s) => {
  const lines = [];
  for (let i = 0; i < s.length; i += 96) lines.push(JSON.stringify(s.slice(i, i + 96)));
  return lines.join(" +\n  ");
};
const out = `/**
 * Oniguruma's Unicode tables, as the Rust \`tokenizers\` crate runs them (npm \`tokenizers\`
 * ${bindingVersion}, Unicode ${unicodeVersion}). GENERATED by scripts/make-oniguruma-tables.mjs from the
 * binding itself; do not edit. The translator (oniguruma.ts) builds every class from these, never
 * from the running Node's \\p{...}, whose Unicode version differs between Node releases.
 *
 * Encoding. A partition: comma-separated runs \`<value><length − 1, base 36>\` covering
 * U+0000..U+10FFFF in order. A set: comma-separated base-36 numbers, pairs of (gap after the
 * previous range's end, range length − 1).
 *
 * Layer: load.
 */

/** Oniguruma's Unicode version (the newest version whose new letters it knows). */
export const ONIGURUMA_UNICODE = ${JSON.stringify(unicodeVersion)};

/** General_Category values (short name → long name), in the order the partition's indexes use. */
export const GC_VALUES: ReadonlyArray<readonly [string, string]> = ${JSON.stringify(gcNames.map((g) => [g, GC[g]]))};

/** Groups of General_Category values: short name → [long name, members]. */
export const GC_GROUPS: Readonly<Record<string, readonly [string, readonly string[]]>> = ${JSON.stringify(GC_GROUPS)};

/** General_Category partition; each run's value is the two-letter short name. */
export const GC_RUNS =
  ${wrap(runsOf(gcOf, gcNames))};

/** Script values [long, short], in the order the partition's indexes use. */
export const SCRIPT_VALUES: ReadonlyArray<readonly [string, string]> = ${JSON.stringify(SCRIPTS)};

/** Other script aliases Oniguruma accepts: alias → long name. */
export const SCRIPT_ALIASES: Readonly<Record<string, string>> = ${JSON.stringify(EXTRA_SCRIPT_ALIASES)};

/** Script partition; each run's value is its index in SCRIPT_VALUES, base 36, then \`:\`. */
export const SCRIPT_RUNS =
  ${wrap(runsOf(scriptOf, scriptNames.map((_, i) => i.toString(36) + ":")))};

/**
 * Other sets, keyed by \`\\s\`, \`\\w\`, \`\\d\`, \`\\h\`, a POSIX bracket \`[:name:]\`, or a \\p{...}
 * name in lower case without spaces, hyphens and underscores; \`in:\` + key is the same escape or
 * name inside a bracket, which Oniguruma answers from its Unicode ranges where outside a class it
 * reads its Latin-1 ctype table below U+0100 (\`\\w\` matches ¼ but \`[\\w]\` does not).
 * \`rx:\\w\` and \`rx:\\s\` are the \`regex\` crate's classes, which the Whitespace pre-tokenizer runs.
 */
export const SETS: Readonly<Record<string, string>> = {
${Object.entries(sets).map(([k, v]) => `  ${JSON.stringify(k)}:\n    ${wrap(v).replace(/\n/g, "\n  ")},`).join("\n")}
};

/** Keys whose set equals another key's. */
export const SET_ALIASES: Readonly<Record<string, string>> = ${JSON.stringify(aliases)};
`;
writeFileSync(new URL("../src/encoder/regex/oniguruma-tables.ts", import.meta.url), out);
console.log(`wrote src/encoder/regex/oniguruma-tables.ts (${out.length} bytes, Unicode ${unicodeVersion}, ${Object.keys(sets).length} sets, ${Object.keys(aliases).length} aliases)`);
