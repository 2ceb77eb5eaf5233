/**
 * The "python" renderer: deltatok's own Jinja2 evaluator (src/template), byte-identical to
 * transformers' apply_chat_template. The renderer owns its template's compilation. It also
 * renders incrementally (src/template/incremental/INCREMENTAL.md): a conversation's next render replays the
 * parts of the previous one whose inputs did not change.
 */
import { DeltatokError } from "../errors.js";
import { compileTemplate, type CompiledTemplate, type RenderBudget } from "../template/index.js";
import type { ChatRenderer, MarkedRender, IncrementalRenderOutput, PreviousRender, RenderHints, RenderOutput } from "./renderer.js";

/**
 * Development safety net: with DELTATOK_VERIFY_INCREMENTAL_RENDER=1 every incremental render is
 * also rendered in full and compared (text, generation spans, error). Off by default.
 */
const VERIFY = typeof process !== "undefined" && process.env?.DELTATOK_VERIFY_INCREMENTAL_RENDER === "1";

export class PythonRenderer implements ChatRenderer {
  readonly kind = "python" as const;
  readonly source: string;
  readonly readsClock: boolean;
  readonly #template: CompiledTemplate;
  /** the limits of every render (default: the template layer's DEFAULT_BUDGET) */
  readonly #budget: RenderBudget | undefined;
  /** verify incremental renders against full renders (tests) */
  verify = VERIFY;

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
    if (this.verify) return this.#verified(vars, now, prev, hints);
    const mv = hints?.messageVersions;
    const list = vars.messages;
    const itemVersions = mv !== undefined && Array.isArray(list) ? { list, versions: mv } : undefined;
    const r = this.#template.renderIncremental(vars, { now, itemVersions, budget: this.#budget }, prev);
    return { segments: r.segments, reusedSegments: r.reusedSegments, trace: r.trace, traceBytes: r.traceBytes, generation: r.generation, work: r.stats };
  }

  #verified(vars: Record<string, unknown>, now: Date, prev: PreviousRender | null, hints?: RenderHints): IncrementalRenderOutput {
    let want: RenderOutput | null = null;
    let wantErr: unknown = null;
    try {
      want = this.render(vars, now);
    } catch (e) {
      wantErr = e;
    }
    let got: IncrementalRenderOutput;
    try {
      this.verify = false;
      got = this.renderIncremental(vars, now, prev, hints);
    } catch (e) {
      if (wantErr === null || !(e instanceof DeltatokError) || !(wantErr instanceof DeltatokError) || e.code !== wantErr.code || e.message !== wantErr.message) {
        throw new DeltatokError("DT_INTERNAL", `incremental render failed differently from the full render: ${String(e)} vs ${String(wantErr)}`);
      }
      throw e;
    } finally {
      this.verify = true;
    }
    if (want === null) throw new DeltatokError("DT_INTERNAL", `incremental render succeeded where the full render failed: ${String(wantErr)}`);
    const text = got.segments.join("");
    if (text !== want.text || JSON.stringify(got.generation) !== JSON.stringify(want.generation)) {
      let i = 0;
      while (i < text.length && text[i] === want.text[i]) i++;
      throw new DeltatokError("DT_INTERNAL", `incremental render differs from the full render at offset ${i}`);
    }
    return got;
  }
}
