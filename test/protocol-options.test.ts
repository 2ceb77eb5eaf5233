/**
 * One source for the protocol's option lists. The sidecar's params and the pool's wire items
 * take the API's option table (api/options.ts: PROMPT_OPTION_NAMES, MESSAGE_OPTION_NAMES,
 * ROLLOUT_OPTION_NAMES); the Python client writes its lists out in Python, so they are checked
 * against the table here: every literal list of option names anywhere in the package, and the
 * options the client's method-level calls take. Skipped, with a message, only where python3 is
 * absent.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { MESSAGE_OPTION_NAMES, PROMPT_OPTION_NAMES, ROLLOUT_OPTION_NAMES } from "../src/api/options.js";
import { checkParam, messageOptions, promptOptions } from "../src/serve/protocol.js";
import { repoPath } from "./helpers/paths.js";

const PROMPT: string[] = [...PROMPT_OPTION_NAMES].sort();
const MESSAGE: string[] = [...MESSAGE_OPTION_NAMES].sort();
const ALL = [...new Set([...PROMPT, ...MESSAGE])].sort();
const sorted = (xs: Iterable<string>) => [...xs].sort();
const options = (xs: Iterable<string>) => sorted([...xs].filter((x) => ALL.includes(x)));

test("the option table: prompt, message and rollout options", () => {
  assert.ok(PROMPT.includes("tools") && PROMPT.includes("continue_final_message") && PROMPT.length >= 7);
  for (const m of MESSAGE) assert.ok(PROMPT.includes(m), m);
  assert.ok(!MESSAGE.includes("tools") && !MESSAGE.includes("add_generation_prompt"));
  assert.deepEqual(sorted(ROLLOUT_OPTION_NAMES), PROMPT.filter((k) => k !== "add_generation_prompt" && k !== "continue_final_message"));
});

test("the sidecar reads exactly the table's options", () => {
  for (const method of ["count_prompt", "encode_prompt", "render_prompt", "fits", "trim_to_fit", "tokenize_trajectory", "tokenize_rollout"]) {
    for (const k of [...PROMPT, "messages"]) assert.doesNotThrow(() => checkParam(method, k), `${method} ${k}`);
    assert.throws(() => checkParam(method, "message"), { code: "DT_INVALID_OPTION" });
  }
  for (const k of [...MESSAGE, "message"]) assert.doesNotThrow(() => checkParam("count_message", k), k);
  for (const k of PROMPT.filter((x) => !MESSAGE.includes(x))) assert.throws(() => checkParam("count_message", k), { code: "DT_INVALID_OPTION" }, k);
  const every = Object.fromEntries([...ALL, "messages", "conversation_id", "unrelated"].map((k) => [k, 1]));
  assert.deepEqual(sorted(Object.keys(promptOptions(every))), PROMPT);
  assert.deepEqual(sorted(Object.keys(messageOptions(every))), MESSAGE);
});

const python = spawnSync("python3", ["--version"]).status === 0 ? "python3" : null;

/** The package's literal lists of option names (by AST, wherever they are) and its client methods' options. */
const SCRIPT = String.raw`
import ast, inspect, json, pathlib, sys
import deltatok
names = set(json.loads(sys.argv[1]))
pkg = pathlib.Path(deltatok.__file__).parent
lists = []
for f in sorted(pkg.rglob("*.py")):
    for node in ast.walk(ast.parse(f.read_text(encoding="utf-8"), str(f))):
        if isinstance(node, (ast.Tuple, ast.List, ast.Set)) and node.elts and all(isinstance(e, ast.Constant) and isinstance(e.value, str) for e in node.elts):
            vals = [e.value for e in node.elts]
            if len(names.intersection(vals)) >= 2 and set(vals) <= names | {"messages", "message"}:
                lists.append({"where": "%s:%d" % (f.name, node.lineno), "names": vals})
methods = {}
for m in ["count_prompt", "encode_prompt", "render_prompt", "tokenize_trajectory", "tokenize_rollout", "count_message", "message_counter"]:
    methods[m] = [p for p in inspect.signature(getattr(deltatok.DeltatokClient, m)).parameters if p != "self"]
print(json.dumps({"lists": lists, "methods": methods}))
`;

test("the Python client's option lists are the table's", { skip: python === null ? "python3 is not installed" : false }, () => {
  const r = spawnSync(python as string, ["-c", SCRIPT, JSON.stringify(ALL)], {
    encoding: "utf8",
    env: { ...process.env, PYTHONPATH: repoPath("clients", "python", "src") },
  });
  assert.equal(r.status, 0, r.stderr);
  const got = JSON.parse(r.stdout) as { lists: Array<{ where: string; names: string[] }>; methods: Record<string, string[]> };
  // the client sends tools apart from the other prompt options
  const allowed = [PROMPT, PROMPT.filter((k) => k !== "tools"), MESSAGE].map((xs) => JSON.stringify(xs));
  assert.ok(got.lists.length >= 2, `the scan finds the client's lists: ${JSON.stringify(got.lists)}`);
  for (const l of got.lists) {
    assert.ok(allowed.includes(JSON.stringify(options(l.names))), `${l.where}: ${JSON.stringify(l.names)} is not the prompt or the message option list of src/api/options.ts`);
  }
  const m = got.methods;
  for (const name of ["count_prompt", "encode_prompt", "render_prompt"]) assert.deepEqual(options(m[name] ?? []), PROMPT, name);
  assert.deepEqual(options(m.tokenize_rollout ?? []), sorted(ROLLOUT_OPTION_NAMES), "tokenize_rollout");
  // trajectories refuse a continued final message (transformers: no assistant mask with it)
  assert.deepEqual(options(m.tokenize_trajectory ?? []), PROMPT.filter((k) => k !== "continue_final_message"), "tokenize_trajectory");
  for (const name of ["count_message", "message_counter"]) assert.deepEqual(options(m[name] ?? []), MESSAGE, name);
});
