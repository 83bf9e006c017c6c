"""Personal data and lists of recovery codes (issue 42, item 5) are served nowhere by default: a day log that holds a
Chinese ID card number, a bank card number and phone numbers (in running Chinese, grouped, full-width) and 2FA
backup codes (a list on the cue's line, a bullet list under it) is digested, and none of them is in `facts list`,
`query` (with its raw lines), the cards (their file names too) or the day's summary; `raw` reads the log with them
masked and the ordinary long numbers (an order number, a timestamp, a version) as written. AGENTOS_PERSONAL_DATA
(or `personal_data` in agentos.toml) keeps them, all or by class; the recovery codes, secrets, are masked whatever
it says."""

from __future__ import annotations

import json
from datetime import date

from agentos_mem.kernel.workspace import Workspace
from tests.kit.cli import run_cli
from tests.kit.digest import digested_workspace

DAY = date(2026, 11, 3)
ID_CARD, CARD, PHONE, WIFE = "11010519491231002X", "6222 0212 3456 7890 128", "13812345678", "139-8765-4321"
WIDE_PHONE = "１５８００００１１１１"  # full-width digits: 15800001111
CODES = ["3f9a-21bc", "88d1-0e2f", "7c3b-9aa0", "48213907", "59302148", "11820374", "5829-1037", "6620-4418"]
ORDINARY = ["20241103123456789012", "1732000000000", "v3.17700001234"]
LOG = f"""## 个人资料

[09:00] 用户: 我的身份证号是{ID_CARD}，手机{PHONE}
[09:01] 用户: 我的工资卡卡号是 {CARD}，开户行是招商银行
[09:02] 用户: 我老婆的手机号是 +86 {WIFE}，备用号码{WIDE_PHONE}
[09:03] 用户: GitHub backup codes: 3f9a-21bc, 88d1-0e2f, 7c3b-9aa0
[09:04] 用户: 恢复码：48213907 59302148 11820374
[09:05] 用户: Google 的恢复码如下：
  - 5829-1037
  - 6620-4418
[09:06] 用户: 订单号 20241103123456789012，时间戳 1732000000000，客户端版本 v3.17700001234
"""
RAW_REF = f"default/{DAY}/r1/{DAY}.md"


def _served(s) -> tuple[str, str]:
    """(everything the user's commands serve: facts, answers, cards with their names, the summary; the log read
    back through `agentos raw`)."""
    from agentos_mem.index.stages import rebuild

    rebuild(s)
    ws = Workspace(s.home)
    answers = [run_cli("facts", "list", "--json", home=s.home).stdout]
    for q in ("我的手机号是多少", "身份证号", "工资卡卡号", "GitHub backup codes", "恢复码", "订单号"):
        answers.append(run_cli("query", q, "--raw", "--in-process", "--json", home=s.home).stdout)
    # read as a program reads the JSON (a full-width digit may be written as an escape)
    served = [json.dumps(json.loads(a), ensure_ascii=False) for a in answers]
    cards = sorted((ws.cards_dir / "default").glob("*.md"))
    assert cards
    served += [p.name + "\n" + p.read_text(encoding="utf-8") for p in cards]
    summaries = list((ws.summaries_dir / "default").glob("*.md"))
    assert summaries
    served += [p.read_text(encoding="utf-8") for p in summaries]
    raw = run_cli("raw", RAW_REF, "--lines", "1-12", home=s.home).stdout
    return "\n".join(served), raw


def _personal(text: str) -> list[str]:
    return [n for n in (ID_CARD, CARD, CARD.replace(" ", ""), PHONE, WIFE, WIDE_PHONE, "15800001111") if n in text]


def test_personal_numbers_and_every_recovery_code_are_served_nowhere(tmp_path, monkeypatch):
    monkeypatch.delenv("AGENTOS_PERSONAL_DATA", raising=False)
    s, _ = digested_workspace(tmp_path, LOG, DAY)
    served, raw = _served(s)
    for text in (served, raw):
        assert not _personal(text), _personal(text)
        assert not [c for c in CODES if c in text], [c for c in CODES if c in text]
    for label in ("ID card masked", "bank card masked", "phone masked", "secret masked"):
        assert label in served and label in raw, label
    # the lines stay, their numbers masked; ordinary long numbers are read as written
    assert "我的身份证号是[ID card masked" in raw and "开户行是招商银行" in raw
    assert raw.count("[phone masked") == 3 and raw.count("[secret masked") == len(CODES)
    assert all(n in raw for n in ORDINARY), raw


def test_the_setting_keeps_personal_numbers_and_never_the_codes(tmp_path, monkeypatch):
    monkeypatch.setenv("AGENTOS_PERSONAL_DATA", "keep")  # the digest runs in this process: it reads the setting here
    s, _ = digested_workspace(tmp_path, LOG, DAY)
    served, raw = _served(s)  # run_cli passes the process environment on
    assert ID_CARD in raw and CARD in raw and PHONE in raw and WIFE in raw and WIDE_PHONE in raw
    assert ID_CARD in served and PHONE in served
    assert "ID card masked" not in served + raw and "phone masked" not in served + raw
    assert not [c for c in CODES if c in served + raw]  # secrets, not personal data


def test_the_settings_file_keeps_one_class_and_masks_the_others(tmp_path, monkeypatch):
    monkeypatch.delenv("AGENTOS_PERSONAL_DATA", raising=False)
    home = tmp_path / "home"
    monkeypatch.setenv("AGENTOS_HOME", str(home))  # the settings file the digest in this process reads
    home.mkdir()
    (home / "agentos.toml").write_text('personal_data = "keep:phone"\n', encoding="utf-8")
    s, _ = digested_workspace(tmp_path, LOG, DAY)
    assert s.home == home
    served, raw = _served(s)
    assert PHONE in raw and WIFE in raw and PHONE in served
    assert ID_CARD not in served + raw and CARD not in served + raw and CARD.replace(" ", "") not in served + raw
    assert "ID card masked" in raw and "bank card masked" in raw
