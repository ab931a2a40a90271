"""A PEP 517 build backend for the `ave` package that needs nothing but the standard library, so
`pip install ./python` works offline: the package is pure Python (ctypes over libave), and a wheel
of it is a zip of `ave/` with its metadata (PEP 427). pip's build isolation then has nothing to
download (the build requires nothing)."""
import base64
import hashlib
import io
import os
import re
import tarfile
import zipfile

NAME = "ave"
HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# The version pyproject.toml states (one place).
VERSION = re.search(r'^version = "([^"]+)"', open(os.path.join(HERE, "pyproject.toml")).read(),
                    re.M).group(1)
METADATA = """Metadata-Version: 2.1
Name: ave
Version: {v}
Summary: Compile and launch ave GPU kernels from Python (ctypes over libave)
Requires-Python: >=3.9
Requires-Dist: numpy
Provides-Extra: torch
Requires-Dist: torch; extra == "torch"
Provides-Extra: test
Requires-Dist: pytest; extra == "test"
Description-Content-Type: text/markdown

""".format(v=VERSION) + open(os.path.join(HERE, "README.md")).read()
WHEEL = "Wheel-Version: 1.0\nGenerator: ave_build\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
DIST_INFO = "%s-%s.dist-info" % (NAME, VERSION)


def _package_files():
    root = os.path.join(HERE, NAME)
    for d, dirs, files in os.walk(root):
        dirs[:] = sorted(x for x in dirs if x != "__pycache__")
        for f in sorted(files):
            if f.endswith(".py") or f == "py.typed":
                full = os.path.join(d, f)
                yield full, os.path.relpath(full, HERE).replace(os.sep, "/")


def _record_line(arc, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return "%s,sha256=%s,%d" % (arc, digest, len(data))


def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def get_requires_for_build_editable(config_settings=None):
    return []


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    d = os.path.join(metadata_directory, DIST_INFO)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "METADATA"), "w") as f:
        f.write(METADATA)
    with open(os.path.join(d, "WHEEL"), "w") as f:
        f.write(WHEEL)
    return DIST_INFO


def _wheel(wheel_directory, entries):
    """entries: (archive name, bytes); the dist-info and RECORD are added."""
    name = "%s-%s-py3-none-any.whl" % (NAME, VERSION)
    entries = list(entries) + [(DIST_INFO + "/METADATA", METADATA.encode()),
                               (DIST_INFO + "/WHEEL", WHEEL.encode())]
    record = [_record_line(a, data) for a, data in entries] + [DIST_INFO + "/RECORD,,"]
    entries.append((DIST_INFO + "/RECORD", ("\n".join(record) + "\n").encode()))
    with zipfile.ZipFile(os.path.join(wheel_directory, name), "w", zipfile.ZIP_DEFLATED) as z:
        for arc, data in entries:
            info = zipfile.ZipInfo(arc, date_time=(2026, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(info, data)
    return name


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    return _wheel(wheel_directory,
                  ((arc, open(full, "rb").read()) for full, arc in _package_files()))


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    # A .pth file that puts this source folder on sys.path.
    return _wheel(wheel_directory, [("ave_editable.pth", (HERE + "\n").encode())])


def build_sdist(sdist_directory, config_settings=None):
    base = "%s-%s" % (NAME, VERSION)
    name = base + ".tar.gz"
    with tarfile.open(os.path.join(sdist_directory, name), "w:gz") as t:
        for f in ["pyproject.toml", "README.md", "_build/ave_build.py"]:
            t.add(os.path.join(HERE, f), arcname=base + "/" + f)
        for full, arc in _package_files():
            t.add(full, arcname=base + "/" + arc)
        info = tarfile.TarInfo(base + "/PKG-INFO")
        data = METADATA.encode()
        info.size = len(data)
        t.addfile(info, io.BytesIO(data))
    return name
