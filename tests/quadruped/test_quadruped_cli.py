"""The `clamber quadruped` command: help and JSON summaries."""

import json
import subprocess
import sys

import pytest

from clamber.cli import build_parser
from clamber.exceptions import ConfigError
from clamber.quadruped.gaits import ClimbGaitSettings


def _run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "clamber", *args], capture_output=True,
                          text=True, timeout=120)


@pytest.mark.parametrize("sub", [[], ["climb"], ["trot"], ["compare"]])
def test_help(sub, capsys):
    """Every quadruped subcommand prints its help with examples."""
    with pytest.raises(SystemExit) as e:
        build_parser().parse_args(["quadruped", *sub, "--help"])
    assert e.value.code == 0
    assert "examples:" in capsys.readouterr().out


def test_climb_json(tmp_path):
    """`climb --json` prints one JSON object with the success rate and its interval."""
    p = _run("quadruped", "climb", "--controller", "vmc", "--incline", "70", "--trials", "1",
             "--no-figures", "--json", "--out", str(tmp_path))
    assert p.returncode == 0, p.stderr
    s = json.loads(p.stdout)
    for key in ("success_rate", "success_interval", "max_tracking_error_mm", "mean_power_w",
                "peak_power_w", "cost_of_transport"):
        assert key in s
    assert s["reseat_every"] == 0  # one cycle: the paper's gait
    assert s["swing_retry_limit"] == 0 and s["reseat_order"] == "wound" and s["wound_limit"] == 0
    assert s["swing_retries"] == s["reseat_retries"] == s["moves_paused"] == 0
    assert (tmp_path / "trials.csv").exists()


def test_trot_json(tmp_path):
    """`trot --json` reports attitude error and power for each feet type."""
    p = _run("quadruped", "trot", "--terrain", "flat", "--feet", "both", "--cycles", "2",
             "--no-figures", "--json", "--out", str(tmp_path))
    assert p.returncode == 0, p.stderr
    s = json.loads(p.stdout)
    assert {(r["feet"], r["terrain"]) for r in s["results"]} == {("gripper", "flat"),
                                                                  ("rubber", "flat")}
    assert all(r["mean_power_w"] > 0 for r in s["results"])


def test_bad_input_is_a_clean_error():
    """An unknown controller is refused by argparse with exit status 2."""
    p = _run("quadruped", "climb", "--controller", "pid")
    assert p.returncode == 2 and "invalid choice" in p.stderr


def test_sole_stiffness_option(tmp_path):
    """`--sole-stiffness` maps to the scene's sole (0: rigid weld) and refuses negative or
    infinite values."""
    for bad in ("-1", "inf"):
        p = _run("quadruped", "climb", "--sole-stiffness", bad)
        assert p.returncode == 2 and "must be finite in [0, 10000] N m/rad" in p.stderr
    from clamber.cli.quadruped_compare import sole_compliance as _sole

    assert _sole(0.0) is None
    assert _sole(40.0).stiffness == 40.0


def test_demo_step_adds_the_climb_to_the_report(tmp_path, monkeypatch):
    """The demo's quadruped step returns a report section with its climb (figure and GIF)."""
    import clamber.cli.quadruped as qcli
    from clamber.quadruped.trials.result import TrialResult
    from clamber.report.html import write_page

    png, gif = tmp_path / "climb.png", tmp_path / "climb.gif"
    png.write_bytes(b"\x89PNG fake")
    gif.write_bytes(b"GIF89a fake")
    fields = {name: 0.0 for name in TrialResult.__dataclass_fields__}
    fields.update(kind="climb", controller="qwbc", setting="90deg", seed=0, success=True,
                  reason="", failure=None)
    monkeypatch.setattr("clamber.quadruped.trials.climb.run_climb",
                        lambda *a, **k: (TrialResult(**fields), object()))
    monkeypatch.setattr("clamber.report.quadruped.save_climb",
                        lambda *a, **k: {"figure": png, "animation": gif})
    out, sections = qcli.demo_step(tmp_path, {}, as_json=True)
    assert out["quadruped_climb"]["success"] is True
    html = write_page(tmp_path / "report.html", "demo", sections).read_text()
    assert "Q-WBC climb" in html and "data:image/gif;base64" in html


def test_reseat_option_sets_the_gait_and_refuses_bad_counts():
    """`--reseat-every` reaches the gait (left out: every body move for more than one cycle,
    never for one; every body move on rock) and refuses negative or fractional counts."""
    from clamber.cli.quadruped import _climb_settings

    def settings(*extra: str):
        args = build_parser().parse_args(["quadruped", "climb", *extra])
        return _climb_settings(args, 90.0)

    assert settings().gait.reseat_every == 0
    assert settings("--cycles", "5").gait.reseat_every == 1
    assert settings("--cycles", "5", "--reseat-every", "0").gait.reseat_every == 0
    assert settings("--reseat-every", "2").gait.reseat_every == 2
    assert settings("--wall", "rock").reseat_every == 1
    assert settings("--wall", "rock", "--reseat-every", "0").reseat_every == 0
    # Body moves split by predicted wind-up: on rock when re-seating, never on plane walls.
    assert settings("--wall", "rock").move_moment == pytest.approx(0.4)
    assert settings("--wall", "rock", "--reseat-every", "0").move_moment == 0.0
    assert settings("--wall", "rock", "--move-moment", "0.6").move_moment == 0.6
    assert settings("--cycles", "5").gait.move_moment == 0.0
    for bad in ("-1", "1.5"):
        p = _run("quadruped", "climb", "--reseat-every", bad)
        assert p.returncode == 2 and "--reseat-every" in p.stderr


def test_retry_and_wind_up_options_reach_the_gait():
    """`--swing-retries` (left out: one on climbs that re-seat, none on the paper's one-cycle
    gait), `--reseat-order` (left out: the most wound sole first) and `--wound-limit` (left
    out: no pauses) reach the plane gait; bad values are refused with the option named."""
    from clamber.cli.quadruped import _climb_settings

    def gait(*extra: str):
        return _climb_settings(build_parser().parse_args(["quadruped", "climb", *extra]),
                               90.0).gait

    assert gait().swing_retries == 0 and gait("--cycles", "5").swing_retries == 1
    assert gait("--cycles", "5", "--swing-retries", "3").swing_retries == 3
    assert gait("--cycles", "5").reseat_order == "wound"
    assert gait("--reseat-order", "swing").reseat_order == "swing"
    assert gait().wound_limit == 0.0 and gait("--wound-limit", "0.6").wound_limit == 0.6
    # Rock: the next swing's gripper first unless a wound share asks for the sensed order.
    rock = _climb_settings(build_parser().parse_args(["quadruped", "climb", "--wall", "rock"]),
                           90.0)
    assert (rock.reseat_order, rock.wound_share) == ("swing", 0.0)
    rock = _climb_settings(build_parser().parse_args(
        ["quadruped", "climb", "--wall", "rock", "--wound-share", "0.6"]), 90.0)
    assert (rock.reseat_order, rock.wound_share) == ("wound", 0.6)
    p = _run("quadruped", "climb", "--wall", "rock", "--reseat-order", "swing",
             "--wound-share", "0.6", "--trials", "1")
    assert p.returncode == 2 and "reseat_order" in p.stderr, p.stderr
    for option, bad in (("--swing-retries", "6"), ("--swing-retries", "-1"),
                        ("--reseat-order", "random"), ("--wound-limit", "-0.1"),
                        ("--body-tilt", "0.2"), ("--landing", "wall"),
                        ("--tilt-goal", "least")):
        p = _run("quadruped", "climb", option, bad)
        assert p.returncode == 2 and option in p.stderr, p.stderr


def test_landing_and_body_turn_options_reach_the_gait():
    """`--landing` (plane walls: body, the 0.1 rad cone toward the wall's normal, on climbs
    that re-seat, keep the lift-off attitude on the paper's one-cycle gait; hold: the hold's
    normal) and `--body-tilt` with its `--tilt-goal` reach the plane gait and the rock
    climb's; rock walls land by the body's normal unless asked and refuse `keep`."""
    from clamber.cli.quadruped import _climb_settings

    def settings(*extra: str):
        return _climb_settings(build_parser().parse_args(["quadruped", "climb", *extra]),
                               90.0)

    assert settings().gait.landing == "keep" and settings("--cycles", "5").gait.landing == "body"
    assert settings("--cycles", "5", "--landing", "keep").gait.landing_cone is None
    assert settings("--landing", "body").gait.landing_cone == pytest.approx(0.1)
    assert settings("--landing", "hold").gait.landing_cone == 0.0
    assert settings().gait.body_tilt == 0.0
    assert settings("--body-tilt", "0.05").gait.body_tilt == 0.05
    assert settings().gait.tilt_goal == "move"
    assert (settings("--wall", "rock").body_tilt, settings("--wall", "rock").tilt_goal) \
        == (0.05, "held")
    rock = settings("--wall", "rock", "--body-tilt", "0", "--tilt-goal", "move")
    assert (rock.body_tilt, rock.tilt_goal) == (0.0, "move")
    with pytest.raises(ConfigError, match="tilt_goal"):
        ClimbGaitSettings(tilt_goal="least")
    assert settings("--wall", "rock").landing_cone == pytest.approx(0.1)
    assert settings("--wall", "rock", "--landing", "hold").landing_cone is None
    p = _run("quadruped", "climb", "--wall", "rock", "--landing", "keep", "--trials", "1")
    assert p.returncode == 2 and "--landing keep" in p.stderr, p.stderr


def test_rock_planner_ranking_and_reseat_options_reach_the_planner():
    """`--capacity-weight` (left out: 0.05 m) and `--plan-reseats` (left out: off) reach the
    rock climb's planner; a weight outside [0, 2] m is refused with the option named."""
    from clamber.cli.quadruped import _climb_settings

    def rock(*extra: str):
        return _climb_settings(build_parser().parse_args(
            ["quadruped", "climb", "--wall", "rock", *extra]), 90.0)

    assert (rock().capacity_weight, rock().plan_reseats) == (0.05, False)
    assert rock("--capacity-weight", "0.5").capacity_weight == 0.5
    assert rock("--plan-reseats", "on").plan_reseats is True
    for bad in ("2.5", "-1"):
        p = _run("quadruped", "climb", "--wall", "rock", "--capacity-weight", bad)
        assert p.returncode == 2 and "--capacity-weight" in p.stderr, p.stderr


def test_rock_start_probe_and_reseat_centre_options_reach_the_climb():
    """`--start-probe` (left out: 16 swings), `--reseat-centre` (left out: on) and
    `--reseat-landing` (left out: on) reach the rock climb and its gait; a probe outside
    0-40 swings and a landing choice other than on/off are refused with the option named."""
    from clamber.cli.quadruped import _climb_settings

    def rock(*extra: str):
        return _climb_settings(build_parser().parse_args(
            ["quadruped", "climb", "--wall", "rock", *extra]), 90.0)

    assert (rock().start_probe, rock().reseat_centre) == (16, True)
    assert rock("--start-probe", "0").start_probe == 0
    assert rock("--reseat-centre", "off").reseat_centre is False
    assert rock().reseat_landing and rock("--reseat-landing", "off").reseat_landing is False
    p = _run("quadruped", "climb", "--wall", "rock", "--reseat-landing", "yes")
    assert p.returncode == 2 and "--reseat-landing" in p.stderr, p.stderr
    for bad in ("41", "-1", "2.5"):
        p = _run("quadruped", "climb", "--wall", "rock", "--start-probe", bad)
        assert p.returncode == 2 and "--start-probe" in p.stderr, p.stderr


def test_rock_reposition_option_reaches_the_climb():
    """`--reposition` (left out: on) reaches the rock climb; a value other than on/off is
    refused with the option named."""
    from clamber.cli.quadruped import _climb_settings

    def rock(*extra: str):
        return _climb_settings(build_parser().parse_args(
            ["quadruped", "climb", "--wall", "rock", *extra]), 90.0)

    assert rock().reposition is True
    assert rock("--reposition", "off").reposition is False
    p = _run("quadruped", "climb", "--wall", "rock", "--reposition", "maybe")
    assert p.returncode == 2 and "--reposition" in p.stderr, p.stderr


def test_rock_regrasps_option_reaches_the_climb():
    """`--regrasps N` sets how often a grasp whose spines did not catch closes again on the
    same hold (left out: the rock climb's default); outside 0-5 it is refused, named."""
    from clamber.cli.quadruped import _climb_settings
    from clamber.quadruped.trials.rock_climb import RockClimbSettings

    def rock(*extra: str):
        return _climb_settings(build_parser().parse_args(
            ["quadruped", "climb", "--wall", "rock", *extra]), 90.0)

    assert rock().regrasps == RockClimbSettings().regrasps
    assert rock("--regrasps", "0").regrasps == 0
    assert rock("--regrasps", "3").regrasps == 3
    for bad in ("6", "-1", "1.5"):
        p = _run("quadruped", "climb", "--wall", "rock", "--regrasps", bad)
        assert p.returncode == 2 and "--regrasps" in p.stderr, p.stderr
