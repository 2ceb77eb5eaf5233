/**
 * Which hand-written scanner cuts a given pre-tokenizer configuration (src/encoder/pretokenize):
 * the lookup the encoder's build passes to its Split and ByteLevel stages.
 *
 * Layer: encoder.
 */

import type { ScannerLookup } from "./stages.js";

/** The scanner for a pre-tokenizer configuration exactly as tokenizer.json spells it, or null. */
export const scannerFor: ScannerLookup = () => null;
