/**
 * Template syntax tree: the node kinds of Jinja2's `nodes` module that the parser produces.
 *
 * Layer: template/jinja.
 */

export type Ctx = "load" | "store" | "param";

// ---- expressions ---------------------------------------------------------------------------
export interface NameNode {
  kind: "Name";
  name: string;
  ctx: Ctx;
  lineno: number;
}
export interface NSRefNode {
  kind: "NSRef";
  name: string;
  attr: string;
  lineno: number;
}
export interface ConstNode {
  kind: "Const";
  value: unknown;
  lineno: number;
}
export interface TemplateDataNode {
  kind: "TemplateData";
  data: string;
  lineno: number;
}
export interface TupleNode {
  kind: "Tuple";
  items: Expr[];
  ctx: Ctx;
  lineno: number;
}
export interface ListNode {
  kind: "List";
  items: Expr[];
  lineno: number;
}
export interface DictNode {
  kind: "Dict";
  items: Array<{ key: Expr; value: Expr }>;
  lineno: number;
}
export interface CondExprNode {
  kind: "CondExpr";
  test: Expr;
  expr1: Expr;
  expr2: Expr | null;
  lineno: number;
}
export type BinOp = "add" | "sub" | "mul" | "div" | "floordiv" | "mod" | "pow";
export interface BinNode {
  kind: "Bin";
  op: BinOp;
  left: Expr;
  right: Expr;
  lineno: number;
}
export interface AndOrNode {
  kind: "And" | "Or";
  left: Expr;
  right: Expr;
  lineno: number;
}
export interface UnaryNode {
  kind: "Not" | "Neg" | "Pos";
  node: Expr;
  lineno: number;
}
export interface ConcatNode {
  kind: "Concat";
  nodes: Expr[];
  lineno: number;
}
export type CompareOp = "eq" | "ne" | "lt" | "lteq" | "gt" | "gteq" | "in" | "notin";
export interface CompareNode {
  kind: "Compare";
  expr: Expr;
  ops: Array<{ op: CompareOp; expr: Expr }>;
  lineno: number;
}
export interface GetattrNode {
  kind: "Getattr";
  node: Expr;
  attr: string;
  lineno: number;
}
export interface GetitemNode {
  kind: "Getitem";
  node: Expr;
  arg: Expr;
  lineno: number;
}
export interface SliceNode {
  kind: "Slice";
  start: Expr | null;
  stop: Expr | null;
  step: Expr | null;
  lineno: number;
}
export interface Keyword {
  key: string;
  value: Expr;
}
export interface CallArgs {
  args: Expr[];
  kwargs: Keyword[];
  dynArgs: Expr | null;
  dynKwargs: Expr | null;
}
export interface CallNode extends CallArgs {
  kind: "Call";
  node: Expr;
  lineno: number;
}
export interface FilterNode extends CallArgs {
  kind: "Filter";
  /** null inside `{% filter %}` blocks and `{% set x | f %}` blocks: the body's output */
  node: Expr | null;
  name: string;
  lineno: number;
}
export interface TestNode extends CallArgs {
  kind: "Test";
  node: Expr;
  name: string;
  lineno: number;
}

export type Expr =
  | NameNode
  | NSRefNode
  | ConstNode
  | TemplateDataNode
  | TupleNode
  | ListNode
  | DictNode
  | CondExprNode
  | BinNode
  | AndOrNode
  | UnaryNode
  | ConcatNode
  | CompareNode
  | GetattrNode
  | GetitemNode
  | SliceNode
  | CallNode
  | FilterNode
  | TestNode;

// ---- statements ----------------------------------------------------------------------------
export interface OutputNode {
  kind: "Output";
  nodes: Expr[];
  lineno: number;
}
export interface ForNode {
  kind: "For";
  target: Expr;
  iter: Expr;
  body: Stmt[];
  else_: Stmt[];
  test: Expr | null;
  recursive: boolean;
  lineno: number;
}
export interface IfNode {
  kind: "If";
  test: Expr;
  body: Stmt[];
  elif_: IfNode[];
  else_: Stmt[];
  lineno: number;
}
export interface MacroNode {
  kind: "Macro";
  name: string;
  args: NameNode[];
  defaults: Expr[];
  body: Stmt[];
  lineno: number;
}
export interface CallBlockNode {
  kind: "CallBlock";
  /** null for `{% generation %}` (its body is rendered through an internal caller) */
  call: CallNode | null;
  args: NameNode[];
  defaults: Expr[];
  body: Stmt[];
  generation: boolean;
  lineno: number;
}
export interface FilterBlockNode {
  kind: "FilterBlock";
  body: Stmt[];
  filter: FilterNode;
  lineno: number;
}
export interface WithNode {
  kind: "With";
  targets: Expr[];
  values: Expr[];
  body: Stmt[];
  lineno: number;
}
export interface BlockNode {
  kind: "Block";
  name: string;
  body: Stmt[];
  scoped: boolean;
  required: boolean;
  lineno: number;
}
export interface AssignNode {
  kind: "Assign";
  target: Expr;
  node: Expr;
  lineno: number;
}
export interface AssignBlockNode {
  kind: "AssignBlock";
  target: Expr;
  filter: FilterNode | null;
  body: Stmt[];
  lineno: number;
}
export interface ScopeNode {
  kind: "Scope";
  body: Stmt[];
  /** the `{% autoescape <expr> %}` value */
  autoescape: Expr;
  lineno: number;
}
export interface LoopControlNode {
  kind: "Break" | "Continue";
  lineno: number;
}
export interface LoaderNode {
  kind: "Extends" | "Include" | "Import" | "FromImport";
  template: Expr;
  /** Import target / FromImport names (assigned names) */
  names: string[];
  ignoreMissing: boolean;
  lineno: number;
}

export type Stmt =
  | OutputNode
  | ForNode
  | IfNode
  | MacroNode
  | CallBlockNode
  | FilterBlockNode
  | WithNode
  | BlockNode
  | AssignNode
  | AssignBlockNode
  | ScopeNode
  | LoopControlNode
  | LoaderNode;

export interface TemplateNode {
  kind: "Template";
  body: Stmt[];
}

export type AnyNode = Expr | Stmt | TemplateNode;
