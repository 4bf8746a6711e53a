"""Loaders check their input at the boundary: one-line errors naming file, field and value."""

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from clamber.exceptions import ConfigError, FileFormatError
from clamber.jumper.morphology import Morphology
from clamber.jumper.seed import SEED_PATH
from clamber.jumper.settings_file import load_settings, settings_from_mapping
from clamber.jumper.solution import TrajectorySolution


def copy_solution(tmp_path: Path, arrays=None, meta=None) -> Path:
    """The packaged seed solution copied to ``tmp_path``, arrays and metadata edited."""
    dst = tmp_path / "sol.npz"
    shutil.copy(SEED_PATH, dst)
    shutil.copy(SEED_PATH.with_suffix(".json"), dst.with_suffix(".json"))
    if arrays is not None:
        with np.load(dst) as d:
            data = {k: d[k] for k in d.files}
        arrays(data)
        np.savez(dst, **data)
    if meta is not None:
        m = json.loads(dst.with_suffix(".json").read_text())
        meta(m)
        dst.with_suffix(".json").write_text(json.dumps(m))
    return dst


def _set(key, index, value):
    def edit(d):
        d[key] = d[key].astype(float)
        d[key][index] = value
    return edit


def test_the_packaged_seed_loads_unchanged(tmp_path):
    """A file written by save() passes every check (forces of detached grippers are NaN)."""
    sol = TrajectorySolution.load(copy_solution(tmp_path))
    assert np.isnan(sol.f_front).any() and sol.period > 0


@pytest.mark.parametrize("edit, match", [
    (_set("q", (3, 2), np.nan), r"q\[3, 2\] = .*nan.*must be finite"),
    (_set("tau", (0, 0), np.inf), r"tau\[0, 0\]"),
    (_set("f_front", (0, 0), np.inf), r"f_front\[0, 0\]"),
    (_set("t", 10, -1.0), r"t\[10\] .* time must not run backwards"),
    (_set("phase_durations", 2, 0.0), r"phase_durations\[2\] = 0.0 s: must be > 0"),
    (_set("phase_durations", 1, -0.05), r"phase_durations\[1\]"),
    (lambda d: d.pop("qd"), r"missing arrays \['qd'\]"),
    (lambda d: d.update(q=d["q"][:, :5]), r"q: shape 68x5, expected 68x6"),
    (lambda d: d.update(t=d["t"][:-1]), r"t: shape 67, expected 68"),
    (lambda d: d.update(phase=d["phase"][::-1].copy()), r"phase: must number"),
])
def test_bad_solution_arrays_are_refused_naming_file_field_and_value(tmp_path, edit, match):
    """Shapes, finiteness, monotone time, positive durations and missing arrays are checked;
    the message is one line and names the .npz file."""
    path = copy_solution(tmp_path, arrays=edit)
    with pytest.raises(FileFormatError, match=match) as e:
        TrajectorySolution.load(path)
    assert str(path) in str(e.value) and "\n" not in str(e.value)


@pytest.mark.parametrize("edit, match", [
    (lambda m: m.pop("height"), r"missing keys \['height'\]"),
    (lambda m: m.update(height="high"), r"height = 'high': must be a number"),
    (lambda m: m.update(iterations=True), r"iterations = True: must be an integer"),
    (lambda m: m.update(nodes=[18, 9]), r"nodes = \[18, 9\]"),
    (lambda m: m.update(status="great"), r"status = 'great': must be one of"),
    (lambda m: m["settings"].update(torque_limit="0.25"), r"torque_limit = '0.25'"),
    (lambda m: m["settings"].update(safe_region_front=3), r"safe_region_front = 3"),
    (lambda m: m["morphology"].update(lengths_m=[0.07, True, 0.09, 0.07]),
     r"lengths\[1\] = True: must be a number"),
    (lambda m: m.update(morphology=[]), r"morphology = \[\]"),
])
def test_bad_solution_metadata_is_refused_naming_the_field(tmp_path, edit, match):
    """Missing keys, strings and booleans as numbers, wrong node counts are one-line
    FileFormatErrors naming the .json file."""
    path = copy_solution(tmp_path, meta=edit)
    with pytest.raises(FileFormatError, match=match) as e:
        TrajectorySolution.load(path)
    assert str(path.with_suffix(".json")) in str(e.value)


def test_a_folder_or_binary_junk_is_not_a_solution(tmp_path):
    """A folder, a non-UTF-8 metadata file and a truncated archive are FileFormatErrors."""
    (tmp_path / "d.npz").mkdir()
    (tmp_path / "d.json").write_text("{}")
    with pytest.raises(FileFormatError, match="folder"):
        TrajectorySolution.load(tmp_path / "d.npz")
    path = copy_solution(tmp_path)
    path.with_suffix(".json").write_bytes(b"\xff\xfe{")
    with pytest.raises(FileFormatError, match="UTF-8"):
        TrajectorySolution.load(path)
    path = copy_solution(tmp_path)
    path.write_bytes(path.read_bytes()[:200])
    with pytest.raises(FileFormatError, match="unreadable archive"):
        TrajectorySolution.load(path)


@pytest.mark.parametrize("text, match", [
    ('lengths_m = [0.08, 0.08, 0.08, "0.08"]\nmasses_kg = [0.01, 0.08, 0.09, 0.08, 0.01]',
     r"lengths\[3\] = '0.08': must be a number"),
    ('lengths_m = [0.08, 0.08, 0.08, true]\nmasses_kg = [0.01, 0.08, 0.09, 0.08, 0.01]',
     r"lengths\[3\] = True: must be a number"),
    ('lengths_m = [0.08, 0.08, 0.08, 0.08]\nmasses_kg = [0.01, 0.08, 0.09, 0.08, 0.01]\n'
     'links = 5', r"links = 5: must be a table"),
    ('lengths_m = [0.08, 0.08, 0.08, 0.08]\nmasses_kg = [0.01, 0.08, 0.09, 0.08, 0.01]\n'
     'bounds = "wide"', r"bounds = 'wide': must be a table"),
    ('lengths_m = 0.08\nmasses_kg = [0.01, 0.08, 0.09, 0.08, 0.01]',
     r"lengths = 0.08: must be a list of 4 numbers"),
    ('lengths_m = [0.08, 0.08, 0.08, 0.08]\nmasses_kg = [0.01, 0.08, 0.09, 0.08, 0.01]\n'
     '[bounds]\nlength_min = false', r"bounds.length_min = False: must be a number"),
])
def test_morphology_toml_types_are_checked(tmp_path, text, match):
    """Strings and booleans are not numbers, tables must be tables; the file is named."""
    p = tmp_path / "m.toml"
    p.write_text(text)
    with pytest.raises(ConfigError, match=match) as e:
        Morphology.load(p)
    assert str(p) in str(e.value)


def test_non_utf8_morphology_is_a_clear_error(tmp_path):
    """A TOML file in another encoding is refused with the file named."""
    p = tmp_path / "m.toml"
    p.write_bytes("lengths_m = [0.08] # é".encode("latin-1"))
    with pytest.raises(ConfigError, match="not a UTF-8"):
        Morphology.load(p)


def test_settings_file_sets_every_field_and_reads_a_fitted_safe_region(tmp_path):
    """A settings TOML sets any field; a safe region is read from the JSON that
    `clamber jumper safe-region` writes (A, b and the sector parameters)."""
    from clamber.attachment.safe_region import SafeRegion

    region = SafeRegion.sector(25.0, 12.0)
    (tmp_path / "safe_region.json").write_text(json.dumps(
        {"angle_deg": 25.0, "max_load_n": 12.0, **region.to_dict()}))
    p = tmp_path / "s.toml"
    p.write_text('torque_limit = 0.3\ncollocation = "hermite-simpson"\nmax_iterations = 50\n'
                 'phase_duration_min = [0.08, 0.04, 0.07, 0.04, 0.05]\n'
                 'safe_region_front = "safe_region.json"\n'
                 'safe_region_rear = {angle_deg = 20, max_load_n = 10}\n')
    s = load_settings(p)
    assert s.torque_limit == 0.3 and s.collocation == "hermite-simpson"
    assert s.max_iterations == 50 and s.phase_duration_min[0] == 0.08
    np.testing.assert_allclose(s.safe_region_front.A, region.A)
    np.testing.assert_allclose(s.safe_region_rear.b, [0.0, 10.0])


@pytest.mark.parametrize("d, match", [
    ({"torque_limit": "0.3"}, r"torque_limit = '0.3': must be a number"),
    ({"max_iterations": 1.5}, r"max_iterations = 1.5: must be an integer"),
    ({"torque_limit": True}, r"torque_limit = True"),
    ({"colour": 1}, r"unknown settings \['colour'\]"),
    ({"phase_duration_min": [0.1]}, r"phase_duration_min = \[0.1\]: must be a list of 5"),
    ({"safe_region_front": {"angle_deg": 95}}, r"safe_region_front: sector.angle_deg = 95"),
    ({"safe_region_front": {"A": [[1, 2]], "b": [1, 2]}}, r"safe_region_front: .*shape"),
    ({"safe_region_front": "nope.json"}, r"nope.json: safe-region file does not exist"),
])
def test_bad_settings_are_refused_with_the_field_named(tmp_path, d, match):
    """Every settings field is type-checked by its default's type; regions are checked."""
    with pytest.raises(ConfigError, match=match):
        settings_from_mapping(d, folder=tmp_path)
