"""What makes the tokenizer pass for transformers' own where programs look: `backend_tokenizer`
(the Rust `tokenizers.Tokenizer` methods harnesses call, batches answered on every sidecar
worker in one round trip), one-shot iterables in messages, pickling, and the class that passes
`isinstance(tok, transformers.PreTrainedTokenizerBase)` when transformers is installed.
"""
from __future__ import annotations

import base64
import marshal
import sys
from array import array
from collections.abc import Mapping
from typing import Any, Dict, List, Optional, Protocol, Sequence, Set

from ._errors import DeltatokError, DeltatokInputError

__all__ = ["Encoding", "BackendTokenizer", "plain_conversation", "tokenizer_class"]

_SCALARS = (str, int, float, bool, type(None))


def _plain(value: Any) -> Any:
    """`value` with every mapping made a dict and every other non-string iterable a list
    (consumed once, as transformers' template rendering consumes it)."""
    if isinstance(value, _SCALARS):
        return value
    if isinstance(value, Mapping):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (bytes, bytearray)):
        return value
    try:
        it = iter(value)
    except TypeError:
        return value
    return [_plain(v) for v in it]


def plain_conversation(messages: Any) -> Any:
    """The messages as sent: the caller's own list when marshal can write it (only JSON-like data:
    one C call, no copy), else a copy whose one-shot iterables (a pydantic ValidatorIterator,
    `iter(list)`, a generator) and mapping types are lists and dicts."""
    try:
        marshal.dumps(messages, 2)
        return messages
    except ValueError:
        pass
    if isinstance(messages, (list, tuple)):
        return [_plain(m) if not (type(m) is dict and _marshals(m)) else m for m in messages]
    return _plain(messages)


def _marshals(m: Any) -> bool:
    try:
        marshal.dumps(m, 2)
        return True
    except ValueError:
        return False


class Encoding:
    """One text's encoding as the Rust binding's `Encoding` shows it: `ids`, `tokens`,
    `attention_mask`, `type_ids`, `special_tokens_mask`, `len()`. Offsets, words and overflow are
    not kept (DT_INVALID_OPTION if asked)."""

    __slots__ = ("ids", "_backend", "_tokens", "_special")

    def __init__(self, ids: List[int], backend: "BackendTokenizer", tokens: Optional[List[str]] = None):
        self.ids = ids
        self._backend = backend
        self._tokens = tokens

    @property
    def tokens(self) -> List[str]:
        if self._tokens is None:
            self._tokens = self._backend.tokens_of(self.ids)
        return self._tokens

    @property
    def attention_mask(self) -> List[int]:
        return [1] * len(self.ids)

    @property
    def type_ids(self) -> List[int]:
        return [0] * len(self.ids)

    @property
    def special_tokens_mask(self) -> List[int]:
        special = self._backend.special_ids()
        return [1 if i in special else 0 for i in self.ids]

    @property
    def n_sequences(self) -> int:
        return 1

    def __len__(self) -> int:
        return len(self.ids)

    def __repr__(self) -> str:
        return "Encoding(num_tokens=%d, attributes=[ids, type_ids, tokens, attention_mask, special_tokens_mask])" % len(self.ids)

    def __getattr__(self, name: str) -> Any:
        if name in ("offsets", "word_ids", "words", "sequence_ids", "overflowing", "char_to_token", "token_to_chars", "word_to_tokens"):
            raise DeltatokError("DT_INVALID_OPTION", "deltatok's Encoding keeps ids and tokens only; %s is not available" % name, name)
        raise AttributeError(name)


def _check_inputs(inputs: Any, is_pretokenized: bool) -> List[str]:
    if is_pretokenized:
        raise DeltatokInputError("DT_INVALID_OPTION", "is_pretokenized=True is not supported by deltatok", "is_pretokenized")
    if isinstance(inputs, str) or not isinstance(inputs, Sequence):
        raise DeltatokInputError("DT_INVALID_REQUEST", "encode_batch takes a list of strings", "inputs")
    texts = list(inputs)
    for i, t in enumerate(texts):
        if not isinstance(t, str):
            raise DeltatokInputError("DT_INVALID_REQUEST", "inputs[%d] is not a string (text pairs are not supported)" % i, "inputs[%d]" % i)
    return texts


class TokenizerView(Protocol):
    """What the backend tokenizer uses of the deltatok tokenizer."""

    name_or_path: str
    vocab_size: int
    added_tokens_decoder: Dict[int, Any]

    @property
    def client(self) -> Any: ...

    def __len__(self) -> int: ...

    def vocabulary(self) -> List[Optional[str]]: ...

    def vocabulary_ids(self) -> Dict[str, int]: ...

    def special_ids(self) -> List[int]: ...

    def get_vocab(self) -> Dict[str, int]: ...

    def convert_ids_to_tokens(self, ids: Any, skip_special_tokens: bool = False) -> Any: ...

    def decode(self, token_ids: Any, skip_special_tokens: bool = False, clean_up_tokenization_spaces: Optional[bool] = None, **kwargs: Any) -> str: ...

    def batch_decode(self, sequences: Any, skip_special_tokens: bool = False, clean_up_tokenization_spaces: Optional[bool] = None,
                     **kwargs: Any) -> List[str]: ...


class BackendTokenizer:
    """`tok.backend_tokenizer`: the Rust `tokenizers.Tokenizer` methods harnesses use, answered by
    the sidecar. `encode_batch` / `encode_batch_fast` send every text in one `encode_batch` call,
    which a sidecar with workers spreads over all of them; ids come back as base64."""

    def __init__(self, tok: "TokenizerView"):
        self._tok = tok

    def tokens_of(self, ids: List[int]) -> List[str]:
        """The token of each id ("" where none)."""
        return [t if t is not None else "" for t in self._tok.convert_ids_to_tokens(ids)]

    def special_ids(self) -> Set[int]:
        """The ids of the tokenizer's special tokens (as the server listed them)."""
        return set(self._tok.special_ids())

    def encode(self, sequence: str, pair: Optional[str] = None, is_pretokenized: bool = False, add_special_tokens: bool = True) -> Encoding:
        if pair is not None:
            raise DeltatokInputError("DT_INVALID_OPTION", "text pairs are not supported by deltatok", "pair")
        return self.encode_batch([sequence], is_pretokenized, add_special_tokens)[0]

    def _ids(self, texts: List[str], add_special_tokens: bool) -> List[List[int]]:
        if not texts:
            return []
        r = self._tok.client.call("encode_batch", {"texts": texts, "add_special_tokens": bool(add_special_tokens), "ids_encoding": "base64"})
        try:
            flat = array("I")
            flat.frombytes(base64.b64decode(r["ids"]))
            if sys.byteorder != "little":
                flat.byteswap()
            lengths = r["lengths"]
            out: List[List[int]] = []
            at = 0
            for n in lengths:
                out.append(flat[at:at + n].tolist())
                at += n
        except (KeyError, TypeError, ValueError) as e:
            raise DeltatokError("DT_BAD_RESPONSE", "encode_batch answered something this client cannot read: %s" % e) from None
        if len(out) != len(texts) or at != len(flat):
            raise DeltatokError("DT_BAD_RESPONSE", "encode_batch answered %d encodings for %d texts" % (len(out), len(texts)))
        return out

    def encode_batch(self, input: Any, is_pretokenized: bool = False, add_special_tokens: bool = True) -> List[Encoding]:
        return [Encoding(ids, self) for ids in self._ids(_check_inputs(input, is_pretokenized), add_special_tokens)]

    def encode_batch_fast(self, input: Any, is_pretokenized: bool = False, add_special_tokens: bool = True) -> List[Encoding]:
        """encode_batch without token strings, as the Rust binding's fast path (tokens are "")."""
        return [Encoding(ids, self, [""] * len(ids)) for ids in self._ids(_check_inputs(input, is_pretokenized), add_special_tokens)]

    def decode(self, ids: Sequence[int], skip_special_tokens: bool = True) -> str:
        return self._tok.decode(ids, skip_special_tokens=skip_special_tokens, clean_up_tokenization_spaces=False)

    def decode_batch(self, sequences: Sequence[Sequence[int]], skip_special_tokens: bool = True) -> List[str]:
        return self._tok.batch_decode(list(sequences), skip_special_tokens=skip_special_tokens, clean_up_tokenization_spaces=False)

    def get_vocab_size(self, with_added_tokens: bool = True) -> int:
        return len(self._tok) if with_added_tokens else self._tok.vocab_size

    def get_vocab(self, with_added_tokens: bool = True) -> Dict[str, int]:
        v = self._tok.get_vocab()
        if not with_added_tokens:
            added = set(self._tok.added_tokens_decoder)
            v = {t: i for t, i in v.items() if i not in added}
        return v

    def token_to_id(self, token: str) -> Optional[int]:
        return self._tok.vocabulary_ids().get(token)

    def id_to_token(self, id: int) -> Optional[str]:
        tokens = self._tok.vocabulary()
        return tokens[id] if 0 <= id < len(tokens) else None

    def __repr__(self) -> str:
        return "BackendTokenizer(%r)" % (self._tok.name_or_path,)


#: transformers' base-class members the deltatok class inherits as they are (pure functions of
#: attributes it has); every other public member it does not define raises DT_UNSUPPORTED_CALL.
_INHERITED = {"clean_up_tokenization", "SPECIAL_TOKENS_ATTRIBUTES", "vocab_files_names", "pretrained_vocab_files_map", "slow_tokenizer_class"}
_classes: Dict[Any, type] = {}
#: Attributes a deltatok tokenizer holds in its instance dict where transformers' base class has
#: a property: a plain class attribute in their place lets the instance value show.
_INSTANCE_ATTRIBUTES = {"vocab_size", "added_tokens_decoder", "name_or_path", "model_max_length", "padding_side", "truncation_side",
                        "chat_template", "clean_up_tokenization_spaces", "model_input_names"}


def _unsupported(name: str) -> Any:
    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise DeltatokError("DT_UNSUPPORTED_CALL", "%s is a transformers tokenizer method deltatok does not implement" % name, name)
    refuse.__name__ = name
    return refuse


def tokenizer_class(own: type, base: Optional[type]) -> type:
    """`own` itself, or (transformers installed) a subclass of `own` and transformers'
    PreTrainedTokenizerBase whose inherited members are either deltatok's or refuse with a code:
    nothing of transformers' runs on state deltatok does not have."""
    if base is None:
        return own
    cls = _classes.get((own, base))
    if cls is not None:
        return cls
    ns: Dict[str, Any] = {"__module__": own.__module__, "__qualname__": own.__qualname__, "__doc__": own.__doc__}
    mine = set(dir(own))
    for klass in base.__mro__:
        if klass is object:
            continue
        for name, v in vars(klass).items():
            if name in mine or name in ns or name in _INHERITED or (name.startswith("__") and name.endswith("__")):
                continue
            if name in _INSTANCE_ATTRIBUTES:
                ns[name] = None
            elif isinstance(v, property):
                ns[name] = property(_unsupported(name))
            elif callable(v) or isinstance(v, (classmethod, staticmethod)):
                ns[name] = _unsupported(name)
    cls = type(own.__name__, (own, base), ns)
    _classes[(own, base)] = cls
    return cls
