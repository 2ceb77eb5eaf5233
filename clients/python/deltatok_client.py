"""Compatibility module for harnesses that put clients/python on sys.path (as before the package):
imports the `deltatok` package from ./src when it is not installed. Prefer
`pip install ./clients/python` and `import deltatok`."""
import os
import sys

try:
    import deltatok  # noqa: F401  (installed)
except ImportError:
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "src"))

from deltatok import (DeltatokClient, DeltatokError, DeltatokHttpClient, DeltatokInputError,  # noqa: E402
                      DeltatokNotFoundError, find_command, read_tokens)

__all__ = ["DeltatokClient", "DeltatokHttpClient", "DeltatokError", "DeltatokInputError", "DeltatokNotFoundError", "find_command", "read_tokens"]
