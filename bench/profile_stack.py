#!/usr/bin/env python3
"""Where our stack spends its CPU in the fan-out of one step: cProfile (CPU
time) of a cold `runbook run --step STEP` process and of a warm step on open
connections, summed per part of the stack (runbook.transport, .engine,
.store, .criteria, .parsers, asyncssh, tinydb, yaml, ...), plus the top
functions, plus the slowest imports of a cold start (-X importtime).

  python bench/profile_stack.py [--nodes 384] [--step ofed-version] [-o bench/results/profile-384.md]
"""

from __future__ import annotations

import argparse
import io
import pstats
import re
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from lab import STEPS, Lab  # noqa: E402

AREAS = [
    ("/runbook/", None),
    ("/asyncssh/", "asyncssh"),
    ("/tinydb/", "tinydb"),
    ("/yaml/", "yaml"),
    ("/rich/", "rich"),
    ("/ClusterShell/", "ClusterShell"),
    ("/cryptography/", "cryptography"),
    ("/json/", "json"),
    ("/asyncio/", "asyncio"),
    ("/textual/", "textual"),
]


def area(filename: str, func: str) -> str:
    if filename == "~":
        m = re.search(r"(?:method|function) '?([\w.]+)'?(?: of '([\w.]+)')?", func)
        return f"C: {m.group(2) + '.' if m and m.group(2) else ''}{m.group(1) if m else func}"
    for marker, name in AREAS:
        if marker in filename:
            if name:
                return name
            rest = filename.split("/runbook/", 1)[1]
            parts = rest.split("/")
            return "runbook." + (parts[0] if len(parts) > 1 else parts[0].removesuffix(".py"))
    return "python stdlib / other"


def by_area(stats: pstats.Stats) -> list[tuple[str, float]]:
    sums: dict[str, float] = {}
    for (filename, _line, func), (_cc, _nc, tt, _ct, _callers) in stats.stats.items():
        a = area(filename, func)
        sums[a] = sums.get(a, 0.0) + tt
    return sorted(sums.items(), key=lambda kv: -kv[1])


def section(title: str, path: str, top: int = 20) -> str:
    st = pstats.Stats(path)
    total = sum(v[2] for v in st.stats.values())
    rows = by_area(st)
    out = [
        f"### {title}",
        "",
        f"Total CPU in the profile: {total:.3f} s (cProfile inflates Python-heavy code).",
        "",
        "| part of the stack | own CPU s | share |",
        "|---|---|---|",
    ]
    shown = 0.0
    for name, t in rows[:18]:
        out.append(f"| {name} | {t:.3f} | {100 * t / total:.1f}% |")
        shown += t
    out.append(f"| (the rest) | {total - shown:.3f} | {100 * (total - shown) / total:.1f}% |")
    s = io.StringIO()
    st.stream = s
    st.sort_stats("tottime").print_stats(top)
    s.write("\n")
    st.sort_stats("cumulative").print_stats(r"runbook/", top)
    text = re.sub(r"/[\w/.\-]*?/(site-packages|lib/python3\.\d+|work/main)/", "", s.getvalue())
    return "\n".join(out) + "\n\n```\n" + text.strip() + "\n```\n"


def importtime(top: int = 15) -> str:
    r = subprocess.run(
        [
            sys.executable,
            "-X",
            "importtime",
            "-c",
            "import runbook.cli.main, runbook.workspace.session, runbook.cli.cmd_run",
        ],
        capture_output=True,
        text=True,
        cwd=HERE.parent,
    )
    rows = []
    for line in r.stderr.splitlines():
        m = re.match(r"import time:\s+(\d+) \|\s+(\d+) \|(\s*)(\S+)", line)
        if m:
            rows.append((int(m.group(2)), len(m.group(3)), m.group(4)))
    total = max((c for c, _d, _n in rows), default=0)
    top_level = sorted((r for r in rows if r[1] <= 3), reverse=True)[:top]
    return (
        "### Cold start: imports of `runbook run` (cumulative, -X importtime)\n\n"
        + "| module | cumulative ms |\n|---|---|\n"
        + "\n".join(f"| {n} | {c / 1000:.1f} |" for c, _d, n in top_level)
        + f"\n\n(biggest single entry: {total / 1000:.0f} ms)\n"
    )


# `python -m cProfile` times wall clock (idle waits included); this profiles CPU time.
CPU_PROFILE = """
import cProfile, runpy, sys, time
out = sys.argv[1]
sys.argv = ["runbook"] + sys.argv[2:]
prof = cProfile.Profile(time.process_time)
prof.enable()
try:
    runpy.run_module("runbook", run_name="__main__")
except SystemExit:
    pass
finally:
    prof.disable()
    prof.dump_stats(out)
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--nodes", type=int, default=384)
    ap.add_argument("--step", default="ofed-version")
    ap.add_argument("-o", "--output")
    a = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="runbook-profile-"))
    parts = [f"## Profile of `{a.step}` on {a.nodes} simulated nodes", ""]
    with Lab.start(a.nodes, work) as lab:
        cold = work / "cold.prof"
        subprocess.run(
            [
                sys.executable,
                "-c",
                CPU_PROFILE,
                str(cold),
                "run",
                "--steps",
                str(STEPS),
                "--inventory",
                str(lab.inventory),
                "--state",
                str(work / "s1"),
                "--new-run",
                "--json",
                "--step",
                a.step,
            ],
            capture_output=True,
            cwd=HERE.parent,
        )
        warm = work / "warm.prof"
        subprocess.run(
            [
                sys.executable,
                str(HERE / "runbook_warm.py"),
                "--steps",
                str(STEPS),
                "--inventory",
                str(lab.inventory),
                "--state",
                str(work / "s2"),
                "--step",
                a.step,
                "--profile",
                str(warm),
            ],
            capture_output=True,
            cwd=HERE.parent,
        )
    if cold.exists():
        parts.append(section("Cold: the whole `runbook run` process (CPU-time cProfile)", str(cold)))
    if warm.exists():
        parts.append(section("Warm: the timed step on open connections (CPU-time cProfile)", str(warm)))
    parts.append(importtime())
    text = "\n".join(parts)
    if a.output:
        Path(a.output).write_text(text)
    print(text)


if __name__ == "__main__":
    main()
