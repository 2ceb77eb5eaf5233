"""The blocking and asyncio shells have the same methods with the same signatures (no server
needed): every public method of the blocking client and tokenizer that talks to the sidecar has
an asyncio twin whose parameters (names, kinds, defaults, annotations) are identical, and the
core imports no shell. A drift such as an async method taking **options where the blocking one
names its parameters (and so ignoring one of them) fails here."""
import ast
import inspect
import pathlib
import unittest

import support  # noqa: F401 - puts ../src on the path
from deltatok import aio
from deltatok._client import ClientBase, DeltatokClient, DeltatokHttpClient
from deltatok._tokenizer import DeltatokTokenizer

PKG = pathlib.Path(aio.__file__).parent

#: Blocking methods that do no I/O, or whose asyncio twin has another name (checked apart).
CLIENT_LOCAL = {"call", "close", "spec", "restorer", "prompt_plan", "client_stats", "run", "run_many"}
#: DeltatokTokenizer methods that talk to the sidecar (the rest are attributes, pure helpers or
#: request builders the async tokenizer reuses from its blocking view).
TOKENIZER_IO = ["apply_chat_template", "encode", "__call__", "decode", "batch_decode", "fits", "trim_to_fit", "osl", "text_counter",
                "message_counter", "tokenize_rollout", "stats"]


def params(fn):
    return [(p.name, p.kind, p.default, p.annotation) for p in inspect.signature(fn).parameters.values()]


def returns(fn):
    return str(inspect.signature(fn).return_annotation).replace("Async", "")


def public_methods(cls):
    return sorted(n for n, v in inspect.getmembers(cls, inspect.isfunction) if not n.startswith("_"))


class SignatureTest(unittest.TestCase):
    def assertTwin(self, sync, asyn, name):
        self.assertTrue(inspect.iscoroutinefunction(asyn), "%s is a coroutine" % name)
        self.assertEqual(params(sync), params(asyn), name)
        self.assertEqual(returns(sync), returns(asyn), name)

    def test_every_client_method_has_an_async_twin(self):
        names = [n for n in public_methods(ClientBase) if n not in CLIENT_LOCAL]
        self.assertGreaterEqual(len(names), 18)
        for name in names:
            with self.subTest(name):
                self.assertTrue(hasattr(aio._AsyncBase, name), "aio has no %s" % name)
                self.assertTwin(getattr(ClientBase, name), getattr(aio._AsyncBase, name), name)
        for name in ("prompt_plan", "client_stats"):
            self.assertEqual(params(getattr(ClientBase, name)), params(getattr(aio._AsyncBase, name)), name)
        self.assertTwin(ClientBase.run, aio._AsyncBase.run, "run")
        self.assertTwin(ClientBase.run_many, aio._AsyncBase.run_many, "run_many")
        self.assertTwin(ClientBase.call, aio._AsyncBase.acall, "call/acall")

    def test_constructors_and_close(self):
        self.assertEqual(params(DeltatokClient.__init__)[1:], params(aio.AsyncDeltatokClient.start.__func__)[1:])
        self.assertEqual(params(DeltatokHttpClient.__init__), params(aio.AsyncDeltatokHttpClient.__init__))
        self.assertTwin(DeltatokClient.close, aio.AsyncDeltatokClient.aclose, "close/aclose")
        self.assertTwin(DeltatokHttpClient.close, aio.AsyncDeltatokHttpClient.aclose, "close/aclose")

    def test_every_tokenizer_io_method_has_an_async_twin(self):
        for name in TOKENIZER_IO:
            with self.subTest(name):
                self.assertTwin(getattr(DeltatokTokenizer, name), getattr(aio.AsyncDeltatokTokenizer, name), name)
        # and the async tokenizer has no coroutine the list above forgets
        coroutines = {n for n, v in vars(aio.AsyncDeltatokTokenizer).items() if inspect.iscoroutinefunction(v)}
        self.assertEqual(coroutines - {"_execute", "aclose", "__aenter__", "__aexit__"}, set(TOKENIZER_IO))

    def test_the_core_imports_no_shell(self):
        core = ["_errors", "_wire", "_fingerprint", "_plan", "_prefix", "_ops", "_stream", "_shape", "_schema", "_compat", "_discovery", "_dropin",
                "_tokenizer"]
        shells = {"_client", "aio", "queue", "_transport"}
        imports = {}
        for mod in core + sorted(shells):
            tree = ast.parse((PKG / (mod + ".py")).read_text(encoding="utf-8"))
            imports[mod] = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.level == 1}
        # the two shells stand side by side: neither imports the other
        self.assertNotIn("_client", imports["aio"])
        self.assertNotIn("aio", imports["_client"])
        for mod in core:
            tree = ast.parse((PKG / (mod + ".py")).read_text(encoding="utf-8"))
            for node in ast.walk(tree):
                if isinstance(node, ast.ImportFrom) and node.level == 1:
                    self.assertNotIn(node.module, shells, "%s imports %s" % (mod, node.module))
                if isinstance(node, ast.Import):
                    self.assertFalse(any(a.name in ("asyncio", "socket", "subprocess") for a in node.names), "%s imports I/O" % mod)

    def test_no_lazy_imports_of_the_package(self):
        for f in sorted(PKG.glob("*.py")):
            tree = ast.parse(f.read_text(encoding="utf-8"))
            for fn in ast.walk(tree):
                if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    for node in ast.walk(fn):
                        if isinstance(node, ast.ImportFrom) and node.level == 1:
                            self.fail("%s: %s imports .%s lazily" % (f.name, fn.name, node.module))


if __name__ == "__main__":
    unittest.main()
