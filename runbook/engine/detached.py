"""Long-running commands that survive the engineer's connection (`detach: true`
in a step's action, docs/long-running-steps.md).

The command is not run in the SSH session itself: a small POSIX-sh wrapper
starts it on the node in a session of its own (`setsid -f`), with its output,
pid and exit status in a job directory named after the run, step and action
(/var/tmp/runbook-jobs/<run>.<step>.<action>), then waits for it, polling.
If the connection drops or runbook is killed, the job goes on.

Two modes, chosen by the engine from what the run recorded for the host:
- resume (the host's last verify was interrupted, still running, or could not be
  assessed): a finished job's result is read, a running job is re-attached to,
  and a job is started only when there is none;
- fresh (any other run of the action): a running job is attached to (never two at
  once), a finished one is set aside (`.done.<epoch>`) and a new job started.
A wrapper never moves a result it read: a wrapper left polling on the node by a
killed client must not take the result away from the resumed one.
`stop_command` ends a running job (its whole session).
"""

from __future__ import annotations

import re
import shlex

JOB_ROOT = "/var/tmp/runbook-jobs"
POLL_SECONDS = 2
START_WAIT_SECONDS = 30  # for the job to write its pid after `setsid -f`
EXIT_LOST = 125  # the job ended without writing its exit status (killed, node rebooted)


def job_dir(run_id: str, step_id: str, action: str) -> str:
    key = ".".join(re.sub(r"[^A-Za-z0-9_-]+", "_", part) or "_" for part in (run_id, step_id, action))
    return f"{JOB_ROOT}/{key}"


def wrap(command: str, run_id: str, step_id: str, action: str, resume: bool = False) -> str:
    """The shell text that starts `command` detached, or re-attaches to it, and prints its result."""
    d = shlex.quote(job_dir(run_id, step_id, action))
    finished = (
        '  echo "runbook: the detached job finished while nobody was attached; reading its result" >&2'
        if resume
        else '  mv $d $d.done.$(date +%s)\n  echo "runbook: an earlier job\'s result set aside; starting anew" >&2\n'
        "  start=1"
    )
    marker = "RUNBOOK_JOB_EOF"
    while marker in command:
        marker += "_"
    # The job's own script: records its pid first, its exit status last (atomically by mv).
    runner = (
        f"echo $$ > {d}/pid.tmp && mv {d}/pid.tmp {d}/pid\n"
        f"sh {d}/job.sh > {d}/out 2>&1\n"
        f"echo $? > {d}/rc.tmp && mv {d}/rc.tmp {d}/rc\n"
    )
    return f"""d={d}
start=0
if [ -f $d/pid ] && kill -0 $(cat $d/pid) 2>/dev/null; then
  echo "runbook: re-attached to the detached job (pid $(cat $d/pid))" >&2
elif [ -f $d/rc ]; then
{finished}
else
  start=1
fi
if [ $start = 1 ]; then
  mkdir -p $d
  cat > $d/job.sh <<'{marker}'
{command.rstrip()}
{marker}
  cat > $d/run.sh <<'{marker}'
{runner.rstrip()}
{marker}
  rm -f $d/pid $d/rc
  setsid -f sh $d/run.sh < /dev/null > /dev/null 2>&1
  n=0
  while [ ! -f $d/pid ] && [ ! -f $d/rc ] && [ $n -lt {START_WAIT_SECONDS} ]; do sleep 1; n=$((n+1)); done
  echo "runbook: started the job detached (pid $(cat $d/pid 2>/dev/null)), output in $d/out" >&2
fi
while [ ! -f $d/rc ]; do
  if [ -f $d/pid ] && kill -0 $(cat $d/pid) 2>/dev/null; then
    sleep {POLL_SECONDS}
  elif [ ! -f $d/rc ]; then
    echo "runbook: the detached job ended without a result (killed, or the node rebooted)" >&2
    cat $d/out 2>/dev/null
    exit {EXIT_LOST}
  fi
done
cat $d/out
exit $(cat $d/rc)
"""


def stop_command(run_id: str, step_id: str, action: str) -> str:
    """Ends the job's whole session (the job and its children), if it still runs."""
    d = shlex.quote(job_dir(run_id, step_id, action))
    return (
        f"if [ -f {d}/pid ] && kill -0 $(cat {d}/pid) 2>/dev/null; then "
        f"kill -TERM -- -$(cat {d}/pid); echo stopped; else echo 'not running'; fi"
    )
