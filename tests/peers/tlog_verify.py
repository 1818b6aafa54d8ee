#!/usr/bin/env python3
"""An independent verifier of the relay's transparency log (docs/log.md), standard library only.

Written from RFC 9162 section 2.1 alone, sharing no code with the Rust side: it fetches the
signed tree head and every entry, recomputes each leaf hash and the root (MTH, section 2.1.1),
checks every entry's inclusion proof (section 2.1.3.2) and, with --first, the consistency proof
from that size to the current one (section 2.1.4.2). Signatures are the Rust client's part.

usage: tlog_verify.py BASE_URL [--first N]...
prints one JSON object: {"ok": bool, "size": n, "root": hex, "checked": n, "errors": [...]}
"""

import hashlib
import json
import sys
import urllib.request


def sha256(data):
    return hashlib.sha256(data).digest()


def leaf_hash(entry):
    return sha256(b"\x00" + entry)


def node_hash(left, right):
    return sha256(b"\x01" + left + right)


def mth(leaves):
    """MTH(D[n]), section 2.1.1."""
    n = len(leaves)
    if n == 0:
        return sha256(b"")
    if n == 1:
        return leaves[0]
    k = 1
    while k * 2 < n:
        k *= 2
    return node_hash(mth(leaves[:k]), mth(leaves[k:]))


def verify_inclusion(index, size, leaf, path, root):
    """Section 2.1.3.2."""
    if index >= size:
        return False
    fn, sn, r = index, size - 1, leaf
    for p in path:
        if sn == 0:
            return False
        if fn & 1 or fn == sn:
            r = node_hash(p, r)
            while not fn & 1 and fn != 0:
                fn >>= 1
                sn >>= 1
        else:
            r = node_hash(r, p)
        fn >>= 1
        sn >>= 1
    return sn == 0 and r == root


def verify_consistency(first, second, first_root, second_root, proof):
    """Section 2.1.4.2, with the trivial cases (first == 0, first == second)."""
    if first > second:
        return False
    if first == second:
        return not proof and first_root == second_root
    if first == 0:
        return not proof
    if not proof:
        return False
    path = list(proof)
    if first & (first - 1) == 0:
        path.insert(0, first_root)
    fn, sn = first - 1, second - 1
    while fn & 1:
        fn >>= 1
        sn >>= 1
    fr = sr = path[0]
    for c in path[1:]:
        if sn == 0:
            return False
        if fn & 1 or fn == sn:
            fr = node_hash(c, fr)
            sr = node_hash(c, sr)
            while not fn & 1 and fn != 0:
                fn >>= 1
                sn >>= 1
        else:
            sr = node_hash(sr, c)
        fn >>= 1
        sn >>= 1
    return sn == 0 and fr == first_root and sr == second_root


def get(base, path):
    with urllib.request.urlopen(base + path, timeout=30) as r:
        return json.load(r)


def main(argv):
    base = argv[1].rstrip("/")
    firsts = [int(argv[i + 1]) for i, a in enumerate(argv) if a == "--first"]
    errors = []
    sth = get(base, "/log/v1/sth")
    size, root = sth["treeSize"], bytes.fromhex(sth["rootHash"])
    leaves = []
    while len(leaves) < size:
        start = len(leaves)
        batch = get(base, f"/log/v1/entries?start={start}&end={min(size, start + 1000)}")["entries"]
        if not batch:
            errors.append(f"no entries from {start}")
            break
        for e in batch:
            entry = bytes.fromhex(e["entry"])
            if e["index"] != len(leaves):
                errors.append(f"entry {e['index']} out of order")
            if leaf_hash(entry).hex() != e["leafHash"]:
                errors.append(f"entry {e['index']}: leafHash is not SHA-256(0x00 || entry)")
            leaves.append(leaf_hash(entry))
    if mth(leaves).hex() != root.hex():
        errors.append("the root of the entries is not the signed head's root")
    checked = 0
    for i, leaf in enumerate(leaves):
        p = get(base, f"/log/v1/proof/inclusion?leafHash={leaf.hex()}&treeSize={size}")
        path = [bytes.fromhex(h) for h in p["auditPath"]]
        if p["leafIndex"] != i or not verify_inclusion(i, size, leaf, path, bytes.fromhex(p["sth"]["rootHash"])):
            errors.append(f"inclusion proof of leaf {i} does not verify")
        elif p["sth"]["rootHash"] != root.hex():
            errors.append(f"inclusion proof of leaf {i} names another root")
        else:
            checked += 1
    for first in firsts:
        c = get(base, f"/log/v1/proof/consistency?first={first}&second={size}")
        proof = [bytes.fromhex(h) for h in c["proof"]]
        if not verify_consistency(first, size, mth(leaves[:first]), root, proof):
            errors.append(f"consistency proof {first} -> {size} does not verify")
    print(json.dumps({"ok": not errors, "size": size, "root": root.hex(), "checked": checked, "errors": errors}))
    return 0 if not errors else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
