"""Which transformers the tokenizer imitates, and transformers' own types when it is installed.

- `compat_major()`: the transformers major version whose defaults apply (5: apply_chat_template
  returns a BatchEncoding unless `return_dict=False`, decode skips the space cleanup on BPE
  models; 4: a list of ids, cleanup as configured). `DELTATOK_TRANSFORMERS_COMPAT=4|5` decides;
  else the installed transformers' major (read from its metadata, not imported); else 5.
- `transformers_types()`: `(BatchEncoding, PreTrainedTokenizerBase)` from transformers when it
  is importable (imported once, on the first tokenizer), else None: results are then deltatok's
  own BatchEncoding and the tokenizer its own class. `DELTATOK_TRANSFORMERS_TYPES=0` keeps
  deltatok's own classes even with transformers installed.
- `json_schema_builder()`: transformers' own get_json_schema for tools given as Python
  functions, or deltatok's port of it (_schema.py) without transformers.
"""
from __future__ import annotations

import importlib.util
import os
import threading
from typing import Any, Callable, Dict, Optional, Tuple, Union

from ._errors import DeltatokError
from ._schema import json_schema

__all__ = ["compat_major", "transformers_types", "json_schema_builder", "bpe_cleanup_skipped"]

_lock = threading.Lock()
_types: Union[bool, None, Tuple[type, type]] = False  # False: not looked up yet


_major: Union[bool, None, int] = False  # False: not looked up yet


def _installed_major() -> Optional[int]:
    """The installed transformers' major version (looked up once: it scans the metadata)."""
    global _major
    if _major is False:
        _major = None
        if importlib.util.find_spec("transformers") is not None:
            try:
                from importlib.metadata import version
                _major = int(version("transformers").split(".")[0])
            except (ImportError, ValueError, LookupError):
                _major = None
    return None if isinstance(_major, bool) else _major  # never a bool once looked up


def compat_major() -> int:
    """4 or 5 (see the module docstring); a bad DELTATOK_TRANSFORMERS_COMPAT is DT_INVALID_OPTION."""
    env = os.environ.get("DELTATOK_TRANSFORMERS_COMPAT", "").strip()
    if env:
        if env not in ("4", "5"):
            raise DeltatokError("DT_INVALID_OPTION", "DELTATOK_TRANSFORMERS_COMPAT must be 4 or 5, got %r" % env, "DELTATOK_TRANSFORMERS_COMPAT")
        return int(env)
    major = _installed_major()
    return 4 if major is not None and major <= 4 else 5


def transformers_types() -> Optional[Tuple[type, type]]:
    """(transformers.BatchEncoding, transformers.PreTrainedTokenizerBase), or None."""
    global _types
    if os.environ.get("DELTATOK_TRANSFORMERS_TYPES", "").strip() == "0":
        return None
    with _lock:
        if _types is False:
            _types = None
            if importlib.util.find_spec("transformers") is not None:
                try:
                    from transformers.tokenization_utils_base import BatchEncoding, PreTrainedTokenizerBase
                    _types = (BatchEncoding, PreTrainedTokenizerBase)
                except Exception:  # noqa: BLE001 - a broken install: deltatok's own types, as without it
                    _types = None
        return None if isinstance(_types, bool) else _types  # never a bool once looked up


def bpe_cleanup_skipped() -> bool:
    """Whether decode leaves `clean_up_tokenization_spaces` undone on a BPE model, as the
    installed transformers does (5.17 and later: the cleanup was made for WordPiece and corrupts
    BPE text). Without transformers, what compat_major says (5: skipped)."""
    t = transformers_types()
    if t is not None and os.environ.get("DELTATOK_TRANSFORMERS_COMPAT", "").strip() == "":
        # the attribute transformers' base class reads to decide it: present where it skips
        init = vars(t[1]).get("__init__")
        return init is not None and "clean_up_tokenization_spaces_for_bpe_even_though_it_will_corrupt_output" in init.__code__.co_names
    return compat_major() >= 5


def json_schema_builder() -> Callable[[Callable[..., Any]], Dict[str, Any]]:
    """transformers.utils.get_json_schema when transformers is importable, else deltatok's port
    of it (_schema.py, checked against transformers' by the call matrix)."""
    if importlib.util.find_spec("transformers") is not None:
        try:
            from transformers.utils import get_json_schema
            builder: Callable[[Callable[..., Any]], Dict[str, Any]] = get_json_schema
            return builder
        except Exception:  # noqa: BLE001 - a broken install: the port, as without it
            pass
    return json_schema
