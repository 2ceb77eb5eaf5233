"""deltatok from Python: exact, incremental chat-template token counts and ids, answered by a
`deltatok serve` sidecar (standard library only).

    from deltatok import AutoTokenizer            # was: from transformers import AutoTokenizer
    tok = AutoTokenizer.from_pretrained("qwen3")
    ids = tok.apply_chat_template(messages[:k], tools=tools, add_generation_prompt=True)

- `AutoTokenizer` / `DeltatokTokenizer`: transformers' tokenizer methods (apply_chat_template,
  encode, decode, __call__, convert_*, special tokens, ...); a conversation that extends one sent
  before crosses the wire as its new messages only.
- `DeltatokClient` (stdio, a child process) / `DeltatokHttpClient` (`deltatok serve --port`): the
  sidecar's methods (count_prompt, encode_prompt, count_message, ...), same incremental sending.
- `deltatok.aio`: the asyncio variants; `deltatok.queue.TokenizationQueue`: enqueue + drain
  (MLCommons endpoints' contract); `deltatok.binary.read_tokens` / `read_rollouts`: `deltatok tokenize` / `deltatok rollout`
  `--format binary`; `training_arrays`: a rollout sequence as arrays.
- `tok.tokenize_rollout(conversation, tools=...)`: RL training sequences (sampled ids kept).
"""
from ._client import AutoTokenizer, DeltatokClient, DeltatokHttpClient
from ._discovery import find_command
from ._errors import DeltatokError, DeltatokFileError, DeltatokInputError, DeltatokLoadError, DeltatokNotFoundError, DeltatokTypeError
from ._shape import AddedToken, BatchEncoding
from ._prefix import conversation_key
from ._tokenizer import DeltatokTokenizer
from .binary import read_rollouts, read_tokens, training_arrays

__version__ = "0.1.0"

__all__ = [
    "AutoTokenizer",
    "DeltatokTokenizer",
    "BatchEncoding",
    "AddedToken",
    "DeltatokClient",
    "DeltatokHttpClient",
    "DeltatokError",
    "DeltatokInputError",
    "DeltatokLoadError",
    "DeltatokNotFoundError",
    "DeltatokFileError",
    "DeltatokTypeError",
    "find_command",
    "conversation_key",
    "read_tokens",
    "read_rollouts",
    "training_arrays",
    "__version__",
]
