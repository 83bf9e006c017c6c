"""Shared vocabulary of the rule families: who "I" is, adverbs, role nouns, technical and attribute words, and
the sentence-level markers every family respects (questions, hypotheticals, hedges, a dropped 我)."""

from __future__ import annotations

import re

from agentos_mem.digest.extract.normalize import has_any, naming, Sentence, sentences, Source

ZH_I = r"(?:我们|咱们|我)"
# Adverbs that may sit between 我 and the verb ("我也很喜欢", "我现在住在"). Never 更 (that is "prefers").
ZH_ADV = (
    r"(?:也|还是|还|都|很|非常|特别|真的|真心|真|一直|最|挺|蛮|超级|超|就|又|确实|其实|本来|向来|一向|从小就|从小|"
    r"十分|尤其|相当|好|老|平时|平常|现在|目前|如今|越来越|开始|渐渐|已经|依然|仍然|始终|比较|实在|同样|一样|"
    r"可能|大概|也许|或许|好像|似乎|应该)"
)
EN_I = r"\b(?:I|we)"
EN_IS = r"\b(?:I|we)(?:\s+|(?='))"  # "I " or "I'm"
EN_ADV = (
    r"(?:(?:also|really|just|absolutely|still|do|genuinely|quite|truly|always|especially|actually|totally|"
    r"definitely|generally|usually|sincerely|deeply|particularly|personally|now|currently|so|too|kind\s+of|"
    r"sort\s+of|even|certainly|all|both|mostly|simply|probably|maybe|perhaps|possibly)\s+)"
)
ZH_ROLE = (
    r"工程师|程序员|开发者|开发人员|架构师|设计师|产品经理|项目经理|经理|总监|主管|总裁|董事长|老板|创始人|合伙人|"
    r"学生|大学生|研究生|博士生|硕士生|本科生|高中生|初中生|小学生|留学生|实习生|老师|教师|教授|讲师|医生|护士|"
    r"律师|会计师|会计|分析师|科学家|研究员|作家|记者|编辑|翻译|主播|销售|店长|厨师|司机|警察|演员|歌手|画家|"
    r"摄影师|音乐人|顾问|职员|员工|工人|农民|军人|公务员|自由职业者|创业者|运维|咨询师|社工|志愿者|家庭主妇|"
    r"全职妈妈|全职爸爸|宝妈|博主|运营|策划|数据分析师|CEO|CTO|COO|CFO|HR"
)
EN_ADV_NO_DO = EN_ADV.replace("|do|", "|")  # "I will do some exercises": "do" is the verb there
EN_ROLE = (
    r"engineer|developer|programmer|coder|architect|designer|manager|director|student|teacher|professor|"
    r"lecturer|tutor|doctor|physician|surgeon|nurse|dentist|pharmacist|therapist|counselor|counsellor|"
    r"psychologist|lawyer|attorney|accountant|analyst|scientist|researcher|writer|author|journalist|editor|"
    r"translator|artist|painter|musician|singer|photographer|chef|cook|baker|driver|pilot|officer|soldier|"
    r"veteran|consultant|founder|co-founder|CEO|CTO|CFO|COO|intern|freelancer|entrepreneur|owner|employee|"
    r"worker|clerk|cashier|librarian|mechanic|electrician|plumber|farmer|volunteer|activist|coach|trainer|"
    r"retiree|homemaker|housewife|mom|mother|dad|father|parent|postdoc|undergrad|specialist|technician|"
    r"administrator|secretary|salesperson|marketer|recruiter|streamer|blogger|youtuber|dancer|actor|actress|"
    r"athlete|woman|man"
)
# Words that make a subject or object technical (technical facts expire sooner).
_TECH = re.compile(
    r"\b(?:ports?|servers?|hosts?|hostname|databases?|db|redis|mysql|postgres(?:ql)?|sqlite|mongo(?:db)?|api|urls?|endpoints?|ip|versions?|"
    r"config(?:uration)?|memory|ram|cpu|gpu|vcpu|disk|storage|cluster|nodes?|deploy(?:ment|ed|s)?|framework|(?:programming\s+)?language|library|sdk|"
    r"timeout|tokens?|domain|dns|ssl|tls|docker|kubernetes|k8s|branch|repo(?:sitory)?|build|staging|production|prod|env(?:ironment)?|python|java|"
    r"javascript|typescript|node\.js|rust|golang|linux|ubuntu|os|kernel|bandwidth|latency|qps|cache|proxy|nginx|backend|frontend|schema|index|queue|"
    r"bucket|region|instance|vm|container|image|runtime|compiler|editor|ide|shell|cron|webhook|ci|cd|pipeline|replica|shard|git|http|https|json|"
    r"yaml|cli)\b|端口|服务器|主机|配置|数据库|版本|接口|域名|内存|显存|显卡|硬盘|磁盘|存储|集群|节点|部署|框架|编程语言|语言|缓存|超时|密钥|环境|分支|仓库|系统|带宽|代码|容器|镜像|依赖|编译|线上|后端|前端|实例|机器|网关|中间件|"
    r"队列|\d+\s*[cC]\s*\d+\s*[gG]|\b\d+\s*(?:GB|MB|TB|G|C|核|vCPU|ms)\b|\d+\s*(?:核|G|"
    r"GB)|\b\d{1,3}(?:\.\d{1,3}){3}\b|\bv?\d+\.\d+\.\d+\b|\bv\d+(?:\.\d+)?\b|https?://|localhost",
    re.I,
)
# Subjects whose head (last word) is an attribute of a person or thing: "X 是 Y" then states a value even
# without digits ("my favourite colour is blue", "女儿的名字是小美"; not "The Name of the Wind is great").
ATTRIBUTE = re.compile(
    r"(?:\b(?:name|email|e-mail|phone|number|address|birthday|age|colou?r|city|hometown|company|employer|school|university|college|major|team|"
    r"manager|boss|budget|deadline|goal|time\s*zone|pet|dog|cat|username|password|account|id|model|brand|size|height|weight|blood\s+type|wife|"
    r"husband|partner|girlfriend|boyfriend|son|daughter|font|salary|rent|title|position|department|office|meeting|flight|room|seat|car|schedule|"
    r"price|cost|rate|score|grade|level|status|location|zip|postcode|website|handle|nickname|alias|favou?rite\s+\w+)\b|名字|名称|昵称|邮箱|电子邮件|电话|手机号?|号码|"
    r"地址|生日|年龄|颜色|城市|家乡|老家|公司|单位|学校|大学|专业|团队|部门|领导|老板|经理|预算|截止日期|期限|目标|时区|宠物|猫|狗|用户名|账号|帐号|密码|型号|品牌|尺码|尺寸|身高|体重|血型|星座|老婆|老公|妻子|丈夫|女朋友|男朋友|对象|儿子|女儿|"
    r"字体|工资|薪水|房租|职位|职称|岗位|会议|航班|房间|座位|车牌|日程|价格|费用|成本|分数|成绩|等级|位置|邮编|网站|学号|工号|时间|日期|地点)\W*$",
    re.I,
)
PRONOUN_SUBJECTS = frozenset(
    "我 你 您 他 她 它 我们 你们 他们 她们 这 那 这个 那个 这些 那些 这里 那里 谁 "
    "i me you he she it we they him her us them this that these those there here what which who one "
    "my your his our their its glad".split()
)
# Question clauses: Chinese question words anywhere, English interrogatives at the clause start (with a "?").
_ZH_QUESTION = re.compile(r"吗|什么|哪|怎么|怎样|为什么|为何|多少|几点|几号|几个|几岁|是否|是不是|有没有|能不能|可不可以|要不要|会不会|好不好|对不对|呢\s*[?]?\s*$")
_EN_QUESTION_START = re.compile(
    r"^\s*(?:(?:so|and|but|well|oh|hey|also|then|ok|okay|by\s+the\s+way|btw)[,\s]+)?(?:what|which|how|why|where|when|who|whom|whose|do|does|did|are|"
    r"is|am|was|were|can|could|would|will|should|shall|have|has|may|isn't|aren't|don't|doesn't|didn't|won't|wouldn't|any)\b",
    re.I,
)
# A value is never read from a clause that asks something.
_EN_QUESTION_WORD = re.compile(r"\b(?:what|which|how|whether|who)\b", re.I)
# Hypotheticals: nothing in the sentence is a fact.
_HYPOTHETICAL = re.compile(
    r"如果|假如|假设|假使|(?<!主)(?<!只)(?<!就)要是|万一|倘若|若是|哪怕|\bif\b|\bsuppose\b|\bsupposing\b|\bimagine\b|\bin\s+case\b|\bassuming\b|\bwhat\s+if\b",
    re.I,
)

# Every branch of _HYPOTHETICAL contains one of these (lower-cased) keywords.
_HYPOTHETICAL_KEYS = (
    "如果", "假如", "假设", "假使", "要是", "万一", "倘若", "若是", "哪怕", "if", "suppos", "imagine", "in case", "assuming",
)

# Hedges turn a statement into an inference.
_HEDGE = re.compile(
    r"可能|大概|也许|或许|好像|似乎|估计|说不定|不确定|不太确定|我猜|应该吧|我觉得|我认为|\b(?:maybe|probably|perhaps|possibly|might|i\s+guess|i\s+think|i\s+believe|i\s+suppose|"
    r"not\s+sure)\b",
    re.I,
)


def hypothetical(sent: Sentence) -> bool:
    return has_any(sent.lower, _HYPOTHETICAL_KEYS) and bool(_HYPOTHETICAL.search(sent.s))


def is_technical(*texts: str) -> bool:
    return any(t and _TECH.search(t) for t in texts)


def is_question(sent: Sentence, ci: int, values: bool = False) -> bool:
    a, b = sent.clauses[ci]
    c = sent.s[a:b]
    if _ZH_QUESTION.search(c):
        return True
    qmark = sent.s.rstrip().endswith("?")
    if qmark and (ci == len(sent.clauses) - 1 or _EN_QUESTION_START.match(c)):
        return True
    return values and bool(_EN_QUESTION_WORD.search(c))


_TAG_QUESTION = re.compile(r"^\s*(?:对吧|是吧|对吗|是吗|对不对|是不是|没错吧|right|correct|isn't\s+it|is\s+that\s+right)\s*\??\s*$", re.I)


def asks(sent: Sentence, start: int) -> bool:
    """The clause at ``start`` is a question, or is followed only by a tag question ("…5432，对吧？")."""
    ci = sent.clause_at(start)
    if is_question(sent, ci):
        return True
    if sent.s.rstrip().endswith("?") and ci + 1 < len(sent.clauses):
        a, b = sent.clauses[-1]
        return ci + 2 >= len(sent.clauses) and bool(_TAG_QUESTION.match(sent.s[a:b]))
    return False


def hedged(sent: Sentence, start: int, end: int) -> bool:
    ca = sent.clauses[sent.clause_at(start)][0]
    return bool(_HEDGE.search(sent.s, ca, end))


# Clauses that start with 我 (after a discourse word), or with someone else.
CLAUSE_I = re.compile(r"\s*(?:(?:其实|而且|但是|不过|所以|另外|平时|现在|最近|目前|嗯|对|是的)[,\s]*)?(?:我们|我)")
_CLAUSE_OTHER = re.compile(r"\s*(?:你|您|他|她|它|大家|别人|朋友|家人|[A-Za-z])")


def inherits_i(sent: Sentence, pos: int) -> bool:
    """"我是工程师，在腾讯工作，住在深圳": walk back over subjectless clauses to one that starts with 我."""
    for j in range(sent.clause_at(pos) - 1, -1, -1):
        a, b = sent.clauses[j]
        if CLAUSE_I.match(sent.s, a, b):
            return True
        if _CLAUSE_OTHER.match(sent.s, a, b):
            return False
    return False


def not_a_statement(text: str, value: str | None = None) -> str | None:
    """Why ``text`` states no fact where it names ``value``: "question" (the clause holding it asks, or is followed
    only by a tag question) or "hypothetical" (the sentence supposes); None when some sentence naming it states it.
    Without ``value``: whether any sentence of ``text`` is a statement at all. The chat model's operations are
    checked with this: the rules and the model agree on what is not a statement."""
    spots = (naming(text, value) if value else []) or [(sent, None) for sent in sentences(Source(text))]
    reasons = []
    for sent, pos in spots:
        if hypothetical(sent):
            reasons.append("hypothetical")
        elif asks(sent, pos) if pos is not None else all(asks(sent, a) for a, _ in sent.clauses):
            reasons.append("question")
        else:
            return None
    return reasons[0] if reasons else None
