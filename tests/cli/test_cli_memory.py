"""``agentos memory ...`` as a user runs it (in process through ``cli.main.main``): real files, both backends."""

from __future__ import annotations

import json

import pytest

from tests.kit.cli import run_cli


@pytest.fixture
def home(tmp_path):
    home = tmp_path / "ws"
    run_cli("init", home=home)
    return home


@pytest.mark.parametrize("backend", ["files", "sqlite"])
def test_save_show_update_list_delete(home, backend):
    env = {"AGENTOS_MEMORY_BACKEND": backend}
    run_cli("memory", "save", "周报格式", "-d", "以后所有周报都用简洁格式", "-t", "feedback", "--body", "不超过一页。", home=home, **env)
    shown = json.loads(run_cli("memory", "show", "周报格式", "--json", home=home, **env).stdout)
    assert (shown["source"], shown["type"], shown["body"], shown["recallCount"]) == ("manual", "feedback", "不超过一页。", 0)
    if backend == "files":
        assert (home / "agent-sync/04_memory/records/default/周报格式.md").is_file()
    else:
        assert not (home / "agent-sync/04_memory/records/default").exists()

    again = run_cli("memory", "save", "周报格式", "-d", "别的", "-t", "user", home=home, check=False, **env)
    assert again.returncode == 2 and "already exists" in again.stderr and "update" in again.stderr

    run_cli("memory", "update", "周报格式", "--body", "不超过一页，先写结论。", home=home, **env)
    shown = json.loads(run_cli("memory", "show", "周报格式", "--json", home=home, **env).stdout)
    assert shown["body"] == "不超过一页，先写结论。" and shown["description"] == "以后所有周报都用简洁格式"

    run_cli("memory", "save", "editor", "-d", "uses vim", "-t", "user", home=home, **env)
    listed = json.loads(run_cli("memory", "list", "--json", home=home, **env).stdout)
    assert [r["name"] for r in listed] == ["editor", "周报格式"]
    assert "body" not in listed[0]
    run_cli("memory", "delete", "editor", home=home, **env)
    assert [r["name"] for r in json.loads(run_cli("memory", "list", "--json", home=home, **env).stdout)] == ["周报格式"]
    missing = run_cli("memory", "delete", "editor", home=home, check=False, **env)
    assert missing.returncode == 2 and "no memory named 'editor'" in missing.stderr


def test_bad_input_is_named_and_nothing_is_written(home):
    bad = run_cli("memory", "save", "../escape", "-d", "x", "-t", "user", home=home, check=False)
    assert bad.returncode == 2 and "'..'" in bad.stderr
    other = run_cli("memory", "show", "x", "--user", "../bob", home=home, check=False)
    assert other.returncode == 2 and "user id" in other.stderr
    two = run_cli("memory", "save", "m", "-d", "two\nlines", "-t", "user", home=home, check=False)
    assert two.returncode == 2 and "one line" in two.stderr
    assert json.loads(run_cli("memory", "list", "--json", home=home).stdout) == []
    assert list((home / "agent-sync/04_memory/records").rglob("*")) == []


def test_users_are_separate(home):
    run_cli("memory", "save", "coffee", "-d", "likes coffee", "-t", "user", "--user", "alice", home=home)
    assert json.loads(run_cli("memory", "list", "--json", "--user", "bob", home=home).stdout) == []
    assert run_cli("memory", "show", "coffee", "--user", "bob", home=home, check=False).returncode == 2


def test_recall_prints_hits_and_counts_them(home):
    run_cli("memory", "save", "周报格式", "-d", "以后所有周报都用简洁格式", "-t", "feedback", "--body", "周报不超过一页。", home=home)
    run_cli("memory", "save", "pet", "-d", "has an orange cat named Doubao", "-t", "user", home=home)
    out = json.loads(run_cli("memory", "recall", "帮我写这周的周报", "--json", home=home).stdout)
    assert out["status"] == "ok" and [h["name"] for h in out["hits"]][:1] == ["周报格式"]
    assert out["compact"]["count"] == len(out["hits"]) and out["compact"]["status"] == "ok"
    shown = json.loads(run_cli("memory", "show", "周报格式", "--json", home=home).stdout)
    assert shown["recallCount"] == 1 and shown["lastRecalledAt"]
    text = run_cli("memory", "recall", "帮我写这周的周报", home=home).stdout
    assert "周报格式" in text and "周报不超过一页。" in text


def test_extract_for_a_host_and_proposals(home, tmp_path):
    run_cli("memory", "save", "answer-language", "-d", "请以后都用中文回答，尽量简短", "-t", "feedback", home=home)
    msgs = tmp_path / "task.jsonl"
    msgs.write_text("\n".join(json.dumps(m, ensure_ascii=False) for m in [
        {"role": "user", "content": "帮我整理一下会议纪要"}, {"role": "assistant", "content": "好的，这是纪要。"},
        {"role": "user", "content": "请以后都用中文回答，尽量简洁。"}, {"role": "assistant", "content": "明白。"},
        {"role": "user", "content": "另外，我是数据平台组的负责人。"}, {"role": "assistant", "content": "记住了。"},
    ]), encoding="utf-8")
    report = json.loads(run_cli("memory", "extract", str(msgs), "--json", home=home).stdout)
    assert report["proposals"] and any("负责人" in json.loads(run_cli("memory", "show", n, "--json", home=home).stdout)["description"]
                                       for n in report["created"])
    pending = json.loads(run_cli("memory", "proposals", "--json", home=home).stdout)
    assert [p["target"] for p in pending] == ["answer-language"]
    mine = json.loads(run_cli("memory", "show", "answer-language", "--json", home=home).stdout)
    assert mine["description"] == "请以后都用中文回答，尽量简短"  # never changed automatically
    run_cli("memory", "proposals", "--accept", str(pending[0]["id"]), home=home)
    mine = json.loads(run_cli("memory", "show", "answer-language", "--json", home=home).stdout)
    assert mine["description"] == "请以后都用中文回答，尽量简洁" and mine["source"] == "manual"
    assert json.loads(run_cli("memory", "proposals", "--json", home=home).stdout) == []


def test_clear_is_an_admin_command_with_confirmation(home):
    run_cli("memory", "save", "a", "-d", "one", "-t", "user", "--user", "alice", home=home)
    run_cli("memory", "save", "b", "-d", "two", "-t", "user", "--user", "alice", home=home)
    run_cli("memory", "save", "c", "-d", "bob's", "-t", "user", "--user", "bob", home=home)
    no_user = run_cli("memory", "clear", home=home, check=False)
    assert no_user.returncode == 2 and "--user" in no_user.stderr  # never defaults to someone
    unconfirmed = run_cli("memory", "clear", "--user", "alice", home=home, check=False)
    assert unconfirmed.returncode == 2 and "--yes" in unconfirmed.stderr
    assert len(json.loads(run_cli("memory", "list", "--json", "--user", "alice", home=home).stdout)) == 2
    out = json.loads(run_cli("memory", "clear", "--user", "alice", "--yes", "--json", home=home).stdout)
    assert out["deleted"] == 2
    assert json.loads(run_cli("memory", "list", "--json", "--user", "alice", home=home).stdout) == []
    assert len(json.loads(run_cli("memory", "list", "--json", "--user", "bob", home=home).stdout)) == 1


def test_extract_and_save_refuse_a_pipe_a_folder_a_socket_or_a_device_by_name(home, tmp_path):
    """``memory extract FIFO`` once blocked for ever waiting for a writer: every special file of the bad-input corpus is
    refused at once, naming the path and what it is (exit 2), and nothing is written. A writer waits on the pipe, so
    a command that did open it would read ``[]`` and succeed: the test would fail, not hang."""
    from tests.kit.bad_inputs import special_files, writer_for

    files = special_files(tmp_path / "given")
    for kind, path in files.items():
        for argv in (["memory", "extract", str(path)], ["memory", "save", "notes", "-d", "x", "-t", "user", "--file", str(path)]):
            with writer_for(files["named pipe"]):
                out = run_cli(*argv, home=home, check=False)
            assert out.returncode == 2, (kind, argv, out.stdout, out.stderr)
            assert str(path) in out.stderr and kind in out.stderr, (kind, out.stderr)
    assert json.loads(run_cli("memory", "list", "--json", home=home).stdout) == []


def test_a_recall_never_rewrites_what_the_user_wrote(home):
    """Issue 42: one `memory recall` destroyed a record saved in GBK (its body became U+FFFD, written back), dropped
    the user's comment line and restructured a record whose front matter no longer parses. The count is edited in
    place, every other byte kept; a file that cannot be edited so is left as it is and named."""
    folder = home / "agent-sync/04_memory/records/default"
    folder.mkdir(parents=True, exist_ok=True)
    mine = "---\nname: espresso\n# 我自己加的注释：别删\ndescription: espresso order, double shot\ntype: user\n---\n\n每天两杯。\n"
    legacy = "---\nname: latte\ndescription: latte order oat milk\ntype: user\n---\n\n燕麦拿铁，少糖。\n".encode("gbk")
    broken = "---\nname: [mocha\ndescription: mocha order\n---\n\nmocha order: extra chocolate\n"
    (folder / "espresso.md").write_text(mine, encoding="utf-8")
    (folder / "latte.md").write_bytes(legacy)
    (folder / "mocha.md").write_text(broken, encoding="utf-8")

    stderr = ""
    for question, name in (("espresso double shot", "espresso"), ("latte oat milk", "latte"), ("mocha extra chocolate", "mocha")):
        p = run_cli("memory", "recall", question, "--json", home=home)
        assert name in {h["name"] for h in json.loads(p.stdout)["hits"]}, (question, p.stdout)
        stderr += p.stderr
    assert (folder / "latte.md").read_bytes() == legacy and (folder / "mocha.md").read_text(encoding="utf-8") == broken
    assert "latte.md" in stderr and "mocha.md" in stderr and "left as it is" in stderr and "espresso" not in stderr
    at = json.loads(run_cli("memory", "show", "espresso", "--json", home=home).stdout)["lastRecalledAt"]
    assert (folder / "espresso.md").read_text(encoding="utf-8") == \
        mine.replace("type: user\n---", f"type: user\nrecallCount: 1\nlastRecalledAt: '{at}'\n---")
