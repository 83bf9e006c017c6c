"""Demo data the project authors itself: eight days of working-memory logs and the identity templates.

The logs are original text (no dataset is copied) about one user, 林晓, a backend engineer, and her
project 青鸟. They are written so the deterministic extractor has something to find on every day:
identity, preferences, a project background, configuration values that change (4C8G -> 8C16G,
port 5432 -> 5433, API v2.1.0 -> v2.2.0) or are restated, a user correction, an assistant inference
that contradicts the user, plans, a decision, an opinion and a rule. Day 1 also has a clean JSONL
chat export; day 3 has a JSONL export with one broken line and one unknown role, and day 5 a scratch
file saved as GBK (invalid UTF-8): the digest must quarantine those lines/files and keep the rest.

Dates are relative to ``end_day`` so a fresh workspace always has "the last days" to digest.
"""

from __future__ import annotations

import json
from datetime import date, timedelta
from pathlib import Path

from agentos_mem.kernel import clock
from agentos_mem.kernel.workspace import Workspace, init_workspace

DAYS = 8

# One template per day, oldest first. Placeholders: {d0}..{d7} (ISO dates), {launch_cn}.
# Labels, timestamp styles, frontmatter and titles vary on purpose: the reader must take all of them.
_DAY_TEXTS = [
    # d0: Chinese. Identity, style preference, project background, first server size.
    """---
date: {d0}
---
# {d0}

## 自我介绍

[09:05] 用户: 你好，我叫林晓，是一名后端工程师，在云栈科技工作，base 在杭州。
[09:05] 助手: 你好林晓！很高兴认识你。以后有需要我记住的事情，直接告诉我就好。
[09:07] 用户: 请以后都用中文回答，尽量简洁，我不喜欢太长的回答。
[09:07] 助手: 好的，我会用简洁的中文回答。

## 项目背景

[09:20] 用户: 介绍一下我现在的项目：项目叫青鸟（Qingniao），是一个订单同步服务，把各个电商平台的订单同步到我们的 ERP。
[09:21] 助手: 明白。青鸟主要用什么技术栈？
[09:22] 用户: 技术栈是 Go + gRPC + Redis，跑在 Kubernetes 上。数据库还没定，在 MySQL 和 PostgreSQL 之间纠结。
[09:23] 助手: 了解。选型时可以重点比较 JSON 支持和逻辑复制能力。
[09:30] 用户: 服务器配置是 4C8G，目前两台。
[09:30] 助手: 记下了：服务器配置 4C8G，两台。
""",
    # d1: mostly English, seconds in the timestamps, no frontmatter. Decision, port, likes.
    """# {d1}

## Database choice

[10:02:15] user: After a long discussion with the team we picked a database. 我们决定采用 PostgreSQL。
[10:02:40] assistant: Got it, PostgreSQL it is. Any particular reason?
[10:03:30] user: Mostly logical replication and jsonb. Our DBA also knows it well.
[10:04:05] assistant: Makes sense. I'll keep that in mind for schema questions.
[10:10:00] user: 数据库端口是 5432，就是默认的那个。
[10:10:20] assistant: 好的，数据库端口 5432。

## Coffee break

[15:31:00] user: I like coffee, a flat white every afternoon. I don't like tea though, never have.
[15:31:30] assistant: Noted: coffee yes, tea no.
[15:33:10] user: Also, for the record, I prefer Go over Java. Java feels too verbose to me.
[15:33:40] assistant: Understood, I'll default to Go examples.
""",
    # d2: mixed within turns. Explicit launch date, a rule, API version, an opinion.
    """---
date: {d2}
---
## 上线计划

[14:00] 我: 青鸟的上线日期定在 {launch_cn}（周三）。
[14:01] claw: 好的，已记录上线日期：{launch_cn}。
[14:03] 我: 另外定一条规矩：永远不要在周五发布。Never deploy on Fridays, no exceptions.
[14:03] claw: 明白，周五不发布。你安排发布时我会提醒。

## API

[16:20] 我: API 版本是 v2.1.0，下游的 WMS 也在用这个版本。
[16:21] claw: 收到，当前 API 版本 v2.1.0。
[16:40] 我: 有人建议用 Rust 重写同步模块。我觉得 Rust 的学习曲线太陡，团队短期内上不了手。
[16:41] claw: 可以理解，Go 的生态对这个场景已经足够了。
""",
    # d3: Chinese, a declared colleague, full-width colons, a multi-line turn, and an assistant
    # inference ("更喜欢 Java") that contradicts what the user said on d1.
    """---
date: {d3}
speakers:
  王磊: other
---
# {d3}

## 服务器扩容

[09:40] 用户：服务器配置升级到 8C16G 了，昨晚运维刚弄好。
[09:41] 助手：好的，服务器配置已更新为 8C16G。
[09:45] 王磊: 我这边压测跑完了，QPS 能到 3000 左右。
[09:46] 用户: 不错，比之前翻了一倍。
[09:47] 助手: 建议扩容后做三项检查：
  1. 确认连接池大小已经调大
  2. 观察 GC 停顿时间
  3. 更新监控告警阈值
[09:50] 用户: 好，下午我过一遍。

## 代码评审

[15:10] 用户: 帮我看看这段订单去重的逻辑，用一个大 map 加全局锁是不是太重了？
[15:12] 助手: 可以按订单号分片加锁。另外，看起来你更喜欢 Java，要不要考虑用 Spring Boot 重写这部分？
[15:13] 用户: 先按分片加锁改吧。
[15:14] 助手: 好的，改完可以再跑一次压测。
""",
    # d4: English. The port changes, a plan for tomorrow, a restated style preference and rule.
    """# {d4}

## Database migration

[10:15] me: The database port is now 5433, ops changed it during last night's migration.
[10:16] ai: Updated: database port 5433.
[10:20] me: I plan to write the migration guide tomorrow. Can you draft an outline?
[10:21] ai: Sure, an outline:
  - why we moved to PostgreSQL
  - schema changes and the new port
  - rollback steps
[10:30] me: Looks good. Keep it short, I like concise answers.
[10:30] ai: Will do.

## Release rules

[17:45] me: Someone asked to ship a hotfix on Friday. Reminder: never deploy on Fridays.
[17:46] ai: Agreed. Monday morning would be safer.
""",
    # d5: mixed. The assistant states the old port, the user corrects it; a relative launch day.
    """---
date: {d5}
---
# {d5}

## 配置核对

[09:00] 助手: 早上好。核对一下配置：你的数据库端口是 5432，对吧？
[09:01] 用户: 不对，数据库端口应该是 5433，不是 5432。昨天刚改的。
[09:01] 助手: 抱歉，已更正为 5433。
[09:05] 用户: The migration guide is done, 迁移指南已经写完了。
[09:06] 助手: 太好了，需要我帮你校对吗？
[09:07] 用户: 不用了，谢谢。

## 上线安排

[11:30] 用户: 我们下周三上线，今天开始冻结需求。
[11:31] 助手: 好的，从今天起需求冻结，我会提醒大家。
""",
    # d6: Chinese. API upgrade, the server size restated unchanged, a format preference.
    """# {d6}

## 版本升级

[10:00] 用户: API 版本升级到 v2.2.0 了，新增了批量查询接口。
[10:01] 助手: 已更新：API 版本 v2.2.0。
[10:05] 用户: 顺便确认一下，服务器配置还是 8C16G，没有再变。
[10:05] 助手: 好的，服务器配置 8C16G。
[10:10] 用户: 以后回答请都用简洁格式，列要点就行。
[10:10] 助手: 明白，以后用要点列出。

## 周末

[18:20] 用户: 周末打算去西湖边跑步，顺便喝杯咖啡。
[18:21] 助手: 听起来很惬意！注意防晒。
""",
    # d7 (end_day): mixed. Weekly review, the port restated (reinforced), a new plan.
    """---
date: {d7}
---
# {d7}

## Weekly review

[17:00] user: Let's do a quick weekly review for Qingniao.
[17:01] bot: Sure. Highlights this week:
  - servers upgraded to 8C16G
  - database port changed to 5433
  - API upgraded to v2.2.0
[17:03] user: 对，数据库端口是 5433，这个没错。
[17:04] bot: 好的。上线前还有什么要准备的吗？
[17:06] user: I still need to update the runbook. 我打算明天完成压测报告。
[17:07] bot: Noted both. Anything else?
[17:08] user: That's all. 记得下周也用中文、简洁地回答我。
[17:08] bot: 没问题。
""",
]

# d1 evening, from a phone chat app: a clean JSONL export next to that day's .md.
_EXPORT_D1 = [
    ("user", "我养了一只橘猫，叫豆包。", "21:05:00"),
    ("assistant", "豆包这个名字很可爱！", "21:05:20"),
    ("user", "On weekends I usually go running by West Lake.", "21:07:00"),
    ("assistant", "Nice, West Lake is a great place for a run.", "21:07:15"),
]

# d3 evening export, damaged: line 3 is cut off mid-string (a crashed exporter), line 4 has a role
# the format does not know. Lines 1, 2 and 5 are valid and must still be read.
_EXPORT_D3 = [
    ("user", "晚上再确认一下：Redis 的最大内存是 4GB。", "20:15:00"),
    ("assistant", "好的，Redis maxmemory 4GB。", "20:15:30"),
    None,  # the broken line goes here
    ("narrator", "(the user stepped away)", "20:30:00"),
    ("user", "Good night!", "20:31:00"),
]
_BROKEN_JSON_LINE = '{"role": "user", "content": "明天的会议改到下午三点'


def _next_week_weekday(day: date, weekday: int) -> date:
    """The given weekday (Mon=0) of the calendar week after ``day``: how 下周三 is read here."""
    next_monday = day + timedelta(days=7 - day.weekday())
    return next_monday + timedelta(days=weekday)


def _jsonl(day: date, rows: list) -> bytes:
    lines = []
    for row in rows:
        if row is None:
            lines.append(_BROKEN_JSON_LINE)
            continue
        role, content, hms = row
        obj = {"role": role, "content": content, "timestamp": f"{day.isoformat()}T{hms}+08:00"}
        lines.append(json.dumps(obj, ensure_ascii=False))
    return ("\n".join(lines) + "\n").encode("utf-8")


def launch_day(end_day: date) -> date:
    """The demo project's launch date: 下周三 as said on the sixth day (always after ``end_day``)."""
    return _next_week_weekday(end_day - timedelta(days=DAYS - 1 - 5), 2)


def demo_files(end_day: date) -> dict[str, bytes]:
    """File name -> exact bytes of every demo log (pure: the same ``end_day`` gives the same bytes)."""
    days = [end_day - timedelta(days=DAYS - 1 - i) for i in range(DAYS)]
    launch = launch_day(end_day)
    ctx = {f"d{i}": d.isoformat() for i, d in enumerate(days)}
    ctx["launch_cn"] = f"{launch.year}年{launch.month}月{launch.day}日"
    files = {f"{d.isoformat()}.md": text.format(**ctx).encode("utf-8") for d, text in zip(days, _DAY_TEXTS)}
    files[f"{days[1].isoformat()}.jsonl"] = _jsonl(days[1], _EXPORT_D1)
    files[f"{days[3].isoformat()}.jsonl"] = _jsonl(days[3], _EXPORT_D3)
    # A note saved by an editor in GBK: a real-world mis-encoded file. The first line is plain ASCII,
    # the second is not valid UTF-8: that line is quarantined with a readable reason, the first is still read.
    files[f"{days[5].isoformat()}-scratch.md"] = (
        b"# scratch\n\n" + "[22:40] 我: 记一下：明天把备份脚本的 cron 改成凌晨三点。\n".encode("gbk")
    )
    return files


def write_demo_logs(target_dir: Path, *, end_day: date) -> list[Path]:
    """Write the demo logs (8 consecutive days ending at ``end_day``) into ``target_dir``.

    Only the demo's own file names are written; nothing else in the folder is touched.
    """
    target_dir = Path(target_dir)
    target_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for name, data in sorted(demo_files(end_day).items()):
        path = target_dir / name
        path.write_bytes(data)
        written.append(path)
    return written


# What a user might already have when the demo's nightly runs: a memory record they wrote by hand (in
# Obsidian, say) that the logs will restate in other words, and a memory card dropped into the inbox.
_DEMO_MANUAL_RECORD = """---
name: 回答风格
description: 请以后都用中文回答，尽量简短
type: feedback
source: manual
recallCount: 0
lastRecalledAt: null
created: '2026-11-01T09:00:00+08:00'
updated: '2026-11-01T09:00:00+08:00'
tags: [写作]
---

我自己记下的：回答用中文，短一点，先给结论。
"""

_DEMO_CARD = """---
type: feedback
description: 以后所有周报都用简洁格式，先写结论再列风险
---

周报不超过一页：先写结论，再列风险和下周计划。
"""


def write_demo_memories(home: Path, user: str = "default") -> list[str]:
    """The demo's hand-written memory record and inbox memory card (only when absent: never overwritten)."""
    ws = Workspace(Path(home))
    out = []
    for path, text in ((ws.memory_records_dir / user / "回答风格.md", _DEMO_MANUAL_RECORD),
                       (ws.knowledge / "00_stream/inbox/memory/周报习惯.md", _DEMO_CARD)):
        if not path.exists():
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
            out.append(str(path))
    return out


# Material for the knowledge base, as a user would drop it into agent-local/materials/: two web clippings
# (Chinese and English, their source URLs in the frontmatter), a personal note, and a PDF that must be
# converted first (collect refuses it and says so).
_DEMO_MATERIALS = {
    "clippings/postgresql-logical-replication.md": """---
source: https://www.postgresql.org/docs/current/logical-replication.html
title: PostgreSQL 逻辑复制
---
# PostgreSQL 逻辑复制

逻辑复制基于发布（publication）和订阅（subscription）模型，按表复制数据变更。

## 配置

发布端需要把 wal_level 设为 logical，然后用 CREATE PUBLICATION 创建发布。
订阅端用 CREATE SUBSCRIPTION 连接到发布端。

## 限制

逻辑复制不复制 DDL 和序列值，表结构需要两边各自维护。
""",
    "clippings/kubernetes-hpa.md": """---
source: https://kubernetes.io/docs/tasks/run-application/horizontal-pod-autoscale/
title: Horizontal Pod Autoscaling walkthrough
---
# Horizontal Pod Autoscaling walkthrough

The HorizontalPodAutoscaler scales a Deployment to match demand.

## Steps

1. Install the metrics server so that the autoscaler can read CPU usage.
2. Create the autoscaler: `kubectl autoscale deployment web --cpu-percent=50 --min=1 --max=10`.
3. Generate load and watch the replica count grow with `kubectl get hpa --watch`.
""",
    "personal/发布检查清单.md": """# 发布检查清单

我自己的发布前检查，每次上线前过一遍。

1. 确认不是周五。
2. 数据库迁移脚本已在预发环境跑过。
3. 监控告警阈值已更新。
""",
    "architecture.pdf": b"%PDF-1.7\n% a binary PDF the collector must refuse\n",
}


def write_demo_materials(home: Path) -> list[str]:
    """The demo's knowledge material in agent-local/materials/ (only files that are absent)."""
    root = Workspace(Path(home)).local / "materials"
    out = []
    for rel, content in _DEMO_MATERIALS.items():
        path = root / rel
        if not path.exists():
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(content if isinstance(content, bytes) else content.encode("utf-8"))
            out.append(str(path))
    return out


def init_demo_workspace(home: Path, *, user: str = "default", end_day: date | None = None, timezone: str = "Asia/Shanghai") -> dict:
    """``agentos init --demo``: the workspace tree and identity files, and, when the user's working-memory
    folder is empty, the demo logs ending ``end_day`` (default: yesterday in ``timezone``, the workspace's zone)."""
    out = init_workspace(home)
    target = Workspace(Path(home)).working_dir(user)
    target.mkdir(parents=True, exist_ok=True)
    if not any(target.iterdir()):
        out["demo_logs"] = [str(p) for p in write_demo_logs(target, end_day=end_day or clock.yesterday(timezone))]
    return out
