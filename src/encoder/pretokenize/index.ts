/**
 * Pre-tokenization without a regex engine: the public face of this folder (README.md explains it).
 *
 * Layer: encoder.
 */

export { type ClassSource, type ClassTable, classOf } from "./classes.js";
export { classTable, type Flavor, FLAVORS } from "./class-sources.js";
export { scannerFor, scannerForPattern } from "./recognize.js";
export { type Int32Sink, Int32List, type PieceScanner } from "./scanner.js";
export * as patterns from "./patterns.js";
