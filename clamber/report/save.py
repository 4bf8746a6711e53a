"""Writing a finished figure to a file and freeing it (pyplot keeps every open figure)."""

from __future__ import annotations

from pathlib import Path

import matplotlib.pyplot as plt
from matplotlib.figure import Figure


def save_figure(fig: Figure, path: str | Path, dpi: int = 110) -> Path:
    """Write ``fig`` to ``path`` at ``dpi`` [dots per inch], close it, return the path.
    The canvas is cropped to what is drawn (``bbox_inches="tight"``), so a legend or label
    placed outside the axes is never cut off."""
    path = Path(path)
    fig.savefig(path, dpi=dpi, bbox_inches="tight", pad_inches=0.08)
    plt.close(fig)
    return path
