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
import select
import socket
import subprocess
import sys
import threading
import time
import urllib.parse
from typing import IO, Any, Callable, Dict, List, Mapping, Optional, Sequence, Set

from ._discovery import find_command
from ._errors import NOT_FOUND_HELP, DeltatokError, DeltatokInputError, DeltatokNotFoundError, error_from_record
from ._wire import DEFAULT_TIMEOUT, ROUTE_HEADER, envelope, read_answer, read_result

__all__ = ["StdioTransport", "HttpTransport", "Transport", "DEFAULT_TIMEOUT"]


class Transport:
    """What the clients need from a transport."""

    def call(self, method: str, params: Dict[str, Any], route: Optional[str] = None) -> Any:  # pragma: no cover - interface
        """One call; `route` is its conversation's routing key (used by HTTP, ignored on stdio).
        The built-in transports also take `during=` (`OverlapTransport`): work run after sending,
        before reading. They return `_wire.read_result(method, envelope)`: the result checked for
        its shape (DT_BAD_RESPONSE) or the coded error answered; a custom transport should too."""
        raise NotImplementedError

    def close(self) -> int:  # pragma: no cover - interface
        return 0


class _Timeout(Exception):
    pass


#: Bytes asked of one os.read of the server's output (os.read allocates what it is asked for).
_READ = 65536


class StdioTransport(Transport):
    """Runs ``deltatok serve ARGS`` as a child process and speaks JSON lines over its stdin/stdout.

    ``command`` runs the deltatok CLI (default: ``find_command()``, which needs no network and
    raises DeltatokNotFoundError here, at construction, when there is none)."""

    def __init__(self, args: Sequence[str] = (), command: Optional[Sequence[str]] = None, env: Optional[Mapping[str, str]] = None,
                 timeout: Optional[float] = DEFAULT_TIMEOUT):
        cmd = list(command) if command is not None else find_command(environ=env)
        self.command: List[str] = cmd + ["serve"] + list(args)
        self.timeout = timeout
        try:
            self._proc = subprocess.Popen(self.command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                          env=dict(env) if env is not None else None)
        except OSError as e:
            raise DeltatokNotFoundError("cannot run the deltatok command line %r: %s. %s" % (" ".join(cmd), e, NOT_FOUND_HELP), "command") from None
        # POSIX: reads and writes wait with select, so a stopped server cannot block a call past its timeout
        self._select = os.name != "nt"
        self._buf = bytearray()
        self._scan = 0
        # the server's stderr goes on to ours; its fatal error line (`deltatok: DT_X: ...`) is kept
        self._last_error: Optional[Dict[str, str]] = None
        # all three are pipes (PIPE above), never None
        stdin, stdout, stderr = self._proc.stdin, self._proc.stdout, self._proc.stderr
        if stdin is None or stdout is None or stderr is None:  # pragma: no cover - Popen with PIPE always opens them
            raise DeltatokError("DT_INTERNAL", "deltatok serve started without its pipes")
        self._stdin: IO[bytes] = stdin
        self._stdout: IO[bytes] = stdout
        self._err: IO[bytes] = stderr
        self._stderr = threading.Thread(target=self._copy_stderr, name="deltatok-stderr", daemon=True)
        self._stderr.start()
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
        for line in self._err:
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
        line = envelope(rid, method, params)
        with self._cv:
            if self._closed:
                raise DeltatokError("DT_CLOSED", "the client is closed")
            if self._failure is not None:
                raise self._gone()
            self._waiting.add(rid)
        deadline = None if self.timeout is None else time.monotonic() + self.timeout
        try:
            with self._write_lock:
                self._write(line, deadline)
        except (BrokenPipeError, OSError, ValueError) as e:
            with self._cv:
                self._waiting.discard(rid)
            raise DeltatokError("DT_CLOSED", "deltatok serve is not running: %s" % e)
        except _Timeout:
            # part of the line may be in the pipe: nothing after it could be read right, so the
            # server is stopped and every later call fails DT_CLOSED
            with self._cv:
                self._waiting.discard(rid)
                if self._failure is None:
                    self._failure = EOFError("a request could not be written within the timeout")
                self._cv.notify_all()
            self._proc.kill()
            raise DeltatokError("DT_REQUEST_TIMEOUT", "deltatok serve took no request within %ss (stopped or overloaded); "
                                "the client stopped it" % self.timeout) from None
        if during is not None:
            during()
        return read_result(method, self._await(rid, deadline))

    def _write(self, data: bytes, deadline: Optional[float]) -> None:
        if not self._select or deadline is None:
            self._stdin.write(data)
            self._stdin.flush()
            return
        fd = self._stdin.fileno()
        view = memoryview(data)
        while view:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([], [fd], [], left)[1]:
                raise _Timeout()
            n = os.write(fd, view[:65536])
            view = view[n:]

    def _readline(self, deadline: Optional[float]) -> bytes:
        """One line of the server's output (b"" at its end); _Timeout past the deadline."""
        if not self._select or deadline is None:
            if self._buf:
                # left over from reads with a deadline
                while b"\n" not in self._buf[self._scan:]:
                    self._scan = len(self._buf)
                    chunk = os.read(self._stdout.fileno(), _READ)
                    if not chunk:
                        break
                    self._buf += chunk
                return self._take()
            return self._stdout.readline()
        fd = self._stdout.fileno()
        while True:
            i = self._buf.find(b"\n", self._scan)
            if i >= 0:
                return self._take(i)
            self._scan = len(self._buf)
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                raise _Timeout()
            chunk = os.read(fd, _READ)
            if not chunk:
                return self._take()
            self._buf += chunk

    def _take(self, i: int = -1) -> bytes:
        if i < 0:
            i = self._buf.find(b"\n")
            if i < 0:
                i = len(self._buf) - 1
        line = bytes(self._buf[:i + 1])
        del self._buf[:i + 1]
        self._scan = 0
        return line

    def _timed_out(self, rid: int) -> DeltatokError:
        self._waiting.discard(rid)
        return DeltatokError("DT_REQUEST_TIMEOUT", "no answer from deltatok serve within %ss (stopped or overloaded); the call "
                             "failed and is not resent (its late answer is dropped)" % self.timeout)

    def _await(self, rid: int, deadline: Optional[float] = None) -> Dict[str, Any]:
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
                if deadline is None:
                    self._cv.wait()
                else:
                    left = deadline - time.monotonic()
                    if left <= 0:
                        raise self._timed_out(rid)
                    self._cv.wait(left)
        # this thread reads for everyone until its own answer arrives
        try:
            while True:
                try:
                    raw = self._readline(deadline)
                except _Timeout:
                    with self._cv:
                        raise self._timed_out(rid) from None
                if not raw:
                    raise EOFError("deltatok serve closed its output")
                try:
                    parsed = json.loads(raw)
                except ValueError:
                    parsed = None
                if isinstance(parsed, dict) and "id" in parsed and "result" not in parsed and "error" not in parsed:
                    # a malformed answer to one request: that request fails, the pipe goes on
                    parsed = {"id": parsed["id"], "error": {"code": "DT_BAD_RESPONSE", "message": "deltatok serve answered without a result or an error: %.200r" % (parsed,)}}
                # anything else that is not an envelope leaves the pipe unreadable: every waiter fails
                resp = read_answer(parsed, "deltatok serve")
                got = resp.get("id")
                if got == rid:
                    with self._cv:
                        self._waiting.discard(rid)
                    return resp
                with self._cv:
                    if isinstance(got, int) and got in self._waiting:  # an id of another type (a list) answers nobody here
                        self._answers[got] = resp
                        self._cv.notify_all()
        except DeltatokError as e:
            if e.code == "DT_REQUEST_TIMEOUT":
                raise
            with self._cv:
                if self._failure is None:
                    self._failure = e
                self._waiting.discard(rid)
            raise
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
        if isinstance(self._failure, DeltatokError):
            return self._failure
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
                self._stdin.close()
            except OSError:
                pass
        try:
            code = self._proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self._proc.terminate()
            code = self._proc.wait(timeout)
        self._stderr.join(5)
        for pipe in (self._stdout, self._err):
            try:
                pipe.close()
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
            raise DeltatokInputError("DT_INVALID_OPTION", "base_url must be an http:// or https:// URL, got %r" % (base_url,))
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

    @property
    def timeout(self) -> float:
        """Seconds a call waits for its answer."""
        return self._timeout

    @property
    def token(self) -> Optional[str]:
        """The bearer token sent (None: none)."""
        auth = self._headers.get("Authorization", "")
        return auth[7:] or None

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
        body = envelope(next(self._ids), method, params)
        headers = self._headers
        if route is not None:
            headers = dict(headers)
            headers[ROUTE_HEADER] = route
        for attempt in (0, 1):
            conn = self._connection()
            try:
                conn.request("POST", self._path, body, headers)
                if during is not None:
                    run_now, during = during, None
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
            raise DeltatokError("DT_BAD_RESPONSE", "HTTP %d from %s with a body that is not JSON" % (r.status, self.url)) from None
        return read_result(method, read_answer(resp, "HTTP %d from %s" % (r.status, self.url)))

    def close(self) -> int:
        """Closes every thread's connection."""
        with self._all_lock:
            conns, self._all = self._all, set()
        for c in conns:
            c.close()
        self._local = threading.local()
        return 0
