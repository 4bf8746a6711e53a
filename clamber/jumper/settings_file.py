"""Optimization settings from a TOML file or a stored dict, every field checked at the boundary.

A settings file sets any :class:`~clamber.jumper.settings.OptimizationSettings` field by
name; unset fields keep their defaults. A safe region (``safe_region_front``,
``safe_region_rear``) is one of

- a path, relative to the settings file, of the ``safe_region.json`` that
  ``clamber jumper safe-region`` writes (or any JSON/TOML file holding one of the tables below),
- a table ``{angle_deg = 30, max_load_n = 15}``: the paper's sector and load cap,
- a table ``{A = [[-1, -0.58], [0, 1]], b = [0, 15]}``: any polygon ``A f <= b`` [N].

Example::

    torque_limit = 0.3
    collocation = "hermite-simpson"
    phase_duration_min = [0.09, 0.045, 0.075, 0.045, 0.06]
    safe_region_front = "out/gripper/safe_region.json"
    safe_region_rear = {angle_deg = 25, max_load_n = 12}
"""

from __future__ import annotations

import json
import tomllib
from dataclasses import fields
from pathlib import Path
from typing import Any

from clamber import _validate as v
from clamber._validate import read_text
from clamber.attachment.safe_region import (
    DEFAULT_MAX_LOAD_N,
    DEFAULT_SECTOR_ANGLE_DEG,
    SafeRegion,
)
from clamber.exceptions import ConfigError
from clamber.jumper.settings import OptimizationSettings

OWNER = "settings"


def settings_from_mapping(d: Any, base: OptimizationSettings | None = None,
                          folder: Path | None = None) -> OptimizationSettings:
    """``base`` (default: the defaults) with the fields of ``d`` replaced, each checked by
    the type of its default; region paths are read relative to ``folder``."""
    base = base or OptimizationSettings()
    if not isinstance(d, dict):
        raise ConfigError(f"settings = {d!r}: must be a table of settings")
    known = {f.name: getattr(base, f.name) for f in fields(base)}
    unknown = sorted(set(d) - set(known))
    if unknown:
        raise ConfigError(f"unknown settings {unknown}; allowed: {sorted(known)}")
    changes = {name: _field(name, value, known[name], folder) for name, value in d.items()}
    return base.with_(**changes)


def load_settings(path: str | Path,
                  base: OptimizationSettings | None = None) -> OptimizationSettings:
    """Settings from a TOML file (module doc); errors name the file, the field and the value."""
    path = Path(path)
    text = read_text(path, "settings file", ConfigError)
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(f"{path}: not valid TOML ({e})") from None
    try:
        return settings_from_mapping(data, base, path.parent)
    except ConfigError as e:
        raise ConfigError(f"{path}: {e}") from None


def _field(name: str, value: Any, default: Any, folder: Path | None) -> Any:
    if isinstance(default, SafeRegion):
        return region(name, value, folder)
    if isinstance(default, bool):
        if not isinstance(value, bool):
            raise ConfigError(f"{OWNER}.{name} = {value!r}: must be true or false")
        return value
    if isinstance(default, int):
        return v.integer(OWNER, name, value)
    if isinstance(default, float):
        return v.number(OWNER, name, value)
    if isinstance(default, str):
        if not isinstance(value, str):
            raise ConfigError(f"{OWNER}.{name} = {value!r}: must be a string")
        return value
    if isinstance(default, tuple) and all(isinstance(x, int) for x in default):
        if not isinstance(value, list | tuple):  # a list of phases (checked by the settings)
            raise ConfigError(f"{OWNER}.{name} = {value!r}: must be a list of integers")
        return tuple(v.integer(OWNER, f"{name}[{i}]", x) for i, x in enumerate(value))
    if isinstance(default, tuple):
        if not isinstance(value, list | tuple) or len(value) != len(default):
            raise ConfigError(f"{OWNER}.{name} = {value!r}: must be a list of "
                              f"{len(default)} numbers")
        return tuple(v.number(OWNER, f"{name}[{i}]", x) for i, x in enumerate(value))
    return value


def region(name: str, value: Any, folder: Path | None = None) -> SafeRegion:
    """A safe region from a file path, a sector table or a polygon table (module doc)."""
    if isinstance(value, str):
        path = (folder or Path()) / value
        text = read_text(path, "safe-region file", ConfigError)
        try:
            value = tomllib.loads(text) if path.suffix == ".toml" else json.loads(text)
        except (ValueError, tomllib.TOMLDecodeError) as e:
            raise ConfigError(f"{OWNER}.{name}: {path} is not valid "
                              f"{'TOML' if path.suffix == '.toml' else 'JSON'} ({e})") from None
    if not isinstance(value, dict):
        raise ConfigError(f"{OWNER}.{name} = {value!r}: must be a file name or a table")
    if "A" in value or "b" in value:
        polygon = {k: value[k] for k in ("A", "b", "labels") if k in value}
        extra = set(value) - {"A", "b", "labels", "angle_deg", "max_load_n"}
        if extra:
            raise ConfigError(f"{OWNER}.{name}: unknown keys {sorted(extra)}")
        try:
            return SafeRegion.from_dict(polygon)
        except ConfigError as e:
            raise ConfigError(f"{OWNER}.{name}: {e}") from None
    extra = set(value) - {"angle_deg", "max_load_n"}
    if extra or not value:
        raise ConfigError(f"{OWNER}.{name} = {value!r}: give angle_deg and max_load_n, "
                          "or A and b")
    try:
        return SafeRegion.sector(
            v.in_range("sector", "angle_deg",
                       value.get("angle_deg", DEFAULT_SECTOR_ANGLE_DEG), "sector_angle"),
            v.in_range("sector", "max_load_n",
                       value.get("max_load_n", DEFAULT_MAX_LOAD_N), "gripper_load"))
    except ConfigError as e:
        raise ConfigError(f"{OWNER}.{name}: {e}") from None
