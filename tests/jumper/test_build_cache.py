"""The NLP build cache runs nothing it cannot vouch for: its folder is the user's alone and
every library is checked against the digests recorded when it was compiled."""

import hashlib
import json
import os
import stat
from collections.abc import Callable

import casadi as ca
import pytest

from clamber.exceptions import ConfigError
from clamber.jumper.formulation import backends

pytestmark = pytest.mark.skipif(backends.compiler() is None, reason="no C compiler here")


def tiny_nlp() -> tuple[dict, Callable, list]:
    """A two-variable NLP and its functions: small enough to compile in a second."""
    x, p = ca.SX.sym("x", 2), ca.SX.sym("p", 2)
    f = ca.sumsqr(x - p)
    nlp = {"x": x, "p": p, "f": f, "g": x[0] + x[1]}
    calls = []

    def functions() -> dict[str, ca.Function]:
        calls.append(1)
        return {"nlp_f": ca.Function("nlp_f", [x, p], [f])}

    return nlp, functions, calls


@pytest.fixture
def cache(tmp_path, monkeypatch):
    """A fresh cache folder (not yet created) named by $CLAMBER_CACHE."""
    root = tmp_path / "cache" / "clamber"
    monkeypatch.setenv("CLAMBER_CACHE", str(root))
    return root


def test_cache_folder_is_created_private(cache):
    """A missing cache folder is created with mode 0700 and the library works."""
    nlp, functions, calls = tiny_nlp()
    lib = backends.compiled_library(nlp, functions)
    assert stat.S_IMODE(os.stat(cache).st_mode) == 0o700
    assert calls == [1]
    f = ca.external("nlp_f", str(lib))
    assert float(f([1.0, 2.0], [0.0, 0.0])) == pytest.approx(5.0)


def test_warm_cache_is_loaded_without_generating(cache):
    """A second request for the same structure returns the verified library without
    generating code again."""
    nlp, functions, calls = tiny_nlp()
    first = backends.compiled_library(nlp, functions)
    again = backends.compiled_library(nlp, functions)
    assert again == first and calls == [1]


def test_tampered_library_is_not_loaded(cache, clamber_warnings):
    """A library whose bytes differ from the digest recorded at compile time is never
    returned: it is rebuilt from source (one warning) and the tampered bytes are gone."""
    nlp, functions, calls = tiny_nlp()
    lib = backends.compiled_library(nlp, functions)
    genuine = lib.read_bytes()
    lib.write_bytes(genuine[:-16] + b"\x90" * 16)
    again = backends.compiled_library(nlp, functions)
    assert calls == [1, 1]
    assert again.read_bytes() != genuine[:-16] + b"\x90" * 16
    assert any("not loaded" in r.getMessage() for r in clamber_warnings)
    manifest = json.loads(next(cache.glob("*.json")).read_text())
    assert hashlib.sha256(again.read_bytes()).hexdigest() == manifest["library_sha256"]


def test_planted_library_and_manifest_are_not_loaded(cache):
    """A library placed under the name a manifest points to, with a manifest whose digest
    is not that library's, is rebuilt rather than run; so is a link to a library."""
    nlp, functions, calls = tiny_nlp()
    lib = backends.compiled_library(nlp, functions)
    planted = cache / "elsewhere.so"
    planted.write_bytes(b"\x7fELF not a real library")
    lib.unlink()
    lib.symlink_to(planted)
    again = backends.compiled_library(nlp, functions)
    assert calls == [1, 1] and not again.is_symlink()
    assert b"not a real library" not in again.read_bytes()


def test_cache_writable_by_others_is_refused(cache):
    """A cache folder others can write is a ConfigError naming it, before anything loads."""
    cache.mkdir(parents=True)
    os.chmod(cache, 0o777)
    nlp, functions, calls = tiny_nlp()
    with pytest.raises(ConfigError, match="writable by others"):
        backends.compiled_library(nlp, functions)
    assert calls == []


@pytest.mark.skipif(not hasattr(os, "getuid") or os.getuid() != 0,
                    reason="giving a folder to another user needs root")
def test_cache_owned_by_another_user_is_refused(cache):
    """A cache folder owned by another user is a ConfigError, before anything loads."""
    cache.mkdir(parents=True, mode=0o700)
    os.chown(cache, 12345, -1)
    nlp, functions, calls = tiny_nlp()
    with pytest.raises(ConfigError, match="owned by user id 12345"):
        backends.compiled_library(nlp, functions)
    assert calls == []
