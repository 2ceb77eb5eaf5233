/**
 * JSON with Python semantics: the value model (values.ts), `parseJson` (json.loads) and
 * `dumps` (json.dumps).
 *
 * Layer: json.
 */
export { PyFloat, KEY_ORDER, pyFloat, keysOf, setKeyOrder, isPlainObject, isArrayIndexKey } from "./values.js";
export { parseJson, findLoneSurrogate, hasLoneSurrogate } from "./parse.js";
export { dumps, JsonDumpsError, compareCodePoints } from "./dumps.js";
export type { DumpsOptions } from "./dumps.js";
export { floatRepr } from "./floatrepr.js";
export { snakeCase, snakeKeys, wireJson } from "./wire.js";
