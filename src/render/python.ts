/**
 * The "python" renderer: deltatok's own Jinja2 evaluator (src/template), byte-identical to
 * transformers' apply_chat_template. The renderer owns its template's compilation. It also
 * renders incrementally (src/template/incremental/INCREMENTAL.md): a conversation's next render replays the
 * parts of the previous one whose inputs did not change.
 */
import { compileTemplate, type CompiledTemplate, type RenderBudget } from "../template/index.js";
import type { ChatRenderer, MarkedRender, IncrementalRenderOutput, PreviousRender, RenderHints, RenderOutput } from "./renderer.js";

export class PythonRenderer implements ChatRenderer {
  readonly kind = "python" as const;
  readonly source: string;
  readonly readsClock: boolean;
  readonly #template: CompiledTemplate;
  /** the limits of every render (default: the template layer's DEFAULT_BUDGET) */
  readonly #budget: RenderBudget | undefined;

  constructor(source: string, budget?: RenderBudget) {
    this.source = source;
    this.#template = compileTemplate(source);
    this.readsClock = this.#template.readsClock;
    this.#budget = budget;
  }

  renderMarked(vars: Record<string, unknown>, now: Date): MarkedRender {
    const r = this.#template.render(vars, { now, messageStarts: true, budget: this.#budget });
    return { text: r.text, generation: r.generation, messageStarts: r.messageStarts ?? [], messageEnds: r.messageEnds ?? [] };
  }

  render(vars: Record<string, unknown>, now: Date): RenderOutput {
    const r = this.#template.render(vars, { now, budget: this.#budget });
    return { text: r.text, generation: r.generation };
  }

  renderIncremental(vars: Record<string, unknown>, now: Date, prev: PreviousRender | null, hints?: RenderHints): IncrementalRenderOutput {
    const mv = hints?.messageVersions;
    const list = vars.messages;
    const itemVersions = mv !== undefined && Array.isArray(list) ? { list, versions: mv } : undefined;
    const r = this.#template.renderIncremental(vars, { now, itemVersions, budget: this.#budget }, prev);
    return { segments: r.segments, reusedSegments: r.reusedSegments, trace: r.trace, traceBytes: r.traceBytes, generation: r.generation, work: r.stats };
  }
}
