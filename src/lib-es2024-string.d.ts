// String well-formedness (ES2024) ships in Node 20 (V8 11.3); the ES2023 lib we target for the
// rest of the language does not declare it.
interface String {
  isWellFormed(): boolean;
  toWellFormed(): string;
}
