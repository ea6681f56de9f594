"""The saved lab state (sim/persist.py): what a restarted sim continues from."""

from __future__ import annotations

import dataclasses
import json

from runbook.sim import persist
from runbook.sim import scenario as scenarios
from runbook.sim.cluster import Cluster
from runbook.sim.lab import Lab

from .conftest import next_base

FIRMWARE = "ibstat mlx5_4 | grep Firmware"


def test_the_encoder_writes_what_dataclasses_asdict_writes(design):
    cluster = Cluster.build(design, 3)
    scenarios.apply(cluster, scenarios.DEFAULT, strict=False)
    nodes = [dataclasses.asdict(n) for n in cluster.nodes.values()]
    expected = json.dumps({"format": persist.FORMAT, "key": {"nodes": 3}, "nodes": nodes})
    assert json.loads(persist.encode({"nodes": 3}, cluster.nodes)) == json.loads(expected)


def test_an_integer_past_64_bits_is_still_saved(design):
    """orjson refuses it; the standard library's encoder writes it (persist._dumps)."""
    cluster = Cluster.build(design, 1)
    key = {"seed": 2**70}
    assert json.loads(persist.encode(key, cluster.nodes))["key"] == {"seed": 2**70}


def test_an_object_with_more_than_its_fields_is_encoded_by_its_fields(design, tmp_path):
    cluster = Cluster.build(design, 2)
    gpu01 = cluster.nodes["gpu01"]
    gpu01.irqs[0].note = "not a field"  # an attribute set on one instance: left out, as asdict does
    nodes = [dataclasses.asdict(n) for n in cluster.nodes.values()]
    expected = json.loads(json.dumps({"format": persist.FORMAT, "key": {}, "nodes": nodes}))
    assert json.loads(persist.encode({}, cluster.nodes)) == expected
    path = tmp_path / "state.json"
    persist.save(path, {}, cluster.nodes)  # a reloaded state is built field by field: the same JSON
    assert json.loads(persist.encode({}, persist.load(path, {}))) == expected


def test_a_reloaded_state_keeps_its_int_keyed_firmware(tmp_path, design):
    cluster = Cluster.build(design, 2)
    scenarios.apply(cluster, _scenario(tmp_path, {"gpu01": ["hca_fw_drift"]}))
    path = tmp_path / "state.json"
    persist.save(path, {"k": 1}, cluster.nodes)
    nodes = persist.load(path, {"k": 1})
    assert nodes is not None
    assert nodes["gpu01"].firmware_of == cluster.nodes["gpu01"].firmware_of
    assert all(isinstance(k, int) for k in nodes["gpu01"].firmware_of)


async def test_a_restarted_lab_still_runs_the_drifted_firmware(tmp_path):
    kw = dict(nodes=2, scenario=_scenario(tmp_path, {"gpu01": ["hca_fw_drift"]}), base_address=next_base())
    lab = await Lab.start(tmp_path / "lab", **kw)
    try:
        before, _, _ = await lab.node("gpu01").run(FIRMWARE)
    finally:
        await lab.stop()
    lab = await Lab.start(tmp_path / "lab", **kw)  # from state.json, not rebuilt
    try:
        after, _, _ = await lab.node("gpu01").run(FIRMWARE)
        healthy, _, _ = await lab.node("gpu02").run(FIRMWARE)
    finally:
        await lab.stop()
    assert "20.38.1002" in before and after == before
    assert "20.39.1002" in healthy


def _scenario(tmp_path, faults):
    import yaml

    path = tmp_path / "scenario.yaml"
    path.write_text(yaml.safe_dump({"faults": faults}))
    return path


def test_a_change_is_saved_after_a_second_or_later_when_saves_are_long():
    from runbook.sim.lab import SAVE_SHARE, save_delay

    assert save_delay(0.0) == save_delay(0.05) == 1.0  # a small lab: a second, as before
    long_save = 0.4  # s of CPU: the whole JSON of a 1,000-node lab
    wait = save_delay(long_save)
    assert wait > 1.0
    assert long_save / (wait + long_save) <= SAVE_SHARE + 1e-9  # saves take SAVE_SHARE of the CPU at most


def test_a_save_encodes_again_only_the_nodes_marked_changed(tmp_path, design):
    cluster = Cluster.build(design, 3)
    scenarios.apply(cluster, scenarios.DEFAULT, strict=False)
    path, key = tmp_path / "state.json", {"nodes": 3}
    texts = persist.NodeTexts()
    texts.save(path, key, cluster.nodes)
    assert path.read_bytes() == persist.encode(key, cluster.nodes)  # the same bytes as one encode
    cluster.nodes["gpu02"].files["/root/a"] = "marked\n"
    texts.mark("gpu02")
    cluster.nodes["gpu03"].files["/root/b"] = "not marked\n"
    texts.save(path, key, cluster.nodes)
    saved = persist.load(path, key)
    assert saved["gpu02"].files["/root/a"] == "marked\n"
    assert "/root/b" not in saved["gpu03"].files  # kept from the save before
    texts.mark(None)
    texts.save(path, key, cluster.nodes)
    assert path.read_bytes() == persist.encode(key, cluster.nodes)


async def test_a_lab_saves_what_a_command_changed_and_everything_on_stop(tmp_path):
    lab = await Lab.start(tmp_path / "lab", nodes=2, scenario=None, base_address=next_base())
    try:
        _, err, status = await lab.node("gpu02").run("echo hi > /root/note")
        assert status == 0, err
        lab.node("gpu01").state.files["/root/quiet"] = "no changed()\n"
        lab.save()  # the debounced save: gpu02 marked by its command's write
        saved = persist.load(lab.state_file, lab._state_key)
        assert saved["gpu02"].files["/root/note"] == "hi\n"
        assert "/root/quiet" not in saved["gpu01"].files
    finally:
        await lab.stop()
    saved = persist.load(lab.state_file, lab._state_key)
    assert saved["gpu01"].files["/root/quiet"] == "no changed()\n"  # the stop saves every node
    assert lab.state_file.read_bytes() == persist.encode(lab._state_key, lab.cluster.nodes)
