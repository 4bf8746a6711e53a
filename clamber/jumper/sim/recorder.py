"""A fixed-width log written by column name, one row per simulator tick."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np

from clamber.exceptions import ConfigError


class Recorder:
    """Rows of named columns, preallocated and grown by doubling; unwritten cells are NaN."""

    def __init__(self, columns: Sequence[str], rows: int = 1024) -> None:
        if len(set(columns)) != len(columns):
            raise ConfigError(f"recorder columns must be unique, got {list(columns)}")
        self.columns = tuple(columns)
        self._index = {name: i for i, name in enumerate(self.columns)}
        self._data = np.full((max(1, rows), len(self.columns)), np.nan)

    def _row(self, row: int) -> np.ndarray:
        while row >= self._data.shape[0]:
            self._data = np.vstack([self._data, np.full_like(self._data, np.nan)])
        return self._data[row]

    def write(self, row: int, name: str, value: float) -> None:
        """Set one cell."""
        self._row(row)[self._index[name]] = value

    def write_many(self, row: int, names: Iterable[str], values: Iterable[float]) -> None:
        """Set several cells of one row, names and values in the same order."""
        r = self._row(row)
        for name, value in zip(names, values, strict=True):
            r[self._index[name]] = value

    def array(self, rows: int) -> np.ndarray:
        """The first ``rows`` rows, shape (rows, len(columns))."""
        self._row(max(rows - 1, 0))
        return self._data[:rows].copy()

    def column(self, name: str, rows: int) -> np.ndarray:
        """One column over the first ``rows`` rows."""
        return self._data[:rows, self._index[name]].copy()
