"""A PEP 517 / PEP 660 build backend for the deltatok Python package, standard library only.

Why not setuptools: the setuptools a fresh `python3 -m venv` brings (65.5 with Python 3.11, none
with 3.12+) cannot build a wheel without the `wheel` package, which is not there without a
network. This backend needs nothing, so `pip install ./clients/python` works offline, with or
without build isolation. It builds a pure-Python wheel (py3-none-any) of src/, an sdist, and an
editable wheel (a .pth file pointing at src/).
"""
import base64
import hashlib
import io
import os
import re
import tarfile
import zipfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SRC = os.path.join(ROOT, "src")


def _project():
    """name, version, description, requires-python from pyproject.toml's [project] table."""
    text = open(os.path.join(ROOT, "pyproject.toml"), encoding="utf-8").read()
    try:
        import tomllib  # Python 3.11+
        return tomllib.loads(text)["project"]
    except ImportError:
        pass
    project, inside = {}, False
    for line in text.splitlines():
        s = line.strip()
        if s.startswith("["):
            inside = s == "[project]"
            continue
        m = re.match(r'^([A-Za-z0-9_-]+)\s*=\s*"((?:[^"\\]|\\.)*)"\s*$', s)
        if inside and m:
            project[m.group(1)] = m.group(2)
    return project


def _metadata():
    p = _project()
    readme = open(os.path.join(ROOT, "README.md"), encoding="utf-8").read()
    lines = [
        "Metadata-Version: 2.1",
        "Name: %s" % p["name"],
        "Version: %s" % p["version"],
        "Summary: %s" % p.get("description", ""),
        "License: %s" % (p.get("license", {}).get("text", "Apache-2.0") if isinstance(p.get("license"), dict) else "Apache-2.0"),
        "Requires-Python: %s" % p.get("requires-python", ">=3.9"),
        "Description-Content-Type: text/markdown",
        "",
        readme,
    ]
    return p["name"], p["version"], "\n".join(lines)


def _files():
    """(archive path, bytes) of every file the wheel installs."""
    out = []
    for base, dirs, names in os.walk(SRC):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__" and not d.endswith(".egg-info"))
        for n in sorted(names):
            if n.endswith((".py", ".typed")):
                full = os.path.join(base, n)
                out.append((os.path.relpath(full, SRC).replace(os.sep, "/"), open(full, "rb").read()))
    return out


def _record_line(path, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode("ascii")
    return "%s,sha256=%s,%d" % (path, digest, len(data))


def _write_wheel(directory, files, editable=False):
    name, version, metadata = _metadata()
    dist = "%s-%s.dist-info" % (name, version)
    wheel = "%s-%s-py3-none-any.whl" % (name, version)
    entries = list(files) + [
        (dist + "/METADATA", metadata.encode("utf-8")),
        (dist + "/WHEEL", b"Wheel-Version: 1.0\nGenerator: deltatok_build\nRoot-Is-Purelib: true\nTag: py3-none-any\n"),
        (dist + "/top_level.txt", b"deltatok\ndeltatok_client\n"),
    ]
    record = [_record_line(p, d) for p, d in entries] + [dist + "/RECORD,,"]
    entries.append((dist + "/RECORD", ("\n".join(record) + "\n").encode("utf-8")))
    with zipfile.ZipFile(os.path.join(directory, wheel), "w", zipfile.ZIP_DEFLATED) as z:
        for p, d in entries:
            info = zipfile.ZipInfo(p, date_time=(2026, 1, 1, 0, 0, 0))
            info.external_attr = 0o644 << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(info, d)
    return wheel


def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def get_requires_for_build_editable(config_settings=None):
    return []


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    name, version, metadata = _metadata()
    dist = "%s-%s.dist-info" % (name, version)
    os.makedirs(os.path.join(metadata_directory, dist), exist_ok=True)
    with open(os.path.join(metadata_directory, dist, "METADATA"), "w", encoding="utf-8") as f:
        f.write(metadata)
    return dist


prepare_metadata_for_build_editable = prepare_metadata_for_build_wheel


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    return _write_wheel(wheel_directory, _files())


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    return _write_wheel(wheel_directory, [("deltatok_editable.pth", (SRC + "\n").encode("utf-8"))], editable=True)


def build_sdist(sdist_directory, config_settings=None):
    name, version, metadata = _metadata()
    base = "%s-%s" % (name, version)
    target = os.path.join(sdist_directory, base + ".tar.gz")
    with tarfile.open(target, "w:gz", format=tarfile.PAX_FORMAT) as t:
        def add(path, data):
            info = tarfile.TarInfo("%s/%s" % (base, path))
            info.size = len(data)
            info.mtime = 1767225600
            info.mode = 0o644
            t.addfile(info, io.BytesIO(data))
        for rel in ("pyproject.toml", "README.md", "_build/deltatok_build.py"):
            add(rel, open(os.path.join(ROOT, rel), "rb").read())
        for p, d in _files():
            add("src/" + p, d)
        add("PKG-INFO", metadata.encode("utf-8"))
    return base + ".tar.gz"
