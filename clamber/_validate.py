"""One set of checks for user-facing fields and options, with one style of message.

Every check names the owner and field, says what was given and what is allowed, and
raises :class:`~clamber.exceptions.ConfigError`. Booleans and strings are never numbers.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np

from clamber.exceptions import ConfigError, FileFormatError


def _label(owner: str, name: str) -> str:
    return f"{owner}.{name}" if owner else name


def is_real(value: Any) -> bool:
    """A Python or NumPy real number that is not a boolean."""
    return (isinstance(value, int | float | np.integer | np.floating)
            and not isinstance(value, bool | np.bool_))


def number(owner: str, name: str, value: Any, *, low: float | None = None,
           high: float | None = None, low_open: bool = False,
           high_open: bool = False) -> float:
    """A finite real number within ``[low, high]`` (``low_open``/``high_open`` exclude the
    end points); returned as a float."""
    what = _label(owner, name)
    if not is_real(value):
        raise ConfigError(f"{what} = {value!r}: must be a number")
    v = float(value)
    allowed = _range_text(low, high, low_open, high_open)
    if not math.isfinite(v):
        raise ConfigError(f"{what} = {value!r}: must be finite{allowed}")
    if low is not None and (v <= low if low_open else v < low):
        raise ConfigError(f"{what} = {value!r}: must be finite{allowed}")
    if high is not None and (v >= high if high_open else v > high):
        raise ConfigError(f"{what} = {value!r}: must be finite{allowed}")
    return v


def positive(owner: str, name: str, value: Any) -> float:
    """A finite number > 0."""
    return number(owner, name, value, low=0.0, low_open=True)


def non_negative(owner: str, name: str, value: Any) -> float:
    """A finite number >= 0."""
    return number(owner, name, value, low=0.0)


def integer(owner: str, name: str, value: Any, *, low: int | None = None,
            high: int | None = None) -> int:
    """An integer (not a boolean, not a float) within ``[low, high]``."""
    what = _label(owner, name)
    if not isinstance(value, int | np.integer) or isinstance(value, bool | np.bool_):
        raise ConfigError(f"{what} = {value!r}: must be an integer"
                          f"{_range_text(low, high, False, False)}")
    if (low is not None and value < low) or (high is not None and value > high):
        raise ConfigError(f"{what} = {value!r}: must be an integer"
                          f"{_range_text(low, high, False, False)}")
    return int(value)


def choice(owner: str, name: str, value: Any, choices: Iterable[Any]) -> Any:
    """One of ``choices``."""
    options = tuple(choices)
    if value not in options:
        raise ConfigError(f"{_label(owner, name)} = {value!r}: must be one of "
                          f"{', '.join(repr(c) for c in options)}")
    return value


def finite_array(owner: str, name: str, value: Any,
                 shape: tuple[int | None, ...] | None = None) -> np.ndarray:
    """A finite float array, of ``shape`` when given (None: any length on that axis)."""
    what = _label(owner, name)
    try:
        a = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise ConfigError(f"{what}: must be an array of numbers") from None
    if shape is not None and (a.ndim != len(shape) or any(
            s is not None and n != s for n, s in zip(a.shape, shape, strict=True))):
        want = "x".join("n" if s is None else str(s) for s in shape)
        raise ConfigError(f"{what}: must have shape {want}, got {'x'.join(map(str, a.shape))}")
    if not np.all(np.isfinite(a)):
        raise ConfigError(f"{what}: must be finite (holds NaN or inf)")
    return a


def numeric_fields(obj: Any, owner: str, *, low: float = 0.0, strict: bool = False,
                   names: Iterable[str] | None = None) -> None:
    """Every (or every named) field of a dataclass is a finite number >= ``low``
    (> ``low`` with ``strict``)."""
    fields = names if names is not None else [f.name for f in dataclasses.fields(obj)]
    for name in fields:
        number(owner, name, getattr(obj, name), low=low, low_open=strict)


def _range_text(low: float | None, high: float | None, low_open: bool,
                high_open: bool) -> str:
    if low is None and high is None:
        return ""
    if high is None:
        return f" and {'>' if low_open else '>='} {low:g}"
    if low is None:
        return f" and {'<' if high_open else '<='} {high:g}"
    return (f" in {'(' if low_open else '['}{low:g}, {high:g}{')' if high_open else ']'}")


def read_text(path: Any, what: str = "file",
              error: type[Exception] = FileFormatError) -> str:
    """The UTF-8 text of ``path``; a missing file, a folder, an unreadable or non-UTF-8 file
    is an ``error`` (:class:`~clamber.exceptions.FileFormatError` by default) naming it, as
    is a name no file can have (a NUL character)."""
    p = Path(path)
    if "\x00" in str(p):
        raise error(f"{str(p)!r}: not a valid {what} name (it holds a NUL character)")
    try:
        return p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise error(f"{p}: {what} does not exist") from None
    except IsADirectoryError:
        raise error(f"{p}: is a folder, expected a {what}") from None
    except UnicodeDecodeError as e:
        raise error(f"{p}: not a UTF-8 text {what} (byte {e.start})") from None
    except OSError as e:
        raise error(f"{p}: cannot read the {what} ({e.strerror})") from None
