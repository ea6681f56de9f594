#!/usr/bin/env bash
# Installs what the baselines of the benchmark need (Debian/Ubuntu, as root):
#   apt: pdsh, openssh-client, valgrind (bench/cold_instructions.py);  pip: parallel-ssh, ClusterShell (clush), ansible-core, psutil
# runbook itself and its dependencies come from the project (pip install -e .).
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
if ! command -v pdsh >/dev/null || ! command -v ssh >/dev/null || ! command -v valgrind >/dev/null; then
  apt-get update -q
  apt-get install -y -q pdsh openssh-client valgrind
fi
python3 -m pip install -q parallel-ssh ClusterShell ansible-core psutil
python3 - <<'PY'
from importlib.metadata import version
for p in ("asyncssh", "parallel-ssh", "ClusterShell", "ansible-core", "psutil", "cryptography"):
    print(f"{p} {version(p)}")
PY
ssh -V
pdsh -V | head -1
