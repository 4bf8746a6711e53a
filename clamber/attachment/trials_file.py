"""Hanging-weight trials from a CSV file (``load,angle_deg,held``), checked line by line.

The file has a header and one trial per line; the load is in the unit given (kg or N),
the angle [deg] from the vertical, ``held`` one of 1/0, true/false, yes/no, held/failed::

    load,angle_deg,held
    0.4,0,1
    2.0,120,0
"""

from __future__ import annotations

import csv
import math
from pathlib import Path

from clamber._validate import read_text
from clamber.attachment.safe_region_fit import HangingTrial, trials_from_records
from clamber.exceptions import ConfigError, FileFormatError

HEADER = ["load", "angle_deg", "held"]
TRUE = {"1", "true", "yes", "held", "y"}
FALSE = {"0", "false", "no", "failed", "n"}


def read_trials(path: str | Path, unit: str) -> list[HangingTrial]:
    """Trials from a CSV with columns load, angle_deg, held; errors name the file and line."""
    path = Path(path)
    lines = read_text(path, "trials file").splitlines()
    try:
        rows = list(csv.reader(lines))
    except csv.Error as e:
        raise FileFormatError(f"{path}: not a CSV file ({e})") from None
    if not rows or [c.strip().lower() for c in rows[0]] != HEADER:
        raise FileFormatError(f"{path}:1: header must be 'load,angle_deg,held'")
    trials = []
    for n, row in enumerate(rows[1:], start=2):
        if not row or all(not c.strip() for c in row):
            continue
        if len(row) != 3:
            raise FileFormatError(f"{path}:{n}: expected 3 fields, got {len(row)}")
        held = row[2].strip().lower()
        if held not in TRUE | FALSE:
            raise FileFormatError(f"{path}:{n}: held = {row[2]!r}; allowed: 1/0, true/false")
        try:
            load, angle = float(row[0]), float(row[1])
        except ValueError:
            raise FileFormatError(f"{path}:{n}: load = {row[0]!r}, angle_deg = {row[1]!r}: "
                                  "must be numbers") from None
        if not (math.isfinite(load) and math.isfinite(angle)):
            raise FileFormatError(f"{path}:{n}: load = {row[0]!r}, angle_deg = {row[1]!r}: "
                                  "must be finite")
        try:
            trials += trials_from_records([(load, angle, held in TRUE)], unit=unit)
        except ConfigError as e:
            raise FileFormatError(f"{path}:{n}: {e}") from None
    if not trials:
        raise FileFormatError(f"{path}: no trials after the header")
    return trials
