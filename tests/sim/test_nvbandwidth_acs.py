"""nvbandwidth's peer matrix asks whether ACS redirects once per run
(sim/commands/gpu_health.py): every pair's bandwidth is what asking for that
pair alone gives, with ACS redirection on and off."""

from __future__ import annotations

from runbook.sim.commands.gpu_health import acs_redirects, gpu_d2d

D2D = "nvbandwidth -t device_to_device_memcpy_read_ce"


async def test_the_matrix_asks_acs_once_and_answers_as_each_pair_alone(machine_of, sh):
    machines = machine_of(2, {"gpu01": ["acs_enabled"]})
    outputs = []
    for name in ("gpu01", "gpu02"):
        node = machines(name).state
        acs = acs_redirects(node)
        assert acs == (name == "gpu01")
        pairs = [(a, b) for a in node.gpus for b in node.gpus if a is not b]
        assert any(a.switch and a.switch == b.switch for a, b in pairs)  # the ACS question is asked
        assert all(gpu_d2d(node, a, b, acs) == gpu_d2d(node, a, b) for a, b in pairs)
        out, err, status = await sh(machines(name), D2D)
        assert (err, status) == ("", 0)
        outputs.append(out)
    assert outputs[0] != outputs[1]  # the redirected peers are slower on gpu01
