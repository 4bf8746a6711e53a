"""Named blocks of a flat decision (or constraint) vector, so no slice is ever a stride."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


@dataclass
class Block:
    name: str
    start: int
    shape: tuple[int, ...]

    @property
    def size(self) -> int:
        return int(np.prod(self.shape)) if self.shape else 1

    @property
    def slice(self) -> slice:
        return slice(self.start, self.start + self.size)


@dataclass
class Layout:
    """An ordered registry of named blocks; ``symbols`` is the flat SX vector."""

    blocks: dict[str, Block] = field(default_factory=dict)
    size: int = 0

    def add(self, name: str, *shape: int) -> Block:
        block = Block(name, self.size, tuple(shape))
        self.blocks[name] = block
        self.size += block.size
        return block

    def __contains__(self, name: str) -> bool:
        return name in self.blocks

    def get(self, flat, name: str):
        """The block ``name`` of ``flat`` (numpy or SX), reshaped row-major to its shape."""
        b = self.blocks[name]
        part = flat[b.slice]
        if isinstance(part, np.ndarray):
            return part.reshape(b.shape) if b.shape else part[0]
        return part

    def unpack(self, flat: np.ndarray) -> dict[str, np.ndarray]:
        flat = np.asarray(flat, dtype=float).ravel()
        return {name: self.get(flat, name) for name in self.blocks}

    def pack(self, values: dict[str, np.ndarray], default: float = 0.0) -> np.ndarray:
        out = np.full(self.size, default, dtype=float)
        for name, v in values.items():
            if name in self.blocks:  # a single value fills the whole block
                out[self.blocks[name].slice] = np.asarray(v, dtype=float).ravel()
        return out
