"""The fixed bounding contact schedule and the grid resolutions it is solved on."""

from __future__ import annotations

from dataclasses import dataclass

from clamber.exceptions import ConfigError

GRIPPERS = ("front", "rear")


@dataclass(frozen=True)
class Phase:
    """One phase of the jump: which grippers are pinned to the wall."""

    index: int
    name: str
    contacts: tuple[str, ...]


#: Phase 1 both attached, 2 rear only, 3 flight, 4 front only, 5 both.
PHASES = (
    Phase(1, "push (both attached)", ("front", "rear")),
    Phase(2, "push (rear attached)", ("rear",)),
    Phase(3, "flight", ()),
    Phase(4, "catch (front attached)", ("front",)),
    Phase(5, "settle (both attached)", ("front", "rear")),
)

#: The paper's node counts.
RESOLUTIONS = {
    "coarse": (18, 9, 15, 9, 12),
    "fine": (27, 14, 23, 14, 18),
}


def check_nodes(nodes: tuple[int, ...]) -> tuple[int, int, int, int, int]:
    """Validate a per-phase node count tuple."""
    try:
        n = tuple(int(v) for v in nodes)
    except (TypeError, ValueError):
        raise ConfigError(f"nodes = {nodes!r}: must be 5 positive integers") from None
    if len(n) != 5 or any(v < 2 for v in n):
        raise ConfigError(f"nodes = {nodes!r}: must be 5 integers, each at least 2 (one per phase)")
    return n  # type: ignore[return-value]


def resolve_nodes(resolution: str | tuple[int, ...]) -> tuple[int, int, int, int, int]:
    """A named resolution ('coarse', 'fine') or an explicit node tuple."""
    if isinstance(resolution, str):
        if resolution not in RESOLUTIONS:
            raise ConfigError(f"resolution {resolution!r} unknown; allowed: {sorted(RESOLUTIONS)}")
        return RESOLUTIONS[resolution]
    return check_nodes(resolution)
