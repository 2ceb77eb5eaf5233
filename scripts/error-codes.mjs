// Regenerates the error-code table in README.md from src/errors.ts (run after `npm run build`).
import { readFileSync, writeFileSync } from "node:fs";
import { ERROR_CODES } from "../dist/src/errors.js";

const readme = new URL("../README.md", import.meta.url);
const text = readFileSync(readme, "utf8");
const rows = Object.entries(ERROR_CODES).map(([code, meaning]) => `| \`${code}\` | ${meaning} |`);
const table = ["<!-- error-codes:start -->", "| code | meaning |", "|---|---|", ...rows, "<!-- error-codes:end -->"].join("\n");
const next = text.replace(/<!-- error-codes:start -->[\s\S]*<!-- error-codes:end -->/, table);
writeFileSync(readme, next);
console.log(next === text ? "README error codes already up to date" : "README error codes updated");
