"""How the NLP's functions are evaluated: compiled C (the default) or CasADi's SX machine.

``compiled``: the per-node terms are small CasADi functions mapped over the nodes (see
:mod:`.problem`) and their derivatives are assembled node by node (:mod:`.assembly`), so
the NLP's functions (objective, constraints, constraint Jacobian, Lagrangian Hessian)
generate a few MB of C however fine the grid. That code is compiled once with the system
C compiler (``$CC``, default ``cc``) into a shared library, cached on disk under
``$CLAMBER_CACHE`` (default ``~/.cache/clamber``): every later process, and every
parallel worker, loads it in milliseconds instead of rebuilding (compiling takes about a
minute per structure, once).

Loading a shared library runs its code, so the cache is trusted only as far as it is
checked (:func:`compiled_library`): the folder must belong to the user and be writable by
nobody else (it is created 0700); a manifest named by the NLP's structure hash (its
serialized graph, CasADi's version, the code layout and the compiler flags) records the
SHA-256 of the generated C source, which names the library, and the SHA-256 of the
library's bytes. A library whose bytes, name or owner do not match is never loaded: it is
rebuilt from its source and replaced, with one warning.

``reference``: the same graph expanded into one flat SX expression and evaluated by
CasADi's virtual machine (the original path). Kept to check the compiled backend (same
optimum) and to run where no C compiler exists: ``compiled`` falls back to it there,
saying so in one line on stderr.

Why not the alternatives: code generation of the flat SX graph gives a 72 MB C file;
CasADi's own derivatives of the mapped graph gave 23 MB of C (64-direction copies of every
node function) no faster than the SX machine; CasADi's structure-exploiting fatrop needs
explicit stage-wise dynamics x_{k+1} = f(x_k, u_k) while the pins, the implicit
trapezoidal rule and the global variables (height, anchors, impulses) couple nodes.
Measured figures and the linear solver floor: ``docs/results/jumper_trajopt.md``.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
import stat
import subprocess
import sys
import tempfile
from collections.abc import Callable
from functools import cache
from pathlib import Path

import casadi as ca

from clamber.exceptions import ConfigError
from clamber.jumper.settings import BACKENDS

#: Bumped whenever the generated code changes for the same NLP (part of the cache key).
CODE_VERSION = "assembled-2"
#: Version of the manifest that binds a structure to its source and library digests.
MANIFEST_VERSION = 1

log = logging.getLogger("clamber")
#: Flags of the generated code: -O1 compiles the ~0.5 MB file in seconds, and -O2/-O3
#: gave no measurable speed-up of the solve.
CFLAGS = ("-O1", "-fPIC", "-shared")


def cache_dir() -> Path:
    """Where compiled NLP libraries are kept: ``$CLAMBER_CACHE`` or ``~/.cache/clamber``."""
    root = os.environ.get("CLAMBER_CACHE")
    if root:
        return Path(root)
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "clamber"


def compiler() -> str | None:
    """Path of the C compiler (``$CC``, default ``cc``), or None when there is none."""
    return shutil.which(os.environ.get("CC", "cc"))


@cache
def _say_fallback(reason: str) -> None:
    print(f"clamber: {reason}; using the reference (SX virtual machine) NLP backend",
          file=sys.stderr)


def resolve(backend: str) -> str:
    """The backend that will run: 'compiled' becomes 'reference' without a C compiler."""
    if backend not in BACKENDS:
        raise ConfigError(f"backend {backend!r} unknown; allowed: {BACKENDS}")
    if backend == "compiled" and compiler() is None:
        _say_fallback(f"no C compiler ({os.environ.get('CC', 'cc')!r} not found)")
        return "reference"
    return backend


def reference_solver(nlp: dict, opts: dict) -> ca.Function:
    """IPOPT on the NLP expanded into SX, evaluated by CasADi's virtual machine."""
    return ca.nlpsol("jumper", "ipopt", nlp, {**opts, "expand": True})


def structure_hash(nlp: dict) -> str:
    """Hash of what the generated code depends on: the NLP graph, CasADi's version, the
    code layout (:data:`CODE_VERSION`) and the compiler flags."""
    fn = ca.Function("nlp", [nlp["x"], nlp["p"]], [nlp["f"], nlp["g"]])
    h = hashlib.sha256()
    h.update(ca.__version__.encode())
    h.update(CODE_VERSION.encode())
    h.update(" ".join(CFLAGS).encode())
    h.update(fn.serialize().encode())
    return h.hexdigest()[:20]


def secure_cache_dir() -> Path:
    """:func:`cache_dir`, created 0700 if missing; a ConfigError if it is not a folder of
    this user's that nobody else can write (anything placed there would be run)."""
    root = cache_dir()
    try:
        root.mkdir(mode=0o700, parents=True, exist_ok=True)
        st = os.stat(root)
    except OSError as e:
        raise ConfigError(f"NLP build cache {root}: cannot create it ({e.strerror}); "
                          "set $CLAMBER_CACHE to a folder of yours") from None
    if not stat.S_ISDIR(st.st_mode):
        raise ConfigError(f"NLP build cache {root}: not a folder; set $CLAMBER_CACHE")
    _check_owner(root, st, "NLP build cache")
    return root


def _check_owner(path: Path, st: os.stat_result, what: str) -> None:
    """ConfigError unless ``path`` belongs to this user and no one else may write it."""
    if hasattr(os, "getuid") and st.st_uid != os.getuid():
        raise ConfigError(f"{what} {path}: owned by user id {st.st_uid}, not by you "
                          f"({os.getuid()}); its libraries would run as you. Set "
                          "$CLAMBER_CACHE to a folder of yours")
    if st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        raise ConfigError(f"{what} {path}: writable by others (mode "
                          f"{stat.S_IMODE(st.st_mode):o}); its libraries would run as you. "
                          f"Run chmod go-w {path} or set $CLAMBER_CACHE")


def _file_digest(path: Path) -> str | None:
    """SHA-256 of a regular file of this user's that no one else may write, read without
    following a link; None when it is missing, a link, someone else's or writable by others."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except OSError:
        return None
    with os.fdopen(fd, "rb") as f:
        st = os.fstat(f.fileno())
        if not stat.S_ISREG(st.st_mode) or st.st_mode & (stat.S_IWGRP | stat.S_IWOTH) or (
                hasattr(os, "getuid") and st.st_uid != os.getuid()):
            return None
        h = hashlib.sha256()
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _manifest(path: Path) -> dict | None:
    """The manifest at ``path`` if it is this user's, readable and of this version."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
        with os.fdopen(fd, "rb") as f:
            st = os.fstat(f.fileno())
            if not stat.S_ISREG(st.st_mode) or st.st_size > 4096:
                return None
            data = json.loads(f.read().decode("utf-8"))
    except (OSError, ValueError):
        return None
    if hasattr(os, "getuid") and st.st_uid != os.getuid():
        return None
    ok = (isinstance(data, dict) and data.get("version") == MANIFEST_VERSION
          and all(isinstance(data.get(k), str) and len(data[k]) == 64
                  for k in ("source_sha256", "library_sha256")))
    return data if ok else None


def library_name(source_sha256: str) -> str:
    """File name of the library compiled from the C source of this SHA-256."""
    return f"jumper_nlp_{source_sha256[:32]}.so"


def verified_library(root: Path, structure: str) -> Path | None:
    """The cached library of ``structure`` if its manifest and bytes check out, else None
    (with one warning when something is there but does not match)."""
    manifest_path = root / f"jumper_nlp_{structure}.json"
    if not os.path.lexists(manifest_path):
        return None
    manifest = _manifest(manifest_path)
    if manifest is None:
        log.warning("NLP build cache: %s is not a valid manifest of yours; rebuilding",
                    manifest_path)
        return None
    library = root / library_name(manifest["source_sha256"])
    digest = _file_digest(library)
    if digest != manifest["library_sha256"]:
        log.warning("NLP build cache: %s does not match the digest recorded when it was "
                    "compiled (or is missing, a link, or not yours); not loaded, rebuilding",
                    library)
        return None
    return library


def _write_private(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically (a fresh 0600 file renamed into place)."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp_", suffix=path.suffix)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def compiled_library(nlp: dict, functions: Callable[[], dict[str, ca.Function]]) -> Path:
    """The shared library of the NLP's functions: the cached one if it checks out (see the
    module docstring), else generated, compiled and recorded.

    Safe for concurrent workers: each compiles into its own temporary file and renames it
    into place atomically, library first and manifest last, so a reader only ever sees a
    complete library and a manifest whose library exists.
    """
    root = secure_cache_dir()
    structure = structure_hash(nlp)
    cached = verified_library(root, structure)
    if cached is not None:
        return cached
    cc = compiler()
    if cc is None:  # resolve() is called first; this only guards direct use
        raise ConfigError("no C compiler found for the compiled backend; set $CC")
    with tempfile.TemporaryDirectory(dir=root) as tmp:
        source = Path(tmp) / "jumper_nlp.c"
        gen = ca.CodeGenerator(source.name, {"with_header": False})
        for fn in functions().values():
            gen.add(fn)
        gen.generate(tmp + os.sep)
        source_sha256 = hashlib.sha256(source.read_bytes()).hexdigest()
        built = Path(tmp) / "library.so"
        subprocess.run([cc, *CFLAGS, str(source), "-o", str(built), "-lm"],
                       check=True, capture_output=True)
        library_sha256 = hashlib.sha256(built.read_bytes()).hexdigest()
        target = root / library_name(source_sha256)
        os.chmod(built, 0o700)
        os.replace(built, target)
    _write_private(root / f"jumper_nlp_{structure}.json", json.dumps({
        "version": MANIFEST_VERSION, "source_sha256": source_sha256,
        "library_sha256": library_sha256, "casadi": ca.__version__,
        "cflags": list(CFLAGS)}).encode())
    return target
