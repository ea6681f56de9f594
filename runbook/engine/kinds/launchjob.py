"""A `launch:` job as its launcher runs it: findable, and ended, after the tool
stopped, timed out or was killed (docs/step-kinds.md, "Interrupted").

The step's command runs in a session of its own (util-linux `setsid -w`: a new
session and process group, whose id is the pid of the job's shell; `-w` waits
for it, so its output and exit status still come back over SSH). The job's
first act is to write that id to `pid` in a job directory named after the run,
the step and the job's hosts:

    /var/tmp/runbook-launch/<run>.<step>.<digest of the hosts>/{pid,hosts}

and the wrapper removes the directory when the job ends. A job cut short (the
tool killed, a stop, a timeout, a lost connection) leaves the directory behind;
`stop_command` then ends the whole process group: SIGTERM, SIGKILL after a
grace time. That is mpirun and whatever it started on the launcher (its ssh or
rsh agents, local ranks); the ranks on the other nodes end with it, as their
ORTE/PRRTE daemons abort when mpirun goes. The job's shell carries the job
directory in its command line, so `pgrep -af runbook-launch` on the launcher
shows it to a person too."""

from __future__ import annotations

import hashlib
import re
import shlex

JOB_ROOT = "/var/tmp/runbook-launch"
STOP_GRACE_SECONDS = 10  # SIGTERM, then SIGKILL for what is left
STOP_TIMEOUT = STOP_GRACE_SECONDS + 20
ENDED = "runbook: ended the job"  # what a stop command prints for each job it ended
NONE_LEFT = "runbook: no job running"


def _safe(part: str) -> str:
    return re.sub(r"[^A-Za-z0-9_-]+", "_", part) or "_"


def step_prefix(run_id: str, step_id: str, root: str = JOB_ROOT) -> str:
    """The job directories of one step of one run share this prefix."""
    return f"{root}/{_safe(run_id or 'run')}.{_safe(step_id)}."


def job_dir(run_id: str, step_id: str, hosts: list[str], root: str = JOB_ROOT) -> str:
    """One directory per job: the groups of a split run at once from one launcher."""
    digest = hashlib.sha256("\n".join(hosts).encode()).hexdigest()[:12]
    return step_prefix(run_id, step_id, root) + digest


def wrap(command: str, directory: str, hosts: list[str]) -> str:
    """The shell text the launcher runs: `command` in its own process group,
    its id recorded in `directory` until it ends."""
    d = shlex.quote(directory)
    job = f"echo $$ > {d}/pid\n{command.rstrip()}\n"
    return (
        f"d={d}\n"
        'if ! mkdir -p "$d"; then echo "runbook: cannot make the job directory $d" >&2; exit 125; fi\n'
        f'echo {shlex.quote(" ".join(hosts))} > "$d/hosts"\n'
        f"setsid -w sh -c {shlex.quote(job)}\n"
        "rc=$?\n"
        'rm -rf "$d"\n'
        "exit $rc\n"
    )


def _stop(pattern: str) -> str:
    """End the process group of every job directory `pattern` matches (a path,
    or a quoted prefix followed by a bare `*`), then remove the directories."""
    return f"""found=0
for d in {pattern}; do
  if [ -d "$d" ]; then
    p=$(cat "$d/pid" 2>/dev/null)
    h=$(cat "$d/hosts" 2>/dev/null)
    # a process group id, never 0 or 1 (`kill -0` would signal our own group, or init's)
    if [ -n "$p" ] && [ "$p" -gt 1 ] 2>/dev/null && kill -0 -"$p" 2>/dev/null; then
      kill -TERM -"$p" 2>/dev/null
      n=0
      while kill -0 -"$p" 2>/dev/null && [ $n -lt {STOP_GRACE_SECONDS} ]; do sleep 1; n=$((n+1)); done
      kill -KILL -"$p" 2>/dev/null
      echo "{ENDED} in $d (process group $p, hosts $h)"
      found=1
    fi
    rm -rf "$d"
  fi
done
if [ $found = 0 ]; then echo "{NONE_LEFT}"; fi
"""


def stop_command(directory: str) -> str:
    """Ends one job (a stop or a timeout of that job)."""
    return _stop(shlex.quote(directory))


def stop_step_command(run_id: str, step_id: str, root: str = JOB_ROOT) -> str:
    """Ends every job the run left behind for the step (before a resumed run's
    first job: its groups may not be those of the run that was killed)."""
    return _stop(shlex.quote(step_prefix(run_id, step_id, root)) + "*")


def ended(said: str) -> list[str]:
    """The lines of a stop command's output that say a job was ended."""
    return [line for line in said.splitlines() if line.startswith(ENDED)]
