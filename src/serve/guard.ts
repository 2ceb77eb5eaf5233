/**
 * Who may talk to the HTTP sidecar: the checks every request passes before anything else is read
 * (DESIGN.md, "Threat model"). In order:
 *   Host     must name the server — loopback names with its port, the bound address, or a name
 *            given with `allowHosts` — else 403 DT_FORBIDDEN (DNS rebinding: a web page whose
 *            name was re-pointed at 127.0.0.1 still sends its own name as Host);
 *   Origin   absent (non-browser clients send none) or the very origin the Host names, else 403
 *            DT_FORBIDDEN; `Sec-Fetch-Site` other than same-origin/none is 403 too (a browser's
 *            cross-site GET carries no Origin, but it carries that);
 *   token    when set, `Authorization: Bearer <token>`, compared in constant time on SHA-256
 *            digests, else 401 DT_UNAUTHORIZED;
 *   media    a POST body must be declared `application/json` (charset utf-8 or none), else 415
 *            DT_UNSUPPORTED_MEDIA_TYPE: this is what keeps a web page's CORS "simple request"
 *            (text/plain, form posts, no preflight) out.
 */
import { createHash, timingSafeEqual } from "node:crypto";
import { isIP, isIPv4 } from "node:net";
import { hostname, networkInterfaces } from "node:os";
import type { IncomingHttpHeaders } from "node:http";
import { DeltatokError, type ErrorCode } from "../errors.js";

export interface Rejection {
  status: number;
  code: ErrorCode;
  message: string;
}

export interface Guard {
  /** Host header values accepted exactly (lower case, with port). */
  readonly hosts: ReadonlySet<string>;
  /** Host names accepted with any port or none (from allowHosts without a port). */
  readonly names: ReadonlySet<string>;
  /** SHA-256 of the token, or null when none is required. */
  readonly tokenDigest: Buffer | null;
}

/** True for an address or name that only this machine can reach. */
export function isLoopbackHost(host: string): boolean {
  const h = host.toLowerCase().replace(/^\[(.*)\]$/, "$1");
  if (h === "localhost" || h === "::1") return true;
  if (isIPv4(h)) return h.startsWith("127.");
  if (h.startsWith("::ffff:") && isIPv4(h.slice(7))) return h.slice(7).startsWith("127.");
  return false;
}

function isWildcard(host: string): boolean {
  return host === "0.0.0.0" || host === "::" || host === "[::]";
}

/** `name:port` as a Host header spells it (IPv6 in brackets), lower case. */
function hostValue(name: string, port: number): string {
  const n = name.toLowerCase().replace(/^\[(.*)\]$/, "$1");
  return `${isIP(n) === 6 ? `[${n}]` : n}:${port}`;
}

/** Checks a token given for the server: visible ASCII only, as a header value must carry it. */
export function checkToken(token: string): void {
  if (typeof token !== "string" || !/^[\x21-\x7e]+$/.test(token)) {
    throw new DeltatokError("DT_INVALID_OPTION", "token must be a non-empty string of visible ASCII characters (no spaces)", { path: "token" });
  }
}

/** Checks an allowHosts entry: a host name or address, optionally with :port. */
export function checkAllowHost(h: string): void {
  if (typeof h !== "string" || !/^(\[[0-9a-fA-F:.]+\]|[^\s:[\]/@]+)(:\d{1,5})?$/.test(h)) {
    throw new DeltatokError("DT_INVALID_OPTION", `allowHosts: "${String(h)}" is not a host name or address (with an optional :port)`, { path: "allowHosts" });
  }
}

export function buildGuard(o: { bindHost: string; boundAddress: string; port: number; allowHosts: readonly string[]; token: string | null }): Guard {
  const hosts = new Set<string>();
  const names = new Set<string>();
  const addName = (name: string) => {
    hosts.add(hostValue(name, o.port));
    // a Host without a port means port 80
    if (o.port === 80) hosts.add(hostValue(name, o.port).replace(/:80$/, ""));
  };
  const wildcard = isWildcard(o.bindHost);
  if (wildcard || isLoopbackHost(o.bindHost)) for (const n of ["127.0.0.1", "localhost", "::1"]) addName(n);
  addName(o.bindHost);
  addName(o.boundAddress);
  if (wildcard) {
    // bound everywhere: every address of this machine, and its name
    for (const list of Object.values(networkInterfaces())) for (const a of list ?? []) addName(a.address.replace(/%.*$/, ""));
    addName(hostname());
  }
  for (const h of o.allowHosts) {
    checkAllowHost(h);
    const lower = h.toLowerCase();
    if (/^\[.*\]$|^[^:]*$/.test(lower)) names.add(lower);
    else hosts.add(lower);
  }
  return {
    hosts,
    names,
    tokenDigest: o.token === null ? null : createHash("sha256").update(o.token, "utf8").digest(),
  };
}

function hostAllowed(g: Guard, host: string): boolean {
  const h = host.toLowerCase();
  if (g.hosts.has(h)) return true;
  if (g.names.size === 0) return false;
  const name = h.startsWith("[") ? h.slice(0, h.indexOf("]") + 1) : h.replace(/:\d*$/, "");
  return g.names.has(name);
}

function originAllowed(origin: string, host: string): boolean {
  try {
    const u = new URL(origin);
    return (u.protocol === "http:" || u.protocol === "https:") && u.host.toLowerCase() === host.toLowerCase();
  } catch {
    return false; // "null" (sandboxed frames, file: pages) and anything unparsable
  }
}

/** True when the Authorization header carries the token (constant time in the token). */
function tokenMatches(digest: Buffer, authorization: string | undefined): boolean {
  if (authorization === undefined) return false;
  const m = /^bearer[ \t]+([^ \t]+)[ \t]*$/i.exec(authorization);
  if (m === null) return false;
  return timingSafeEqual(createHash("sha256").update(m[1] as string, "utf8").digest(), digest);
}

/** The checks on a request's headers, before its body is read; null when it may go on. */
export function checkHeaders(g: Guard, method: string | undefined, h: IncomingHttpHeaders): Rejection | null {
  const host = h.host;
  if (host === undefined || !hostAllowed(g, host)) {
    return { status: 403, code: "DT_FORBIDDEN", message: `Host ${host === undefined ? "(none)" : JSON.stringify(host)} is not an address of this server (see --allow-host)` };
  }
  const origin = h.origin;
  if (origin !== undefined && !originAllowed(origin, host)) {
    return { status: 403, code: "DT_FORBIDDEN", message: `cross-origin request from ${JSON.stringify(origin)}` };
  }
  const site = h["sec-fetch-site"];
  if (site !== undefined && site !== "same-origin" && site !== "none") {
    return { status: 403, code: "DT_FORBIDDEN", message: `cross-site browser request (Sec-Fetch-Site: ${site})` };
  }
  if (g.tokenDigest !== null && !tokenMatches(g.tokenDigest, h.authorization)) {
    return { status: 401, code: "DT_UNAUTHORIZED", message: "this server requires Authorization: Bearer <token>" };
  }
  if (method === "POST" && !isJson(h["content-type"])) {
    return { status: 415, code: "DT_UNSUPPORTED_MEDIA_TYPE", message: `the body must be Content-Type: application/json, got ${h["content-type"] === undefined ? "none" : JSON.stringify(h["content-type"])}` };
  }
  return null;
}

/** `application/json`, with parameters allowed, and a charset (if any) of utf-8. */
export function isJson(contentType: string | undefined): boolean {
  if (contentType === undefined) return false;
  const [type, ...params] = contentType.split(";");
  if ((type as string).trim().toLowerCase() !== "application/json") return false;
  for (const p of params) {
    const eq = p.indexOf("=");
    if (eq < 0) continue;
    if (p.slice(0, eq).trim().toLowerCase() !== "charset") continue;
    const v = p.slice(eq + 1).trim().replace(/^"(.*)"$/, "$1").toLowerCase();
    if (v !== "utf-8" && v !== "utf8") return false;
  }
  return true;
}
