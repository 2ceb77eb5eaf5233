"""The package installs into a fresh `python3 -m venv` with no network (no index, proxies that
refuse, the machine's pip configuration ignored), with and without build isolation, and works
imported from outside the repository: the CLI named by DELTATOK_CMD answers."""
import json
import os
import subprocess
import sys
import tempfile
import unittest

import support
from support import needs_cli

OFFLINE = {"PIP_CONFIG_FILE": os.devnull, "PIP_NO_INDEX": "1", "PIP_DISABLE_PIP_VERSION_CHECK": "1", "PIP_NO_INPUT": "1",
           "http_proxy": "http://127.0.0.1:9", "https_proxy": "http://127.0.0.1:9", "HTTP_PROXY": "http://127.0.0.1:9",
           "HTTPS_PROXY": "http://127.0.0.1:9", "no_proxy": "", "NO_PROXY": ""}

CHECK = r"""
import json, os, sys
import deltatok, deltatok_client, deltatok.aio, deltatok.queue
here = os.path.dirname(deltatok.__file__)
tok = deltatok.AutoTokenizer.from_pretrained("qwen3", date="2026-11-30")
out = {"file": deltatok.__file__, "typed": os.path.isfile(os.path.join(here, "py.typed")),
       "ids": tok.apply_chat_template([{"role": "user", "content": "Hello world"}], add_generation_prompt=True, return_dict=False),
       "compat": deltatok_client.DeltatokClient is deltatok.DeltatokClient}
tok.close()
print(json.dumps(out))
"""


def clean_env(**extra):
    env = {k: v for k, v in os.environ.items() if not k.startswith("PIP_") and k.lower() not in ("http_proxy", "https_proxy", "no_proxy")}
    env.update(OFFLINE)
    env.update(extra)
    return env


@needs_cli
class InstallTest(unittest.TestCase):
    def test_fresh_venv_offline_install_and_use_outside_the_repo(self):
        root = tempfile.mkdtemp(prefix="deltatok venv ")
        venv = os.path.join(root, "venv")
        made = subprocess.run([sys.executable, "-m", "venv", venv], capture_output=True, text=True)
        if made.returncode != 0:
            self.skipTest("python3 -m venv is not usable here: %s" % made.stderr.strip()[-200:])
        py = os.path.join(venv, "Scripts" if os.name == "nt" else "bin", "python")
        for flags in ([], ["--no-build-isolation"]):
            r = subprocess.run([py, "-m", "pip", "install", "--no-index", *flags, support.PACKAGE], capture_output=True, text=True, env=clean_env(),
                               cwd=root)
            self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        elsewhere = os.path.join(root, "elsewhere")
        os.mkdir(elsewhere)
        r = subprocess.run([py, "-c", CHECK], capture_output=True, text=True, cwd=elsewhere,
                           env=clean_env(DELTATOK_CMD=" ".join('"%s"' % c for c in support.COMMAND), PYTHONPATH=""))
        self.assertEqual(r.returncode, 0, r.stderr)
        out = json.loads(r.stdout)
        self.assertTrue(out["file"].startswith(venv), out["file"])
        self.assertTrue(out["typed"])
        self.assertTrue(out["compat"])
        self.assertEqual(out["ids"], [151644, 872, 198, 9707, 1879, 151645, 198, 151644, 77091, 198])


if __name__ == "__main__":
    unittest.main()
