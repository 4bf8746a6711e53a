"""The co-design's report page: titled values with units, a sortable row per candidate,
links that resolve relative to the page, and nothing the run did not measure."""

import html
import re
from pathlib import Path

import cheap

from clamber.experiments.codesign import CodesignSettings, run_codesign
from clamber.experiments.fitness import FitnessSettings
from clamber.report.html import title_of, write_codesign_outputs

CONFIG = CodesignSettings(generations=2, popsize=3, seed=1,
                          fitness=FitnessSettings(failure_speed=-0.05))


def test_report_lists_every_candidate_with_working_links(tmp_path):
    """One table row per evaluated candidate; every link on the page points at a file or
    folder that exists (resolved from the page's folder); summary rows carry titles, not
    field names; a run without landing trials shows no landing figures."""
    result = run_codesign(CONFIG, tmp_path / "cd", fitness_fn=cheap.warm_fitness)
    out = write_codesign_outputs(result, figures=False)
    page = Path(out["report"]).read_text()
    table = page[page.index("class='sortable'"):]
    table = table[:table.index("</table>")]
    assert table.count("<tr>") == 1 + CONFIG.generations * CONFIG.popsize
    links = re.findall(r"href='([^']+)'", page)
    assert links
    for href in links:
        assert (Path(out["report"]).parent / html.unescape(href)).exists(), href
    assert ">best_speed_mps<" not in page and f">{title_of('best_speed_mps')}<" in page
    assert "Landing simulation CPU time" not in page
    assert "None" not in re.sub(r"<script>.*?</script>", "", page, flags=re.S)


def test_titles_carry_units_and_keep_written_labels():
    """Keys become titles with their unit from the suffix; labels written for people (with
    spaces) and symbols (m2, L1) are kept as they are."""
    assert title_of("wall_time_s") == "Wall time of this session [s]"
    assert title_of("peak_power_w") == "Peak power [W]"
    assert title_of("median_speed_mps") == "Median speed [m/s]"
    assert title_of("m2_g") == "m2 [g]"
    assert title_of("ready landings (3 jumps)") == "ready landings (3 jumps)"
