/**
 * The JSON parser used for request values (corpus lines, tool-call arguments). It must follow
 * Python's json.loads so the template sees what Python would: see src/json.
 */
import type { JsonParser } from "../render/messages.js";

// Placeholder until src/json lands: JSON.parse loses float-ness of integral numbers.
export const pythonJsonParser: JsonParser = (text) => JSON.parse(text) as unknown;
