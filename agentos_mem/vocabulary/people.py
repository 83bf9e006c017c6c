"""Whose a phrase is: the relation words of both languages (妈妈, 同事, wife, roommate ...). The digest's families read
whose value a sentence states with them (digest.extract.people), the digest's slot matcher and the query's topic
threads tell one person's subject from another's by them (``persons``: "手机" is not "妈妈的手机")."""

from __future__ import annotations

import re

ZH_RELATIONS = (
    r"同事|女儿|儿子|老婆|妻子|老公|丈夫|媳妇|妈妈|老妈|我妈|妈|爸爸|老爸|爸|哥哥|姐姐|弟弟|妹妹|朋友|经理|老板|领导|室友|同学|"
    r"男朋友|女朋友|对象|爷爷|奶奶|外公|外婆|表哥|表姐|表弟|表妹|堂哥|堂姐|舅舅|叔叔|阿姨|哥|姐|弟|妹"
)
EN_RELATIONS = (
    r"wife|husband|partner|girlfriend|boyfriend|brother|sister|mom|mum|mother|dad|father|son|daughter|kid|child|"
    r"colleague|coworker|co-worker|manager|boss|friend|roommate|teammate|uncle|aunt|cousin|grandma|grandpa"
)
_EN_PERSON = re.compile(rf"\b(?:{EN_RELATIONS})\b", re.I)
_ZH_PERSON = re.compile(ZH_RELATIONS)


def persons(text: str) -> frozenset[str]:
    """The relation words ``text`` names (妈妈, brother), case-folded: a subject about someone else is that person's."""
    return frozenset(m.group(0).casefold() for rx in (_ZH_PERSON, _EN_PERSON) for m in rx.finditer(text))
