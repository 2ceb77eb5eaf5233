"""Transports: one request/answer exchange with a deltatok sidecar, over stdio or HTTP.

Both are thread-safe and have one method, ``call(method, params) -> result`` (raising the coded
error deltatok answered). Over stdio, many threads may keep requests in flight on one pipe; the
thread that finds no reader reads for everyone (so a single-threaded caller reads its own answer
with no thread switch), handing each answer to its waiter by id. Over HTTP, each thread keeps
one keep-alive connection; a connection the server closed (idle timeout, restart) is reopened
once before the call fails, and a call that belongs to a conversation carries its routing key as
the ``X-Deltatok-Conversation`` header (a router such as deploy/nginx/deltatok.conf hashes it).
"""
from __future__ import annotations

import http.client
import itertools
import json
import os
import re
import socket
import subprocess
import sys
import threading
import urllib.parse
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Set

from ._discovery import find_command
from ._errors import DeltatokError, error_from_record
from ._prefix import ROUTE_HEADER

__all__ = ["StdioTransport", "HttpTransport", "Transport"]


class Transport:
    """What the clients need from a transport."""

    def call(self, method: str, params: Dict[str, Any], route: Optional[str] = None) -> Any:  # pragma: no cover - interface
        """One call; `route` is its conversation's routing key (used by HTTP, ignored on stdio).
        The built-in transports also take `during=`: work run after sending, before reading."""
        raise NotImplementedError

    def close(self) -> int:  # pragma: no cover - interface
        return 0


def _envelope(rid: int, method: str, params: Dict[str, Any]) -> bytes:
    # `id` first, as a scalar: the server can name the request even in a line it must skip
    return (json.dumps({"id": rid, "method": method, "params": params}, ensure_ascii=False) + "\n").encode("utf-8")


class StdioTransport(Transport):
    """Runs ``deltatok serve ARGS`` as a child process and speaks JSON lines over its stdin/stdout.

    ``command`` runs the deltatok CLI (default: ``find_command()``, which needs no network and
    raises DeltatokNotFoundError here, at construction, when there is none)."""

    def __init__(self, args: Sequence[str] = (), command: Optional[Sequence[str]] = None, env: Optional[Mapping[str, str]] = None):
        cmd = list(command) if command is not None else find_command(environ=env)
        self.command: List[str] = cmd + ["serve"] + list(args)
        self._proc = subprocess.Popen(self.command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                      env=dict(env) if env is not None else None)
        # the server's stderr goes on to ours; its fatal error line (`deltatok: DT_X: ...`) is kept
        self._last_error: Optional[Dict[str, str]] = None
        self._stderr = threading.Thread(target=self._copy_stderr, name="deltatok-stderr", daemon=True)
        self._stderr.start()
        self._stdin = self._proc.stdin
        self._stdout = self._proc.stdout
        self._ids = itertools.count(1)
        self._write_lock = threading.Lock()
        self._cv = threading.Condition(threading.Lock())
        self._answers: Dict[Any, Dict[str, Any]] = {}
        self._waiting: Set[int] = set()
        self._reading = False
        self._failure: Optional[BaseException] = None
        self._closed = False

    def _copy_stderr(self) -> None:
        out = getattr(sys.stderr, "buffer", None)
        for line in self._proc.stderr:  # type: ignore[union-attr]
            m = re.match(rb"^deltatok: (DT_[A-Z0-9_]+): (.*)$", line.rstrip(b"\r\n"))
            if m:
                self._last_error = {"code": m.group(1).decode(), "message": m.group(2).decode("utf-8", "replace")}
            try:
                if out is not None:
                    out.write(line)
                    out.flush()
                else:
                    sys.stderr.write(line.decode("utf-8", "replace"))
            except (OSError, ValueError):
                pass

    @property
    def pid(self) -> int:
        return self._proc.pid

    def call(self, method: str, params: Dict[str, Any], route: Optional[str] = None, during: Optional[Callable[[], Any]] = None) -> Any:
        """One call; `during` runs after the request is written, while the server works."""
        rid = next(self._ids)
        line = _envelope(rid, method, params)
        with self._cv:
            if self._closed:
                raise DeltatokError("DT_CLOSED", "the client is closed")
            if self._failure is not None:
                raise self._gone()
            self._waiting.add(rid)
        try:
            with self._write_lock:
                self._stdin.write(line)  # type: ignore[union-attr]
                self._stdin.flush()  # type: ignore[union-attr]
        except (BrokenPipeError, OSError, ValueError) as e:
            with self._cv:
                self._waiting.discard(rid)
            raise DeltatokError("DT_CLOSED", "deltatok serve is not running: %s" % e)
        if during is not None:
            during()
        resp = self._await(rid)
        if "error" in resp:
            raise error_from_record(resp["error"])
        return resp.get("result")

    def _await(self, rid: int) -> Dict[str, Any]:
        with self._cv:
            while True:
                if rid in self._answers:
                    self._waiting.discard(rid)
                    return self._answers.pop(rid)
                if self._failure is not None:
                    self._waiting.discard(rid)
                    raise self._gone()
                if not self._reading:
                    self._reading = True
                    break
                self._cv.wait()
        # this thread reads for everyone until its own answer arrives
        try:
            while True:
                raw = self._stdout.readline()  # type: ignore[union-attr]
                if not raw:
                    raise EOFError("deltatok serve closed its output")
                resp = json.loads(raw)
                got = resp.get("id") if isinstance(resp, dict) else None
                if got == rid:
                    with self._cv:
                        self._waiting.discard(rid)
                    return resp
                with self._cv:
                    if got in self._waiting:
                        self._answers[got] = resp
                        self._cv.notify_all()
        except BaseException as e:  # noqa: BLE001 - the pipe is gone for every waiter
            with self._cv:
                if self._failure is None:
                    self._failure = e
                self._waiting.discard(rid)
            raise self._gone() from None
        finally:
            with self._cv:
                self._reading = False
                self._cv.notify_all()

    def _gone(self) -> DeltatokError:
        code = self._proc.poll()
        if code is None:
            try:
                code = self._proc.wait(5)
            except subprocess.TimeoutExpired:
                code = None
        self._stderr.join(2)
        if code is not None and code != 0 and self._last_error is not None:
            # the server could not start (or died of a fatal error): its own code
            return error_from_record(self._last_error)
        why = "" if self._failure is None or isinstance(self._failure, EOFError) else " (%s)" % self._failure
        return DeltatokError("DT_CLOSED", "deltatok serve (%s) exited%s without answering%s; its stderr says why"
                             % (" ".join(self.command), "" if code is None else " with code %d" % code, why))

    def close(self, timeout: float = 30.0) -> int:
        """Closes stdin (deltatok answers what is in flight, then exits) and waits for the process."""
        with self._cv:
            if self._closed:
                return self._proc.returncode or 0
            self._closed = True
        with self._write_lock:
            try:
                self._stdin.close()  # type: ignore[union-attr]
            except OSError:
                pass
        try:
            code = self._proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self._proc.terminate()
            code = self._proc.wait(timeout)
        self._stderr.join(5)
        for pipe in (self._stdout, self._proc.stderr):
            try:
                pipe.close()  # type: ignore[union-attr]
            except OSError:
                pass
        return code


class HttpTransport(Transport):
    """Talks to ``deltatok serve --port N`` over HTTP (``POST /rpc``).

    ``token``: the server's bearer token (``deltatok serve --token`` / ``DELTATOK_TOKEN``); by
    default ``$DELTATOK_TOKEN`` when set."""

    def __init__(self, base_url: str, token: Optional[str] = None, timeout: float = 300.0):
        u = urllib.parse.urlsplit(base_url)
        if u.scheme not in ("http", "https") or not u.hostname:
            raise ValueError("base_url must be an http:// or https:// URL, got %r" % (base_url,))
        self.url = base_url.rstrip("/")
        self._https = u.scheme == "https"
        self._host = u.hostname
        self._port = u.port
        self._path = (u.path.rstrip("/") or "") + "/rpc"
        self._timeout = timeout
        if token is None:
            token = os.environ.get("DELTATOK_TOKEN") or None
        self._headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if token:
            self._headers["Authorization"] = "Bearer " + token
        self._local = threading.local()
        self._ids = itertools.count(1)
        self._all: Set[http.client.HTTPConnection] = set()
        self._all_lock = threading.Lock()

    def _connection(self) -> http.client.HTTPConnection:
        c = getattr(self._local, "conn", None)
        if c is None:
            cls = http.client.HTTPSConnection if self._https else http.client.HTTPConnection
            c = cls(self._host, self._port, timeout=self._timeout)
            self._local.conn = c
            with self._all_lock:
                self._all.add(c)
        return c

    def _drop(self) -> None:
        c = getattr(self._local, "conn", None)
        if c is not None:
            c.close()
            with self._all_lock:
                self._all.discard(c)
        self._local.conn = None

    def call(self, method: str, params: Dict[str, Any], route: Optional[str] = None, during: Optional[Callable[[], Any]] = None) -> Any:
        """One call; `during` runs after the request is sent, while the server works."""
        body = _envelope(next(self._ids), method, params)
        headers = self._headers
        if route is not None:
            headers = dict(headers)
            headers[ROUTE_HEADER] = route
        for attempt in (0, 1):
            conn = self._connection()
            try:
                conn.request("POST", self._path, body, headers)
                if during is not None:
                    during, run_now = None, during
                    run_now()
                r = conn.getresponse()
                data = r.read()
                if (r.getheader("connection") or "").lower() == "close":
                    self._drop()
                break
            except socket.timeout as e:
                self._drop()
                raise DeltatokError("DT_REQUEST_TIMEOUT", "no answer from %s within %ss: %s" % (self.url, self._timeout, e))
            except (ConnectionError, http.client.HTTPException, OSError) as e:
                # a kept-alive connection the server closed (idle, restarted): reopen once
                self._drop()
                if attempt == 1:
                    raise DeltatokError("DT_CLOSED", "cannot reach deltatok at %s: %s" % (self.url, e))
        try:
            resp = json.loads(data) if data else {}
        except ValueError:
            if r.status in (502, 503, 504):
                # a proxy's own answer (deploy/nginx): no instance behind it answered
                raise DeltatokError("DT_CLOSED", "HTTP %d from %s: the proxy reached no deltatok instance that answered" % (r.status, self.url)) from None
            raise DeltatokError("DT_INTERNAL", "HTTP %d from %s with a body that is not JSON" % (r.status, self.url)) from None
        if isinstance(resp, dict) and "error" in resp:
            raise error_from_record(resp["error"])
        if not isinstance(resp, dict) or "result" not in resp:
            raise DeltatokError("DT_INTERNAL", "HTTP %d from %s without a result" % (r.status, self.url))
        return resp["result"]

    def close(self) -> int:
        """Closes every thread's connection."""
        with self._all_lock:
            conns, self._all = self._all, set()
        for c in conns:
            c.close()
        self._local = threading.local()
        return 0
