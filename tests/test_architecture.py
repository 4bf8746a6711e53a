"""The package layout is an enforced contract, not a convention."""

import ast
import subprocess
import sys
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "clamber"


def test_import_contracts_hold():
    """lint-imports keeps every contract in pyproject.toml: the layers (cli > report >
    experiments > parallel/storage > robots > attachment) and no import cycles."""
    p = subprocess.run([str(Path(sys.executable).parent / "lint-imports"), "--no-cache"],
                       capture_output=True, text=True, cwd=PACKAGE.parent, timeout=120)
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-2000:]
    assert "0 broken" in p.stdout


def test_argparse_lives_only_in_cli():
    """Only clamber.cli builds command-line parsers."""
    offenders = []
    for path in PACKAGE.rglob("*.py"):
        if "cli" in path.relative_to(PACKAGE).parts:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                     else [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            if any(n.split(".")[0] == "argparse" for n in names):
                offenders.append(str(path.relative_to(PACKAGE)))
    assert offenders == []


def test_no_module_switches_the_plotting_backend():
    """No library module calls matplotlib.use (the command line picks a headless backend
    through MPLBACKEND only when the user has not)."""
    hits = [str(p.relative_to(PACKAGE)) for p in PACKAGE.rglob("*.py")
            if "matplotlib.use(" in p.read_text(encoding="utf-8")]
    assert hits == []


def test_only_report_draws():
    """Figures are drawn only in clamber.report: no other module imports matplotlib."""
    hits = []
    for path in PACKAGE.rglob("*.py"):
        if path.relative_to(PACKAGE).parts[0] == "report":
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                     else [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            if any(n.split(".")[0] == "matplotlib" for n in names):
                hits.append(str(path.relative_to(PACKAGE)))
    assert hits == []
