#!/usr/bin/env bash
# The benchmark, one command:  bench/run.sh [--quick] [other bench_all.py options]
#   --quick   N=48 and 384, fewer repetitions (about three minutes here)
# Results: bench/results/latest.md (tables) and bench/results/latest.json (every run).
# Needs the baselines installed once: bench/setup.sh
set -euo pipefail
cd "$(dirname "$0")/.."
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
# one socket per node on the client and on the sim side, plus listeners
ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
missing=""
for tool in clush pdsh ansible; do command -v "$tool" >/dev/null || missing="$missing $tool"; done
if [ -n "$missing" ]; then
  echo "missing baseline tools:$missing -- run bench/setup.sh first" >&2
  exit 2
fi
exec python3 bench/bench_all.py "$@"
