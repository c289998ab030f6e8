"""The RFC 6962 tree against the RFC's own recursive definitions and the published test vectors."""

from __future__ import annotations

import hashlib

import pytest

from evidence_gateway.core import merkle
from evidence_gateway.core.merkle import ProofError, Tree, leaf_hash, node_hash

# The eight leaves and roots of the certificate-transparency test vectors (RFC 6962 trees).
LEAVES = [b"", b"\x00", b"\x10", b"\x20\x21", b"\x30\x31", b"\x40\x41\x42\x43",
          bytes(range(0x50, 0x58)), bytes(range(0x60, 0x70))]  # fmt: skip
ROOTS = [
    "6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d",
    "fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125",
    "aeb6bcfe274b70a14fb067a5e5578264db0fa9b51af5e0ba159158f329e06e77",
    "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7",
    "4e3bbb1f7b478dcfe71fb631631519a3bca12c9aefca1612bfce4c13a86264d4",
    "76e67dadbcdf1e10e1b74ddc608abd2f98dfb16fbce75277b5232a127f2087ef",
    "ddb89be403809e325750d3d263cd78929c2942b7942a34b77e122c9594a74c8c",
    "5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328",
]


def _mth(d: list[bytes]) -> bytes:
    """MTH straight from RFC 6962 §2.1, over leaf data."""
    if not d:
        return hashlib.sha256(b"").digest()
    if len(d) == 1:
        return leaf_hash(d[0])
    k = 1
    while k * 2 < len(d):
        k *= 2
    return node_hash(_mth(d[:k]), _mth(d[k:]))


def _path(m: int, d: list[bytes]) -> list[bytes]:
    if len(d) == 1:
        return []
    k = 1
    while k * 2 < len(d):
        k *= 2
    if m < k:
        return [*_path(m, d[:k]), _mth(d[k:])]
    return [*_path(m - k, d[k:]), _mth(d[:k])]


def _subproof(m: int, d: list[bytes], b: bool) -> list[bytes]:
    if m == len(d):
        return [] if b else [_mth(d)]
    k = 1
    while k * 2 < len(d):
        k *= 2
    if m <= k:
        return [*_subproof(m, d[:k], b), _mth(d[k:])]
    return [*_subproof(m - k, d[k:], False), _mth(d[:k])]


def test_published_roots() -> None:
    hashes = [leaf_hash(x) for x in LEAVES]
    tree = Tree(hashes)
    assert tree.root(0).hex() == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
    for size, root in enumerate(ROOTS, start=1):
        assert tree.root(size).hex() == root
        assert merkle.root_of(hashes[:size]).hex() == root


def _data(n: int) -> list[bytes]:
    return [f"leaf {i}".encode() for i in range(n)]


@pytest.mark.parametrize("n", [1, 2, 3, 5, 7, 8, 9, 16, 17, 33])
def test_proofs_match_the_rfc_and_verify(n: int) -> None:
    data = _data(n)
    tree = Tree([leaf_hash(x) for x in data])
    for size in range(1, n + 1):
        root = tree.root(size)
        assert root == _mth(data[:size])
        for m in range(size):
            proof = tree.inclusion(m, size)
            assert proof == _path(m, data[:size])
            merkle.verify_inclusion(m, size, leaf_hash(data[m]), proof, root)
        for old in range(1, size + 1):
            proof = tree.consistency(old, size)
            assert proof == ([] if old == size else _subproof(old, data[:size], True))
            merkle.verify_consistency(old, size, tree.root(old), root, proof)


def test_every_flipped_bit_of_a_proof_is_refused() -> None:
    data = _data(13)
    tree = Tree([leaf_hash(x) for x in data])
    root = tree.root()
    for m in (0, 6, 12):
        proof = tree.inclusion(m, 13)
        for i in range(len(proof)):
            for bit in (0, 77, 255):
                bad = list(proof)
                bad[i] = _flip(bad[i], bit)
                with pytest.raises(ProofError):
                    merkle.verify_inclusion(m, 13, leaf_hash(data[m]), bad, root)
        with pytest.raises(ProofError):
            merkle.verify_inclusion(m, 13, leaf_hash(b"other"), proof, root)
        with pytest.raises(ProofError):
            merkle.verify_inclusion(m, 13, leaf_hash(data[m]), proof[:-1], root)
        with pytest.raises(ProofError):
            merkle.verify_inclusion((m + 1) % 13, 13, leaf_hash(data[m]), proof, root)
    for old in (1, 4, 5, 12):
        proof = tree.consistency(old, 13)
        for i in range(len(proof)):
            bad = list(proof)
            bad[i] = _flip(bad[i], 3)
            with pytest.raises(ProofError):
                merkle.verify_consistency(old, 13, tree.root(old), root, bad)
        with pytest.raises(ProofError):
            merkle.verify_consistency(old, 13, _flip(tree.root(old), 0), root, proof)
        with pytest.raises(ProofError):
            merkle.verify_consistency(old, 13, tree.root(old), _flip(root, 0), proof)


def _flip(value: bytes, bit: int) -> bytes:
    out = bytearray(value)
    out[bit // 8] ^= 1 << (bit % 8)
    return bytes(out)


def test_a_frontier_extends_to_the_same_roots() -> None:
    data = _data(70)
    hashes = [leaf_hash(x) for x in data]
    tree = Tree(hashes)
    for old in range(0, 70, 3):
        edge = merkle.frontier(tree, old)
        assert merkle.root_of_frontier(edge) == tree.root(old)
        for new in (old, old + 1, min(70, old + 9), 70):
            grown = merkle.extend(edge, old, hashes[old:new])
            assert grown == merkle.frontier(tree, new)
            assert merkle.root_of_frontier(grown) == tree.root(new)
