"""Writing a finished figure to a file and freeing it (pyplot keeps every open figure)."""

from __future__ import annotations

from pathlib import Path

import matplotlib.pyplot as plt
from matplotlib.figure import Figure


def save_figure(fig: Figure, path: str | Path, dpi: int = 110) -> Path:
    """Write ``fig`` to ``path`` at ``dpi`` [dots per inch], close it, return the path."""
    path = Path(path)
    fig.savefig(path, dpi=dpi)
    plt.close(fig)
    return path
