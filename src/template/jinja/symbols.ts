/**
 * Jinja2's compile-time name resolution (its `idtracking` module), reimplemented: which names
 * a frame (template root, loop body, macro, ...) defines, and how each is initialised when the
 * frame is entered — as a parameter, resolved from the context, aliased from an outer frame, or
 * left undefined. Reproducing it exactly gives Jinja2's scoping: a `{% set %}` inside a loop
 * does not leak out, each iteration starts from the outer value, names set in if-branches are
 * resolved from the context, and so on.
 *
 * Layer: template/jinja.
 */
import type { AnyNode, ForNode } from "./ast.js";

export type Load =
  | { kind: "param" }
  | { kind: "resolve"; name: string }
  | { kind: "alias"; ident: string }
  | { kind: "undefined" };

export class Symbols {
  readonly level: number;
  readonly parent: Symbols | null;
  refs: Map<string, string>;
  loads: Map<string, Load>;
  stores: Set<string>;

  constructor(parent: Symbols | null = null, level?: number) {
    this.parent = parent;
    this.level = level ?? (parent === null ? 0 : parent.level + 1);
    this.refs = new Map();
    this.loads = new Map();
    this.stores = new Set();
  }

  copy(): Symbols {
    const s = new Symbols(this.parent, this.level);
    s.refs = new Map(this.refs);
    s.loads = new Map(this.loads);
    s.stores = new Set(this.stores);
    return s;
  }

  private defineRef(name: string, load: Load | null): string {
    const ident = `l_${this.level}_${name}`;
    this.refs.set(name, ident);
    if (load !== null) this.loads.set(ident, load);
    return ident;
  }

  findLoad(ident: string): Load | null {
    const l = this.loads.get(ident);
    if (l !== undefined) return l;
    return this.parent === null ? null : this.parent.findLoad(ident);
  }

  findRef(name: string): string | null {
    const r = this.refs.get(name);
    if (r !== undefined) return r;
    return this.parent === null ? null : this.parent.findRef(name);
  }

  ref(name: string): string {
    const r = this.findRef(name);
    if (r === null) throw new Error(`Tried to resolve a name to a reference that was unknown to the frame (${name})`);
    return r;
  }

  store(name: string): void {
    this.stores.add(name);
    if (!this.refs.has(name)) {
      if (this.parent !== null) {
        const outer = this.parent.findRef(name);
        if (outer !== null) {
          this.defineRef(name, { kind: "alias", ident: outer });
          return;
        }
      }
      this.defineRef(name, { kind: "undefined" });
    }
  }

  declareParameter(name: string): string {
    this.stores.add(name);
    return this.defineRef(name, { kind: "param" });
  }

  load(name: string): void {
    if (this.findRef(name) === null) this.defineRef(name, { kind: "resolve", name });
  }

  branchUpdate(branches: Symbols[]): void {
    const stores = new Set<string>();
    for (const b of branches) for (const s of b.stores) stores.add(s);
    for (const s of this.stores) stores.delete(s);
    for (const b of branches) {
      for (const [k, v] of b.refs) this.refs.set(k, v);
      for (const [k, v] of b.loads) this.loads.set(k, v);
      for (const s of b.stores) this.stores.add(s);
    }
    for (const name of stores) {
      const target = this.findRef(name) as string;
      if (this.parent !== null) {
        const outer = this.parent.findRef(name);
        if (outer !== null) {
          this.loads.set(target, { kind: "alias", ident: outer });
          continue;
        }
      }
      this.loads.set(target, { kind: "resolve", name });
    }
  }

  /** RootVisitor: analyse the contents of a frame-creating node. */
  analyzeNode(node: AnyNode, forBranch: "body" | "else" | "test" = "body"): void {
    const v = new FrameSymbolVisitor(this);
    switch (node.kind) {
      case "Template":
        for (const c of node.body) v.visit(c);
        return;
      case "Macro":
        for (const a of node.args) v.visit(a);
        for (const d of node.defaults) v.visit(d);
        for (const c of node.body) v.visit(c);
        return;
      case "Block":
        for (const c of node.body) v.visit(c);
        return;
      case "Scope":
        v.visit(node.autoescape);
        for (const c of node.body) v.visit(c);
        return;
      case "FilterBlock":
        for (const c of node.body) v.visit(c);
        v.visit(node.filter);
        return;
      case "If":
        v.visit(node.test);
        for (const c of node.body) v.visit(c);
        for (const c of node.elif_) v.visit(c);
        for (const c of node.else_) v.visit(c);
        return;
      case "AssignBlock":
        for (const c of node.body) v.visit(c);
        return;
      case "CallBlock":
        for (const a of node.args) v.visit(a);
        for (const d of node.defaults) v.visit(d);
        for (const c of node.body) v.visit(c);
        return;
      case "For": {
        if (forBranch === "body") {
          v.visit(node.target, true);
          for (const c of node.body) v.visit(c);
        } else if (forBranch === "else") {
          for (const c of node.else_) v.visit(c);
        } else {
          v.visit(node.target, true);
          if (node.test !== null) v.visit(node.test);
        }
        return;
      }
      case "With":
        for (const t of node.targets) v.visit(t);
        for (const c of node.body) v.visit(c);
        return;
      default:
        throw new Error(`Cannot find symbols for ${node.kind}`);
    }
  }
}

/** Child nodes of a node, in Jinja2's field order. */
export function childNodes(node: AnyNode): AnyNode[] {
  switch (node.kind) {
    case "Template":
      return node.body;
    case "Output":
      return node.nodes;
    case "For": {
      const out: AnyNode[] = [node.target, node.iter, ...node.body, ...node.else_];
      if (node.test !== null) out.push(node.test);
      return out;
    }
    case "If":
      return [node.test, ...node.body, ...node.elif_, ...node.else_];
    case "Macro":
      return [...node.args, ...node.defaults, ...node.body];
    case "CallBlock":
      return node.call === null ? [...node.args, ...node.defaults, ...node.body] : [node.call, ...node.args, ...node.defaults, ...node.body];
    case "FilterBlock":
      return [...node.body, node.filter];
    case "With":
      return [...node.targets, ...node.values, ...node.body];
    case "Block":
      return node.body;
    case "Scope":
      return [node.autoescape, ...node.body];
    case "Assign":
      return [node.target, node.node];
    case "AssignBlock":
      return node.filter === null ? [node.target, ...node.body] : [node.target, node.filter, ...node.body];
    case "Extends":
    case "Include":
    case "Import":
    case "FromImport":
      return [node.template];
    case "Break":
    case "Continue":
    case "Name":
    case "NSRef":
    case "Const":
    case "TemplateData":
      return [];
    case "Tuple":
    case "List":
      return node.items;
    case "Dict": {
      const out: AnyNode[] = [];
      for (const p of node.items) out.push(p.key, p.value);
      return out;
    }
    case "CondExpr":
      return node.expr2 === null ? [node.test, node.expr1] : [node.test, node.expr1, node.expr2];
    case "Bin":
    case "And":
    case "Or":
      return [node.left, node.right];
    case "Not":
    case "Neg":
    case "Pos":
      return [node.node];
    case "Concat":
      return node.nodes;
    case "Compare":
      return [node.expr, ...node.ops.map((o) => o.expr)];
    case "Getattr":
      return [node.node];
    case "Getitem":
      return [node.node, node.arg];
    case "Slice": {
      const out: AnyNode[] = [];
      if (node.start !== null) out.push(node.start);
      if (node.stop !== null) out.push(node.stop);
      if (node.step !== null) out.push(node.step);
      return out;
    }
    case "Call":
    case "Filter":
    case "Test": {
      const out: AnyNode[] = [];
      if (node.node !== null) out.push(node.node);
      out.push(...node.args);
      for (const k of node.kwargs) out.push(k.value);
      if (node.dynArgs !== null) out.push(node.dynArgs);
      if (node.dynKwargs !== null) out.push(node.dynKwargs);
      return out;
    }
  }
}

class FrameSymbolVisitor {
  symbols: Symbols;
  constructor(symbols: Symbols) {
    this.symbols = symbols;
  }

  visit(node: AnyNode, storeAsParam = false): void {
    switch (node.kind) {
      case "Name":
        if (storeAsParam || node.ctx === "param") this.symbols.declareParameter(node.name);
        else if (node.ctx === "store") this.symbols.store(node.name);
        else this.symbols.load(node.name);
        return;
      case "NSRef":
        this.symbols.load(node.name);
        return;
      case "If": {
        this.visit(node.test, storeAsParam);
        const original = this.symbols;
        const inner = (nodes: AnyNode[]): Symbols => {
          const rv = original.copy();
          this.symbols = rv;
          for (const n of nodes) this.visit(n, storeAsParam);
          this.symbols = original;
          return rv;
        };
        const b = inner(node.body);
        const e = inner(node.elif_);
        const el = inner(node.else_);
        this.symbols.branchUpdate([b, e, el]);
        return;
      }
      case "Macro":
        this.symbols.store(node.name);
        return;
      case "Import":
      case "FromImport":
        this.visit(node.template);
        for (const n of node.names) this.symbols.store(n);
        return;
      case "Assign":
        this.visit(node.node, storeAsParam);
        this.visit(node.target, storeAsParam);
        return;
      case "For":
        this.visit((node as ForNode).iter, storeAsParam);
        return;
      case "CallBlock":
        if (node.call !== null) this.visit(node.call, storeAsParam);
        return;
      case "FilterBlock":
        this.visit(node.filter, storeAsParam);
        return;
      case "With":
        for (const v of node.values) this.visit(v);
        return;
      case "AssignBlock":
        this.visit(node.target, storeAsParam);
        return;
      case "Scope":
      case "Block":
        return;
      default:
        for (const c of childNodes(node)) this.visit(c, storeAsParam);
    }
  }
}

/** Jinja2 find_undeclared: which of `names` are loaded before being declared in `nodes`. */
export function findUndeclared(nodes: AnyNode[], names: string[]): Set<string> {
  const remaining = new Set(names);
  const undeclared = new Set<string>();
  const all = names.length;
  const visit = (n: AnyNode): boolean => {
    if (n.kind === "Name") {
      if (n.ctx === "load" && remaining.has(n.name)) {
        undeclared.add(n.name);
        if (undeclared.size === all) return true;
      } else remaining.delete(n.name);
      return false;
    }
    if (n.kind === "Block") return false;
    for (const c of childNodes(n)) if (visit(c)) return true;
    return false;
  };
  for (const n of nodes) if (visit(n)) break;
  return undeclared;
}

/** All nodes of a kind inside `node` (depth first), like Jinja2's find_all. */
export function findAll(node: AnyNode, kind: string): AnyNode[] {
  const out: AnyNode[] = [];
  const walk = (n: AnyNode): void => {
    for (const c of childNodes(n)) {
      if (c.kind === kind) out.push(c);
      walk(c);
    }
  };
  walk(node);
  return out;
}

