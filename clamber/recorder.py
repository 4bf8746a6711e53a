"""A fixed-width log written by column name, one row per simulator tick (both robots' trials)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np

from clamber.exceptions import ConfigError


def vector_columns(name: str, parts: Sequence[str] = ("x", "y", "z")) -> tuple[str, ...]:
    """Column names of a vector quantity: ``name_x, name_y, name_z`` (or other ``parts``)."""
    return tuple(f"{name}_{p}" for p in parts)


class Recorder:
    """Rows of named columns, preallocated and grown by doubling; unwritten cells are NaN.

    ``rows`` counts the rows written so far (one past the largest row index written), so
    a trial that writes row after row reads its series back without counting itself.
    A vector is written into consecutive columns (:func:`vector_columns`) by
    :meth:`write_block`, named by its first column.
    """

    def __init__(self, columns: Sequence[str], rows: int = 1024) -> None:
        if len(set(columns)) != len(columns):
            raise ConfigError(f"recorder columns must be unique, got {list(columns)}")
        self.columns = tuple(columns)
        self._index = {name: i for i, name in enumerate(self.columns)}
        self._data = np.full((max(1, rows), len(self.columns)), np.nan)
        self.rows = 0

    def _grow(self, row: int) -> None:
        while row >= self._data.shape[0]:
            self._data = np.vstack([self._data, np.full_like(self._data, np.nan)])

    def _row(self, row: int) -> np.ndarray:
        self._grow(row)
        if row >= self.rows:
            self.rows = row + 1
        return self._data[row]

    def write(self, row: int, name: str, value: float) -> None:
        """Set one cell."""
        self._row(row)[self._index[name]] = value

    def write_many(self, row: int, names: Iterable[str], values: Iterable[float]) -> None:
        """Set several cells of one row, names and values in the same order."""
        r = self._row(row)
        for name, value in zip(names, values, strict=True):
            r[self._index[name]] = value

    def append(self, values: Sequence[float]) -> None:
        """Write row ``rows`` (the next), one value per column in column order: what
        :meth:`write_many` of every column writes there, in one assignment."""
        row = self.rows
        if len(values) != len(self.columns):
            raise ConfigError(f"a row has {len(self.columns)} values, got {len(values)}")
        if row >= self._data.shape[0]:
            self._grow(row)
        self._data[row] = values
        self.rows = row + 1

    def next_row(self) -> np.ndarray:
        """Row ``rows`` (the next), counted as written: a view to fill in place, every column
        (what :meth:`append` writes, without building the values first)."""
        row = self.rows
        if row >= self._data.shape[0]:
            self._grow(row)
        self.rows = row + 1
        return self._data[row]

    def write_block(self, row: int, first: str, values: np.ndarray) -> None:
        """Set consecutive cells of one row from column ``first`` on (``values`` flattened)."""
        v = np.ravel(values)
        i = self._index[first]
        if i + v.size > len(self.columns):
            raise ConfigError(f"{v.size} values from column {first!r} overrun the recorder")
        self._row(row)[i:i + v.size] = v

    def array(self, rows: int | None = None) -> np.ndarray:
        """The first ``rows`` rows (default: all written), shape (rows, len(columns))."""
        rows = self.rows if rows is None else rows
        self._grow(rows - 1)
        return self._data[:rows].copy()

    def column(self, name: str, rows: int | None = None) -> np.ndarray:
        """One column over the first ``rows`` rows (default: all written)."""
        rows = self.rows if rows is None else rows
        return self._data[:rows, self._index[name]].copy()

    def block(self, first: str, width: int, rows: int | None = None) -> np.ndarray:
        """``width`` consecutive columns from ``first`` on, shape (rows, width)."""
        rows = self.rows if rows is None else rows
        i = self._index[first]
        return self._data[:rows, i:i + width].copy()
