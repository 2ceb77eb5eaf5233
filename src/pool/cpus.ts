/**
 * How many CPUs this process may actually use: the smaller of its affinity mask (what
 * `sched_setaffinity`/cpusets allow) and its cgroup CPU quota (`cpu.max` in cgroup v2,
 * `cpu.cfs_quota_us / cpu.cfs_period_us` in v1), checked along the whole cgroup path, since a
 * parent's limit binds its children. `os.cpus().length` counts the machine, not the container.
 *
 * Everything is read under `root` (default "/"), so tests can point it at a fake tree holding
 * `proc/self/{status,cgroup,mountinfo}` and `sys/fs/cgroup/...`.
 *
 * A fractional quota is rounded up: 1.5 CPUs of quota can keep 2 threads busy half of the
 * time each, and the scheduler throttles, it does not fail.
 */
import { readFileSync, existsSync } from "node:fs";
import { availableParallelism } from "node:os";
import { join, posix } from "node:path";

export interface CpuDetectOptions {
  /** Root of the file system to read /proc and /sys from (tests use a fake tree). @defaultValue "/" */
  root?: string;
  /**
   * Number of CPUs when the affinity mask cannot be read from `proc/self/status`.
   * @defaultValue `os.availableParallelism()` (for the real root), else 1
   */
  fallback?: number;
}

export interface CpuInfo {
  /** CPUs to size a pool with: min(affinity, ceil(quota)), at least 1. */
  count: number;
  /** CPU ids in the affinity mask, ascending (null when unreadable). */
  affinity: number[] | null;
  /** CPUs the affinity mask allows (or the fallback). */
  affinityCount: number;
  /** The tightest cgroup quota along the process's cgroup path, in CPUs (null: none found). */
  quota: number | null;
  /** Where the quota came from (file path), when there is one. */
  quotaSource: string | null;
}

/** Parses a kernel CPU list such as `0-3,8,10-11` into sorted ids. Returns null if malformed. */
export function parseCpuList(text: string): number[] | null {
  const s = text.trim();
  if (s === "") return [];
  const out = new Set<number>();
  for (const part of s.split(",")) {
    const m = /^(\d+)(?:-(\d+))?$/.exec(part.trim());
    if (m === null) return null;
    const a = Number(m[1]);
    const b = m[2] === undefined ? a : Number(m[2]);
    if (b < a || b - a > 1 << 16) return null;
    for (let i = a; i <= b; i++) out.add(i);
  }
  return [...out].sort((x, y) => x - y);
}

/** Parses a hex mask such as `ff,ffffffff` (Cpus_allowed) into sorted ids. */
export function parseCpuMask(text: string): number[] | null {
  const hex = text.trim().replaceAll(",", "");
  if (!/^[0-9a-fA-F]+$/.test(hex)) return null;
  const out: number[] = [];
  for (let i = 0; i < hex.length; i++) {
    const nibble = parseInt(hex[hex.length - 1 - i] as string, 16);
    for (let b = 0; b < 4; b++) if ((nibble >> b) & 1) out.push(i * 4 + b);
  }
  return out;
}

function read(path: string): string | null {
  try {
    return readFileSync(path, "utf8");
  } catch {
    return null;
  }
}

/** The affinity mask from `proc/self/status` (Cpus_allowed_list, else Cpus_allowed). */
export function readAffinity(root: string): number[] | null {
  const status = read(join(root, "proc/self/status"));
  if (status === null) return null;
  const list = /^Cpus_allowed_list:\s*(.*)$/m.exec(status);
  if (list !== null) {
    const ids = parseCpuList(list[1] as string);
    if (ids !== null && ids.length > 0) return ids;
  }
  const mask = /^Cpus_allowed:\s*(.*)$/m.exec(status);
  if (mask !== null) {
    const ids = parseCpuMask(mask[1] as string);
    if (ids !== null && ids.length > 0) return ids;
  }
  return null;
}

interface CgroupMount {
  /** cgroup2, or cgroup (v1) */
  version: 1 | 2;
  /** Path inside the hierarchy that is mounted (field 4 of mountinfo). */
  mountRoot: string;
  /** Where it is mounted (absolute, not yet rebased under root). */
  mountPoint: string;
  /** v1 controllers from the super options (e.g. cpu, cpuacct). */
  controllers: string[];
}

/** Decodes the octal escapes mountinfo uses for spaces and the like. */
function unescapeMount(s: string): string {
  return s.replace(/\\([0-7]{3})/g, (_m, o: string) => String.fromCharCode(parseInt(o, 8)));
}

function parseMountinfo(text: string): CgroupMount[] {
  const out: CgroupMount[] = [];
  for (const line of text.split("\n")) {
    const dash = line.indexOf(" - ");
    if (dash < 0) continue;
    const pre = line.slice(0, dash).split(" ");
    const post = line.slice(dash + 3).split(" ");
    const fstype = post[0];
    if (fstype !== "cgroup" && fstype !== "cgroup2") continue;
    if (pre.length < 5) continue;
    out.push({
      version: fstype === "cgroup2" ? 2 : 1,
      mountRoot: unescapeMount(pre[3] as string),
      mountPoint: unescapeMount(pre[4] as string),
      controllers: fstype === "cgroup" ? (post[2] ?? "").split(",") : [],
    });
  }
  return out;
}

interface CgroupLine {
  id: string;
  controllers: string[];
  path: string;
}

function parseProcCgroup(text: string): CgroupLine[] {
  const out: CgroupLine[] = [];
  for (const line of text.split("\n")) {
    const a = line.indexOf(":");
    const b = line.indexOf(":", a + 1);
    if (a < 0 || b < 0) continue;
    out.push({ id: line.slice(0, a), controllers: line.slice(a + 1, b).split(",").filter((c) => c !== ""), path: line.slice(b + 1) });
  }
  return out;
}

/**
 * The directories to check, deepest first: the process's cgroup directory and each ancestor up
 * to the mount point. When the cgroup path is not below the mount root (a cgroup namespace or a
 * bind mount shows a different root), the path is taken relative to the mount point; when that
 * does not exist either, only the mount point itself is checked.
 */
function cgroupDirs(root: string, m: CgroupMount, cgPath: string): string[] {
  let rel = cgPath;
  if (m.mountRoot !== "/" && (cgPath === m.mountRoot || cgPath.startsWith(m.mountRoot + "/"))) rel = cgPath.slice(m.mountRoot.length);
  rel = posix.normalize("/" + rel);
  const base = join(root, m.mountPoint);
  let dir = join(base, rel);
  if (!existsSync(dir)) dir = base;
  const out: string[] = [];
  for (;;) {
    out.push(dir);
    if (dir === base || dir.length <= base.length) break;
    dir = posix.dirname(dir);
  }
  return out;
}

function quotaV2(dir: string): number | null {
  const t = read(join(dir, "cpu.max"));
  if (t === null) return null;
  const [q, p] = t.trim().split(/\s+/);
  if (q === undefined || q === "max") return null;
  const quota = Number(q);
  const period = p === undefined ? 100_000 : Number(p);
  if (!(quota > 0) || !(period > 0)) return null;
  return quota / period;
}

function quotaV1(dir: string): number | null {
  const q = read(join(dir, "cpu.cfs_quota_us"));
  const p = read(join(dir, "cpu.cfs_period_us"));
  if (q === null || p === null) return null;
  const quota = Number(q.trim());
  const period = Number(p.trim());
  if (!(quota > 0) || !(period > 0)) return null; // -1 = unlimited
  return quota / period;
}

/** The tightest cgroup CPU quota for this process, in CPUs, with the file it came from. */
export function readCgroupQuota(root: string): { quota: number; source: string } | null {
  const self = parseProcCgroup(read(join(root, "proc/self/cgroup")) ?? "");
  const mounts = parseMountinfo(read(join(root, "proc/self/mountinfo")) ?? "");
  let best: { quota: number; source: string } | null = null;
  const consider = (q: number | null, source: string) => {
    if (q !== null && (best === null || q < best.quota)) best = { quota: q, source };
  };
  const check = (dirs: string[], version: 1 | 2) => {
    for (const d of dirs) consider(version === 2 ? quotaV2(d) : quotaV1(d), join(d, version === 2 ? "cpu.max" : "cpu.cfs_quota_us"));
  };
  let found = false;
  for (const line of self) {
    if (line.id === "0" && line.controllers.length === 0) {
      for (const m of mounts.filter((x) => x.version === 2)) {
        found = true;
        check(cgroupDirs(root, m, line.path), 2);
      }
    } else if (line.controllers.includes("cpu")) {
      for (const m of mounts.filter((x) => x.version === 1 && x.controllers.includes("cpu"))) {
        found = true;
        check(cgroupDirs(root, m, line.path), 1);
      }
    }
  }
  if (!found) {
    // No usable mountinfo: the conventional mount points.
    check([join(root, "sys/fs/cgroup")], 2);
    check([join(root, "sys/fs/cgroup/cpu,cpuacct"), join(root, "sys/fs/cgroup/cpu")], 1);
  }
  return best;
}

/** CPUs this process may use (see the module comment). */
export function detectCpus(options: CpuDetectOptions = {}): CpuInfo {
  const root = options.root ?? "/";
  const real = options.root === undefined || options.root === "/";
  const fallback = options.fallback ?? (real ? availableParallelism() : 1);
  const affinity = process.platform === "linux" || !real ? readAffinity(root) : null;
  let affinityCount = affinity !== null ? affinity.length : fallback;
  // sched_getaffinity (what availableParallelism reads) can be tighter than status when the
  // mask changes at runtime; take the smaller for the real system.
  if (real) affinityCount = Math.min(affinityCount, availableParallelism());
  const q = process.platform === "linux" || !real ? readCgroupQuota(root) : null;
  const quotaCpus = q === null ? Infinity : Math.max(1, Math.ceil(q.quota - 1e-9));
  return {
    count: Math.max(1, Math.min(affinityCount, quotaCpus)),
    affinity,
    affinityCount,
    quota: q === null ? null : q.quota,
    quotaSource: q === null ? null : q.source,
  };
}
