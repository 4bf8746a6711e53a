"""How the NLP's functions are evaluated: compiled C (the default) or CasADi's SX machine.

``compiled``: the per-node terms are small CasADi functions mapped over the nodes (see
:mod:`.problem`) and their derivatives are assembled node by node (:mod:`.assembly`), so
the NLP's functions (objective, constraints, constraint Jacobian, Lagrangian Hessian)
generate a few MB of C however fine the grid. That code is compiled once with the system
C compiler (``$CC``, default ``cc``) into a shared library, cached on disk under
``$CLAMBER_CACHE`` (default ``~/.cache/clamber``) with a name that hashes the NLP's
structure (its serialized expression graph), CasADi's version and the compiler flags:
every later process, and every parallel worker, loads it in milliseconds instead of
rebuilding (compiling takes about a minute per structure, once).

``reference``: the same graph expanded into one flat SX expression and evaluated by
CasADi's virtual machine (the original path). Kept to check the compiled backend (same
optimum) and to run where no C compiler exists: ``compiled`` falls back to it there,
saying so in one line on stderr.

Why not the alternatives: code generation of the flat SX graph gives a 72 MB C file;
CasADi's own derivatives of the mapped graph gave 23 MB of C (64-direction copies of every
node function) no faster than the SX machine; CasADi's structure-exploiting fatrop needs
explicit stage-wise dynamics x_{k+1} = f(x_k, u_k) while the pins, the implicit
trapezoidal rule and the global variables (height, anchors, impulses) couple nodes.
Measured figures and the linear solver floor: ``docs/trajopt_backends.md``.
"""

from __future__ import annotations

import hashlib
import os
import shutil
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


def compiled_library(nlp: dict, functions: Callable[[], dict[str, ca.Function]]) -> Path:
    """The shared library of the NLP's functions, generated and compiled on first use.

    Safe for concurrent workers: each compiles into its own temporary file and renames it
    into place atomically, so a reader only ever sees a complete library.
    """
    target = cache_dir() / f"jumper_nlp_{structure_hash(nlp)}.so"
    if target.exists():
        return target
    cc = compiler()
    if cc is None:  # resolve() is called first; this only guards direct use
        raise ConfigError("no C compiler found for the compiled backend; set $CC")
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=target.parent) as tmp:
        source = Path(tmp) / "jumper_nlp.c"
        gen = ca.CodeGenerator(source.name, {"with_header": False})
        for fn in functions().values():
            gen.add(fn)
        gen.generate(tmp + os.sep)
        library = Path(tmp) / target.name
        subprocess.run([cc, *CFLAGS, str(source), "-o", str(library), "-lm"],
                       check=True, capture_output=True)
        os.replace(library, target)
    return target
