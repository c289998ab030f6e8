"""The Merkle tree of RFC 6962 §2.1 (RFC 9162 §2.1): tree hashes, inclusion and consistency
proofs, and their verification.

Written from the RFC rather than taken from a library: the few maintained Python ones either
pull in a CT client stack or hash differently, and the offline verifier (cli/commands_verify.py) must run
this exact code with nothing but the standard library. Leaves are given by their leaf hashes
(``leaf_hash``), so a log needs to keep only 32 bytes per entry to answer any proof.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence

EMPTY_ROOT = hashlib.sha256(b"").digest()


class ProofError(ValueError):
    """A proof that does not prove what it claims."""


def leaf_hash(leaf: bytes) -> bytes:
    return hashlib.sha256(b"\x00" + leaf).digest()


def node_hash(left: bytes, right: bytes) -> bytes:
    return hashlib.sha256(b"\x01" + left + right).digest()


def _split(n: int) -> int:
    """The largest power of two smaller than ``n`` (n > 1)."""
    return 1 << ((n - 1).bit_length() - 1)


class Tree:
    """A tree over ``leaves`` (leaf hashes, index order). Hashes of complete subtrees are kept,
    so a root and then proofs over the same leaves cost one pass.

    A tree may also be given only some leaves (by index) and the hashes of complete subtrees
    (``known``, by leaf range) with its ``size``: it then answers whatever those cover, which is
    how proofs are made from the log's subtree cache (resolvers/tlog_tree.py)."""

    def __init__(
        self,
        leaves: Sequence[bytes] | Mapping[int, bytes],
        size: int | None = None,
        known: Mapping[tuple[int, int], bytes] | None = None,
    ) -> None:
        self.leaves = leaves
        self._size = len(leaves) if size is None else size
        self._memo: dict[tuple[int, int], bytes] = dict(known or {})

    @property
    def size(self) -> int:
        return self._size

    def hash(self, lo: int, hi: int) -> bytes:
        """MTH of leaves[lo:hi]."""
        n = hi - lo
        if n == 0:
            return EMPTY_ROOT
        if n == 1:
            return self.leaves[lo]
        memo = self._memo.get((lo, hi))
        if memo is not None:
            return memo
        k = _split(n)
        value = node_hash(self.hash(lo, lo + k), self.hash(lo + k, hi))
        if n & (n - 1) == 0:  # complete subtrees recur in every larger tree; partial ones rarely
            self._memo[(lo, hi)] = value
        return value

    def root(self, size: int | None = None) -> bytes:
        return self.hash(0, self.size if size is None else size)

    def inclusion(self, index: int, size: int) -> list[bytes]:
        """PATH(index, D[size]): RFC 6962 §2.1.1."""
        if not 0 <= index < size <= self.size:
            raise ProofError(f"no leaf {index} in a tree of {size}")
        path: list[bytes] = []
        lo, hi = 0, size
        while hi - lo > 1:
            k = _split(hi - lo)
            if index < lo + k:
                path.append(self.hash(lo + k, hi))
                hi = lo + k
            else:
                path.append(self.hash(lo, lo + k))
                lo += k
        path.reverse()
        return path

    def consistency(self, old: int, new: int) -> list[bytes]:
        """PROOF(old, D[new]): RFC 6962 §2.1.2."""
        if not 0 <= old <= new <= self.size:
            raise ProofError(f"no consistency between sizes {old} and {new}")
        if old == 0 or old == new:
            return []
        return self._subproof(old, 0, new, True)

    def _subproof(self, m: int, lo: int, hi: int, complete: bool) -> list[bytes]:
        n = hi - lo
        if m == n:
            return [] if complete else [self.hash(lo, hi)]
        k = _split(n)
        if m <= k:
            return [*self._subproof(m, lo, lo + k, complete), self.hash(lo + k, hi)]
        return [*self._subproof(m - k, lo + k, hi, False), self.hash(lo, lo + k)]


def root_of(leaves: Sequence[bytes]) -> bytes:
    return Tree(leaves).root()


def verify_inclusion(index: int, size: int, leaf: bytes, proof: Sequence[bytes], root: bytes) -> None:
    """RFC 9162 §2.1.3.2, with ``leaf`` the leaf hash; raises ProofError unless it holds."""
    if not 0 <= index < size:
        raise ProofError(f"leaf index {index} outside a tree of {size}")
    fn, sn = index, size - 1
    r = leaf
    for p in proof:
        if sn == 0:
            raise ProofError("inclusion proof too long")
        if fn & 1 or fn == sn:
            r = node_hash(p, r)
            if not fn & 1:
                while fn & 1 == 0 and fn != 0:
                    fn >>= 1
                    sn >>= 1
        else:
            r = node_hash(r, p)
        fn >>= 1
        sn >>= 1
    if sn != 0:
        raise ProofError("inclusion proof too short")
    if r != root:
        raise ProofError("inclusion proof does not lead to the root")


def verify_consistency(old: int, new: int, old_root: bytes, new_root: bytes, proof: Sequence[bytes]) -> None:
    """RFC 9162 §2.1.4.2; raises ProofError unless the tree of ``new`` extends that of ``old``."""
    if not 0 <= old <= new:
        raise ProofError(f"sizes {old} and {new} are not in order")
    if old == new:
        if proof or old_root != new_root:
            raise ProofError("equal sizes need an empty proof and equal roots")
        return
    if old == 0:
        if proof:
            raise ProofError("a proof from the empty tree must be empty")
        return
    if not proof:
        raise ProofError("consistency proof is empty")
    path = list(proof)
    if old & (old - 1) == 0:  # a power of two: the old root is the proof's first node
        path.insert(0, old_root)
    fn, sn = old - 1, new - 1
    while fn & 1:
        fn >>= 1
        sn >>= 1
    fr = sr = path[0]
    for c in path[1:]:
        if sn == 0:
            raise ProofError("consistency proof too long")
        if fn & 1 or fn == sn:
            fr = node_hash(c, fr)
            sr = node_hash(c, sr)
            if not fn & 1:
                while fn & 1 == 0 and fn != 0:
                    fn >>= 1
                    sn >>= 1
        else:
            sr = node_hash(sr, c)
        fn >>= 1
        sn >>= 1
    if sn != 0:
        raise ProofError("consistency proof too short")
    if fr != old_root or sr != new_root:
        raise ProofError("consistency proof does not lead to both roots")


def frontier(tree: Tree, size: int) -> list[bytes]:
    """The hashes of the complete subtrees that make up the tree of ``size``, largest first (the
    "compact range" [0, size) of RFC 9162 implementations): enough to extend it without its leaves."""
    out: list[bytes] = []
    lo = 0
    for bit in reversed(range(size.bit_length())):
        width = 1 << bit
        if size & width:
            out.append(tree.hash(lo, lo + width))
            lo += width
    return out


def extend(
    hashes: list[bytes],
    size: int,
    leaves: Sequence[bytes],
    completed: list[tuple[int, int, bytes]] | None = None,
    min_level: int = 0,
) -> list[bytes]:
    """The frontier after appending ``leaves`` (leaf hashes) to a tree of ``size``. Each complete
    subtree of 2**level leaves (level >= ``min_level``) formed on the way is added to
    ``completed`` as (level, first leaf index, hash)."""
    stack = list(hashes)
    for leaf in leaves:
        value, level = leaf, 0
        while size >> level & 1:
            value = node_hash(stack.pop(), value)
            level += 1
            if completed is not None and level >= min_level:
                completed.append((level, size + 1 - (1 << level), value))
        stack.append(value)
        size += 1
    return stack


def root_of_frontier(hashes: list[bytes]) -> bytes:
    if not hashes:
        return EMPTY_ROOT
    value = hashes[-1]
    for left in reversed(hashes[:-1]):
        value = node_hash(left, value)
    return value
