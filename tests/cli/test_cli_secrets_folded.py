"""Secrets written so that a pattern over the raw characters misses them (issue 42, item 5) are served nowhere: not in
facts, the query, the cards (their file names included) or the day's summary. Detection reads the text as a reader
sees it (each character NFKC, invisible ones dropped, Traditional cue characters Simplified), and knows the empty
user of a Redis URL and a password glued to a database client's -p flag."""

from __future__ import annotations

import json
from datetime import date

from agentos_mem.kernel.workspace import Workspace
from tests.kit.cli import run_cli
from tests.kit.digest import digested_workspace

SECRETS = {
    "密\u200b码是 Qz7vLmN4pT2w": "Qz7vLmN4pT2w",
    "ｐａｓｓｗｏｒｄ: Rb8nKs3xWq5e": "Rb8nKs3xWq5e",
    "密碼是 Hj4kPw9sLx2m": "Hj4kPw9sLx2m",
    "金鑰是 Tg6yUi8oPl3k": "Tg6yUi8oPl3k",
    "缓存连的是 redis://:Zx9cVb2nMq7w@cache.internal:6379/0": "Zx9cVb2nMq7w",
    "导数据用 mysql -u root -pWe3rTy6uIo1p appdb": "We3rTy6uIo1p",
}


def test_secrets_a_raw_pattern_misses_are_served_nowhere(tmp_path):
    from agentos_mem.index.stages import rebuild

    day = date(2026, 11, 3)
    log = "## 运维\n\n" + "".join(f"[09:0{i}] 用户: {line}\n" for i, line in enumerate(SECRETS))
    s, _ = digested_workspace(tmp_path, log, day)
    rebuild(s)
    ws = Workspace(s.home)
    served = [run_cli("facts", "list", "--json", home=s.home).stdout]
    for q in ("密码是什么", "redis 连接", "mysql 导数据", "金鑰"):
        served.append(run_cli("query", q, "--json", home=s.home).stdout)
    cards = sorted((ws.cards_dir / "default").glob("*.md"))
    assert cards
    served += [p.name + p.read_text(encoding="utf-8") for p in cards]
    served += [p.read_text(encoding="utf-8") for p in (ws.summaries_dir / "default").glob("*.md")]
    text = "\n".join(served)
    leaked = [v for v in SECRETS.values() if v in text]
    assert not leaked, leaked
    assert "secret masked" in text  # the lines are kept, their values masked
    assert json.loads(served[0])["facts"] is not None


def test_agentos_config_never_prints_the_password_inside_a_url(tmp_path):
    run_cli("init", home=tmp_path)
    env = {"AGENTOS_LLM_BASE_URL": "http://bot:Kp5mWq8zLx3v@llm.internal:8090/v1",
           "AGENTOS_CHROMA_URL": "http://admin:Nb7vCx4zAs1d@chroma.internal:8000"}
    for argv in (["config"], ["config", "--json"]):
        out = run_cli(*argv, home=tmp_path, **env).stdout
        assert "Kp5mWq8zLx3v" not in out and "Nb7vCx4zAs1d" not in out and "llm.internal" in out, out
