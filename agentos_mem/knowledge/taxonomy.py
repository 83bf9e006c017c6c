"""The knowledge taxonomy (design doc section 3.1) as a workspace file the user can edit.

``agent-sync/03_knowledge/99_system/taxonomy.md`` holds one ``## <category path>`` section per category:
free text lines are its description, ``- example: ...`` lines are short sample items, ``- keywords: a, b, 中文``
lines are words whose presence votes for the category. The file is written from :data:`TEMPLATE` when it is
absent and never overwritten: it is the user's from then on, and :func:`load_taxonomy` reads it back on every
call, so an edited description, example or keyword changes classification at once.

Descriptions and examples are bilingual on purpose: the offline classifier compares an item's embedding with
them, and the multilingual model ranks same-language texts a little higher, so each category needs both.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from agentos_mem.kernel.files import atomic_write, guard
from agentos_mem.kernel.workspace import Workspace

TAXONOMY_RELPATH = Path("99_system/taxonomy.md")


@dataclass(frozen=True)
class Category:
    path: str  # relative to 03_knowledge, e.g. "10_concepts/ai", "20_methods"
    description: str
    examples: tuple[str, ...] = ()
    keywords: tuple[str, ...] = ()
    extra: dict = field(default_factory=dict, compare=False)  # unknown "- key: value" lines, kept for the caller


TEMPLATE = """# 知识分类法 / Knowledge taxonomy

每个 `## 路径` 小节是一个分类：普通文字行是描述，`- example:` 是示例条目，`- keywords:` 是关键词（逗号分隔）。
修改描述、示例或关键词会直接影响自动分类。Each `## path` section is one category: plain lines describe it,
`- example:` lines are sample items, `- keywords:` lines are comma-separated words that vote for it.
Editing them changes how the inbox is classified.

## 10_concepts/cs
计算机科学概念：算法、数据结构、操作系统、网络、数据库、编程语言、分布式系统与软件架构的原理。
Computer science concepts: algorithms, data structures, operating systems, networking, databases, programming languages, distributed systems and software architecture.
- example: 哈希表通过散列函数把键映射到桶，平均查找时间为常数。
- example: 进程与线程的区别：线程共享进程的地址空间，切换开销更小。
- example: TCP uses a three-way handshake and sequence numbers to provide reliable, ordered delivery.
- example: A B-tree keeps keys sorted in wide nodes so that databases touch few disk pages per lookup.
- keywords: 算法, 数据结构, 编译器, 操作系统, 内核, 数据库, 分布式, 并发, 缓存, 协议, algorithm, compiler, kernel, database, concurrency, distributed, cache, protocol, garbage collection

## 10_concepts/ai
人工智能概念：机器学习、深度学习、神经网络、大语言模型、强化学习、嵌入与检索增强生成。
Artificial intelligence concepts: machine learning, deep learning, neural networks, large language models, reinforcement learning, embeddings and retrieval-augmented generation.
- example: 注意力机制让模型在生成每个词时按相关性加权参考输入的所有位置。
- example: 过拟合是指模型在训练集上表现很好，但在新数据上泛化能力差。
- example: Reinforcement learning trains an agent to maximise cumulative reward by trial and error.
- example: Embeddings map text to vectors so that semantically similar passages lie close together.
- keywords: 人工智能, 机器学习, 深度学习, 神经网络, 大模型, 语言模型, 训练, 推理, 强化学习, 向量, machine learning, neural network, LLM, transformer, embedding, fine-tuning, reinforcement learning

## 10_concepts/finance
金融概念：投资、股票、债券、利率、通货膨胀、货币政策、估值、风险与资产配置。
Finance concepts: investing, stocks, bonds, interest rates, inflation, monetary policy, valuation, risk and asset allocation.
- example: 债券价格与市场利率反向变动，久期衡量价格对利率的敏感度。
- example: 复利意味着收益会继续产生收益，时间越长效果越明显。
- example: Diversification lowers portfolio risk because assets do not move perfectly together.
- example: Inflation erodes purchasing power, so real returns are nominal returns minus inflation.
- keywords: 金融, 投资, 股票, 债券, 利率, 通胀, 基金, 估值, 收益率, 央行, finance, investing, stock, bond, interest rate, inflation, dividend, portfolio, central bank

## 10_concepts/law
法律概念：法律原则、法条、合同、侵权、知识产权、诉讼程序、法规与合规。
Law concepts: legal principles, statutes, contracts, torts, intellectual property, litigation, regulation and compliance.
- example: 诉讼时效届满后，债务人可以提出不履行义务的抗辩。
- example: 要约与承诺一致时合同成立，合同对双方具有约束力。
- example: Under copyright law, protection covers the expression of an idea, not the idea itself.
- example: A tort is a civil wrong that causes harm and gives the injured party a claim for damages.
- keywords: 法律, 法条, 合同, 侵权, 诉讼, 法院, 条例, 民法典, 知识产权, 违约, law, statute, contract, tort, court, liability, copyright, regulation, plaintiff

## 10_concepts/medicine
医学概念：疾病、症状、诊断、药物、生理、免疫与公共卫生。
Medicine concepts: diseases, symptoms, diagnosis, drugs, physiology, immunity and public health.
- example: 胰岛素由胰腺分泌，帮助细胞吸收血液中的葡萄糖。
- example: 抗生素只对细菌感染有效，对病毒性感冒没有作用。
- example: Vaccines train the immune system to recognise a pathogen without causing the disease.
- example: Hypertension raises the risk of stroke and heart failure and often has no symptoms.
- keywords: 医学, 疾病, 症状, 诊断, 药物, 患者, 免疫, 病毒, 细菌, 治疗, medicine, disease, symptom, diagnosis, drug, patient, immune, virus, clinical

## 10_concepts/physics
物理概念：力学、热力学、电磁学、量子力学、相对论与光学。
Physics concepts: mechanics, thermodynamics, electromagnetism, quantum mechanics, relativity and optics.
- example: 熵描述系统的无序程度，孤立系统的熵不会减少。
- example: 光电效应说明光以光子的形式传递能量。
- example: Newton's second law states that force equals mass times acceleration.
- example: In special relativity, moving clocks run slow relative to a stationary observer.
- keywords: 物理, 力学, 能量, 动量, 量子, 相对论, 电磁, 热力学, 粒子, physics, energy, momentum, quantum, relativity, electromagnetic, thermodynamics, particle, gravity

## 10_concepts/math
数学概念：代数、几何、微积分、概率统计、数论、线性代数与证明。
Mathematics concepts: algebra, geometry, calculus, probability, number theory, linear algebra and proofs.
- example: 导数描述函数在某一点的瞬时变化率。
- example: 素数有无穷多个，欧几里得用反证法给出了证明。
- example: An eigenvector of a matrix only gets scaled, not rotated, when the matrix is applied to it.
- example: Bayes' theorem updates a prior probability with the likelihood of new evidence.
- keywords: 数学, 定理, 证明, 函数, 矩阵, 概率, 微积分, 方程, 几何, mathematics, theorem, proof, matrix, probability, calculus, equation, integral, prime

## 10_concepts/business
商业概念：商业模式、市场营销、战略、管理、创业、产品与竞争。
Business concepts: business models, marketing, strategy, management, startups, products and competition.
- example: 护城河指企业抵御竞争者的持久优势，例如网络效应和品牌。
- example: 用户获取成本必须低于用户生命周期价值，生意才能持续。
- example: A two-sided marketplace must attract both buyers and sellers before either side finds it useful.
- example: Product-market fit means a product satisfies strong demand in a well-defined market.
- keywords: 商业, 商业模式, 营销, 市场, 创业, 战略, 客户, 竞争, 品牌, 管理, business model, marketing, startup, strategy, customer, revenue, competition, brand, management

## 10_concepts/personal-insight
个人洞见：自己的经验总结、反思、习惯、心得与人生感悟，以第一人称记录。
Personal insights: one's own lessons learned, reflections, habits and realisations, written in the first person.
- example: 我发现每天早上先写半小时，比晚上加班写效率高得多。
- example: 回顾这一年，最大的收获是学会了拒绝不重要的请求。
- example: I noticed that I learn faster when I explain a topic to someone else the same day.
- example: Lesson learned this year: my energy matters more than my schedule.
- keywords: 反思, 感悟, 心得, 复盘, 习惯, 我发现, 收获, 教训, reflection, lesson learned, I realised, I noticed, habit, my experience

## 20_methods
方法论、流程、标准操作程序（SOP）与操作指南：一步一步怎么做某件事。
Methods, processes, standard operating procedures and how-to guides: how to do something, step by step.
- example: 数据库备份流程：第一步停止写入，第二步导出快照，第三步校验并上传。
- example: 如何做周复盘：列出本周目标，对照完成情况，写下下周改进项。
- example: How to rotate an API key: create the new key, deploy it, verify traffic, then revoke the old one.
- example: Checklist for onboarding a new teammate: accounts, repository access, first task, review buddy.
- keywords: 步骤, 流程, 方法, 指南, 教程, 如何, 怎么, 清单, 操作, how to, step, steps, procedure, guide, checklist, workflow, tutorial, SOP

## 30_facts
事实与数据：统计数字、测量结果、日期、规格参数、排名与调查数据。
Facts and data: statistics, measurements, dates, figures, specifications, rankings and survey results.
- example: 2023年全国粮食总产量为6.95亿吨，比上年增长1.3%。
- example: 服务器配置：8核CPU，16GB内存，500GB SSD，带宽10Mbps。
- example: Mount Everest is 8,849 metres high according to the 2020 survey.
- example: The company reported revenue of 4.2 billion dollars in 2023, up 12% from 2022.
- keywords: 数据, 统计, 数字, 同比, 增长, 占比, 人口, 总量, statistics, data, figure, percent, population, survey, measured, record

## 40_references
参考资料：规范、标准、API 文档、手册、命令参考、配置项说明与速查表。
Reference material: specifications, standards, API documentation, manuals, command references, configuration options and cheat sheets.
- example: GET /v1/users/{id} 返回用户对象；参数 id 为整数，必填；错误码 404 表示用户不存在。
- example: 配置项 max_connections：最大连接数，默认 100，取值范围 1-10000。
- example: RFC 7231 defines the semantics of HTTP/1.1 methods, status codes and headers.
- example: git log options: --oneline prints one line per commit, --graph draws the branch graph.
- keywords: 参考, 文档, 规范, 标准, 手册, 接口, 参数, 返回值, 配置项, reference, specification, API, parameter, endpoint, manual, RFC, documentation, option

## 50_resources
资源与链接：工具清单、书单、网站合集、课程、数据集与下载地址。
Resources and links: tool lists, reading lists, link collections, courses, datasets and downloads.
- example: 推荐书单：《深入理解计算机系统》《算法导论》《代码大全》。
- example: 免费学习资源合集：Coursera 机器学习课程、B站线性代数公开课、MDN 文档。
- example: Awesome list of self-hosted tools: Nextcloud, Jellyfin, Gitea, Vaultwarden.
- example: Useful links: https://example.org/course, https://example.org/datasets, https://example.org/tools
- keywords: 资源, 链接, 书单, 合集, 推荐, 工具, 课程, 下载, 网站, resources, links, awesome, list, course, tools, bookmarks, dataset

## 60_opinions
观点与评论：个人或作者的看法、评价、评论、争论与预测。
Opinions and commentary: views, judgements, reviews, arguments and predictions by the author or others.
- example: 我认为远程办公对资深工程师利大于弊，但新人更需要面对面带教。
- example: 这部电影的剧情拖沓，但摄影非常出色，总体值得一看。
- example: In my view, most startups should not build their own infrastructure.
- example: Review: the new laptop is fast, but the keyboard feels cheap and the battery disappoints.
- keywords: 观点, 评论, 我认为, 看法, 评价, 认为, 应该, 不应该, 预测, opinion, I think, I believe, in my view, review, should, overrated, argue

## 90_archive
归档：过时、已废弃、被取代或不再有效的内容。
Archive: outdated, deprecated, superseded or no longer valid material.
- example: 【已废弃】旧版部署脚本，2021年起改用容器部署，本文仅供参考。
- example: 此政策已于去年失效，新规定见另一篇笔记。
- example: Deprecated: the v1 API was shut down in 2022; use v2 instead.
- example: Obsolete notes on Python 2 unicode handling, kept for history.
- keywords: 已废弃, 废弃, 过时, 失效, 停用, 旧版, 归档, 不再, deprecated, obsolete, outdated, superseded, legacy, archived, no longer
"""


def taxonomy_path(home: Path) -> Path:
    return Workspace(Path(home)).knowledge / TAXONOMY_RELPATH


def ensure_taxonomy(home: Path) -> Path:
    """Write the built-in template when the file is absent; an existing file is the user's and stays as it is."""
    path = taxonomy_path(home)
    if not os.path.lexists(path):  # a link there (even a dangling one) is the user's: never written through
        atomic_write(path, TEMPLATE)  # atomic, so a concurrent reader never sees half a template
    return path


# "- key: value" with an ASCII or full-width colon (users typing Chinese often produce "：").
_ITEM = re.compile(r"^\s*[-*]\s*([A-Za-z_\u4e00-\u9fff]+)\s*[:：]\s*(.*)$")
_KEY_ALIASES = {"example": "example", "examples": "example", "示例": "example", "例子": "example",
                "keywords": "keywords", "keyword": "keywords", "关键词": "keywords",
                "description": "description", "描述": "description"}
# Keyword lists are split on ASCII and Chinese commas and enumeration marks.
_KEYWORD_SPLIT = re.compile(r"[,，、;；]")


def parse_taxonomy(text: str) -> list[Category]:
    """Categories in file order. Lines before the first ``##`` heading are the file's own explanation."""
    sections: list[tuple[str, list[str]]] = []
    for line in text.splitlines():
        if line.startswith("## "):
            sections.append((line[3:].strip().strip("/"), []))
        elif sections:
            sections[-1][1].append(line)
    return [_category(path, lines) for path, lines in sections if path]


def _category(path: str, lines: list[str]) -> Category:
    desc: list[str] = []
    examples: list[str] = []
    keywords: list[str] = []
    extra: dict[str, list[str]] = {}
    for line in lines:
        m = _ITEM.match(line)
        if not m:
            if line.strip() and not line.lstrip().startswith("#"):
                desc.append(line.strip())
            continue
        key, value = _KEY_ALIASES.get(m.group(1).lower(), m.group(1).lower()), m.group(2).strip()
        if key == "example" and value:
            examples.append(value)
        elif key == "keywords":
            keywords.extend(k.strip() for k in _KEYWORD_SPLIT.split(value) if k.strip())
        elif key == "description" and value:
            desc.append(value)
        else:
            extra.setdefault(key, []).append(value)
    return Category(path, " ".join(desc), tuple(examples), tuple(dict.fromkeys(keywords)), extra)


def _home_of(settings_or_home) -> Path:
    # A Path has a ``home`` attribute too (the classmethod), so test for paths first.
    if isinstance(settings_or_home, (str, Path)):
        return Path(settings_or_home)
    return Path(settings_or_home.home)


def load_taxonomy(settings_or_home=None) -> list[Category]:
    """The workspace's taxonomy (created from the template when absent). ``None`` gives the built-in template
    without touching any workspace, for benchmarks and callers that have no home."""
    if settings_or_home is None:
        return parse_taxonomy(TEMPLATE)
    path = ensure_taxonomy(_home_of(settings_or_home))
    return parse_taxonomy(guard(path).read_text(path))


def builtin_taxonomy() -> list[Category]:
    return parse_taxonomy(TEMPLATE)
