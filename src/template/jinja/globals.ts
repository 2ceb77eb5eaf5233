/**
 * Template globals: Jinja2's defaults (`range` — the sandbox's size-limited one —, `dict`,
 * `lipsum`, `cycler`, `joiner`, `namespace`) and HF's `raise_exception` and `strftime_now`.
 *
 * Layer: template/jinja.
 */
import { PyError, typeError, valueError } from "./pyerror.js";
import { ENTRY_UNITS, OBJECT_UNITS, TUPLE_UNITS, dictGet, dictItems, dictKeys, dictSet, dictSize, isDict, isStr, newDict, pyList, pyStr, strOf, typeName } from "./ops.js";
import type { RenderState } from "./runtime.js";
import { naiveFrom, strftime, strftimeBound } from "./strftime.js";
import { Cycler, Joiner, Namespace, PyDict, PyFunction, PyRange } from "./values.js";

/** jinja2.sandbox.MAX_RANGE */
export const MAX_RANGE = 100000;

function intArg(v: unknown): number {
  if (typeof v === "number" && Number.isInteger(v)) return v;
  if (typeof v === "boolean") return v ? 1 : 0;
  if (typeof v === "bigint") return Number(v);
  throw typeError(`'${typeName(v)}' object cannot be interpreted as an integer`);
}

function noKwargs(name: string, kwargs: Map<string, unknown> | null): void {
  if (kwargs !== null && kwargs.size > 0) throw typeError(`${name}() takes no keyword arguments`);
}

/** dict(*args, **kwargs) (key order as Python builds it), charged to `rs` as it is built. */
function buildDict(rs: RenderState, fname: string, args: unknown[], kwargs: Map<string, unknown> | null): PyDict {
  if (args.length > 1) throw typeError(`${fname} expected at most 1 argument, got ${args.length}`);
  rs.charge(OBJECT_UNITS);
  const m = newDict();
  if (args.length === 1) {
    const src = args[0];
    if (isDict(src)) {
      rs.buildItems(dictSize(src));
      for (const k of dictKeys(src)) dictSet(m, k, dictGet(src, k), rs);
    } else {
      const items = pyList(src, rs);
      items.forEach((item, i) => {
        let pair: unknown[];
        try {
          pair = pyList(item, rs);
        } catch (e) {
          if (e instanceof PyError && e.code === "DT_TEMPLATE_BUDGET") throw e;
          throw typeError(`cannot convert dictionary update sequence element #${i} to a sequence`);
        }
        if (pair.length !== 2) {
          throw valueError(`dictionary update sequence element #${i} has length ${pair.length}; 2 is required`);
        }
        dictSet(m, pair[0], pair[1], rs);
      });
    }
  }
  if (kwargs !== null) for (const [k, v] of kwargs) dictSet(m, k, v, rs);
  return m;
}

const LOREM = "a ac accumsan ad adipiscing aenean aliquam aliquet amet ante aptent arcu at auctor augue bibendum blandit class commodo condimentum congue consectetuer consequat conubia convallis cras cubilia cum curabitur curae cursus dapibus diam dictum dictumst dignissim dis dolor donec dui duis egestas eget eleifend elementum elit enim erat eros est et etiam eu euismod facilisi facilisis fames faucibus felis fermentum feugiat fringilla fusce gravida habitant habitasse hac hendrerit hymenaeos iaculis id imperdiet in inceptos integer interdum ipsum justo lacinia lacus laoreet lectus leo libero ligula litora lobortis lorem luctus maecenas magna magnis malesuada massa mattis mauris metus mi molestie mollis montes morbi mus nam nascetur natoque nec neque netus nibh nisi nisl non nonummy nostra nulla nullam nunc odio orci ornare parturient pede pellentesque penatibus per pharetra phasellus placerat platea porta porttitor posuere potenti praesent pretium primis proin pulvinar purus quam quis quisque rhoncus ridiculus risus rutrum sagittis sapien scelerisque sed sem semper senectus sit sociis sociosqu sodales sollicitudin suscipit suspendisse taciti tellus tempor tempus tincidunt torquent tortor tristique turpis ullamcorper ultrices ultricies urna ut varius vehicula vel velit venenatis vestibulum vitae vivamus viverra volutpat vulputate".split(" ");

function lipsum(n: number, html: boolean, min: number, max: number): string {
  const rnd = (a: number, b: number): number => a + Math.floor(Math.random() * (b - a + 1));
  const result: string[] = [];
  for (let k = 0; k < n; k++) {
    let nextCapitalized = true;
    let lastComma = 0;
    let lastFullstop = 0;
    let last = "";
    const p: string[] = [];
    const len = rnd(min, max);
    for (let idx = 0; idx < len; idx++) {
      let word = "";
      do word = LOREM[rnd(0, LOREM.length - 1)] as string;
      while (word === last);
      last = word;
      if (nextCapitalized) {
        word = word[0]?.toUpperCase() + word.slice(1);
        nextCapitalized = false;
      }
      if (idx - rnd(3, 8) > lastComma) {
        lastComma = idx;
        lastFullstop += 2;
        word += ",";
      }
      if (idx - rnd(10, 20) > lastFullstop) {
        lastComma = lastFullstop = idx;
        word += ".";
        nextCapitalized = true;
      }
      p.push(word);
    }
    let para = p.join(" ");
    if (para.endsWith(",")) para = para.slice(0, -1) + ".";
    else if (!para.endsWith(".")) para += ".";
    result.push(para);
  }
  if (!html) return result.join("\n\n");
  return result.map((x) => `<p>${x.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;")}</p>`).join("\n");
}

function kw(kwargs: Map<string, unknown> | null, name: string, pos: unknown[], i: number, dflt: unknown): unknown {
  if (i < pos.length) return pos[i];
  if (kwargs !== null && kwargs.has(name)) return kwargs.get(name);
  return dflt;
}

export function makeGlobals(): Map<string, unknown> {
  const g = new Map<string, unknown>();
  g.set(
    "range",
    new PyFunction("safe_range", "function", (_rs: RenderState, args, kwargs) => {
      if (kwargs !== null && kwargs.size > 0) throw typeError(`safe_range() got an unexpected keyword argument '${kwargs.keys().next().value}'`);
      if (args.length === 0) throw typeError("range expected at least 1 argument, got 0");
      if (args.length > 3) throw typeError(`range expected at most 3 arguments, got ${args.length}`);
      const nums = args.map(intArg);
      let start = 0;
      let stop: number;
      let step = 1;
      if (nums.length === 1) stop = nums[0] as number;
      else {
        start = nums[0] as number;
        stop = nums[1] as number;
        if (nums.length === 3) step = nums[2] as number;
      }
      if (step === 0) throw valueError("range() arg 3 must not be zero");
      const r = new PyRange(start, stop, step);
      if (r.length > MAX_RANGE) {
        throw new PyError("OverflowError", `Range too big. The sandbox blocks ranges larger than MAX_RANGE (${MAX_RANGE}).`, "DT_TEMPLATE_SANDBOX");
      }
      return r;
    }),
  );
  g.set("dict", new PyFunction("dict", "type", (rs: RenderState, args, kwargs) => buildDict(rs, "dict", args, kwargs)));
  g.set(
    "namespace",
    new PyFunction("Namespace", "type", (rs: RenderState, args, kwargs) => {
      const m = buildDict(rs, "dict", args, kwargs);
      // the namespace's own attribute map, besides the dict it was built from
      rs.charge(OBJECT_UNITS + m.m.size * (ENTRY_UNITS + TUPLE_UNITS));
      const attrs = new Map<string, unknown>();
      for (const [k, v] of dictItems(m) as unknown[][]) attrs.set(typeof k === "string" ? k : pyStr(k, rs), v);
      return new Namespace(attrs);
    }),
  );
  g.set(
    "cycler",
    new PyFunction("Cycler", "type", (rs: RenderState, args, kwargs) => {
      noKwargs("Cycler", kwargs);
      if (args.length === 0) throw new PyError("RuntimeError", "at least one item has to be provided");
      rs.charge(OBJECT_UNITS);
      rs.buildItems(args.length);
      return new Cycler(args.slice());
    }),
  );
  g.set(
    "joiner",
    new PyFunction("Joiner", "type", (rs: RenderState, args, kwargs) => (rs.charge(OBJECT_UNITS), new Joiner(kw(kwargs, "sep", args, 0, ", ")))),
  );
  g.set(
    "lipsum",
    new PyFunction("generate_lorem_ipsum", "function", (rs: RenderState, args, kwargs) => {
      const n = intArg(kw(kwargs, "n", args, 0, 5));
      const html = Boolean(kw(kwargs, "html", args, 1, true));
      const min = intArg(kw(kwargs, "min", args, 2, 20));
      const max = intArg(kw(kwargs, "max", args, 3, 100));
      rs.addSteps(Math.max(0, n) * Math.max(0, max));
      rs.checkSize(Math.max(0, n) * Math.max(0, max) * 16);
      rs.charge(Math.max(0, n) * Math.max(0, max) * 16);
      return lipsum(n, html, min, max);
    }),
  );
  g.set(
    "raise_exception",
    new PyFunction("raise_exception", "function", (rs: RenderState, args, kwargs) => {
      let msg: unknown;
      if (args.length === 1 && (kwargs === null || kwargs.size === 0)) msg = args[0];
      else if (args.length === 0 && kwargs !== null && kwargs.size === 1 && kwargs.has("message")) msg = kwargs.get("message");
      else if (args.length === 0 && (kwargs === null || kwargs.size === 0)) {
        throw typeError("raise_exception() missing 1 required positional argument: 'message'");
      } else throw typeError(`raise_exception() takes 1 positional argument but ${args.length} were given`);
      throw new PyError("TemplateError", pyStr(msg, rs), "DT_TEMPLATE_RAISED");
    }),
  );
  g.set(
    "strftime_now",
    new PyFunction("strftime_now", "function", (rs: RenderState, args, kwargs) => {
      if (args.length > 1) throw typeError(`strftime_now() takes 1 positional argument but ${args.length} were given`);
      if (kwargs !== null) {
        for (const k of kwargs.keys()) if (k !== "fmt") throw typeError(`strftime_now() got an unexpected keyword argument '${k}'`);
        if (args.length === 1 && kwargs.has("fmt")) throw typeError("strftime_now() got multiple values for argument 'fmt'");
      }
      const fmt = kw(kwargs, "fmt", args, 0, undefined);
      if (fmt === undefined) throw typeError("strftime_now() missing 1 required positional argument: 'fmt'");
      if (!isStr(fmt)) throw typeError(`strftime() argument 1 must be str, not ${typeName(fmt)}`);
      // (its largest possible expansion, charged before it is built)
      const f = strOf(fmt);
      rs.charge(2 * strftimeBound(f));
      const r = strftime(f, naiveFrom(rs.now));
      rs.checkSize(r.length);
      return r;
    }),
  );
  return g;
}
