"""A PEP 517 build backend with no build dependencies, so that ``pip install
./clients/python`` works offline (pip's isolated build installs nothing: there is no
Python package index to fetch setuptools from on the machines this project runs on).

It packs ``arbiter_client/`` as it is (pure Python, generated code committed) into a
wheel, an editable wheel (PEP 660) or an sdist, with the metadata of pyproject.toml's
``[project]`` table.
"""

import base64
import hashlib
import io
import os
import tarfile
import tomllib
import zipfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PACKAGE = "arbiter_client"
SDIST_FILES = ["pyproject.toml", "README.md", "generate.sh", "build_backend/arbiter_build.py"]


def _project():
    with open(os.path.join(ROOT, "pyproject.toml"), "rb") as f:
        return tomllib.load(f)["project"]


def _metadata():
    p = _project()
    lines = [
        "Metadata-Version: 2.1",
        f"Name: {p['name']}",
        f"Version: {p['version']}",
        f"Summary: {p['description']}",
        f"Requires-Python: {p['requires-python']}",
    ]
    lines += [f"Requires-Dist: {d}" for d in p.get("dependencies", [])]
    lines.append("Description-Content-Type: text/markdown")
    with open(os.path.join(ROOT, p["readme"]), encoding="utf-8") as f:
        return "\n".join(lines) + "\n\n" + f.read()


def _base():
    p = _project()
    return f"{p['name'].replace('-', '_')}-{p['version']}"


def _package_files():
    top = os.path.join(ROOT, PACKAGE)
    for dirpath, dirnames, filenames in os.walk(top):
        dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
        for name in sorted(filenames):
            if name.endswith((".py", ".pyi", ".typed")):
                path = os.path.join(dirpath, name)
                yield os.path.relpath(path, ROOT).replace(os.sep, "/"), path


def _wheel(directory, files):
    """Writes a wheel of ``files`` (archive name -> bytes) plus its dist-info."""
    base = _base()
    info = f"{base}.dist-info"
    files = dict(files)
    files[f"{info}/METADATA"] = _metadata().encode()
    files[f"{info}/WHEEL"] = b"Wheel-Version: 1.0\nGenerator: arbiter_build\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
    record = []
    for name, data in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        record.append(f"{name},sha256={digest},{len(data)}")
    record.append(f"{info}/RECORD,,")
    files[f"{info}/RECORD"] = ("\n".join(record) + "\n").encode()
    wheel = f"{base}-py3-none-any.whl"
    with zipfile.ZipFile(os.path.join(directory, wheel), "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in files.items():
            z.writestr(name, data)
    return wheel


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    """PEP 517: a wheel of the package."""
    files = {}
    for name, path in _package_files():
        with open(path, "rb") as f:
            files[name] = f.read()
    return _wheel(wheel_directory, files)


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    """PEP 660: a wheel whose .pth file puts this source tree on sys.path."""
    return _wheel(wheel_directory, {f"{PACKAGE}.pth": (ROOT + "\n").encode()})


def build_sdist(sdist_directory, config_settings=None):
    """PEP 517: a source archive (package, build backend, generate.sh, README)."""
    base = _base()
    sdist = f"{base}.tar.gz"
    with tarfile.open(os.path.join(sdist_directory, sdist), "w:gz") as tar:
        for name in SDIST_FILES:
            tar.add(os.path.join(ROOT, name), f"{base}/{name}")
        for name, path in _package_files():
            tar.add(path, f"{base}/{name}")
        data = _metadata().encode()
        ti = tarfile.TarInfo(f"{base}/PKG-INFO")
        ti.size = len(data)
        tar.addfile(ti, io.BytesIO(data))
    return sdist
