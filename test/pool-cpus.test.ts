/**
 * CPU detection reads the affinity mask and the cgroup quota (v2 cpu.max, v1 cfs quota), along
 * the whole cgroup path, from a fake /proc + /sys tree.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { detectCpus, parseCpuList, parseCpuMask } from "../src/pool/cpus.js";

function tree(files: Record<string, string>): string {
  const root = mkdtempSync(join(tmpdir(), "deltatok-cpus-"));
  for (const [p, text] of Object.entries(files)) {
    const f = join(root, p);
    mkdirSync(dirname(f), { recursive: true });
    writeFileSync(f, text);
  }
  return root;
}

const status = (list: string) => `Name:\tnode\nCpus_allowed:\tff\nCpus_allowed_list:\t${list}\nMems_allowed_list:\t0\n`;
const V2_MOUNT = "41 31 0:38 / /sys/fs/cgroup rw,relatime - cgroup2 cgroup2 rw\n";
const V1_MOUNT = "32 31 0:29 / /sys/fs/cgroup/cpu,cpuacct rw,relatime - cgroup cgroup rw,cpu,cpuacct\n";

test("CPU lists and masks parse like the kernel prints them", () => {
  assert.deepEqual(parseCpuList("0-3,8,10-11"), [0, 1, 2, 3, 8, 10, 11]);
  assert.deepEqual(parseCpuList("5"), [5]);
  assert.equal(parseCpuList("3-1"), null);
  assert.equal(parseCpuList("x"), null);
  assert.deepEqual(parseCpuMask("3"), [0, 1]);
  assert.deepEqual(parseCpuMask("1,00000001"), [0, 32]);
});

test("the affinity mask bounds the count when there is no quota", () => {
  const root = tree({ "proc/self/status": status("0-3,8"), "proc/self/cgroup": "0::/\n", "proc/self/mountinfo": V2_MOUNT, "sys/fs/cgroup/cpu.max": "max 100000\n" });
  const c = detectCpus({ root });
  assert.equal(c.count, 5);
  assert.deepEqual(c.affinity, [0, 1, 2, 3, 8]);
  assert.equal(c.quota, null);
});

test("cgroup v2 cpu.max: a fractional quota rounds up, and parents bind children", () => {
  const root = tree({
    "proc/self/status": status("0-7"),
    "proc/self/cgroup": "0::/job/task\n",
    "proc/self/mountinfo": V2_MOUNT,
    "sys/fs/cgroup/cpu.max": "max 100000\n",
    "sys/fs/cgroup/job/cpu.max": "250000 100000\n",
    "sys/fs/cgroup/job/task/cpu.max": "max 100000\n",
  });
  const c = detectCpus({ root });
  assert.equal(c.quota, 2.5);
  assert.equal(c.count, 3);
  assert.match(c.quotaSource ?? "", /job\/cpu\.max$/);
});

test("cgroup v2: the tighter of a child and parent limit wins; the affinity mask can be tighter still", () => {
  const root = tree({
    "proc/self/status": status("0-1"),
    "proc/self/cgroup": "0::/a/b\n",
    "proc/self/mountinfo": V2_MOUNT,
    "sys/fs/cgroup/a/cpu.max": "800000 100000\n",
    "sys/fs/cgroup/a/b/cpu.max": "400000 100000\n",
  });
  const c = detectCpus({ root });
  assert.equal(c.quota, 4);
  assert.equal(c.count, 2);
});

test("cgroup v1 cfs quota; -1 means unlimited", () => {
  const limited = tree({
    "proc/self/status": status("0-15"),
    "proc/self/cgroup": "4:memory:/x\n3:cpu,cpuacct:/docker/abc\n0::/\n",
    "proc/self/mountinfo": V1_MOUNT,
    "sys/fs/cgroup/cpu,cpuacct/docker/abc/cpu.cfs_quota_us": "300000\n",
    "sys/fs/cgroup/cpu,cpuacct/docker/abc/cpu.cfs_period_us": "100000\n",
  });
  assert.equal(detectCpus({ root: limited }).count, 3);
  const unlimited = tree({
    "proc/self/status": status("0-15"),
    "proc/self/cgroup": "3:cpu,cpuacct:/\n",
    "proc/self/mountinfo": V1_MOUNT,
    "sys/fs/cgroup/cpu,cpuacct/cpu.cfs_quota_us": "-1\n",
    "sys/fs/cgroup/cpu,cpuacct/cpu.cfs_period_us": "100000\n",
  });
  assert.equal(detectCpus({ root: unlimited }).count, 16);
});

test("inside a cgroup namespace the path may not exist under the mount: the mount point is read", () => {
  const root = tree({
    "proc/self/status": status("0-3"),
    "proc/self/cgroup": "0::/kubepods/pod1/ctr\n",
    "proc/self/mountinfo": V2_MOUNT,
    "sys/fs/cgroup/cpu.max": "100000 100000\n",
  });
  assert.equal(detectCpus({ root }).count, 1);
});

test("a bind-mounted hierarchy (mount root not /) is resolved relative to its root", () => {
  const root = tree({
    "proc/self/status": status("0-3"),
    "proc/self/cgroup": "2:cpu:/outer/inner\n",
    "proc/self/mountinfo": "32 31 0:29 /outer /sys/fs/cgroup/cpu rw - cgroup cgroup rw,cpu\n",
    "sys/fs/cgroup/cpu/inner/cpu.cfs_quota_us": "150000\n",
    "sys/fs/cgroup/cpu/inner/cpu.cfs_period_us": "100000\n",
  });
  const c = detectCpus({ root });
  assert.equal(c.quota, 1.5);
  assert.equal(c.count, 2);
});

test("nothing readable: the fallback count, at least 1", () => {
  const root = tree({ "README": "empty tree\n" });
  assert.equal(detectCpus({ root, fallback: 6 }).count, 6);
  assert.equal(detectCpus({ root }).count, 1);
  assert.equal(detectCpus({ root }).affinity, null);
});

test("without mountinfo the conventional cgroup locations are read", () => {
  const root = tree({ "proc/self/status": status("0-7"), "sys/fs/cgroup/cpu.max": "200000 100000\n" });
  assert.equal(detectCpus({ root }).count, 2);
});

test("the real system gives a sane answer", () => {
  const c = detectCpus();
  assert.ok(Number.isSafeInteger(c.count) && c.count >= 1);
});
