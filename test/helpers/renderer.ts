/** The renderer tests run with (DELTATOK_TEST_RENDERER overrides). */
import type { RendererKind } from "../../src/render/renderer.js";

export const TEST_RENDERER: RendererKind = (process.env.DELTATOK_TEST_RENDERER as RendererKind | undefined) ?? "python";
