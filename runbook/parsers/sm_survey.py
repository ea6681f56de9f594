"""`sminfo` asked of every SM port of the subnet, as a compute node sees it:

    for lid in $(saquery -s | awk -F. '/IsSMdisabled/ {exit} /EndPortLid/ {print $NF}'); do
        sminfo -C DEV -P 1 $lid; done

`saquery -s` lists the PortInfoRecords with the IsSM capability bit, i.e. every
port an SM runs on, wherever it runs (a host's OpenSM, a managed switch's port 0,
UFM), then under "IsSMdisabled ports" those whose SM is turned off (not asked);
each `sminfo LID` line then says that SM's state. Works from any node of the
subnet, so it judges SMs nobody can log into.

Record:
  sms: [{sm_lid, sm_guid, priority, activity, state_short}]   one per answering SM
  errors: [str]   `sminfo: iberror: ...` lines (an SM port that did not answer)
"""

from __future__ import annotations

from ._hosttext import fail, lines_of
from .base import Parser, Record
from .opensm import parse_sminfo


def parse_sm_survey(text: str) -> Record:
    sms, errors = [], []
    for line in lines_of(text):
        s = line.strip()
        if not s:
            continue
        if not s.startswith("sminfo:"):
            fail("`sminfo` lines (one per SM port listed by `saquery -s`)", line)
        r = parse_sminfo(s)
        if r["sm_running"]:
            sms.append({k: r[k] for k in ("sm_lid", "sm_guid", "priority", "activity", "state_short")})
        else:
            errors.append(r["error"])
    return {"sms": sms, "errors": errors}


PARSERS = [
    Parser(
        name="sm-survey",
        reads="sminfo LID for every LID of `saquery -s`",
        func=parse_sm_survey,
        description="every SM of the subnet with its state and priority, from saquery -s and sminfo",
    )
]
