// Checks the import graph of src/: no import from a higher layer (docs/CONVENTIONS.md; type-only
// imports included) and no cycle among the imports that remain at run time (a type-only import
// is erased by tsc and orders no module evaluation). Exits 1 listing every problem found.
//
//   node scripts/check-imports.mjs [--graph] [--src DIR]     (run by `npm test`; DIR: another tree)
//
// A file's layer is the longest prefix of its path (relative to src/, without extension) listed
// in LAYERS; a file may import files of its own layer or of layers listed before it. Files
// under no listed prefix are reported too, so that a new folder gets a place.
import { readFileSync, readdirSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const srcArg = process.argv.indexOf("--src");
const SRC = srcArg >= 0 ? resolve(process.argv[srcArg + 1]) : join(ROOT, "src");

/** Layers, lowest first; a group of names in one entry is one layer (they may not import each other). */
const LAYERS = [
  ["errors", "package-info"],
  ["json"],
  ["template/jinja"],
  ["template/incremental"],
  ["template"],
  ["encoder"],
  ["load"],
  ["render"],
  ["tokenize"],
  ["cache"],
  ["splice"],
  ["corpus"],
  ["api"],
  // a corpus line's replay drives a Deltatok: the corpus layer's part above the API
  ["corpus/replay"],
  ["adapters"],
  ["pool"],
  ["queue"],
  ["serve"],
  ["cli"],
  ["index"],
];

function walk(dir) {
  const out = [];
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) out.push(...walk(p));
    else if (/\.(ts|mts)$/.test(name) && !name.endsWith(".d.ts")) out.push(p);
  }
  return out;
}

/**
 * Relative imports of a source file (static imports, re-exports, dynamic imports), each with
 * whether it is type-only (`import type`, or every name marked `type`): erased at compile time.
 */
function importsOf(text) {
  const specs = [];
  const noComments = text.replace(/\/\*[\s\S]*?\*\//g, "").replace(/^\s*\/\/.*$/gm, "");
  const re = /(?:^|[\s;])((?:import|export)\s[^'";]*?)\sfrom\s*["']([^"']+)["']|(?:^|[\s;])import\s*["']([^"']+)["']|import\(\s*["']([^"']+)["']\s*\)/g;
  for (const m of noComments.matchAll(re)) {
    const spec = m[2] ?? m[3] ?? m[4];
    if (spec === undefined || !spec.startsWith(".")) continue;
    let typeOnly = false;
    if (m[1] !== undefined) {
      const clause = m[1].replace(/^(import|export)\s+/, "");
      if (/^type\s/.test(clause)) typeOnly = true;
      else {
        const braces = /^\{([^}]*)\}$/.exec(clause.trim());
        if (braces !== null) {
          const names = braces[1].split(",").map((x) => x.trim()).filter((x) => x !== "");
          typeOnly = names.length > 0 && names.every((x) => /^type\s/.test(x));
        }
      }
    }
    specs.push({ spec, typeOnly });
  }
  return specs;
}

function layerOf(rel) {
  const noExt = rel.replace(/\.(ts|mts)$/, "");
  let best = null;
  LAYERS.forEach((group, rank) => {
    for (const prefix of group) {
      if (noExt === prefix || noExt.startsWith(prefix + "/")) {
        if (best === null || prefix.length > best.prefix.length) best = { prefix, rank };
      }
    }
  });
  return best;
}

const files = walk(SRC);
/** every import (layer check) */
const graph = new Map();
/** imports that remain at run time (cycle check: type-only imports are erased and order nothing) */
const runtimeGraph = new Map();
const problems = [];
for (const f of files) {
  const rel = relative(SRC, f).split("\\").join("/");
  const deps = [];
  const runtime = [];
  for (const { spec, typeOnly } of importsOf(readFileSync(f, "utf8"))) {
    const target = relative(SRC, resolve(dirname(f), spec.replace(/\.js$/, ".ts"))).split("\\").join("/");
    deps.push(target);
    if (!typeOnly) runtime.push(target);
  }
  graph.set(rel, deps);
  runtimeGraph.set(rel, runtime);
}

for (const [from, deps] of graph) {
  const lf = layerOf(from);
  if (lf === null) {
    problems.push(`no layer: ${from} (add its folder to LAYERS in scripts/check-imports.mjs)`);
    continue;
  }
  for (const to of deps) {
    if (!graph.has(to)) {
      problems.push(`unresolved: ${from} imports ${to}`);
      continue;
    }
    const lt = layerOf(to);
    if (lt === null) continue;
    if (lt.rank > lf.rank || (lt.rank === lf.rank && lt.prefix !== lf.prefix)) {
      problems.push(`upward: ${from} (${lf.prefix}) imports ${to} (${lt.prefix})`);
    }
  }
}

// cycles among run-time imports: Tarjan's strongly connected components; each component of more than one file (or a
// file importing itself) is reported with one cycle through it
let index = 0;
const idx = new Map();
const low = new Map();
const stack = [];
const on = new Set();
const sccs = [];
function strong(v) {
  idx.set(v, index);
  low.set(v, index);
  index++;
  stack.push(v);
  on.add(v);
  for (const w of runtimeGraph.get(v) ?? []) {
    if (!runtimeGraph.has(w)) continue;
    if (!idx.has(w)) {
      strong(w);
      low.set(v, Math.min(low.get(v), low.get(w)));
    } else if (on.has(w)) low.set(v, Math.min(low.get(v), idx.get(w)));
  }
  if (low.get(v) === idx.get(v)) {
    const comp = [];
    let w;
    do {
      w = stack.pop();
      on.delete(w);
      comp.push(w);
    } while (w !== v);
    if (comp.length > 1 || (runtimeGraph.get(v) ?? []).includes(v)) sccs.push(comp);
  }
}
for (const v of runtimeGraph.keys()) if (!idx.has(v)) strong(v);

function cycleIn(comp) {
  const set = new Set(comp);
  const start = [...comp].sort()[0];
  // breadth-first from start back to start within the component
  const prev = new Map([[start, null]]);
  const queue = [start];
  while (queue.length > 0) {
    const v = queue.shift();
    for (const w of runtimeGraph.get(v) ?? []) {
      if (!set.has(w)) continue;
      if (w === start) {
        const path = [start];
        for (let x = v; x !== start; x = prev.get(x)) path.splice(1, 0, x);
        return [...path, start];
      }
      if (!prev.has(w)) {
        prev.set(w, v);
        queue.push(w);
      }
    }
  }
  return comp;
}
for (const comp of sccs) problems.push(`cycle (${comp.length} files): ${cycleIn(comp).join(" -> ")}`);

if (process.argv.includes("--graph")) {
  for (const [from, deps] of [...graph].sort()) process.stdout.write(`${from}: ${deps.join(", ")}\n`);
}
if (problems.length > 0) {
  process.stderr.write(`check-imports: ${problems.length} problem(s)\n${problems.map((p) => `  ${p}`).join("\n")}\n`);
  process.exit(1);
}
process.stdout.write(`check-imports: ${graph.size} files, no cycles, no upward imports\n`);
