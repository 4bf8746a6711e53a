"""Strict JSON: what clamber prints or stores never holds NaN or Infinity literals."""

from __future__ import annotations

import json
import math
from typing import Any

import numpy as np


def strict(value: Any) -> Any:
    """``value`` with every non-finite float replaced by None (JSON ``null``: not measured
    or undefined), NumPy scalars and arrays as Python numbers and lists, paths as strings."""
    if isinstance(value, dict):
        return {str(k): strict(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [strict(v) for v in value]
    if isinstance(value, np.ndarray):
        return strict(value.tolist())
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if value is None or isinstance(value, bool | int | str):
        return value
    return str(value)


def strict_json(value: Any, indent: int | None = None) -> str:
    """Strict JSON (no NaN or Infinity literals, which strict parsers reject)."""
    return json.dumps(strict(value), indent=indent, allow_nan=False)
