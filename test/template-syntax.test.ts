/** Python-semantics family "syntax": every case rendered by Python Jinja2 (see test/fixtures/template/README.md). */
import { checkFamily } from "./fixtures/template/harness.js";

checkFamily("syntax");
