/**
 * The compiled chat templates of one Deltatok, by source. Compiling is the costly part of a
 * template change and a request may name any template (`chat_template` is caller input), so the
 * cache is bounded twice: at most `TEMPLATE_CACHE_MAX` templates and `TEMPLATE_CACHE_CHARS`
 * characters of source, the oldest entry dropped first; a source longer than a quarter of the
 * character bound is compiled and not kept.
 *
 * A source that fails to compile is cached with its error, so a bad template sent again fails
 * without compiling again; each request gets a fresh DeltatokError with the first as its cause.
 */
import { DeltatokError, toDeltatokError } from "../errors.js";
import type { ChatRenderer } from "../render/renderer.js";

/** Templates kept at most. */
export const TEMPLATE_CACHE_MAX = 32;
/** Characters of template source kept at most. */
export const TEMPLATE_CACHE_CHARS = 16 * 1024 * 1024;

export class TemplateCache {
  readonly #compile: (source: string) => ChatRenderer;
  /** Compiled templates by source, and the compile errors of sources that failed; oldest first. */
  readonly #entries = new Map<string, ChatRenderer | DeltatokError>();
  #chars = 0;

  /** `compile`: makes the renderer of a source (throws its compile error). */
  constructor(compile: (source: string) => ChatRenderer) {
    this.#compile = compile;
  }

  /** The compiled template of `source`; throws its compile error (cached too). */
  get(source: string): ChatRenderer {
    let r = this.#entries.get(source);
    if (r === undefined) {
      try {
        r = this.#compile(source);
      } catch (e) {
        r = toDeltatokError(e);
      }
      if (source.length <= TEMPLATE_CACHE_CHARS / 4) {
        while (this.#entries.size > 0 && (this.#entries.size >= TEMPLATE_CACHE_MAX || this.#chars + source.length > TEMPLATE_CACHE_CHARS)) {
          const oldest = this.#entries.keys().next().value as string;
          this.#entries.delete(oldest);
          this.#chars -= oldest.length;
        }
        this.#entries.set(source, r);
        this.#chars += source.length;
      }
    }
    if (r instanceof DeltatokError) throw new DeltatokError(r.code, r.message, { cause: r.cause ?? r, ...(r.path === undefined ? {} : { path: r.path }) });
    return r;
  }
}
