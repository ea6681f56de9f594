"""The inventories compared with ansible-core, and how ansible-inventory is run
for them (shared by regen_expected.py and the tests)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

HERE = Path(__file__).resolve().parent
DATA = HERE / "data"
EXPECTED = DATA / "expected"
REPO = HERE.parents[1]

# case name -> (inventory path, hosts also compared with `--host`)
CASES: dict[str, tuple[Path, list[str]]] = {
    "nested": (DATA / "nested.yaml", ["mgmt01", "node04", "spare02", "mon01"]),
    "ranges": (DATA / "ranges.yaml", ["login.example.com", "override.example.com", "gpu01", "fe80::1"]),
    "precedence": (DATA / "precedence.yaml", ["h1", "h2", "h3", "h4"]),
    "values": (DATA / "values.yaml", ["v1", "v2", "plain1"]),
    "invdir": (DATA / "invdir", ["n1", "n2", "n3", "n5", "s1", "lab1"]),
    "invdir-file": (DATA / "invdir" / "10-base.yaml", ["n1", "n2"]),
    "seed": (REPO / "inventory" / "seed-cluster.yaml", ["gpu01", "gpu48", "sm01", "sm02"]),
}


SOURCES_DIGESTS = EXPECTED / "sources.sha256.json"  # case -> Inventory.sha256 when last regenerated


def list_fixture(case: str) -> Path:
    return EXPECTED / f"{case}.list.json"


def host_fixture(case: str, host: str) -> Path:
    return EXPECTED / f"{case}.host.{host.replace(':', '_')}.json"


def ansible_env(home: str) -> dict[str, str]:
    """ansible's defaults, whatever the caller's ansible.cfg or ANSIBLE_* say;
    and a source no plugin can parse is an error, not an empty inventory."""
    config = os.path.join(home, "ansible.cfg")
    if not os.path.exists(config):
        with open(config, "w") as f:
            f.write("[defaults]\n")  # empty: every setting at its default
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANSIBLE_")}
    env.update(
        ANSIBLE_CONFIG=config,
        ANSIBLE_HOME=home,
        ANSIBLE_LOCAL_TEMP=os.path.join(home, "tmp"),
        ANSIBLE_INVENTORY_UNPARSED_FAILED="true",
        ANSIBLE_INVENTORY_ANY_UNPARSED_IS_FAILED="true",
        ANSIBLE_NOCOLOR="true",
    )
    return env


def ansible_inventory_cmd(path: Path, *args: str) -> list[str]:
    return ["ansible-inventory", "-i", str(path), *args]


def run_concurrently(commands: list[list[str]], home: str) -> list[str]:
    """Run several ansible commands at once (each takes ~1 s of CPU to start);
    every process is waited for or killed before returning."""
    procs = [
        subprocess.Popen(
            cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=ansible_env(home), cwd=home
        )
        for cmd in commands
    ]
    try:
        results = [proc.communicate(timeout=120) for proc in procs]
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
                proc.communicate()
    for cmd, proc, (_, err) in zip(commands, procs, results):
        if proc.returncode != 0:
            raise RuntimeError(f"{' '.join(cmd)} failed:\n{err}")
    return [out for out, _ in results]
