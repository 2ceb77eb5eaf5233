/**
 * The JSON parser used for request values (corpus lines, tool-call arguments): Python's
 * json.loads semantics (src/json), so the template sees what Python would — integral floats stay
 * floats, key order is kept for integer-like keys, big integers stay exact.
 */
import { parseJson } from "../json/index.js";
import type { JsonParser } from "../render/messages.js";

export const pythonJsonParser: JsonParser = parseJson;
