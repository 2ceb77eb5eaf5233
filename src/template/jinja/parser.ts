/**
 * Jinja2 3.1 parser (grammar, precedence and error messages), with the `loopcontrols`
 * extension (`break`, `continue`) and HF's `{% generation %}` tag.
 *
 * Layer: template/jinja.
 */
import type {
  CallArgs,
  CallNode,
  CompareOp,
  Ctx,
  Expr,
  FilterNode,
  IfNode,
  Keyword,
  NameNode,
  Stmt,
  TemplateNode,
} from "./ast.js";
import { describeToken, describeTokenExpr, tokenize } from "./lexer.js";
import type { Token } from "./lexer.js";
import { PyFloat } from "../../json/values.js";
import { syntaxError } from "./pyerror.js";

const STATEMENT_KEYWORDS = new Set(["for", "if", "block", "extends", "print", "macro", "include", "from", "import", "set", "with", "autoescape"]);
const COMPARE_OPS = new Set(["eq", "ne", "lt", "lteq", "gt", "gteq"]);
const MATH1: Record<string, "add" | "sub"> = { add: "add", sub: "sub" };
const MATH2: Record<string, "mul" | "div" | "floordiv" | "mod"> = { mul: "mul", div: "div", floordiv: "floordiv", mod: "mod" };
const EXTENSION_TAGS = new Set(["break", "continue", "generation"]);

function pyRepr(s: string): string {
  // repr of an ASCII-ish identifier/description, as Jinja2 formats messages with !r
  const q = s.indexOf("'") >= 0 && s.indexOf('"') < 0 ? '"' : "'";
  return q + s.replace(/\\/g, "\\\\").split(q).join("\\" + q) + q;
}

class TokenStream {
  private readonly toks: Token[];
  private i = 0;
  private readonly pushed: Token[] = [];
  current: Token;
  private readonly eofLine: number;

  constructor(toks: Token[]) {
    this.toks = toks;
    let last = 1;
    for (const t of toks) last = t.lineno;
    this.eofLine = last;
    this.current = { type: "initial" as never, value: "", lineno: 1 };
    this.next();
  }

  private pull(): Token {
    const t = this.toks[this.i];
    if (t === undefined) return { type: "eof", value: "", lineno: this.current.lineno };
    this.i++;
    if (t.type === "error") throw syntaxError(t.value as string, t.lineno);
    return t;
  }

  /** Advances; returns the previous current token. */
  next(): Token {
    const rv = this.current;
    if (this.pushed.length > 0) this.current = this.pushed.shift() as Token;
    else if (this.current.type !== "eof") this.current = this.pull();
    return rv;
  }

  look(): Token {
    const old = this.next();
    const result = this.current;
    this.pushed.push(result);
    this.current = old;
    return result;
  }

  push(t: Token): void {
    this.pushed.push(t);
  }

  skip(n = 1): void {
    for (let k = 0; k < n; k++) this.next();
  }

  test(expr: string, t: Token = this.current): boolean {
    if (t.type === expr) return true;
    const i = expr.indexOf(":");
    if (i >= 0) return t.type === expr.slice(0, i) && t.value === expr.slice(i + 1);
    return false;
  }

  testAny(exprs: readonly string[]): boolean {
    for (const e of exprs) if (this.test(e)) return true;
    return false;
  }

  nextIf(expr: string): Token | null {
    if (this.test(expr)) return this.next();
    return null;
  }

  skipIf(expr: string): boolean {
    return this.nextIf(expr) !== null;
  }

  expect(expr: string): Token {
    if (!this.test(expr)) {
      const d = describeTokenExpr(expr);
      if (this.current.type === "eof") {
        throw syntaxError(`unexpected end of template, expected ${pyRepr(d)}.`, this.current.lineno);
      }
      throw syntaxError(`expected token ${pyRepr(d)}, got ${pyRepr(describeToken(this.current))}`, this.current.lineno);
    }
    return this.next();
  }

  tt(): string {
    return this.current.type;
  }

  get eof(): boolean {
    return this.pushed.length === 0 && this.current.type === "eof";
  }
  get lastLine(): number {
    return this.eofLine;
  }
}

function canAssign(e: Expr): boolean {
  if (e.kind === "Name") return !["true", "false", "none", "True", "False", "None"].includes(e.name);
  if (e.kind === "NSRef") return true;
  if (e.kind === "Tuple") return e.items.every(canAssign);
  return false;
}

function setCtx(e: Expr, ctx: Ctx): void {
  if (e.kind === "Name") e.ctx = ctx;
  else if (e.kind === "Tuple") {
    e.ctx = ctx;
    for (const it of e.items) setCtx(it, ctx);
  }
}

/** Python class name of a node as Jinja2 prints it in "can't assign to ..." */
function nodeClassName(e: Expr): string {
  switch (e.kind) {
    case "Bin":
      return { add: "add", sub: "sub", mul: "mul", div: "div", floordiv: "floordiv", mod: "mod", pow: "pow" }[e.op];
    default:
      return e.kind.toLowerCase();
  }
}

export class Parser {
  private readonly stream: TokenStream;
  private readonly tagStack: string[] = [];
  private readonly endTokenStack: string[][] = [];

  constructor(source: string) {
    this.stream = new TokenStream(tokenize(source));
  }

  private fail(msg: string, lineno?: number): never {
    throw syntaxError(msg, lineno ?? this.stream.current.lineno);
  }

  private failUtEof(name: string | null, endTokenStack: string[][], lineno: number): never {
    const expected = new Set<string>();
    for (const exprs of endTokenStack) for (const e of exprs) expected.add(describeTokenExpr(e));
    const top = endTokenStack[endTokenStack.length - 1];
    const currentlyLooking = top ? top.map((e) => pyRepr(describeTokenExpr(e))).join(" or ") : null;
    const message: string[] = [];
    if (name === null) message.push("Unexpected end of template.");
    else message.push(`Encountered unknown tag ${pyRepr(name)}.`);
    if (currentlyLooking) {
      if (name !== null && expected.has(name)) {
        message.push(`You probably made a nesting mistake. Jinja is expecting this tag, but currently looking for ${currentlyLooking}.`);
      } else {
        message.push(`Jinja was looking for the following tags: ${currentlyLooking}.`);
      }
    }
    if (this.tagStack.length > 0) {
      message.push(`The innermost block that needs to be closed is ${pyRepr(this.tagStack[this.tagStack.length - 1] as string)}.`);
    }
    this.fail(message.join(" "), lineno);
  }

  private failEof(endTokens: string[] | null, lineno?: number): never {
    const stack = this.endTokenStack.slice();
    if (endTokens !== null) stack.push(endTokens);
    this.failUtEof(null, stack, lineno ?? this.stream.current.lineno);
  }

  private isTupleEnd(extra: string[] | null): boolean {
    const t = this.stream.tt();
    if (t === "variable_end" || t === "block_end" || t === "rparen") return true;
    if (extra !== null) return this.stream.testAny(extra);
    return false;
  }

  parse(): TemplateNode {
    return { kind: "Template", body: this.subparse(null) };
  }

  private parseStatement(): Stmt | Stmt[] {
    const token = this.stream.current;
    if (token.type !== "name") this.fail("tag name expected", token.lineno);
    const name = token.value as string;
    this.tagStack.push(name);
    let popTag = true;
    try {
      if (STATEMENT_KEYWORDS.has(name)) {
        switch (name) {
          case "for":
            return this.parseFor();
          case "if":
            return this.parseIf();
          case "block":
            return this.parseBlock();
          case "extends":
            return this.parseExtends();
          case "print":
            return this.parsePrint();
          case "macro":
            return this.parseMacro();
          case "include":
            return this.parseInclude();
          case "from":
            return this.parseFrom();
          case "import":
            return this.parseImport();
          case "set":
            return this.parseSet();
          case "with":
            return this.parseWith();
          case "autoescape":
            return this.parseAutoescape();
        }
      }
      if (name === "call") return this.parseCallBlock();
      if (name === "filter") return this.parseFilterBlock();
      if (EXTENSION_TAGS.has(name)) {
        const t = this.stream.next();
        if (name === "generation") {
          const body = this.parseStatements(["name:endgeneration"], true);
          return { kind: "CallBlock", call: null, args: [], defaults: [], body, generation: true, lineno: t.lineno };
        }
        return { kind: name === "break" ? "Break" : "Continue", lineno: t.lineno };
      }
      this.tagStack.pop();
      popTag = false;
      return this.failUtEof(name, this.endTokenStack, token.lineno);
    } finally {
      if (popTag) this.tagStack.pop();
    }
  }

  private parseStatements(endTokens: string[], dropNeedle = false): Stmt[] {
    this.stream.skipIf("colon");
    this.stream.expect("block_end");
    const result = this.subparse(endTokens);
    if (this.stream.tt() === "eof") this.failEof(endTokens);
    if (dropNeedle) this.stream.next();
    return result;
  }

  private parseSet(): Stmt {
    const lineno = this.stream.next().lineno;
    const target = this.parseAssignTarget(true, false, null, true);
    if (this.stream.skipIf("assign")) {
      const expr = this.parseTuple(false, true, null, false);
      return { kind: "Assign", target, node: expr, lineno };
    }
    const filter = this.parseFilter(null, false) as FilterNode | null;
    const body = this.parseStatements(["name:endset"], true);
    return { kind: "AssignBlock", target, filter, body, lineno };
  }

  private parseFor(): Stmt {
    const lineno = this.stream.expect("name:for").lineno;
    const target = this.parseAssignTarget(true, false, ["name:in"]);
    this.stream.expect("name:in");
    const iter = this.parseTuple(false, false, ["name:recursive"]);
    let test: Expr | null = null;
    if (this.stream.skipIf("name:if")) test = this.parseExpression();
    const recursive = this.stream.skipIf("name:recursive");
    const body = this.parseStatements(["name:endfor", "name:else"]);
    let else_: Stmt[];
    if (this.stream.next().value === "endfor") else_ = [];
    else else_ = this.parseStatements(["name:endfor"], true);
    return { kind: "For", target, iter, body, else_, test, recursive, lineno };
  }

  private parseIf(): Stmt {
    const lineno = this.stream.expect("name:if").lineno;
    const result: IfNode = { kind: "If", test: null as never, body: [], elif_: [], else_: [], lineno };
    let node = result;
    for (;;) {
      node.test = this.parseTuple(false, false);
      node.body = this.parseStatements(["name:elif", "name:else", "name:endif"]);
      node.elif_ = [];
      node.else_ = [];
      const token = this.stream.next();
      if (this.stream.test("name:elif", token)) {
        node = { kind: "If", test: null as never, body: [], elif_: [], else_: [], lineno: this.stream.current.lineno };
        result.elif_.push(node);
        continue;
      } else if (this.stream.test("name:else", token)) {
        result.else_ = this.parseStatements(["name:endif"], true);
      }
      break;
    }
    return result;
  }

  private parseWith(): Stmt {
    const lineno = this.stream.next().lineno;
    const targets: Expr[] = [];
    const values: Expr[] = [];
    while (this.stream.tt() !== "block_end") {
      if (targets.length > 0) this.stream.expect("comma");
      const target = this.parseAssignTarget();
      setCtx(target, "param");
      targets.push(target);
      this.stream.expect("assign");
      values.push(this.parseExpression());
    }
    const body = this.parseStatements(["name:endwith"], true);
    return { kind: "With", targets, values, body, lineno };
  }

  private parseAutoescape(): Stmt {
    const lineno = this.stream.next().lineno;
    const autoescape = this.parseExpression();
    const body = this.parseStatements(["name:endautoescape"], true);
    return { kind: "Scope", body, autoescape, lineno };
  }

  private parseBlock(): Stmt {
    const lineno = this.stream.next().lineno;
    const name = this.stream.expect("name").value as string;
    const scoped = this.stream.skipIf("name:scoped");
    const required = this.stream.skipIf("name:required");
    if (this.stream.tt() === "sub") {
      this.fail("Block names in Jinja have to be valid Python identifiers and may not contain hyphens, use an underscore instead.");
    }
    const body = this.parseStatements(["name:endblock"], true);
    if (required) {
      for (const b of body) {
        if (b.kind !== "Output" || b.nodes.some((n) => n.kind !== "TemplateData" || !/^\s+$/.test(n.data))) {
          this.fail("Required blocks can only contain comments or whitespace");
        }
      }
    }
    this.stream.skipIf("name:" + name);
    return { kind: "Block", name, body, scoped, required, lineno };
  }

  private parseExtends(): Stmt {
    const lineno = this.stream.next().lineno;
    const template = this.parseExpression();
    return { kind: "Extends", template, names: [], ignoreMissing: false, lineno };
  }

  private parseImportContext(): void {
    if (this.stream.testAny(["name:with", "name:without"]) && this.stream.test("name:context", this.stream.look())) {
      this.stream.next();
      this.stream.skip();
    }
  }

  private parseInclude(): Stmt {
    const lineno = this.stream.next().lineno;
    const template = this.parseExpression();
    let ignoreMissing = false;
    if (this.stream.test("name:ignore") && this.stream.test("name:missing", this.stream.look())) {
      ignoreMissing = true;
      this.stream.skip(2);
    }
    this.parseImportContext();
    return { kind: "Include", template, names: [], ignoreMissing, lineno };
  }

  private parseImport(): Stmt {
    const lineno = this.stream.next().lineno;
    const template = this.parseExpression();
    this.stream.expect("name:as");
    const target = (this.parseAssignTarget(true, true) as NameNode).name;
    this.parseImportContext();
    return { kind: "Import", template, names: [target], ignoreMissing: false, lineno };
  }

  private parseFrom(): Stmt {
    const lineno = this.stream.next().lineno;
    const template = this.parseExpression();
    this.stream.expect("name:import");
    const names: string[] = [];
    const parseContext = (): boolean => {
      const v = this.stream.current.value;
      if ((v === "with" || v === "without") && this.stream.test("name:context", this.stream.look())) {
        this.stream.next();
        this.stream.skip();
        return true;
      }
      return false;
    };
    for (;;) {
      if (names.length > 0) this.stream.expect("comma");
      if (this.stream.tt() === "name") {
        if (parseContext()) break;
        const target = this.parseAssignTarget(true, true) as NameNode;
        if (target.name.startsWith("_")) {
          throw syntaxError("names starting with an underline can not be imported", target.lineno, "TemplateAssertionError");
        }
        if (this.stream.skipIf("name:as")) {
          const alias = this.parseAssignTarget(true, true) as NameNode;
          names.push(alias.name);
        } else names.push(target.name);
        if (parseContext() || this.stream.tt() !== "comma") break;
      } else {
        this.stream.expect("name");
      }
    }
    return { kind: "FromImport", template, names, ignoreMissing: false, lineno };
  }

  private parseSignature(): { args: NameNode[]; defaults: Expr[] } {
    const args: NameNode[] = [];
    const defaults: Expr[] = [];
    this.stream.expect("lparen");
    while (this.stream.tt() !== "rparen") {
      if (args.length > 0) this.stream.expect("comma");
      const arg = this.parseAssignTarget(true, true) as NameNode;
      arg.ctx = "param";
      if (this.stream.skipIf("assign")) defaults.push(this.parseExpression());
      else if (defaults.length > 0) this.fail("non-default argument follows default argument");
      args.push(arg);
    }
    this.stream.expect("rparen");
    return { args, defaults };
  }

  private parseCallBlock(): Stmt {
    const lineno = this.stream.next().lineno;
    let sig: { args: NameNode[]; defaults: Expr[] } = { args: [], defaults: [] };
    if (this.stream.tt() === "lparen") sig = this.parseSignature();
    const callNode = this.parseExpression();
    if (callNode.kind !== "Call") this.fail("expected call", lineno);
    const body = this.parseStatements(["name:endcall"], true);
    return { kind: "CallBlock", call: callNode as CallNode, args: sig.args, defaults: sig.defaults, body, generation: false, lineno };
  }

  private parseFilterBlock(): Stmt {
    const lineno = this.stream.next().lineno;
    const filter = this.parseFilter(null, true) as FilterNode;
    const body = this.parseStatements(["name:endfilter"], true);
    return { kind: "FilterBlock", body, filter, lineno };
  }

  private parseMacro(): Stmt {
    const lineno = this.stream.next().lineno;
    const name = (this.parseAssignTarget(true, true) as NameNode).name;
    const sig = this.parseSignature();
    const body = this.parseStatements(["name:endmacro"], true);
    return { kind: "Macro", name, args: sig.args, defaults: sig.defaults, body, lineno };
  }

  private parsePrint(): Stmt {
    const lineno = this.stream.next().lineno;
    const nodes: Expr[] = [];
    while (this.stream.tt() !== "block_end") {
      if (nodes.length > 0) this.stream.expect("comma");
      nodes.push(this.parseExpression());
    }
    return { kind: "Output", nodes, lineno };
  }

  private parseAssignTarget(withTuple = true, nameOnly = false, extraEndRules: string[] | null = null, withNamespace = false): Expr {
    let target: Expr;
    if (nameOnly) {
      const token = this.stream.expect("name");
      target = { kind: "Name", name: token.value as string, ctx: "store", lineno: token.lineno };
    } else {
      if (withTuple) target = this.parseTuple(true, true, extraEndRules, false, withNamespace);
      else target = this.parsePrimary(withNamespace);
      setCtx(target, "store");
    }
    if (!canAssign(target)) this.fail(`can't assign to ${pyRepr(nodeClassName(target))}`, target.lineno);
    return target;
  }

  parseExpression(withCondexpr = true): Expr {
    if (withCondexpr) return this.parseCondexpr();
    return this.parseOr();
  }

  private parseCondexpr(): Expr {
    let lineno = this.stream.current.lineno;
    let expr1 = this.parseOr();
    while (this.stream.skipIf("name:if")) {
      const expr2 = this.parseOr();
      let expr3: Expr | null = null;
      if (this.stream.skipIf("name:else")) expr3 = this.parseCondexpr();
      expr1 = { kind: "CondExpr", test: expr2, expr1, expr2: expr3, lineno };
      lineno = this.stream.current.lineno;
    }
    return expr1;
  }

  private parseOr(): Expr {
    let lineno = this.stream.current.lineno;
    let left = this.parseAnd();
    while (this.stream.skipIf("name:or")) {
      const right = this.parseAnd();
      left = { kind: "Or", left, right, lineno };
      lineno = this.stream.current.lineno;
    }
    return left;
  }

  private parseAnd(): Expr {
    let lineno = this.stream.current.lineno;
    let left = this.parseNot();
    while (this.stream.skipIf("name:and")) {
      const right = this.parseNot();
      left = { kind: "And", left, right, lineno };
      lineno = this.stream.current.lineno;
    }
    return left;
  }

  private parseNot(): Expr {
    if (this.stream.test("name:not")) {
      const lineno = this.stream.next().lineno;
      return { kind: "Not", node: this.parseNot(), lineno };
    }
    return this.parseCompare();
  }

  private parseCompare(): Expr {
    let lineno = this.stream.current.lineno;
    const expr = this.parseMath1();
    const ops: Array<{ op: CompareOp; expr: Expr }> = [];
    for (;;) {
      const tt = this.stream.tt();
      if (COMPARE_OPS.has(tt)) {
        this.stream.next();
        ops.push({ op: tt as CompareOp, expr: this.parseMath1() });
      } else if (this.stream.skipIf("name:in")) {
        ops.push({ op: "in", expr: this.parseMath1() });
      } else if (this.stream.test("name:not") && this.stream.test("name:in", this.stream.look())) {
        this.stream.skip(2);
        ops.push({ op: "notin", expr: this.parseMath1() });
      } else break;
      lineno = this.stream.current.lineno;
    }
    if (ops.length === 0) return expr;
    return { kind: "Compare", expr, ops, lineno };
  }

  private parseMath1(): Expr {
    let lineno = this.stream.current.lineno;
    let left = this.parseConcat();
    for (;;) {
      const op = MATH1[this.stream.tt()];
      if (op === undefined) break;
      this.stream.next();
      const right = this.parseConcat();
      left = { kind: "Bin", op, left, right, lineno };
      lineno = this.stream.current.lineno;
    }
    return left;
  }

  private parseConcat(): Expr {
    const lineno = this.stream.current.lineno;
    const args = [this.parseMath2()];
    while (this.stream.tt() === "tilde") {
      this.stream.next();
      args.push(this.parseMath2());
    }
    if (args.length === 1) return args[0] as Expr;
    return { kind: "Concat", nodes: args, lineno };
  }

  private parseMath2(): Expr {
    let lineno = this.stream.current.lineno;
    let left = this.parsePow();
    for (;;) {
      const op = MATH2[this.stream.tt()];
      if (op === undefined) break;
      this.stream.next();
      const right = this.parsePow();
      left = { kind: "Bin", op, left, right, lineno };
      lineno = this.stream.current.lineno;
    }
    return left;
  }

  private parsePow(): Expr {
    let lineno = this.stream.current.lineno;
    let left = this.parseUnary();
    while (this.stream.tt() === "pow") {
      this.stream.next();
      const right = this.parseUnary();
      left = { kind: "Bin", op: "pow", left, right, lineno };
      lineno = this.stream.current.lineno;
    }
    return left;
  }

  private parseUnary(withFilter = true): Expr {
    const tt = this.stream.tt();
    const lineno = this.stream.current.lineno;
    let node: Expr;
    if (tt === "sub") {
      this.stream.next();
      node = { kind: "Neg", node: this.parseUnary(false), lineno };
    } else if (tt === "add") {
      this.stream.next();
      node = { kind: "Pos", node: this.parseUnary(false), lineno };
    } else node = this.parsePrimary();
    node = this.parsePostfix(node);
    if (withFilter) node = this.parseFilterExpr(node);
    return node;
  }

  private parsePrimary(withNamespace = false): Expr {
    const token = this.stream.current;
    if (token.type === "name") {
      this.stream.next();
      const v = token.value as string;
      if (v === "true" || v === "false" || v === "True" || v === "False") {
        return { kind: "Const", value: v === "true" || v === "True", lineno: token.lineno };
      }
      if (v === "none" || v === "None") return { kind: "Const", value: null, lineno: token.lineno };
      if (withNamespace && this.stream.tt() === "dot") {
        this.stream.next();
        const attr = this.stream.expect("name");
        return { kind: "NSRef", name: v, attr: attr.value as string, lineno: token.lineno };
      }
      return { kind: "Name", name: v, ctx: "load", lineno: token.lineno };
    }
    if (token.type === "string") {
      this.stream.next();
      let buf = token.value as string;
      while (this.stream.tt() === "string") {
        buf += this.stream.current.value as string;
        this.stream.next();
      }
      return { kind: "Const", value: buf, lineno: token.lineno };
    }
    if (token.type === "integer" || token.type === "float") {
      this.stream.next();
      return { kind: "Const", value: token.type === "float" ? floatConst(token.value as number) : token.value, lineno: token.lineno };
    }
    if (token.type === "lparen") {
      this.stream.next();
      const node = this.parseTuple(false, true, null, true);
      this.stream.expect("rparen");
      return node;
    }
    if (token.type === "lbracket") return this.parseList();
    if (token.type === "lbrace") return this.parseDict();
    return this.fail(`unexpected ${pyRepr(describeToken(token))}`, token.lineno);
  }

  private parseTuple(simplified = false, withCondexpr = true, extraEndRules: string[] | null = null, explicitParentheses = false, withNamespace = false): Expr {
    let lineno = this.stream.current.lineno;
    const parse = simplified ? () => this.parsePrimary(withNamespace) : () => this.parseExpression(withCondexpr);
    const args: Expr[] = [];
    let isTuple = false;
    for (;;) {
      if (args.length > 0) this.stream.expect("comma");
      if (this.isTupleEnd(extraEndRules)) break;
      args.push(parse());
      if (this.stream.tt() === "comma") isTuple = true;
      else break;
      lineno = this.stream.current.lineno;
    }
    if (!isTuple) {
      if (args.length > 0) return args[0] as Expr;
      if (!explicitParentheses) this.fail(`Expected an expression, got ${pyRepr(describeToken(this.stream.current))}`);
    }
    return { kind: "Tuple", items: args, ctx: "load", lineno };
  }

  private parseList(): Expr {
    const token = this.stream.expect("lbracket");
    const items: Expr[] = [];
    while (this.stream.tt() !== "rbracket") {
      if (items.length > 0) this.stream.expect("comma");
      if (this.stream.tt() === "rbracket") break;
      items.push(this.parseExpression());
    }
    this.stream.expect("rbracket");
    return { kind: "List", items, lineno: token.lineno };
  }

  private parseDict(): Expr {
    const token = this.stream.expect("lbrace");
    const items: Array<{ key: Expr; value: Expr }> = [];
    while (this.stream.tt() !== "rbrace") {
      if (items.length > 0) this.stream.expect("comma");
      if (this.stream.tt() === "rbrace") break;
      const key = this.parseExpression();
      this.stream.expect("colon");
      const value = this.parseExpression();
      items.push({ key, value });
    }
    this.stream.expect("rbrace");
    return { kind: "Dict", items, lineno: token.lineno };
  }

  private parsePostfix(node: Expr): Expr {
    for (;;) {
      const tt = this.stream.tt();
      if (tt === "dot" || tt === "lbracket") node = this.parseSubscript(node);
      else if (tt === "lparen") node = this.parseCall(node);
      else break;
    }
    return node;
  }

  private parseFilterExpr(node: Expr): Expr {
    for (;;) {
      const tt = this.stream.tt();
      if (tt === "pipe") node = this.parseFilter(node, false) as Expr;
      else if (tt === "name" && this.stream.current.value === "is") node = this.parseTest(node);
      else if (tt === "lparen") node = this.parseCall(node);
      else break;
    }
    return node;
  }

  private parseSubscript(node: Expr): Expr {
    const token = this.stream.next();
    if (token.type === "dot") {
      const attrToken = this.stream.current;
      this.stream.next();
      if (attrToken.type === "name") return { kind: "Getattr", node, attr: attrToken.value as string, lineno: token.lineno };
      if (attrToken.type !== "integer") this.fail("expected name or number", attrToken.lineno);
      return { kind: "Getitem", node, arg: { kind: "Const", value: attrToken.value, lineno: attrToken.lineno }, lineno: token.lineno };
    }
    if (token.type === "lbracket") {
      const args: Expr[] = [];
      while (this.stream.tt() !== "rbracket") {
        if (args.length > 0) this.stream.expect("comma");
        args.push(this.parseSubscribed());
      }
      this.stream.expect("rbracket");
      const arg: Expr = args.length === 1 ? (args[0] as Expr) : { kind: "Tuple", items: args, ctx: "load", lineno: token.lineno };
      return { kind: "Getitem", node, arg, lineno: token.lineno };
    }
    return this.fail("expected subscript expression", token.lineno);
  }

  private parseSubscribed(): Expr {
    const lineno = this.stream.current.lineno;
    const args: Array<Expr | null> = [];
    if (this.stream.tt() === "colon") {
      this.stream.next();
      args.push(null);
    } else {
      const node = this.parseExpression();
      if (this.stream.tt() !== "colon") return node;
      this.stream.next();
      args.push(node);
    }
    if (this.stream.tt() === "colon") args.push(null);
    else if (this.stream.tt() !== "rbracket" && this.stream.tt() !== "comma") args.push(this.parseExpression());
    else args.push(null);
    if (this.stream.tt() === "colon") {
      this.stream.next();
      if (this.stream.tt() !== "rbracket" && this.stream.tt() !== "comma") args.push(this.parseExpression());
      else args.push(null);
    } else args.push(null);
    return { kind: "Slice", start: args[0] ?? null, stop: args[1] ?? null, step: args[2] ?? null, lineno };
  }

  private parseCallArgs(): CallArgs {
    const token = this.stream.expect("lparen");
    const args: Expr[] = [];
    const kwargs: Keyword[] = [];
    let dynArgs: Expr | null = null;
    let dynKwargs: Expr | null = null;
    let requireComma = false;
    const ensure = (ok: boolean): void => {
      if (!ok) this.fail("invalid syntax for function call expression", token.lineno);
    };
    while (this.stream.tt() !== "rparen") {
      if (requireComma) {
        this.stream.expect("comma");
        if (this.stream.tt() === "rparen") break;
      }
      if (this.stream.tt() === "mul") {
        ensure(dynArgs === null && dynKwargs === null);
        this.stream.next();
        dynArgs = this.parseExpression();
      } else if (this.stream.tt() === "pow") {
        ensure(dynKwargs === null);
        this.stream.next();
        dynKwargs = this.parseExpression();
      } else if (this.stream.tt() === "name" && this.stream.look().type === "assign") {
        ensure(dynKwargs === null);
        const key = this.stream.current.value as string;
        this.stream.skip(2);
        const value = this.parseExpression();
        kwargs.push({ key, value });
      } else {
        ensure(dynArgs === null && dynKwargs === null && kwargs.length === 0);
        args.push(this.parseExpression());
      }
      requireComma = true;
    }
    this.stream.expect("rparen");
    return { args, kwargs, dynArgs, dynKwargs };
  }

  private parseCall(node: Expr): Expr {
    const lineno = this.stream.current.lineno;
    const a = this.parseCallArgs();
    return { kind: "Call", node, ...a, lineno };
  }

  private parseFilter(node: Expr | null, startInline: boolean): Expr | null {
    while (this.stream.tt() === "pipe" || startInline) {
      if (!startInline) this.stream.next();
      const token = this.stream.expect("name");
      let name = token.value as string;
      while (this.stream.tt() === "dot") {
        this.stream.next();
        name += "." + (this.stream.expect("name").value as string);
      }
      let a: CallArgs = { args: [], kwargs: [], dynArgs: null, dynKwargs: null };
      if (this.stream.tt() === "lparen") a = this.parseCallArgs();
      node = { kind: "Filter", node, name, ...a, lineno: token.lineno };
      startInline = false;
    }
    return node;
  }

  private parseTest(node: Expr): Expr {
    const token = this.stream.next();
    let negated = false;
    if (this.stream.test("name:not")) {
      this.stream.next();
      negated = true;
    }
    let name = this.stream.expect("name").value as string;
    while (this.stream.tt() === "dot") {
      this.stream.next();
      name += "." + (this.stream.expect("name").value as string);
    }
    let a: CallArgs = { args: [], kwargs: [], dynArgs: null, dynKwargs: null };
    const ct = this.stream.tt();
    if (ct === "lparen") a = this.parseCallArgs();
    else if (
      (ct === "name" || ct === "string" || ct === "integer" || ct === "float" || ct === "lparen" || ct === "lbracket" || ct === "lbrace") &&
      !this.stream.testAny(["name:else", "name:or", "name:and"])
    ) {
      if (this.stream.test("name:is")) this.fail("You cannot chain multiple tests with is");
      let arg = this.parsePrimary();
      arg = this.parsePostfix(arg);
      a = { args: [arg], kwargs: [], dynArgs: null, dynKwargs: null };
    }
    let result: Expr = { kind: "Test", node, name, ...a, lineno: token.lineno };
    if (negated) result = { kind: "Not", node: result, lineno: token.lineno };
    return result;
  }

  private subparse(endTokens: string[] | null): Stmt[] {
    const body: Stmt[] = [];
    let data: Expr[] = [];
    const flush = (): void => {
      if (data.length > 0) {
        body.push({ kind: "Output", nodes: data, lineno: (data[0] as Expr).lineno });
        data = [];
      }
    };
    if (endTokens !== null) this.endTokenStack.push(endTokens);
    try {
      while (!this.stream.eof) {
        const token = this.stream.current;
        if (token.type === "data") {
          if (token.value) data.push({ kind: "TemplateData", data: token.value as string, lineno: token.lineno });
          this.stream.next();
        } else if (token.type === "variable_begin") {
          this.stream.next();
          data.push(this.parseTuple(false, true));
          this.stream.expect("variable_end");
        } else if (token.type === "block_begin") {
          flush();
          this.stream.next();
          if (endTokens !== null && this.stream.testAny(endTokens)) return body;
          const rv = this.parseStatement();
          if (Array.isArray(rv)) body.push(...rv);
          else body.push(rv);
          this.stream.expect("block_end");
        } else {
          throw new Error("internal parsing error");
        }
      }
      flush();
    } finally {
      if (endTokens !== null) this.endTokenStack.pop();
    }
    return body;
  }
}

function floatConst(x: number): unknown {
  return Number.isInteger(x) ? new PyFloat(x) : x;
}

/** Parses a template source into its syntax tree; throws PyError (DT_TEMPLATE_SYNTAX). */
export function parseTemplate(source: string): TemplateNode {
  return new Parser(source).parse();
}
