/**
 * The "python" renderer: deltatok's own Jinja2 evaluator (src/template), byte-identical to
 * transformers' apply_chat_template. The renderer owns its template's compilation.
 */
import { compileTemplate, type CompiledTemplate } from "../template/index.js";
import type { ChatRenderer, RenderOutput } from "./renderer.js";

export class PythonRenderer implements ChatRenderer {
  readonly kind = "python" as const;
  readonly source: string;
  readonly readsClock: boolean;
  readonly #template: CompiledTemplate;

  constructor(source: string) {
    this.source = source;
    this.#template = compileTemplate(source);
    this.readsClock = this.#template.readsClock;
  }

  render(vars: Record<string, unknown>, now: Date): RenderOutput {
    const r = this.#template.render(vars, { now });
    return { text: r.text, generation: r.generation };
  }
}
