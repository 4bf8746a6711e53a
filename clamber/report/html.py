"""report.html: one self-contained page (summary, settings, figures as embedded PNG)."""

from __future__ import annotations

import base64
import html
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from clamber._json import strict_json

REPORT_NAME = "report.html"

_STYLE = """
body { font-family: system-ui, sans-serif; max-width: 60em; margin: 2em auto; color: #222; }
table { border-collapse: collapse; margin: 1em 0; }
td, th { border: 1px solid #ccc; padding: 0.25em 0.6em; text-align: left; vertical-align: top; }
th { background: #f3f3f3; }
.yes { color: #17702a; font-weight: bold; } .no { color: #a11; font-weight: bold; }
img { max-width: 100%; border: 1px solid #eee; margin: 0.5em 0; }
pre { background: #f7f7f7; padding: 0.8em; overflow-x: auto; font-size: 85%; }
"""


def _cell(value: Any) -> str:
    if isinstance(value, bool):
        cls = "yes" if value else "no"
        return f'<span class="{cls}">{"yes" if value else "no"}</span>'
    if isinstance(value, float):
        return "n/a" if math.isnan(value) else f"{value:.4g}"
    if isinstance(value, Mapping):
        return "<br>".join(f"{html.escape(str(k))}: {_cell(v)}" for k, v in value.items())
    if isinstance(value, list | tuple):
        return html.escape(", ".join(f"{v:.4g}" if isinstance(v, float) else str(v)
                                     for v in value))
    return html.escape(str(value))


def _table(data: Mapping[str, Any]) -> str:
    rows = "".join(f"<tr><th>{html.escape(str(k))}</th><td>{_cell(v)}</td></tr>"
                   for k, v in data.items())
    return f"<table>{rows}</table>"


def write_report(out_dir: str | Path, title: str, summary: Mapping[str, Any],
                 settings: Mapping[str, Any], figures: Mapping[str, str | Path],
                 findings: Mapping[str, bool] | None = None, notes: str = "",
                 refresh_s: int | None = None) -> Path:
    """Write ``out_dir/report.html`` and return its path.

    Every figure is embedded as a base64 PNG, so the page reads anywhere, without clamber
    or the run directory. ``findings`` (name -> holds?) become a coloured checklist.
    ``refresh_s`` makes a browser reload the page that often [s] (for a running job).
    The page is written to a temporary file and renamed, so a reader never sees half.
    """
    out = Path(out_dir) / REPORT_NAME
    refresh = f"<meta http-equiv='refresh' content='{int(refresh_s)}'>" if refresh_s else ""
    parts = [f"<!DOCTYPE html><html><head><meta charset='utf-8'>{refresh}"
             f"<title>{html.escape(title)}"
             f"</title><style>{_STYLE}</style></head><body><h1>{html.escape(title)}</h1>"]
    if notes:
        parts.append(f"<p>{html.escape(notes)}</p>")
    parts.append("<h2>Summary</h2>" + _table(summary))
    if findings is not None:
        parts.append("<h2>The paper's findings on this design</h2>" + _table(findings))
    for name, path in figures.items():
        data = base64.b64encode(Path(path).read_bytes()).decode("ascii")
        parts.append(f"<h2>{html.escape(name)}</h2>"
                     f"<img alt='{html.escape(name)}' src='data:image/png;base64,{data}'>")
    parts.append("<h2>Settings</h2><pre>"
                 + html.escape(json.dumps(settings, indent=2, sort_keys=True, default=str))
                 + "</pre></body></html>")
    tmp = out.with_name(out.name + ".tmp")
    tmp.write_text("\n".join(parts))
    tmp.replace(out)
    return out


@dataclass(frozen=True)
class Section:
    """One titled part of a results page: a table and embedded figures (PNG or GIF)."""

    title: str
    table: Mapping[str, Any]
    figures: Mapping[str, str | Path] = field(default_factory=dict)


def _figure(name: str, path: str | Path) -> str:
    data = base64.b64encode(Path(path).read_bytes()).decode("ascii")
    mime = "image/gif" if str(path).lower().endswith(".gif") else "image/png"
    return (f"<h3>{html.escape(name)}</h3>"
            f"<img alt='{html.escape(name)}' src='data:{mime};base64,{data}'>")


def write_page(path: str | Path, title: str, sections: Sequence[Section],
               notes: str = "") -> Path:
    """Write one self-contained page of ``sections`` (figures embedded) and return it."""
    path = Path(path)
    parts = [f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>{html.escape(title)}"
             f"</title><style>{_STYLE}</style></head><body><h1>{html.escape(title)}</h1>"]
    if notes:
        parts.append(f"<p>{html.escape(notes)}</p>")
    for sec in sections:
        parts.append(f"<h2>{html.escape(sec.title)}</h2>" + _table(sec.table))
        parts.extend(_figure(name, fig) for name, fig in sec.figures.items())
    parts.append("</body></html>")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(parts), encoding="utf-8")
    return path


#: How the report words the paper's three findings (keys of ``paper_findings``).
FINDING_LABELS = {
    "spine_mass_concentrated": "mass concentrated at the spine joint (m3 > m2, m4)",
    "short_distal_links": "short distal links (L1, L4 shorter than L2, L3)",
    "front_longer_than_rear": "front links longer than rear (L1 + L2 > L3 + L4)",
}


#: How often a report of a running co-design reloads itself in a browser [s].
LIVE_REFRESH_S = 30


def write_codesign_outputs(result: Any, figures: bool = True, live: bool = False,
                           validation: dict[str, Any] | None = None) -> dict[str, Any]:
    """Best morphology, summary.json, figures and report.html of a co-design result.

    ``live``: the run is still going (called after each generation); the page says how
    far it is and reloads itself. ``validation``: the finalists' held-out climbs
    (:func:`~clamber.experiments.finalists.validate_finalists`), summarized as the
    ``validated_*`` keys. Returns the run summary with the paths of what was written.
    """
    from clamber.report.codesign import save_codesign_figures

    run_dir = result.run_dir
    summary = result.summary()
    if validation is not None and validation.get("best") is not None:
        b = validation["best"]
        summary.update({
            "validated_speed_mps": b["speed_mps"], "validated_fitness_mps": b["fitness_mps"],
            "validated_ready_rate": b["ready_rate"],
            "validated_climb_success_rate": b["climb_success_rate"],
            "validated_expected_speed_mps": b["expected_speed_mps"],
            "validated_trajectory": str(Path(result.run_dir) / b["trajectory"]),
            "validation": {k: v for k, v in validation.items() if k != "best"}})
    solution = None
    if result.best_solution_path is not None:
        from clamber.jumper.solution import TrajectorySolution

        solution = TrajectorySolution.load(result.best_solution_path)
    paths: dict[str, Path] = {}
    if figures:
        paths = save_codesign_figures(result.trials, result.generation_summaries,
                                      result.best_morphology, solution, run_dir / "figures")
    summary["figures"] = {k: str(v) for k, v in paths.items()}
    if result.best_morphology is not None:
        summary["best_morphology_file"] = str(run_dir / "best_morphology.toml")
    findings = summary.get("findings")
    labelled = ({FINDING_LABELS[k]: v for k, v in findings.items()} if findings else None)
    table = {k: v for k, v in summary.items()
             if k not in ("best_morphology", "findings", "figures", "validation")}
    report = write_report(run_dir, "Jump-climber co-design (CMA-ES)", table,
                          result.config.to_dict(), {n.replace("_", " "): p
                                                    for n, p in paths.items()},
                          findings=labelled, notes=_codesign_notes(result, live),
                          refresh_s=LIVE_REFRESH_S if live else None)
    summary["report"] = str(report)
    (run_dir / "summary.json").write_text(strict_json(summary, indent=2))
    return summary


def _codesign_notes(result: Any, live: bool) -> str:
    notes = ("Fitness: climbing speed of each candidate's optimized jump; failed solves are "
             "recorded and scored with the penalty speed. pycma's own log is in cma/ "
             "(cma.plot('RUN_DIR/cma/') draws it).")
    fitness = result.config.fitness
    if fitness.landing_trials > 0:
        counted = ("of the jumps of " if fitness.landing_score == "jumps"
                   else "of ")
        what = ("landed ready before the first failure"
                if counted == "of the jumps of " else "that landed every jump ready")
        notes = (f"Fitness: the planned speed times the fraction {counted}"
                 f"{fitness.landing_trials} seeded {fitness.landing_jumps}-jump climbs "
                 f"({fitness.landing_controller}, calibrated simulator) {what}; "
                 f"best of {fitness.starts} optimizer start(s) per "
                 "candidate. "
                 + ("Climbs stop once a candidate cannot reach the best fitness of the "
                    "finished generations; it then scores the estimate from the climbs run "
                    "(its Pareto point shows the first-jump ready rate of those). "
                    if fitness.landing_race else "")
                 + "The Pareto figure shows every evaluated design's planned speed "
                 "against its simulated first-jump ready rate. " + notes[notes.index("pycma"):])
    if live:
        done = len(result.generation_summaries)
        notes = (f"Running: {done} of {result.config.generations} generations finished; "
                 f"this page is rewritten after each and reloads every {LIVE_REFRESH_S} s. "
                 + notes)
    return notes


def write_sweep_outputs(result: Any, figures: bool = True) -> dict[str, Any]:
    """summary.json, the trends figure and report.html of a sweep result."""
    from clamber.report.codesign import save_sweep_figures

    summary = result.summary()
    paths = save_sweep_figures(result.rows(), result.out_dir / "figures") if figures else {}
    summary["figures"] = {k: str(v) for k, v in paths.items()}
    report = write_report(result.out_dir, "Jump-climber Sobol sweep",
                          {k: v for k, v in summary.items() if k != "figures"},
                          result.config.to_dict(), paths,
                          notes="Each Sobol sample optimized at coarse resolution from one "
                                "seed trajectory; the full table is sweep.csv.")
    summary["report"] = str(report)
    (result.out_dir / "summary.json").write_text(strict_json(summary, indent=2))
    return summary
