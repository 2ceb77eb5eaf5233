// The command line shared by the sidecar replay benchmarks (bench/sidecar-replay.mjs,
// bench/python-floor.mjs): positional files, `--name value` options, and the two every one of
// them takes — `--build DIR` (a deltatok checkout whose dist/ is used; default this one) and
// `--corpus FILE` (default the shared tau-bench airline corpus).
import { resolve } from "node:path";
import { fileURLToPath } from "node:url";

const here = fileURLToPath(new URL(".", import.meta.url));

export function replayArgs(argv = process.argv.slice(2)) {
  const opt = (name, dflt) => {
    const i = argv.indexOf(name);
    return i >= 0 ? argv[i + 1] : dflt;
  };
  return {
    args: argv,
    opt,
    /** This folder (bench/). */
    here,
    build: resolve(opt("--build", resolve(here, ".."))),
    corpus: opt("--corpus", resolve(here, "../../shared/corpus/trajectories/tau-bench-airline-gpt-4o.jsonl")),
  };
}
