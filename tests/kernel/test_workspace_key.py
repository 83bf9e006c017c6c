"""The workspace's key (what Prefect's writer limits are named by): one per agent-sync, whichever host or process asks."""

import subprocess
import sys

from agentos_mem.kernel.workspace import workspace_key


def test_hosts_sharing_one_agent_sync_get_one_key_and_another_workspace_another(tmp_path):
    a, b = tmp_path / "host-a" / "home", tmp_path / "host-b" / "home"
    (a / "agent-sync").mkdir(parents=True)
    b.mkdir(parents=True)
    (b / "agent-sync").symlink_to(a / "agent-sync")  # b mounts a's agent-sync at another path
    key = workspace_key(a)
    assert workspace_key(b) == key == workspace_key(a) and len(key) == 12
    assert (a / "agent-sync" / "workspace-id.txt").read_text(encoding="utf-8").startswith(key)
    assert workspace_key(tmp_path / "other") != key


def test_processes_asking_at_once_agree(tmp_path):
    code = "import sys; from agentos_mem.kernel.workspace import workspace_key; print(workspace_key(sys.argv[1]))"
    procs = [subprocess.Popen([sys.executable, "-c", code, str(tmp_path / "home")], stdout=subprocess.PIPE, text=True) for _ in range(6)]
    keys = {p.communicate(timeout=60)[0].strip() for p in procs}
    assert len(keys) == 1 and "" not in keys
    assert [p.name for p in (tmp_path / "home" / "agent-sync").iterdir()] == ["workspace-id.txt"]  # no temp file left
