"""report.html: one self-contained page (summary, candidates, figures as embedded PNG,
settings), every value under a title with its unit, files linked relative to the page."""

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
body { font-family: system-ui, sans-serif; max-width: 72em; margin: 2em auto; color: #222; }
table { border-collapse: collapse; margin: 1em 0; }
td, th { border: 1px solid #ccc; padding: 0.25em 0.6em; text-align: left; vertical-align: top; }
th { background: #f3f3f3; }
.yes { color: #17702a; font-weight: bold; } .no { color: #a11; font-weight: bold; }
img { max-width: 100%; border: 1px solid #eee; margin: 0.5em 0; }
pre { background: #f7f7f7; padding: 0.8em; overflow-x: auto; font-size: 85%; }
table.sortable th { cursor: pointer; white-space: nowrap; }
table.sortable th:after { content: " \\2195"; color: #999; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
.scroll { max-height: 32em; overflow-y: auto; }
"""
#: Click a column's title to sort the table by it (numbers as numbers; again: reversed).
_SORT_SCRIPT = """<script>
document.querySelectorAll("table.sortable").forEach(function (t) {
  t.querySelectorAll("th").forEach(function (th, col) {
    th.addEventListener("click", function () {
      var rows = Array.from(t.tBodies[0].rows), up = th.dataset.up !== "1";
      rows.sort(function (a, b) {
        var x = a.cells[col].dataset.v || a.cells[col].textContent,
            y = b.cells[col].dataset.v || b.cells[col].textContent,
            nx = parseFloat(x), ny = parseFloat(y);
        var c = (isNaN(nx) || isNaN(ny)) ? x.localeCompare(y) : nx - ny;
        return up ? c : -c;
      });
      th.dataset.up = up ? "1" : "0";
      rows.forEach(function (r) { t.tBodies[0].appendChild(r); });
    });
  });
});
</script>"""

#: Titles of summary keys; any other key is titled by :func:`title_of` from its name.
TITLES = {
    "best_speed_mps": "Best climbing speed [m/s]",
    "best_fitness": "Best fitness [m/s]",
    "best_speed_bl_per_s": "Best climbing speed [body lengths/s]",
    "best_design": "Best design",
    "best_solution": "Best design's trajectory",
    "best_morphology_file": "Best design's morphology",
    "stopped_by": "Stopped by",
    "core_minutes_per_evaluation": "Core time per evaluation [min]",
    "cpu_seconds_per_evaluation": "CPU time per evaluation [s]",
    "solve_cpu_seconds_per_evaluation": "Solver CPU time per evaluation [s]",
    "landing_cpu_seconds_per_evaluation": "Landing simulation CPU time per evaluation [s]",
    "convergence_rate": "Converged share",
    "run_dir": "Run folder",
    "out_dir": "Output folder",
    "table": "Table of every sample",
    "evaluator": "Where it ran",
    "wall_time_s": "Wall time of this session [s]",
    "total_wall_time_s": "Wall time of the command, figures included [s]",
    "started": "Started",
}
#: Units named by a key's suffix.
_UNITS = (("_mps", "m/s"), ("_bl_per_s", "body lengths/s"), ("_time_s", "s"), ("_s", "s"),
          ("_mm", "mm"), ("_m", "m"), ("_g", "g"), ("_kg", "kg"), ("_w", "W"),
          ("_deg", "deg"), ("_nm", "N m"), ("_n", "N"), ("_hz", "Hz"))


def title_of(key: str) -> str:
    """A summary key as a title with its unit: ``wall_time_s`` -> ``Wall time [s]``; a
    label already written for people (it has a space) is kept as it is."""
    if key in TITLES:
        return TITLES[key]
    if " " in key:
        return key
    for suffix, unit in _UNITS:
        if key.endswith(suffix) and len(key) > len(suffix):
            words = key[: -len(suffix)] + ("_time" if suffix == "_time_s" else "")
            return f"{_sentence(words)} [{unit}]"
    return _sentence(key)


def _sentence(words: str) -> str:
    """``snake_case`` as words with a capital first letter (the rest kept: L1, Q-WBC)."""
    text = words.replace("_", " ").strip()
    first = text.split(" ", 1)[0]
    if any(c.isdigit() for c in first) and len(first) <= 3:  # a symbol: m2, L1
        return text
    return text[:1].upper() + text[1:]


def _cell(value: Any) -> str:
    if value is None:
        return "&ndash;"
    if isinstance(value, bool):
        cls = "yes" if value else "no"
        return f'<span class="{cls}">{"yes" if value else "no"}</span>'
    if isinstance(value, float):
        return "n/a" if math.isnan(value) else f"{value:.4g}"
    if isinstance(value, Mapping):
        return "<br>".join(f"{html.escape(title_of(str(k)))}: {_cell(v)}"
                           for k, v in value.items())
    if isinstance(value, list | tuple):
        return html.escape(", ".join(f"{v:.4g}" if isinstance(v, float) else str(v)
                                     for v in value))
    return html.escape(str(value))


def _table(data: Mapping[str, Any]) -> str:
    rows = "".join(f"<tr><th>{html.escape(title_of(str(k)))}</th><td>{_cell(v)}</td></tr>"
                   for k, v in data.items())
    return f"<table>{rows}</table>"


@dataclass(frozen=True)
class Column:
    """A column of a sortable table: its title (with unit), the row key, the number format,
    and for file paths the folder the page's links are relative to."""

    title: str
    key: str
    fmt: str = ""
    link_from: Path | None = None


def sortable_table(rows: Sequence[Mapping[str, Any]], columns: Sequence[Column]) -> str:
    """An HTML table of ``rows`` that sorts by any column on a click (numbers numerically);
    a column with ``link_from`` shows each path as a link relative to that folder."""
    head = "".join(f"<th>{html.escape(c.title)}</th>" for c in columns)
    body = []
    for row in rows:
        cells = []
        for c in columns:
            v = row.get(c.key)
            if v is None or (isinstance(v, float) and not math.isfinite(v)):
                cells.append("<td>&ndash;</td>")
            elif c.link_from is not None and v:
                href = html.escape(_relative(v, c.link_from))
                cells.append(f"<td><a href='{href}'>{html.escape(Path(str(v)).name)}</a></td>")
            elif isinstance(v, int | float) and not isinstance(v, bool):
                cells.append(f"<td class='num' data-v='{v!r}'>{format(v, c.fmt)}</td>")
            else:
                cells.append(f"<td>{_cell(v)}</td>")
        body.append("<tr>" + "".join(cells) + "</tr>")
    return (f"<div class='scroll'><table class='sortable'><thead><tr>{head}</tr></thead>"
            f"<tbody>{''.join(body)}</tbody></table></div>")


def _relative(path: str | Path, start: Path) -> str:
    """``path`` relative to ``start`` with forward slashes (a link that works wherever the
    folder is moved)."""
    import os

    try:
        return Path(os.path.relpath(Path(path), start)).as_posix()
    except ValueError:  # another drive
        return Path(path).as_posix()


def links(paths: Mapping[str, str | Path | None], start: Path) -> str:
    """A list of links (``title -> path``) relative to the page's folder ``start``."""
    items = "".join(f"<li><a href='{html.escape(_relative(p, start))}'>{html.escape(t)}</a>"
                    f" ({html.escape(Path(str(p)).name)})</li>"
                    for t, p in paths.items() if p)
    return f"<ul>{items}</ul>" if items else ""


def write_report(out_dir: str | Path, title: str, summary: Mapping[str, Any],
                 settings: Mapping[str, Any], figures: Mapping[str, str | Path],
                 findings: Mapping[str, bool] | None = None, notes: str = "",
                 refresh_s: int | None = None, files: Mapping[str, Any] | None = None,
                 candidates: str = "") -> Path:
    """Write ``out_dir/report.html`` and return its path.

    Every figure is embedded as a base64 PNG, so the page reads anywhere, without clamber
    or the run directory. Summary keys are shown by :func:`title_of`. ``findings`` (name
    -> holds?) become a coloured checklist; ``files`` (title -> path) a list of links
    relative to the page; ``candidates`` a :func:`sortable_table`; the settings a folded
    JSON block. ``refresh_s`` makes a browser reload the page that often [s] (for a
    running job). The page is written to a temporary file and renamed, so a reader never
    sees half.
    """
    out = Path(out_dir) / REPORT_NAME
    refresh = f"<meta http-equiv='refresh' content='{int(refresh_s)}'>" if refresh_s else ""
    parts = [f"<!DOCTYPE html><html><head><meta charset='utf-8'>{refresh}"
             f"<title>{html.escape(title)}"
             f"</title><style>{_STYLE}</style></head><body><h1>{html.escape(title)}</h1>"]
    if notes:
        parts.append(f"<p>{html.escape(notes)}</p>")
    parts.append("<h2>Summary</h2>" + _table(summary))
    if files:
        parts.append("<h2>Files</h2>" + links(files, Path(out_dir)))
    if findings is not None:
        parts.append("<h2>The paper's findings on this design</h2>" + _table(findings))
    if candidates:
        parts.append("<h2>Every candidate (click a column to sort)</h2>" + candidates)
    for name, path in figures.items():
        data = base64.b64encode(Path(path).read_bytes()).decode("ascii")
        href = html.escape(_relative(path, Path(out_dir)))
        parts.append(f"<h2>{html.escape(name)}</h2>"
                     f"<img alt='{html.escape(name)}' src='data:image/png;base64,{data}'>"
                     f"<p>File: <a href='{href}'>{href}</a></p>")
    parts.append("<details><summary>Settings (JSON)</summary><pre>"
                 + html.escape(json.dumps(settings, indent=2, sort_keys=True, default=str))
                 + "</pre></details>" + _SORT_SCRIPT + "</body></html>")
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
        parts.extend(_figure(FIGURE_TITLES.get(name, name), fig)
                     for name, fig in sec.figures.items())
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
    files = {"best design's trajectory (solution.npz, with its .json)":
             summary.get("best_solution"),
             "best design's morphology (TOML)": summary.get("best_morphology_file"),
             "run summary (JSON)": run_dir / "summary.json", "pycma's log": run_dir / "cma"}
    report = write_report(run_dir, "Jump-climber co-design (CMA-ES)", _codesign_table(result,
                                                                                      summary),
                          result.config.to_dict(), {FIGURE_TITLES.get(n, title_of(n)): p
                                                    for n, p in paths.items()},
                          findings=labelled, notes=_codesign_notes(result, live),
                          refresh_s=LIVE_REFRESH_S if live else None, files=files,
                          candidates=_candidates(result.trials, run_dir))
    summary["report"] = str(report)
    (run_dir / "summary.json").write_text(strict_json(summary, indent=2))
    return summary


#: Titles of the co-design's and the sweep's figures (file stems).
FIGURE_TITLES = {"progress": "Best and median speed per generation",
                 "parameters": "Design parameters of each generation's mean",
                 "pareto": "Planned speed against simulated ready rate",
                 "trends": "Speed against each design characteristic",
                 "joints": "Joint angles and torques over one jump",
                 "forces": "Gripper forces over one jump and in their safe regions",
                 "filmstrip": "One jump, pose by pose",
                 "sim_tracking": "Simulated joint angles against the optimized ones",
                 "sim_forces": "Simulated gripper forces in their safe regions",
                 "height_climbed": "Height climbed before the first failed landing"}


def _codesign_table(result: Any, summary: Mapping[str, Any]) -> dict[str, Any]:
    """The summary as the page shows it: without what the run did not measure (landing
    figures of a run without landing trials) and with a worded stopping reason."""
    skip = {"best_morphology", "findings", "figures", "validation", "best_solution",
            "best_morphology_file", "run_dir", "report"}
    if result.config.fitness.landing_trials <= 0:
        skip |= {"best_ready_rate", "best_expected_speed_mps", "best_climb_success_rate",
                 "landing_cpu_seconds_per_evaluation"}
    table = {k: v for k, v in summary.items() if k not in skip}
    table["stopped_by"] = (summary.get("stopped_by")
                           or f"nothing: all {result.config.generations} generations ran")
    return table


def _candidates(trials: Sequence[Any], page_dir: Path) -> str:
    """Every evaluated design, sortable: generation, design, state, speed, fitness and a
    link to its trajectory."""
    rows = []
    for t in trials:
        row = {"generation": t.generation + 1, "index": t.index + 1, "state": t.state.value,
               "speed": t.speed_mps, "fitness": t.fitness, "solve": t.solve_time_s,
               "trajectory": (page_dir / t.trajectory) if t.trajectory else None}
        row.update({f"L{i}": L * 1e3 for i, L in enumerate(t.lengths, start=1)})
        row.update({f"m{i}": t.masses[i - 1] * 1e3 for i in (2, 3, 4)})
        rows.append(row)
    columns = [Column("generation", "generation", "d"), Column("#", "index", "d"),
               *[Column(f"L{i} [mm]", f"L{i}", ".1f") for i in range(1, 5)],
               *[Column(f"m{i} [g]", f"m{i}", ".1f") for i in (2, 3, 4)],
               Column("state", "state"), Column("speed [m/s]", "speed", ".4f"),
               Column("fitness [m/s]", "fitness", ".4f"),
               Column("solve time [s]", "solve", ".1f"),
               Column("trajectory", "trajectory", link_from=page_dir)]
    return sortable_table(rows, columns)


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
    rows = result.rows()
    paths = save_sweep_figures(rows, result.out_dir / "figures") if figures else {}
    summary["figures"] = {k: str(v) for k, v in paths.items()}
    skip = ("figures", "table", "out_dir", "best_sample")
    numeric = [k for k in (rows[0] if rows else {}) if k not in ("state", "status", "guess")]
    columns = [Column(title_of(k), k, "d" if k == "sample" else ".4g") for k in numeric]
    columns += [Column("state", "state"), Column("status", "status")]
    report = write_report(result.out_dir, "Jump-climber Sobol sweep",
                          {k: v for k, v in summary.items() if k not in skip},
                          result.config.to_dict(),
                          {FIGURE_TITLES.get(Path(p).stem, title_of(n)): p
                           for n, p in paths.items()},
                          notes="Each Sobol sample optimized at coarse resolution from one "
                                "seed trajectory.",
                          files={"every sample (CSV)": result.table_path,
                                 "run summary (JSON)": result.out_dir / "summary.json"},
                          candidates=sortable_table(rows, columns))
    summary["report"] = str(report)
    (result.out_dir / "summary.json").write_text(strict_json(summary, indent=2))
    return summary
