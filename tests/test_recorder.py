"""The column-named recorder both robots' trials write their time series with."""

import numpy as np
import pytest

from clamber.exceptions import ConfigError
from clamber.recorder import Recorder, vector_columns


def test_cells_land_in_their_named_columns_and_rows_grow():
    """Values written by name (single, several, a vector block) read back from the same
    columns and rows, past the preallocated size; unwritten cells stay NaN and ``rows``
    counts up to the last row written."""
    rec = Recorder(("t", *vector_columns("p"), "power"), rows=2)
    for row in range(5):
        rec.write(row, "t", 0.1 * row)
        rec.write_block(row, "p_x", np.array([row, 2.0 * row, 3.0 * row]))
    rec.write_many(3, ("power",), (7.0,))
    assert rec.rows == 5
    assert np.allclose(rec.column("t"), 0.1 * np.arange(5))
    assert np.array_equal(rec.block("p_x", 3)[4], [4.0, 8.0, 12.0])
    power = rec.column("power")
    assert power[3] == 7.0 and np.isnan(np.delete(power, 3)).all()
    assert rec.array().shape == (5, 5)


def test_bad_columns_and_overrunning_blocks_are_refused():
    """Duplicate column names and a vector that would run past the last column are errors."""
    with pytest.raises(ConfigError, match="unique"):
        Recorder(("a", "a"))
    rec = Recorder(("a", "b"))
    with pytest.raises(ConfigError, match="overrun"):
        rec.write_block(0, "b", np.ones(2))


def test_appended_rows_equal_rows_written_by_name():
    """Appending rows (past the preallocated size) leaves the recorder as writing each
    row's columns by name does; a row of another length is refused."""
    columns = ("a", "b", "c")
    fast, plain = Recorder(columns, rows=2), Recorder(columns, rows=2)
    rng = np.random.default_rng(0)
    for row in range(7):
        values = (float(rng.normal()), np.float64(rng.normal()), -0.0 if row % 2 else np.nan)
        fast.append(values)
        plain.write_many(plain.rows, ("c", "a", "b"), (values[2], values[0], values[1]))
        assert fast.rows == plain.rows == row + 1
    assert np.array_equal(fast.array(), plain.array(), equal_nan=True)
    assert np.array_equal(np.signbit(fast.array()), np.signbit(plain.array()))
    with pytest.raises(ConfigError, match="3 values"):
        fast.append((1.0, 2.0))
