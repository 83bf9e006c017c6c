"""Deterministic bilingual (Chinese + English) fact extraction: patterns only, no model.

``extract_candidates(turns, day)`` reads a day's turns and proposes :class:`Candidate` facts:

* identity   name / role / works_at / lives_in / from           (nature "fact", single-valued)
* taste      likes / dislikes (one candidate per list item), prefers / prefers_not ("Go over Java")
* values     "X 是/改成/升级到 Y", "my X is Y", "X changed to Y"   -> (X, "value", Y), the core of supersession;
             also typed values by their shape whatever the verb (8C16G, 7:40, Postgres 16, 3 cups), changes that
             name both values (从A换到B), stops (Copilot 停用了) and what used to hold (I used to live in X)
* plans      plans (event) / decided (fact)
* events     a sentence with a date or a day word, resolved against ``day``  -> event_date
* opinions   thinks;  rules of conduct: rule (axiom)

Who the subject is: first person in a "user" turn is ``"user"``; in an "other" turn (a named participant)
it is the speaker's name, and their "my birthday" becomes "Caroline's birthday" so two participants' values
never supersede each other. Assistant turns never state facts: only their restatements about the user
("你的X是Y", "you seem to prefer X") come out, as "inferred".

Precision over recall: questions, hypotheticals, negations, evaluations ("X is great"), relative clauses and
chat boilerplate ("I'll try it", "明天再聊") produce nothing. Rule families run in a fixed order (pasts, identity,
people, favorites, preferences, rules, corrections, decisions, changes, stops, activities, plans, values, opinions,
anchored; ``engine._speaker_sentence``) and a later family never reads text an earlier one already used, so
"我的爱好是X" is a preference, not a value.

Matching runs on an NFKC-normalised copy of the text (full-width letters, digits and punctuation become
half-width; curly quotes become straight); every object and subject is cut from the ORIGINAL text through an
index map, so "８Ｃ１６Ｇ" stays as written. Chinese is matched with explicit CJK classes or Unicode ``\\w``.
All patterns are compiled at import, each rule with a few literal keywords checked first (a substring test is
far cheaper than a regex search); nothing here holds mutable state between calls.


Layout (one module per rule family; a family is data: a tuple of ``Rule`` records, or a few regexes and the
function that reads them):

* ``normalize``   the NFKC copy with its index map, sentences and clauses, keyword pre-checks
* ``objects``     where an object ends, trimming, list items, evidence
* ``vocab``       shared words (我 / I, adverbs, roles, technical and attribute words) and sentence markers
                  (questions, hypotheticals, hedges, a dropped 我)
* ``rule``        the ``Rule`` record, predicates and confidences, and how one family is applied to a sentence
* families        ``names``, ``identity``, ``pasts`` (what used to hold: history), ``people`` (where others live and
                  work, Chinese and English; a later 她 / he is the person last spoken of), ``preferences`` (one
                  favorite of a kind is a slot), ``axioms``, ``corrections``, ``decisions``, ``changes`` (both values
                  named: the old one finds the slot), ``stops``, ``activities``, ``plans``, ``values``, ``opinions``,
                  ``anchored`` (values found by their shape, ``vocabulary.valuetypes``), ``restatements`` (assistant
                  turns), ``events`` (dates from ``vocabulary.dates``) and ``subjects`` (whose fact it is: the user, a named
                  participant, a third party)
* ``engine``      the order the families run in, turns and sentences, and building :class:`Candidate` objects
"""

from __future__ import annotations

from agentos_mem.digest.extract.engine import extract_candidates
from agentos_mem.digest.extract.normalize import CJK as CJK
from agentos_mem.digest.extract.normalize import EVIDENCE_CHARS as EVIDENCE_CHARS
from agentos_mem.digest.extract.rule import CONF_CORRECTED as CONF_CORRECTED
from agentos_mem.digest.extract.rule import CONF_INFERRED as CONF_INFERRED

__all__ = ["extract_candidates"]
