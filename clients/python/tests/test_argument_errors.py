"""Arguments of the wrong type or value are coded too: DeltatokTypeError (a TypeError) or
DeltatokInputError (a ValueError), code DT_INVALID_OPTION — the class transformers raises there,
with a code; and no module raises a bare built-in error a caller would have to match by text."""
import ast
import builtins
import pathlib
import unittest

import support  # noqa: F401 - puts the package on sys.path
from support import deltatok
from deltatok._prefix import PrefixTable
from deltatok.queue import TokenizationQueue
from fake_sidecar import HttpFake

PKG = pathlib.Path(deltatok.__file__).parent

#: Built-in errors a module may still raise, and why: Python's protocols (getattr/hasattr need
#: AttributeError, mapping lookups KeyError), an optional library that is absent (ImportError, as
#: transformers), transformers' own refusal of `AutoTokenizer()` (EnvironmentError), interfaces
#: (NotImplementedError), and a transport's internal end-of-pipe signal that it turns into DT_CLOSED
#: (EOFError).
ALLOWED = {"AttributeError", "KeyError", "ImportError", "EnvironmentError", "NotImplementedError", "EOFError"}


class ArgumentErrorTest(unittest.TestCase):
    def test_no_bare_builtin_error_is_raised(self):
        found = []
        for f in sorted(PKG.glob("*.py")):
            for node in ast.walk(ast.parse(f.read_text(encoding="utf-8"))):
                if isinstance(node, ast.Raise) and isinstance(node.exc, ast.Call) and isinstance(node.exc.func, ast.Name):
                    name = node.exc.func.id
                    if isinstance(getattr(builtins, name, None), type) and name not in ALLOWED:
                        found.append("%s:%d raise %s" % (f.name, node.lineno, name))
        self.assertEqual(found, [])

    def test_wrong_arguments_are_coded(self):
        fake = HttpFake()
        self.addCleanup(fake.stop)
        with deltatok.DeltatokHttpClient(fake.url, timeout=30) as c:
            tok = deltatok.AutoTokenizer.from_pretrained("fake", client=c)
            for call, cls in [(lambda: tok.decode(True), TypeError), (lambda: tok.decode("abc"), TypeError),
                              (lambda: c.text_counter().append(5), TypeError), (lambda: c.message_counter().append("x"), TypeError),
                              (lambda: tok.apply_chat_template([[{"role": "user", "content": "x"}]] * 2, return_tensors="tf"), ValueError),
                              (lambda: tok("x", padding="sideways"), ValueError), (lambda: tok("x", unknown_option=1), TypeError),
                              (lambda: c.prompt_many("count_prompt", [{"messages": [], "misspelt": 1}]), TypeError),
                              (lambda: deltatok.AutoTokenizer.from_pretrained("fake", client=c, no_such_option=1), TypeError),
                              (lambda: deltatok.DeltatokHttpClient("ftp://x"), ValueError), (lambda: PrefixTable(0), ValueError),
                              (lambda: TokenizationQueue(object()), TypeError), (lambda: TokenizationQueue(c, max_items=0), ValueError)]:
                with self.assertRaises(deltatok.DeltatokError) as cm:
                    call()
                self.assertEqual(cm.exception.code, "DT_INVALID_OPTION", cm.exception)
                self.assertIsInstance(cm.exception, cls)
            self.assertEqual(tok.decode([1]), "hi")


if __name__ == "__main__":
    unittest.main()
