"""Managed /etc files identical across the fleet (sha256sum per file). Per file,
the digest most hosts have is the reference; a host with another digest, or
without the file, is named with the file. No majority = every host fails.

Where the design states a file's digest (managed_etc_sha256: {path: sha256},
the digest of what the Ansible role renders), that digest is the reference
instead of the majority: a fleet that is uniformly wrong (the role changed and
never ran, or ran with an old template) fails everywhere rather than passing
a vote."""

from __future__ import annotations

from collections import Counter
from typing import Any

from ...inventory.hostsel import fold
from ..design import Comparator


def etc_consistent(records: dict[str, Any], variables: dict[str, dict]) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {h: [] for h in records}
    paths: list[str] = []
    for h in records:
        for p in variables[h].get("managed_etc_files", []):
            if p not in paths:
                paths.append(p)
    for path in paths:
        digests = {h: r["files"].get(path) for h, r in records.items()}
        designed = {
            h: str((variables[h].get("managed_etc_sha256") or {}).get(path) or "").lower() for h in records
        }
        if any(designed.values()):
            for h, d in digests.items():
                want = designed[h]
                if want and d != want:
                    found = f"sha256 {d[:12]}…" if d else "not read"
                    same = [x for x, y in digests.items() if y == d]
                    out[h].append(
                        f"{path}: {found}, designed {want[:12]}… (managed_etc_sha256); "
                        f"{len(same)}/{len(records)} hosts have this one"
                    )
            continue
        counts = Counter(d for d in digests.values() if d)
        if not counts:
            continue  # nobody could read it: each host's sha256sum error already says so
        ranked = counts.most_common(2)
        top, n_top = ranked[0]
        if len(ranked) > 1 and ranked[1][1] == n_top:
            groups = "; ".join(
                f"{d[:12]}… on {fold([h for h, x in digests.items() if x == d])}"
                for d, _ in counts.most_common()
            )
            for h in records:
                out[h].append(f"{path}: no majority version ({groups})")
            continue
        outliers = [h for h, d in digests.items() if d != top]
        for h in outliers:
            found = f"sha256 {digests[h][:12]}…" if digests[h] else "not read"
            out[h].append(
                f"{path}: {found}, fleet has {top[:12]}… on {n_top}/{len(records)} hosts; "
                f"outliers {fold(outliers)}"
            )
    return out


COMPARATORS = [
    Comparator(
        "etc-consistent",
        "fleet",
        etc_consistent,
        "every managed_etc_files file has the fleet's majority sha256",
    )
]
