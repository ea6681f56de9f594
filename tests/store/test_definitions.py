"""The run's own record of its step definitions and inventory
(runbook/store/definitions.py): content-addressed, one version per change,
rebuilt into the same steps and targets, secrets left out, damage detected."""

import hashlib
import json
import shutil
from pathlib import Path

import pytest

from runbook.inventory.load import select_hosts
from runbook.store.definitions import RunDefinitions
from runbook.store.errors import StoreCorrupt, StoreError
from runbook.workspace.project import load_project

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def shipped():
    return load_project(REPO / "steps", REPO / "inventory", check=False)


def test_recorded_definitions_rebuild_the_same_steps_and_targets(tmp_path, shipped):
    record = RunDefinitions(tmp_path)
    assert record.record(shipped.runbook, shipped.inventory) is True
    runbook, inventory = record.current()
    assert runbook.sha256 == shipped.runbook.sha256 and inventory.sha256 == shipped.inventory.sha256
    assert [p.title for p in runbook.phases] == [p.title for p in shipped.runbook.phases]
    for mine, theirs in zip(runbook.steps, shipped.runbook.steps, strict=True):
        assert (
            mine.id,
            mine.sha256,
            mine.phase,
            mine.phase_title,
            mine.title,
            mine.why,
            mine.hosts,
            mine.needs,
            mine.manual,
            mine.file,
            mine.line,
        ) == (
            theirs.id,
            theirs.sha256,
            theirs.phase,
            theirs.phase_title,
            theirs.title,
            theirs.why,
            theirs.hosts,
            theirs.needs,
            theirs.manual,
            theirs.file,
            theirs.line,
        )
        assert mine.definition == theirs.definition
        assert select_hosts(inventory, mine.hosts) == select_hosts(shipped.inventory, theirs.hosts), mine.id
    assert list(inventory.hosts) == list(shipped.inventory.hosts)  # inventory order kept


def test_objects_are_content_addressed_and_steps_named_by_their_hash(tmp_path, shipped):
    record = RunDefinitions(tmp_path)
    record.record(shipped.runbook, shipped.inventory)
    files = list((tmp_path / "definitions" / "objects").iterdir())
    for f in files:
        assert f.name == hashlib.sha256(f.read_bytes()).hexdigest() + ".json"
    names = {f.name[:-5] for f in files}
    assert {s.sha256 for s in shipped.runbook.steps} <= names
    assert len(names) == len(shipped.runbook.steps) + 2  # + the runbook and the inventory


def test_a_version_is_added_only_when_something_changed(tmp_path, shipped):
    steps = tmp_path / "steps"
    shutil.copytree(REPO / "steps", steps)
    record = RunDefinitions(tmp_path / "run")
    record.record(shipped.runbook, shipped.inventory, now=1.0)
    assert record.record(shipped.runbook, shipped.inventory, now=2.0) is False
    text = (steps / "40-software.yaml").read_text()
    (steps / "40-software.yaml").write_text(
        text.replace("run: ofed_info -s", "run: ofed_info -s | head -1", 1)
    )
    changed = load_project(steps, REPO / "inventory", check=False)
    assert record.record(changed.runbook, changed.inventory, now=3.0) is True
    versions = record.versions()
    assert [v.time for v in versions] == [1.0, 3.0]
    old = shipped.runbook.step("ofed-version").sha256
    new = changed.runbook.step("ofed-version").sha256
    assert old != new
    assert record.step_definition(old)["verify"]["run"] == "ofed_info -s"  # both versions kept
    assert record.step_definition(new)["verify"]["run"] == "ofed_info -s | head -1"
    runbook, _inv = record.current()
    assert runbook.step("ofed-version").sha256 == new


def test_secrets_stay_out_and_addressing_stays_in(tmp_path):
    inv = tmp_path / "inv.yaml"
    inv.write_text(
        "all:\n  vars:\n    bmc_password: hunter2\n    ofed_version: '23.10'\n"
        "  children:\n    compute:\n      hosts:\n        gpu01:\n          ansible_host: 127.0.0.9\n"
        "          ansible_port: 2222\n          api_token: s3cr3t-token\n"
    )
    project = load_project(REPO / "steps", inv, check=False)
    record = RunDefinitions(tmp_path / "run")
    record.record(project.runbook, project.inventory)
    for f in (tmp_path / "run" / "definitions").rglob("*"):
        if f.is_file():
            assert b"hunter2" not in f.read_bytes() and b"s3cr3t" not in f.read_bytes(), f
    _rb, rebuilt = record.current()
    gpu01 = rebuilt.hosts["gpu01"]
    assert (gpu01.address, gpu01.port, gpu01.vars["ofed_version"]) == ("127.0.0.9", 2222, "23.10")
    assert "bmc_password" not in gpu01.vars and "api_token" not in gpu01.vars
    assert rebuilt.sha256 == project.inventory.sha256  # still names the inventory it came from


def test_a_changed_object_is_refused_naming_the_file(tmp_path, shipped):
    record = RunDefinitions(tmp_path)
    record.record(shipped.runbook, shipped.inventory)
    victim = tmp_path / "definitions" / "objects" / f"{shipped.runbook.step('ofed-version').sha256}.json"
    victim.write_bytes(victim.read_bytes().replace(b"ofed_info", b"ofed_inf0"))
    with pytest.raises(StoreCorrupt) as exc:
        RunDefinitions(tmp_path).current()
    assert str(victim) in str(exc.value) and "SHA-256" in str(exc.value)


def test_an_incomplete_last_version_line_is_ignored(tmp_path, shipped):
    record = RunDefinitions(tmp_path)
    record.record(shipped.runbook, shipped.inventory)
    with open(record.versions_path, "ab") as f:
        f.write(b'{"time": 5, "runbook": "ab')  # a write cut short, never acknowledged
    assert len(RunDefinitions(tmp_path).versions()) == 1
    assert RunDefinitions(tmp_path).current()[0].sha256 == shipped.runbook.sha256
    other = load_project(REPO / "tests" / "tui" / "data" / "lab-steps", REPO / "inventory", check=False)
    assert RunDefinitions(tmp_path).record(other.runbook, other.inventory) is True  # cuts the torn tail
    assert [v.runbook_sha256 for v in RunDefinitions(tmp_path).versions()] == [
        shipped.runbook.sha256,
        other.runbook.sha256,
    ]
    (tmp_path / "definitions" / "versions.jsonl").write_text("not json\n" + json.dumps({}) + "\n")
    with pytest.raises(StoreCorrupt):
        RunDefinitions(tmp_path).versions()


def _new_run(state: Path, run_id: str) -> RunDefinitions:
    """A run directory as Store.create leaves it: a journal, no definitions yet."""
    (state / run_id).mkdir(parents=True)
    (state / run_id / "journal.jsonl").write_text("")
    return RunDefinitions(state / run_id)


def test_a_new_run_of_the_same_inventory_takes_its_record_from_a_run_before(tmp_path, shipped, monkeypatch):
    """Serialising every host's merged vars again is what a new run of the same
    inventory does not do (store/inventory_records.py InventoryRecords): the object comes out of
    the earlier run, byte for byte what the record would be, and the run keeps its own file
    (a hard link to the earlier run's: the run stands on its own when that one is gone)."""
    from runbook.store import definitions

    first = _new_run(tmp_path, "20261201-100000-aaaa")
    first.record(shipped.runbook, shipped.inventory)
    made = first.latest().inventory
    monkeypatch.setattr(definitions, "inventory_record", lambda inv: pytest.fail("made again"))
    second = _new_run(tmp_path, "20261201-110000-bbbb")
    assert second.record(shipped.runbook, shipped.inventory) is True
    assert second.latest().inventory == made
    copy = second.objects / f"{made}.json"
    assert copy.read_bytes() == (first.objects / f"{made}.json").read_bytes()
    shutil.rmtree(first.directory.parent)  # the run stands on its own
    assert second.current()[1].sha256 == shipped.inventory.sha256


def test_a_damaged_earlier_record_or_another_inventory_is_made_anew(tmp_path, shipped):
    first = _new_run(tmp_path, "20261201-100000-aaaa")
    first.record(shipped.runbook, shipped.inventory)
    name = first.latest().inventory
    victim = first.objects / f"{name}.json"
    victim.write_bytes(victim.read_bytes().replace(b'"gpu01"', b'"gpu0X"', 1))
    second = _new_run(tmp_path, "20261201-110000-bbbb")
    second.record(shipped.runbook, shipped.inventory)
    assert second.latest().inventory == name  # made again: the damaged bytes never used
    assert hashlib.sha256((second.objects / f"{name}.json").read_bytes()).hexdigest() == name

    inv = tmp_path / "inv.yaml"  # the same inventory with one value changed
    inv.write_text(
        (REPO / "inventory" / "seed-cluster.yaml").read_text().replace("site: seed-dc", "site: dc2")
    )
    other = load_project(REPO / "steps", inv, check=False)
    third = _new_run(tmp_path, "20261201-120000-cccc")
    third.record(other.runbook, other.inventory)
    rebuilt = third.current()[1]
    assert rebuilt.sha256 == other.inventory.sha256 and list(rebuilt.hosts) == list(other.inventory.hosts)
    assert rebuilt.hosts["gpu01"].vars["site"] == "dc2" and third.latest().inventory != name


def test_an_inventory_edited_without_changing_a_value_is_recorded_under_its_new_hash(tmp_path, shipped):
    """A comment added: the same hosts and vars, another Inventory.sha256, which the
    record names (what export checks every result's inventory against)."""
    inv = tmp_path / "inv.yaml"
    inv.write_text((REPO / "inventory" / "seed-cluster.yaml").read_text())
    before = load_project(REPO / "steps", inv, check=False)
    first = _new_run(tmp_path, "20261201-100000-aaaa")
    first.record(before.runbook, before.inventory)
    inv.write_text(inv.read_text() + "\n# edited\n")
    edited = load_project(REPO / "steps", inv, check=False)
    assert edited.inventory.sha256 != before.inventory.sha256
    assert edited.inventory.hosts == before.inventory.hosts  # the same values
    second = _new_run(tmp_path, "20261201-110000-bbbb")
    second.record(edited.runbook, edited.inventory)
    assert second.object(second.latest().inventory)["sha256"] == edited.inventory.sha256


def test_a_new_run_links_the_objects_an_earlier_run_wrote_with_the_same_bytes(tmp_path, shipped, monkeypatch):
    """A new run of the same runbook does not write and fsync its ~60 objects again
    (store/definitions.py _link_from_earlier_runs): each is a hard link to the earlier
    run's file with exactly its bytes; an earlier file that differs (damaged), is a
    symbolic link, or is missing is not used, and that object is written as ever."""
    import os

    first = _new_run(tmp_path, "20261201-100000-aaaa")
    first.record(shipped.runbook, shipped.inventory)
    names = sorted(p.name for p in first.objects.iterdir())
    damaged, linked_away, gone = names[0], names[1], names[2]
    (first.objects / damaged).write_bytes((first.objects / damaged).read_bytes() + b" ")
    elsewhere = tmp_path / "elsewhere.json"
    os.replace(first.objects / linked_away, elsewhere)
    (first.objects / linked_away).symlink_to(elsewhere)
    (first.objects / gone).unlink()

    written = []
    real_put_one = RunDefinitions._put_one
    monkeypatch.setattr(
        RunDefinitions, "_put_one", lambda self, n, d: (written.append(f"{n}.json"), real_put_one(self, n, d))
    )
    second = _new_run(tmp_path, "20261201-110000-bbbb")
    assert second.record(shipped.runbook, shipped.inventory) is True
    assert sorted(written) == sorted([damaged, linked_away, gone])
    assert sorted(p.name for p in second.objects.iterdir()) == names
    for name in names:
        mine = second.objects / name
        assert not mine.is_symlink() and hashlib.sha256(mine.read_bytes()).hexdigest() == name[:-5]
        if name not in written:
            assert mine.stat().st_ino == (first.objects / name).stat().st_ino
    shutil.rmtree(first.directory.parent)  # the run stands on its own
    assert second.current()[0].sha256 == shipped.runbook.sha256
    assert second.current()[1].sha256 == shipped.inventory.sha256


def test_a_new_store_records_its_definitions_alongside_its_journal(tmp_path, shipped, monkeypatch):
    """Store.create(definitions=...) (what a session creating a run uses): the run's
    definitions are recorded while its journal is made, there when create returns;
    when recording them fails, the error is create's, the store is closed and the
    state directory's lock free again."""
    from runbook.store import Store
    from runbook.store.lock import StateLock
    from tests.store.helpers import new_store

    store = new_store(tmp_path, "run-1", definitions=(shipped.runbook, shipped.inventory))
    try:
        runbook, inventory = store.recorded_definitions()
        assert runbook.sha256 == shipped.runbook.sha256 and inventory.sha256 == shipped.inventory.sha256
        assert store.run_info()["events"] == 1
    finally:
        store.close()

    def broken(self, runbook, inventory):
        raise StoreError(f"{self.directory}: cannot record the definitions: disk full")

    monkeypatch.setattr(RunDefinitions, "record", broken)
    with pytest.raises(StoreError, match="disk full"):
        new_store(tmp_path, "run-2", definitions=(shipped.runbook, shipped.inventory))
    lock = StateLock(tmp_path)
    lock.acquire()  # free: nobody holds it
    lock.release()
    assert isinstance(Store.open(tmp_path, "run-1", read_only=True), Store)
