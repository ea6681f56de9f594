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
How it starts (chosen on the node, at start): where systemd runs (`command -v
systemd-run` and /run/systemd/system exists) a transient unit
`runbook-<run>-<step>` (`-<action>` added for apply/rollback): a system unit when
the wrapper runs as root (ssh as root, or through become), a `--user` unit only
when the login user lingers (else the user manager, and the job, ends with the
session); otherwise `setsid -f` (util-linux). The job directory's `how` says which,
so re-attach and stop look for the unit (`systemctl show -p ActiveState`) or the pid.
`stop_command` ends a running job (its unit, or its whole session).
"""

from __future__ import annotations

import asyncio
import re
import shlex

JOB_ROOT = "/var/tmp/runbook-jobs"
POLL_SECONDS = 2
# The first polls come sooner: a short job (a quick diagnostic level, a small
# site) should not wait a whole POLL_SECONDS for nothing; a long one soon polls
# every POLL_SECONDS. The very first look is after 0.02 s: a job that ends at
# once is read then, not after 0.1 s. Each poll is a few forks on the node, so
# the schedule stays short (on the simulator every node's polls share the lab's
# CPU: finer steps after the first cost more than they gave, bench/README.md).
# `sleep` takes fractions in GNU coreutils and busybox; where it does not, the
# poll falls back to a whole second.
# The job writes its pid within milliseconds of its start: the wait for it looks
# every QUICK_NAP for the first QUICK_NAPS times, then every 0.1 s (a first wait
# of a whole 0.1 s was most of a short job's time on an idle simulated node).
QUICK_NAP, QUICK_NAPS = "0.02", 10
FIRST_POLLS = (QUICK_NAP, "0.1", "0.2", "0.5", "1")
START_WAIT_SECONDS = 30  # for the job to write its pid after `setsid -f`
START_WAIT_NAPS = QUICK_NAPS + round((START_WAIT_SECONDS - QUICK_NAPS * float(QUICK_NAP)) * 10)
STOP_GRACE_SECONDS = 10  # SIGTERM, then SIGKILL for what is left
EXIT_LOST = 125  # the job ended without writing its exit status (killed, node rebooted)


def job_dir(run_id: str, step_id: str, action: str) -> str:
    key = ".".join(re.sub(r"[^A-Za-z0-9_-]+", "_", part) or "_" for part in (run_id, step_id, action))
    return f"{JOB_ROOT}/{key}"


def _safe(part: str) -> str:
    return re.sub(r"[^A-Za-z0-9_-]+", "_", part) or "_"


def unit_name(run_id: str, step_id: str, action: str) -> str:
    """systemd's unit name for the job: only [A-Za-z0-9_-], at most 200 characters."""
    parts = [run_id, step_id] + ([] if action == "verify" else [action])
    return ("runbook-" + "-".join(_safe(p) for p in parts))[:200]


# Shell fragments shared by wrap() and stop_command(); $d is the job directory,
# $unit the unit name. `how` holds: systemd | systemd-user | setsid.
_ALIVE = (
    '{ [ -f $d/pid ] && kill -0 "$(cat $d/pid)" 2>/dev/null; } || '
    '{ [ "$(cat $d/how 2>/dev/null)" = systemd ] && systemctl is-active --quiet $unit 2>/dev/null; } || '
    '{ [ "$(cat $d/how 2>/dev/null)" = systemd-user ] && systemctl --user is-active --quiet $unit 2>/dev/null; }'
)


def _nap(seconds: str) -> str:
    return f"{{ sleep {seconds} 2>/dev/null || sleep 1; }}"


def _next_delay() -> str:
    """Shell: step $delay through FIRST_POLLS, then stay at POLL_SECONDS."""
    branches = " el".join(
        f'if [ "$delay" = {a} ]; then delay={b};' for a, b in zip(FIRST_POLLS, FIRST_POLLS[1:])
    )
    return f"{branches} else delay={POLL_SECONDS}; fi"


def _head(run_id: str, step_id: str, action: str) -> str:
    return (
        f"d={shlex.quote(job_dir(run_id, step_id, action))}\n"
        f"unit={shlex.quote(unit_name(run_id, step_id, action))}\n"
    )


def wrap(command: str, run_id: str, step_id: str, action: str, resume: bool = False) -> str:
    """The shell text that starts `command` detached, or re-attaches to it, and prints its result.

    While it waits it prints the job's latest progress line (the last non-empty
    line or carriage-return segment of its output) to stderr when it changes; the
    job's whole output goes to stdout at the end, so the step is judged on it."""
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
    # A systemd unit starts in / with systemd's environment: back to the caller's home.
    d = shlex.quote(job_dir(run_id, step_id, action))
    runner = (
        f"echo $$ > {d}/pid.tmp && mv {d}/pid.tmp {d}/pid\n"
        'cd "${HOME:-/}" 2>/dev/null || cd /\n'
        f"sh {d}/job.sh > {d}/out 2>&1\n"
        f"echo $? > {d}/rc.tmp && mv {d}/rc.tmp {d}/rc\n"
    )
    systemd = "command -v systemd-run >/dev/null 2>&1 && [ -d /run/systemd/system ]"
    props = (
        f"--collect --property=TimeoutStopSec={STOP_GRACE_SECONDS} "
        '"--setenv=HOME=$HOME" "--setenv=PATH=$PATH"'
    )
    return f"""{_head(run_id, step_id, action)}start=0
if {_ALIVE}; then
  echo "runbook: re-attached to the detached job (pid $(cat $d/pid 2>/dev/null), $(cat $d/how 2>/dev/null) $unit)" >&2
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
  rm -f $d/pid $d/rc $d/how $d/stopped
  if {systemd} && [ "$(id -u)" = 0 ] && systemd-run --unit=$unit {props} sh $d/run.sh >&2; then
    echo systemd > $d/how
  elif {systemd} && [ -f /var/lib/systemd/linger/"$(id -un)" ] && systemd-run --user --unit=$unit {props} sh $d/run.sh >&2; then
    echo systemd-user > $d/how
  else
    echo setsid > $d/how
    setsid -f sh $d/run.sh < /dev/null > /dev/null 2>&1
  fi
  n=0
  while [ ! -f $d/pid ] && [ ! -f $d/rc ] && [ $n -lt {START_WAIT_NAPS} ]; do
    if [ $n -lt {QUICK_NAPS} ]; then {_nap(QUICK_NAP)}; else {_nap("0.1")}; fi; n=$((n+1))
  done
  echo "runbook: started the job detached ($(cat $d/how) $unit, pid $(cat $d/pid 2>/dev/null)), output in $d/out" >&2
fi
seen=
delay={FIRST_POLLS[0]}
while [ ! -f $d/rc ]; do
  if {_ALIVE}; then
    p=$(tail -c 400 $d/out 2>/dev/null | tr '\\r' '\\n' | grep '[0-9A-Za-z]' | tail -n 1)
    if [ -n "$p" ] && [ "$p" != "$seen" ]; then echo "runbook: progress: $p" >&2; seen=$p; fi
    {_nap("$delay")}
    {_next_delay()}
  elif [ ! -f $d/rc ]; then
    if [ -f $d/stopped ]; then
      echo "runbook: the detached job was stopped by the operator" >&2
    else
      echo "runbook: the detached job ended without a result (killed, or the node rebooted)" >&2
    fi
    if [ "$(cat $d/how 2>/dev/null)" = systemd ]; then systemctl show -p ActiveState,Result,ExecMainStatus $unit >&2 2>/dev/null; fi
    cat $d/out 2>/dev/null
    exit {EXIT_LOST}
  fi
done
cat $d/out
echo "runbook: the detached job ended with exit status $(cat $d/rc)" >&2
exit $(cat $d/rc)
"""


def stop_command(run_id: str, step_id: str, action: str) -> str:
    """Ends the job if it still runs: its unit (`systemctl stop`, which kills the
    unit's whole cgroup), or its whole session (SIGTERM, then SIGKILL after a grace
    time). Prints `stopped` or `not running`; leaves a `stopped` mark for the record."""
    return f"""{_head(run_id, step_id, action)}if {_ALIVE}; then
  date +%s > $d/stopped
  how=$(cat $d/how 2>/dev/null)
  if [ "$how" = systemd ]; then
    systemctl stop $unit
  elif [ "$how" = systemd-user ]; then
    systemctl --user stop $unit
  else
    kill -TERM -- -$(cat $d/pid)
    n=0
    while kill -0 "$(cat $d/pid)" 2>/dev/null && [ $n -lt {STOP_GRACE_SECONDS} ]; do sleep 1; n=$((n+1)); done
    kill -KILL -- -$(cat $d/pid) 2>/dev/null
  fi
  echo "stopped ($how $unit, pid $(cat $d/pid 2>/dev/null))"
else
  echo "not running"
fi
"""


def probe_command(run_id: str, step_id: str, action: str) -> str:
    """Prints `running` when the job runs (read-only)."""
    return f"{_head(run_id, step_id, action)}if {_ALIVE}; then echo running; else echo 'not running'; fi\n"


# --- the engine's hooks (runner.py): a stop or a rollback ends the job on the node ---

STOP_TIMEOUT = STOP_GRACE_SECONDS + 20


def _detached_actions(step) -> list[str]:
    return [name for name in ("verify", "apply") if getattr(step, name, None) and getattr(step, name).detach]


async def _on_host(engine, host: str, text: str) -> tuple[bool, str]:
    """Run a job-control command (through become, as the job was started); (ran, first line)."""
    from . import become

    try:
        res = await engine.transport.run(host, become.wrap(text, engine._vars[host]), timeout=STOP_TIMEOUT)
    except Exception as exc:  # a host that cannot be reached keeps its job; said in the record
        return False, f"could not reach the node: {exc}"
    if res.unknown_reason:
        return False, f"could not reach the node: {res.unknown_reason}"
    line = (res.stdout.strip().splitlines() or [""])[0]
    return res.exit_status == 0, line or (res.stderr.strip().splitlines() or ["no answer"])[-1]


async def end_in_flight(engine, why: str) -> None:
    """The operator stopped the run (`x` in the TUI, Ctrl-C in the CLI): end the
    detached jobs of the hosts still running and say so in their record (the
    host is then `interrupted`, never `pass`). Skipped when the client asked to
    leave them running (a quit, or the process being terminated)."""
    from ..run.events import HostFinished

    if engine.leave_detached_running:
        return
    work = []
    for (step_id, host), started in list(engine._in_flight.items()):
        try:
            step = engine.runbook.step(step_id)
        except KeyError:
            continue
        if started.action in _detached_actions(step):
            work.append((step_id, host, started))

    async def one(step_id: str, host: str, started) -> None:
        ok, said = await _on_host(engine, host, stop_command(engine.run_id, step_id, started.action))
        ended = "the detached job was ended on the node" if ok else "the detached job could not be ended"
        engine._emit(
            HostFinished(
                step_id,
                started.action,
                host,
                "interrupted",
                f"interrupted: {why}; {ended} ({said})",
                command=started.command,
                started=started.time,
            )
        )

    try:
        await asyncio.gather(*(one(*w) for w in work))
    except asyncio.CancelledError:
        # a second Ctrl-C: give up waiting; the engine still records the rest as
        # interrupted (runner.py) and re-raises the cancellation
        pass


async def end_for_rollback(engine, step, hosts: list[str], confirm) -> None:
    """A rollback of a step with a detached command first ends the job where one
    runs (asked like any rollback; recorded as the operator's decision and in the
    host's record, which becomes `interrupted`)."""
    from ..inventory.load import fold
    from ..run.events import HostFinished, OperatorDecision

    actions = _detached_actions(step)
    if not actions or not hosts:
        return
    probes = await asyncio.gather(
        *(_on_host(engine, h, probe_command(engine.run_id, step.id, a)) for h in hosts for a in actions)
    )
    pairs = [(h, a) for h in hosts for a in actions]
    running = [(h, a) for (h, a), (ok, said) in zip(pairs, probes) if ok and said == "running"]
    if not running:
        return
    who = sorted({h for h, _ in running})
    commands = {
        h: "\n".join(stop_command(engine.run_id, step.id, a) for hh, a in running if hh == h) for h in who
    }
    if confirm is None or not await confirm(step, "rollback", who, commands):
        engine._emit(
            OperatorDecision(
                "decline", step.id, fold(who), engine.operator, "ending the detached job not confirmed"
            )
        )
        return
    engine._emit(
        OperatorDecision(
            "approve", step.id, fold(who), engine.operator, "rollback confirmed: end the detached job"
        )
    )

    async def one(host: str, action: str) -> None:
        ok, said = await _on_host(engine, host, stop_command(engine.run_id, step.id, action))
        ended = "the detached job was ended on the node" if ok else "the detached job could not be ended"
        engine._emit(HostFinished(step.id, action, host, "interrupted", f"rolled back: {ended} ({said})"))

    await asyncio.gather(*(one(h, a) for h, a in running))


# --- elapsed and expected time (the CLI's progress line, the TUI's step pane) ---


def expected_seconds(action, variables: dict) -> float | None:
    """The action's `expected_time` for one host, in seconds; None when not given or
    not known for that host's values (docs/long-running-steps.md)."""
    from ..definition.template import TemplateError, lookup, render_value

    spec = getattr(action, "expected_time", None)
    if spec is None:
        return None
    try:
        if isinstance(spec, dict):  # YAML keys may be numbers: level 3 as well as "3"
            key = str(lookup(variables, spec["by"]))
            value = next((v for k, v in spec["times"].items() if str(k) == key), None)
        else:
            value = render_value(spec, variables)
        seconds = float(value)
    except (TemplateError, KeyError, TypeError, ValueError):
        return None
    return seconds if seconds > 0 else None


def duration_text(seconds: float) -> str:
    s = int(max(0, seconds))
    h, m, s = s // 3600, s % 3600 // 60, s % 60
    return f"{h}h{m:02d}m" if h else f"{m}m{s:02d}s" if m else f"{s}s"


def clock_text(elapsed: float, expected: float | None) -> str:
    """`detached job · 2m05s of about 10m00s` (or `… past the expected 10m00s`)."""
    if expected is None:
        return f"detached job · {duration_text(elapsed)} running"
    if elapsed > expected:
        return f"detached job · {duration_text(elapsed)}, past the expected {duration_text(expected)}"
    return f"detached job · {duration_text(elapsed)} of about {duration_text(expected)}"
