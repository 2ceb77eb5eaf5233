"""Errors: every failure deltatok answers carries a stable ``code`` (match on it, never on the text)."""
from __future__ import annotations

from typing import Any, Dict, Optional

__all__ = ["DeltatokError", "DeltatokInputError", "DeltatokLoadError", "DeltatokNotFoundError", "DeltatokUnsupportedError", "DeltatokFileError",
           "DeltatokTypeError",
           "error_from_record",
           "PREFIX_UNKNOWN", "NOT_FOUND_HELP"]

PREFIX_UNKNOWN = "DT_PREFIX_UNKNOWN"

#: Codes that mean the request itself was wrong (bad input, a template that fails on it): raised as
#: DeltatokInputError, a ValueError, as transformers raises ValueError / TypeError / TemplateError.
_INPUT_PREFIXES = ("DT_INVALID_", "DT_TEMPLATE_")
_INPUT_CODES = {"DT_UNSUPPORTED_CALL", "DT_LONE_SURROGATE", "DT_INPUT_TOO_LARGE", "DT_CONTEXT_TOO_SMALL", "DT_CONTINUE_FINAL_MESSAGE", "DT_TOKENIZE_FAILED", "DT_UNKNOWN_METHOD"}
#: Codes of a tokenizer or template that could not be loaded: DeltatokLoadError, an OSError, as
#: transformers raises OSError for a tokenizer it cannot load.
_LOAD_CODES = {"DT_TOKENIZER_UNKNOWN", "DT_TOKENIZER_NOT_FOUND", "DT_TOKENIZER_INVALID", "DT_TEMPLATE_FILE_INVALID"}


class DeltatokError(Exception):
    """An error answered by deltatok: a stable ``code``, a ``message`` and, for bad input, a ``path``."""

    def __init__(self, code: str, message: str, path: Optional[str] = None):
        super().__init__("%s: %s" % (code, message))
        self.code = code
        self.message = message
        self.path = path

    @classmethod
    def from_record(cls, rec: Dict[str, Any]) -> "DeltatokError":
        return error_from_record(rec)


class DeltatokInputError(DeltatokError, ValueError):
    """The request was not usable (bad messages, tools, options, or a template failing on them)."""


class DeltatokTypeError(DeltatokError, TypeError):
    """An argument of the wrong type (code DT_INVALID_OPTION): a TypeError, where transformers
    raises one."""

    def __init__(self, message: str, path: Optional[str] = None):
        DeltatokError.__init__(self, "DT_INVALID_OPTION", message, path)


class DeltatokLoadError(DeltatokError, OSError):
    """The server could not load the tokenizer (or its template files): nothing was answered."""

    def __init__(self, code: str, message: str, path: Optional[str] = None):
        DeltatokError.__init__(self, code, message, path)


class DeltatokNotFoundError(DeltatokError, FileNotFoundError):
    """No deltatok command line was found or it cannot run (DELTATOK_CMD, node_modules/.bin, PATH):
    code DT_COMMAND_NOT_FOUND; the message says how to point to one."""

    def __init__(self, message: str, path: Optional[str] = None):
        DeltatokError.__init__(self, "DT_COMMAND_NOT_FOUND", message, path)


class DeltatokUnsupportedError(DeltatokError, NotImplementedError):
    """A transformers tokenizer method or option deltatok does not implement: DT_UNSUPPORTED_CALL."""

    def __init__(self, message: str, path: Optional[str] = None):
        DeltatokError.__init__(self, "DT_UNSUPPORTED_CALL", message, path)


class DeltatokFileError(DeltatokError, OSError):
    """A file the client reads (read_tokens, read_rollouts) cannot be read — missing, a directory,
    not a regular file, no permission: code DT_CORPUS_UNREADABLE, as the command line's for its
    input file; an OSError with the ``errno`` and ``filename`` of the failure, as open() raises."""

    def __init__(self, message: str, path: str, errno: Optional[int] = None):
        DeltatokError.__init__(self, "DT_CORPUS_UNREADABLE", message, path)
        self.errno = errno
        self.strerror = message
        self.filename = path

    def __str__(self) -> str:
        return "%s: %s" % (self.code, self.message)


#: How to point the client at the command line (the package is not published on npm).
NOT_FOUND_HELP = ("build a deltatok checkout (`npm ci && npm run build`) and set DELTATOK_CMD=\"node <checkout>/dist/src/cli/main.js\", "
                  "or run `npm link` in the checkout to put `deltatok` on PATH, or pass command=[...]")


def is_input_code(code: str) -> bool:
    return code.startswith(_INPUT_PREFIXES) or code in _INPUT_CODES


def error_from_record(rec: Any) -> DeltatokError:
    """The exception for a ``{"code", "message", "path"?}`` record; DT_BAD_RESPONSE for an error
    record that is not one (no code)."""
    got = rec.get("code") if isinstance(rec, dict) else None
    if not isinstance(got, str) or not got:
        return DeltatokError("DT_BAD_RESPONSE", "an error answered without a code: %.200r" % (rec,), "error")
    path = rec.get("path")
    cls = DeltatokInputError if is_input_code(got) else DeltatokLoadError if got in _LOAD_CODES else DeltatokError
    return cls(got, str(rec.get("message", "")), path if isinstance(path, str) else None)
