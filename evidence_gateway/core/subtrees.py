"""What a proof needs from the log's subtree cache (docs/verification.md, "Proofs at scale").

Every node an RFC 6962 proof names is the hash of a run of leaves [lo, hi) that splits into
complete, aligned subtrees (2**level leaves from a multiple of 2**level). Those of at least
``CHUNK_LEVEL`` are kept in the cache once complete (a leaf never changes, so neither do they);
smaller ones are hashed from the leaves of their chunk (the 2**CHUNK_LEVEL leaves around them).
So a proof reads O(log n) cached hashes and the leaves of at most the proven leaf's chunk and the
tree's last, partial one, never the whole log. Pure arithmetic: no database here.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from evidence_gateway.core.merkle import Tree

# 256 leaves a chunk: at most 2 * 256 leaf hashes read for a proof, and a cache of n / 128 rows.
CHUNK_LEVEL = 8


@dataclass
class Needs:
    """Cached subtrees, as (level, first leaf index), and chunk numbers whose leaves are read."""

    subtrees: set[tuple[int, int]] = field(default_factory=set)
    chunks: set[int] = field(default_factory=set)


class _Planner(Tree):
    """Runs the proof algorithms, recording the leaf ranges they would hash."""

    def __init__(self, size: int) -> None:
        super().__init__([], size)
        self.ranges: list[tuple[int, int]] = []

    def hash(self, lo: int, hi: int) -> bytes:
        self.ranges.append((lo, hi))
        return b""


def needs(
    size: int,
    inclusions: Iterable[int] = (),
    consistencies: Iterable[tuple[int, int]] = (),
    chunk_level: int | None = None,
) -> Needs:
    """What inclusion proofs of ``inclusions`` and consistency proofs (old, new) in the tree of
    ``size`` read. The root of ``size`` too (a proof's caller compares it)."""
    level = CHUNK_LEVEL if chunk_level is None else chunk_level
    if level < 1:
        raise ValueError("a chunk holds at least two leaves")
    inclusions = list(inclusions)
    planner = _Planner(size)
    planner.ranges.append((0, size))
    for index in inclusions:
        planner.inclusion(index, size)
    for old, new in consistencies:
        planner.consistency(old, new)
    out = Needs()
    for lo, hi in planner.ranges:
        for first, width_level in aligned_pieces(lo, hi):
            if width_level >= level:
                out.subtrees.add((width_level, first))
            else:
                out.chunks.add(first >> level)
    out.chunks.update(index >> level for index in inclusions)
    return out


def aligned_pieces(lo: int, hi: int) -> list[tuple[int, int]]:
    """The complete subtrees (first leaf, level) whose hashes make MTH(leaves[lo:hi]) as RFC 6962
    splits it: the left part of each split is complete, the last piece may be a single leaf."""
    out: list[tuple[int, int]] = []
    while hi - lo > 0:
        n = hi - lo
        if n & (n - 1) == 0:
            out.append((lo, n.bit_length() - 1))
            break
        k = 1 << ((n - 1).bit_length() - 1)
        out.append((lo, k.bit_length() - 1))
        lo += k
    return out


def covering(missing: Iterable[tuple[int, int]]) -> list[tuple[int, int]]:
    """The largest of ``missing`` subtrees (level, first), dropping those inside another."""
    kept: list[tuple[int, int]] = []
    for level, first in sorted(missing, reverse=True):
        if not any(lv >= level and f <= first < f + (1 << lv) for lv, f in kept):
            kept.append((level, first))
    return kept


def subtrees_of(leaves: list[bytes], first: int, min_level: int) -> list[tuple[int, int, bytes]]:
    """Every complete aligned subtree of at least ``min_level`` inside ``leaves`` (which start at
    leaf ``first``, an aligned run of 2**level leaves) as (level, first leaf, hash)."""
    tree = Tree(leaves)
    out: list[tuple[int, int, bytes]] = []
    top = len(leaves).bit_length() - 1
    for level in range(min_level, top + 1):
        width = 1 << level
        for lo in range(0, len(leaves) - width + 1, width):
            out.append((level, first + lo, tree.hash(lo, lo + width)))
    return out


def primed_tree(size: int, leaves: Mapping[int, bytes], subtrees: Mapping[tuple[int, int], bytes]) -> Tree:
    """A tree of ``size`` knowing only ``leaves`` (by index) and cached ``subtrees`` (by (level, first))."""
    known = {(first, first + (1 << level)): value for (level, first), value in subtrees.items()}
    return Tree(leaves, size, known)
