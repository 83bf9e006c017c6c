"""What supersedes what in the fact store (``storage.facts.FactStore`` keeps the rows; this is the policy over them).

Rules, whatever extractor proposed the candidate:
- the same fact again raises its confidence slightly: no duplicate row;
- same subject and (single-valued) predicate with a new object supersedes the old row: the old row
  keeps its data with validity closed and ``superseded_by`` set, the new row carries
  ``previous_version``; nothing is deleted or overwritten;
- an inference never supersedes a stated or corrected fact: that is a conflict, recorded in the
  ``conflicts`` table and ``logs/conflicts.log`` for review;
- every candidate observation is applied once (a digest's keyed by its day, file, lines' content and fact; others by
  source bytes and line range), so re-running a day or a backfill leaves the store exactly as it was;
- a candidate that names the current fact it continues (``Candidate.target``, as a chat model shown the facts with
  their ids named it) supersedes, reinforces or stops exactly that fact; a target that is not the same person's
  current fact, or that starts after the candidate was said, is ignored (the candidate is applied as any other);
- a fact left with no live evidence is retracted, a forgotten one is never brought back (the store's evidence rules).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from datetime import date
from typing import Protocol

from agentos_mem.kernel import clock
from agentos_mem.kernel.domain import AUTHORITY, Candidate
from agentos_mem.kernel.text import has_cjk, normalize_key
from agentos_mem.vocabulary.subjects import names_whole, subject_key
from agentos_mem.vocabulary.valuetypes import SELF_NAMED, value_key, value_type
from agentos_mem.storage.facts import STOPPED, FactStore, masked_candidate

# Predicates that cancel each other on the same object ("likes coffee" then "dislikes coffee").
OPPOSITES = {"likes": "dislikes", "dislikes": "likes", "prefers": "prefers_not", "prefers_not": "prefers"}


class SlotMatcher(Protocol):
    """Whether two subjects name the same slot ("服务器" / "服务器配置" / "server spec"), whatever the words. The policy
    asks it only about subjects whose values are of one type (vocabulary.valuetypes): the words alone never decide."""

    def related(self, a: str, b: str, loose: bool = False) -> bool: ...

    def slot_name(self, old: str, new: str) -> str:
        """The subject a slot's new version is stored under (the old name, unless it names no attribute)."""
        ...


class NearestSlot(Protocol):
    """Optional on a SlotMatcher: which of ``options`` (fact id, the sentence it was read from) a change told in
    free words (``text``) replaces, by meaning; None when none clearly does."""

    def nearest(self, text: str, options: list[tuple[int, str]]) -> int | None: ...


@dataclass
class ApplyReport:
    added: int = 0
    reinforced: int = 0
    superseded: int = 0
    conflicts: int = 0
    already_applied: int = 0
    retracted: int = 0  # facts whose only evidence the logs no longer hold
    restored: int = 0  # earlier versions current again because what superseded them was retracted
    forgotten: int = 0  # observations of a fact a person forgot, from the lines that said it: not applied
    fact_ids: list[int | None] = field(default_factory=list)  # per candidate, in order
    conflict_lines: list[str] = field(default_factory=list)  # new conflicts, for conflicts.log

    def as_dict(self) -> dict:
        return {k: getattr(self, k) for k in ("added", "reinforced", "superseded", "conflicts", "already_applied", "retracted")}


class Supersession:
    """The write policy of a fact store: ``apply`` a day's candidates, ``resolve_conflict`` a person's decision.

    ``slots``: when a single-valued candidate's subject has no current value, a current fact of the same predicate
    whose value is of the same type (a spec, a version, a clock time ...) and whose subject ``slots`` relates is the
    same slot: the candidate supersedes it (a new value) or reinforces it (the same value said another way). With
    ``nearest`` (NearestSlot), it also picks the fact a change told in free words replaces."""

    def __init__(self, store: FactStore, slots: SlotMatcher | None = None):
        self.store = store
        self.slots = slots
        self._carry: dict[int, int] = {}  # during an apply: fact id -> retiring observations a new one may stand in for
        self._fresh: set[tuple[str, str, int]] = set()  # during an apply: (file, content, occurrence) of lines first read now

    def apply(self, user: str, day: date, candidates: list[Candidate], *, file_sha: dict[str, str], raw_refs: dict[str, str],
              contradictions: str = "supersede", observations: list[tuple[str, int] | None] | None = None,
              retire: list[tuple[str, str]] | None = None) -> ApplyReport:
        """Apply candidates in order, in one transaction (a concurrent writer waits its turn).

        ``contradictions="conflict"``: a candidate that contradicts an active fact never supersedes it but is
        recorded as a conflict for review (the knowledge base's ingest review: a document does not overrule memory).

        ``observations`` (the digest's, one per candidate or None): the hash of the candidate's lines, normalised, and
        which occurrence of that content in its file they are. The observation is then known by its day, file,
        content and fact, not by the whole file's hash: re-digesting an edited log applies only its new or changed
        lines. Without one, by the file's hash (``file_sha``) as before.

        ``retire``: (observation key, reason) of earlier observations the day's logs no longer hold (a removed log, an
        edited line). They are retired after the candidates are applied; a fact left with no live evidence is
        retracted (and the version it superseded, if any, is current again); a conflict raised only by them is
        withdrawn. A new observation of the same fact (an edited line that still says it) takes a retired one's place
        without raising the confidence again.
        """
        report = ApplyReport()
        store = self.store
        try:
            with store.transaction():
                self._carry = store.carry_over(retire or [])
                for i, cand in enumerate(candidates):
                    obs = observations[i] if observations else None
                    key = store.observation_key(user, day, cand, obs) if obs else None  # from the digest's text, before masking
                    cand = masked_candidate(cand, raw_refs.get(cand.source_file))
                    report.fact_ids.append(self._apply_one(user, day, cand, file_sha.get(cand.source_file, ""), raw_refs.get(cand.source_file),
                                                           report, contradictions, key=key, obs=obs))
                if retire:
                    retracted, restored = store.retire_observations(retire)
                    report.retracted += retracted
                    report.restored += restored
        finally:
            self._carry, self._fresh = {}, set()
        return report

    def resolve_conflict(self, user: str, conflict_id: int, *, accept: bool) -> dict:
        """A person decides a conflict. Accepting makes the contested value a new version (as a user
        correction, so it outranks what was there); rejecting keeps the store as it is. Either way the
        conflict is closed and nothing is deleted."""
        store = self.store
        c = store.row("select * from conflicts where id=? and user_id=?", [conflict_id, user])
        if c is None:
            raise KeyError(f"no conflict #{conflict_id} for user {user!r}")
        if c["status"] != "open":
            raise ValueError(f"conflict #{conflict_id} is already {c['status']}")
        fact_id = None
        if accept:
            old = store.get(c["existing_fact_id"]) or {}
            cand = Candidate(subject=c["subject"], predicate=c["predicate"], object=c["candidate_object"], nature=old.get("nature", "fact"),
                             confidence=max(0.9, c["candidate_confidence"]), explicitness="corrected", source_file=c["source_file"],
                             line_start=c["line_start"], line_end=c["line_end"], observed_at=max(c["observed_at"], old.get("valid_from", "")),
                             technical=bool(old.get("technical")), multi_valued=bool(old.get("multi_valued")),
                             extractor=f"review:conflict#{conflict_id}")
            day = date.fromisoformat(c["source_day"])
            # a person's decision, applied without a slot matcher (no other subject's slot is continued by it)
            report = Supersession(store).apply(user, day, [cand], file_sha={c["source_file"]: f"conflict#{conflict_id}"},
                                               raw_refs={c["source_file"]: c["raw_ref"]})
            fact_id = report.fact_ids[0]
        store.settle_conflict(conflict_id, "accepted" if accept else "rejected", fact_id)
        return {**store.row("select * from conflicts where id=?", [conflict_id]), "fact": store.get(fact_id) if fact_id else None}

    # -- one candidate ---------------------------------------------------------------------------------
    def _apply_one(self, user: str, day: date, cand: Candidate, sha: str, raw_ref: str | None, report: ApplyReport,
                   contradictions: str = "supersede", *, key: str | None = None, obs: tuple[str, int] | None = None) -> int | None:
        store = self.store
        ckey = key or cand.key(user, sha)
        seen = store.row("select fact_id, action, retracted_at from evidence where candidate_key = ?", [ckey])
        if seen is not None and seen["retracted_at"] is None:
            report.already_applied += 1
            return store.live_id(seen["fact_id"])  # a retracted or forgotten fact is not the card's any more
        if seen is not None:  # the same observation back (a removed log restored): the retired row stays, as history
            store.set_aside_evidence(ckey)
        elif obs is not None and (cand.source_file, *obs) not in self._fresh:
            # lines already digested, unchanged, read another way this time (a chat model's wording, a newer extractor):
            # still the same observation, applied once
            same = store.row("select fact_id from evidence where user_id=? and source_day=? and source_file=? and obs_hash=? and obs_occurrence=?"
                             " and origin='log' and retracted_at is null order by rowid limit 1",
                             [user, day.isoformat(), cand.source_file, obs[0], obs[1]])
            if same is not None:
                report.already_applied += 1
                return store.live_id(same["fact_id"])
        if obs is not None:
            self._fresh.add((cand.source_file, *obs))  # lines new to the store: every candidate they give applies
        skey, okey = subject_key(cand.subject, store.aliases), value_key(cand.object)  # one clock time however written
        if not skey or not okey:
            return None
        evidence = dict(candidate_key=ckey, user_id=user, source_day=day.isoformat(), source_file=cand.source_file,
                        raw_ref=raw_ref, line_start=cand.line_start, line_end=cand.line_end, observed_at=cand.observed_at,
                        origin="log" if obs else None, obs_hash=obs[0] if obs else None, obs_occurrence=obs[1] if obs else None)
        gone = store.forgotten_by(user, skey, cand.predicate, okey, day, cand.source_file)
        if gone is not None:  # a person forgot it: the lines that said it do not bring it back
            store.add_evidence(evidence, "forgotten", gone)
            report.forgotten += 1
            return None
        target = self._target(user, cand)
        if target is not None:  # the candidate names the current fact it continues: that one, no guess
            return self._continue(user, day, cand, target, skey, okey, raw_ref, evidence, report, contradictions)
        if cand.predicate == STOPPED:
            return self._stop(user, day, cand, skey, okey, raw_ref, evidence, report)
        if cand.ended:  # "I used to live in Boston": it held before the day it was said, and is history now
            same = store.row("select * from facts where user_id=? and subject_key=? and predicate=? and object_key=? and valid_to is not null",
                             [user, skey, cand.predicate, okey])
            if same:
                return self._reinforce(same, cand, evidence, report)
            fid = store.insert_fact(user, day, cand, skey, okey, raw_ref, status="superseded", valid_to=cand.observed_at)
            store.add_evidence(evidence, "historical", fid)
            report.added += 1
            return fid
        if cand.replaces and not cand.multi_valued:
            holder = self._holding(user, cand)
            if holder is None:  # nothing holds the old value: the new one stands alone, the old one is history
                return self._change_alone(user, day, cand, skey, okey, raw_ref, evidence, report)
            if holder["object_key"] != okey:  # the change continues the slot that held the old value
                cand = replace(cand, subject=holder["subject"], predicate=holder["predicate"], nature=holder["nature"],
                               multi_valued=bool(holder["multi_valued"]))
                skey = holder["subject_key"]
        if cand.multi_valued:
            same = store.row(
                "select * from facts where user_id=? and subject_key=? and predicate=? and object_key=? and status='active' order by valid_from desc limit 1",
                [user, skey, cand.predicate, okey],
            )
            if same:
                return self._reinforce(same, cand, evidence, report)
            opposite = OPPOSITES.get(cand.predicate)
            old = opposite and store.row(
                "select * from facts where user_id=? and subject_key=? and predicate=? and object_key=? and status='active' order by valid_from desc limit 1",
                [user, skey, opposite, okey],
            )
        else:
            # the value holding when this was said (before a change that starts later, the old one), else the latest
            old = store.row(
                "select * from facts where user_id=? and subject_key=? and predicate=? and status='active' and valid_from <= ?"
                " and (valid_to is null or valid_to > ?) order by valid_from desc limit 1",
                [user, skey, cand.predicate, cand.observed_at, cand.observed_at],
            ) or store.row(
                "select * from facts where user_id=? and subject_key=? and predicate=? and status='active' order by valid_from desc limit 1",
                [user, skey, cand.predicate],
            )
            # a chat model names the fact a new value continues (``target``, an update); its ``new`` is a new slot,
            # never one guessed by the value's type: "programming language · qwen2.5:7b" closed "version · M1 Pro"
            guess = not cand.extractor.startswith("llm:")
            if old is None and guess and (old := self._same_slot(user, skey, cand)) is not None and old["object_key"] != okey:
                # the slot keeps one name across its versions (its history and lookups read as one), the better one
                cand = replace(cand, subject=self.slots.slot_name(old["subject"], cand.subject))
                skey = subject_key(cand.subject, store.aliases)
            if old and old["object_key"] == okey:
                return self._reinforce(old, cand, evidence, report)
        if not old:
            fid = store.insert_fact(user, day, cand, skey, okey, raw_ref)
            store.add_evidence(evidence, "added", fid)
            report.added += 1
            if cand.renews:
                report.superseded += self._renew(user, cand, fid)
            return fid
        if cand.observed_at < old["valid_from"]:
            # A backfill of an earlier day: the value held before the current one. Recorded as history.
            fid = store.insert_fact(user, day, cand, skey, okey, raw_ref, status="superseded", valid_to=old["valid_from"], superseded_by=old["id"])
            store.add_evidence(evidence, "historical", fid)
            report.added += 1
            return fid
        return self._supersede(user, day, cand, old, skey, okey, raw_ref, evidence, report, contradictions)

    def _supersede(self, user: str, day: date, cand: Candidate, old: dict, skey: str, okey: str, raw_ref, evidence: dict,
                   report: ApplyReport, contradictions: str) -> int | None:
        """``cand`` a new value of ``old``'s slot: a conflict for review (a document's, an inference against a stated or
        corrected fact), else a new version that supersedes ``old``."""
        store = self.store
        if contradictions == "conflict":
            return self._conflict(user, day, cand, old, raw_ref, evidence, report,
                                  f"{cand.source_file} says {cand.object}, memory holds {old['predicate']} {old['object']}: kept for review")
        if AUTHORITY[cand.explicitness] < AUTHORITY[old["explicitness"]] and cand.explicitness == "inferred":
            return self._conflict(user, day, cand, old, raw_ref, evidence, report,
                                  f"an inference does not overrule a {old['explicitness']} fact ({old['predicate']} {old['object']})")
        fid = store.insert_fact(user, day, cand, skey, okey, raw_ref, version=old["version"] + 1, previous_version=old["id"])
        # A value that starts later ("from April 1") closes the old one at its start: until then the old one is current.
        later = cand.observed_at > clock.wall_iso(store.tz)
        store.close_fact(old["id"], valid_to=cand.observed_at, superseded_by=fid, status="active" if later else "superseded")
        if not later:
            self._close_events(user, old["object_key"], cand.observed_at, fid)
        store.add_evidence(evidence, "superseded", fid)
        report.superseded += 1
        return fid

    # -- a named target ------------------------------------------------------------------------------------
    def _target(self, user: str, cand: Candidate) -> dict | None:
        """The fact ``cand.target`` names, when it is the same person's current fact and held when ``cand`` was said;
        else None (the target is ignored: the candidate is applied as any other)."""
        if cand.target is None:
            return None
        row = self.store.get(cand.target)
        if row is None or row["user_id"] != user or row["status"] != "active" or row["valid_from"] > cand.observed_at:
            return None
        return row

    def _continue(self, user: str, day: date, cand: Candidate, target: dict, skey: str, okey: str, raw_ref, evidence: dict,
                  report: ApplyReport, contradictions: str) -> int | None:
        """``cand`` continues ``target``: a stop closes exactly it (the stop kept as history); a new value takes its
        slot (subject, predicate, nature, multi_valued) and reinforces it (the same value), is a conflict (as any
        contradiction would be), or supersedes exactly it."""
        store = self.store
        if cand.predicate == STOPPED:
            fid = store.insert_fact(user, day, cand, skey, okey, raw_ref, status="superseded", valid_to=cand.observed_at)
            store.close_fact(target["id"], valid_to=cand.observed_at, superseded_by=fid)
            store.add_evidence(evidence, "added", fid)
            report.added += 1
            report.superseded += 1
            return fid
        cand = replace(cand, subject=target["subject"], predicate=target["predicate"], nature=target["nature"],
                       multi_valued=bool(target["multi_valued"]))
        if okey == target["object_key"]:
            return self._reinforce(target, cand, evidence, report)
        return self._supersede(user, day, cand, target, target["subject_key"], okey, raw_ref, evidence, report, contradictions)

    # -- the rules -----------------------------------------------------------------------------------------
    def _stop(self, user: str, day: date, cand: Candidate, skey: str, okey: str, raw_ref, evidence: dict, report: ApplyReport) -> int:
        """Close the speaker's current facts that name the stopped thing (as object or subject; a name of several
        words by any capitalised word of it: "Netflix sub" -> Netflix) and record the stop as history: it held at
        its moment, it is not a current fact. Said again with nothing left to close, it reinforces the stop."""
        store = self.store
        keys = {okey} | {normalize_key(w) for w in cand.object.split() if w[:1].isupper() and len(w) >= 3}
        keys = {k for k in keys if len(k) >= 2}
        # a Chinese compound names its kind last: stopping 夜跑 (night runs) stops what was said of 跑 (running)
        rows = [r for r in store.rows("select * from facts where user_id=? and status='active' and predicate != ? and valid_from <= ?"
                                      " and (valid_to is null or valid_to > ?)", [user, STOPPED, cand.observed_at, cand.observed_at])
                if any(k in r["object_key"] or k in r["subject_key"] for k in keys)
                or (r["subject_key"] and has_cjk(r["subject_key"]) and okey.endswith(r["subject_key"]) and okey != r["subject_key"])]
        if not rows:
            same = store.row("select * from facts where user_id=? and subject_key=? and predicate=? and object_key=? order by valid_from desc limit 1",
                             [user, skey, STOPPED, okey])
            if same:
                return self._reinforce(same, cand, evidence, report)
        fid = store.insert_fact(user, day, cand, skey, okey, raw_ref, status="superseded", valid_to=cand.observed_at)
        for r in rows:
            store.close_fact(r["id"], valid_to=cand.observed_at, superseded_by=fid)
        store.add_evidence(evidence, "added", fid)
        report.added += 1
        report.superseded += len(rows)
        return fid

    def _close_events(self, user: str, old_key: str, at: str, by: int) -> None:
        """Events that tell of a value now replaced ("那台现在还是4C8G的，一跑e2e就OOM") are how things were: history, closed
        by the change, not current facts beside the new value. Short values are left alone (too many sentences hold them)."""
        if len(old_key) < 3 and not (has_cjk(old_key) and len(old_key) >= 2):
            return
        self.store.close_events_naming(user, old_key, at, by)

    def _holding(self, user: str, cand: Candidate) -> dict | None:
        """The current fact that holds the old value ``cand.replaces`` names (the latest), of the same person."""
        rkey = value_key(cand.replaces or "")
        if len(rkey) < 2:
            return None
        # a slot holds it, not a story: events and plans that mention it are closed by the change, never continued
        rows = self.store.rows("select * from facts where user_id=? and status='active' and predicate not in (?, 'event', 'plans')"
                               " and object_key like ? order by valid_from desc, id desc", [user, STOPPED, f"%{rkey}%"])
        # the fact whose value is the old one before one whose value only holds it ("Vim" before "vim-plug 管的"),
        # the latest first within each
        rows.sort(key=lambda r: r["object_key"] != rkey)
        for row in rows:
            if self.slots is None or self.slots.related(cand.subject, row["subject"], True):
                return row
        return None

    def _change_alone(self, user: str, day: date, cand: Candidate, skey: str, okey: str, raw_ref, evidence: dict,
                      report: ApplyReport) -> int:
        """A change whose old value no current fact holds: the new value is added (it supersedes nothing on words
        alone) and the old one is recorded as history, held until the change."""
        store = self.store
        same = store.row("select * from facts where user_id=? and subject_key=? and predicate=? and object_key=? and status='active'",
                         [user, skey, cand.predicate, okey])
        if same:
            return self._reinforce(same, cand, evidence, report)
        fid = store.insert_fact(user, day, cand, skey, okey, raw_ref)
        self._close_events(user, value_key(cand.replaces), cand.observed_at, fid)
        old = replace(cand, object=cand.replaces)
        store.insert_fact(user, day, old, skey, value_key(cand.replaces), raw_ref, status="superseded", valid_to=cand.observed_at,
                          superseded_by=fid)
        store.add_evidence(evidence, "added", fid)
        report.added += 1
        return fid

    def _renew(self, user: str, cand: Candidate, fid: int) -> int:
        """A change told in free words (``cand.renews``) that no rule tied to a slot: the current fact of the same person,
        said on an earlier day, that holds what the change says it leaves (``cand.replaces``: "left Google"), else the
        one the caller's matcher picks by meaning; that one is closed
        at the change, like any superseded value. A story (event, plan) or a list (likes, does) is never replaced
        this way, only a single value or an earlier free-worded change. Returns how many facts it closed."""
        nearest = getattr(self.slots, "nearest", None)
        if nearest is None:
            return 0
        store = self.store
        rows = store.rows("select * from facts where user_id=? and status='active' and valid_to is null and source_day < ?"
                          " and (multi_valued=0 or predicate='states') and predicate not in (?, 'event', 'plans')"
                          " and object_key != ?", [user, cand.observed_at[:10], STOPPED, value_key(cand.object)])
        rows = [r for r in rows if self.slots.related(cand.subject, r["subject"], True)]
        left = value_key(cand.replaces) if cand.replaces else None

        def said(r: dict) -> str:
            return r["evidence"] or f"{r['subject']} {r['object']}"

        # what the change says it leaves ("left Google") is the one; else one by meaning, never a fact whose value the
        # change says again ("500 rps 今天零点正式生效" confirms 500 rps, it does not end it)
        old = next((r for r in rows if left and r["object_key"] == left), None)
        if old is None:
            told = (cand.evidence or cand.object).casefold()
            rows = [r for r in rows if not names_whole(told, r["object"])]
            chosen = nearest(cand.evidence or cand.object, [(r["id"], said(r)) for r in rows]) if rows else None
            old = next((r for r in rows if r["id"] == chosen), None)
        if old is None:
            return 0
        # the facts read from that one sentence ("我在美团做产品经理": employer and role) are what the change replaces
        closing = [r for r in rows if said(r) == said(old) and (r["source_file"], r["line_start"]) == (old["source_file"], old["line_start"])]
        # a change dated later ("下个月起我调到北京工作": an event of next month) ends the old fact on that day, not today
        at = max(cand.observed_at, f"{cand.event_date}T00:00:00" if cand.event_date else "")
        later = at > clock.wall_iso(store.tz)
        for r in closing:
            store.close_fact(r["id"], valid_to=at, superseded_by=fid, status="active" if later else "superseded")
            if not later:
                self._close_events(user, r["object_key"], at, fid)
        return len(closing)

    def _same_slot(self, user: str, skey: str, cand: Candidate) -> dict | None:
        """The current fact another subject holds for the slot ``cand`` fills (see the class), the latest one; or None."""
        kind = value_type(cand.object)
        if self.slots is None or kind is None:
            return None
        rows = self.store.rows("select * from facts where user_id=? and predicate=? and status='active' and subject_key != ?"
                               " order by valid_from desc, id desc", [user, cand.predicate, skey])
        okey = value_key(cand.object)
        for row in rows:  # the same typed value said again in other words ("每晚七点上床" / "7点睡"): the same fact
            if row["object_key"] == okey and self.slots.related(cand.subject, row["subject"], True):
                return row
        for row in rows:
            # a correction takes back the last value of its type; a value that names its own thing ("3 cups") is its slot
            loose = cand.explicitness == "corrected" or kind.startswith(SELF_NAMED)
            if value_type(row["object"]) == kind and self.slots.related(cand.subject, row["subject"], loose):
                return row
        return None

    def _reinforce(self, row: dict, cand: Candidate, evidence: dict, report: ApplyReport) -> int:
        store = self.store
        if self._carry.get(row["id"]):  # an edited line that still says it: it stands in for the retired observation
            self._carry[row["id"]] -= 1
            store.add_evidence(evidence, "kept", row["id"])
            report.already_applied += 1
            return row["id"]
        conf = row["confidence"] + store.reinforce_step * (1.0 - row["confidence"])
        conf = round(max(conf, cand.confidence if AUTHORITY[cand.explicitness] > AUTHORITY[row["explicitness"]] else 0), 4)
        explicitness = cand.explicitness if AUTHORITY[cand.explicitness] > AUTHORITY[row["explicitness"]] else row["explicitness"]
        last_seen = max(row["last_seen_at"], cand.observed_at)
        expires = row["expires_at"]
        if expires is not None:  # re-confirmed: the clock restarts from the latest sighting
            expires = max(expires, store.expiry(row["nature"], bool(row["technical"]), last_seen) or expires)
        store.reinforce_fact(row["id"], confidence=conf, explicitness=explicitness, last_seen_at=last_seen, expires_at=expires)
        store.add_evidence(evidence, "reinforced", row["id"])
        report.reinforced += 1
        return row["id"]

    def _conflict(self, user, day, cand: Candidate, old: dict, raw_ref, evidence: dict, report: ApplyReport, reason: str) -> None:
        cid = self.store.add_conflict(user, day, cand, old, raw_ref, reason)
        self.store.add_evidence(evidence, "conflict", None, conflict_id=cid)
        report.conflicts += 1
        report.conflict_lines.append(
            json.dumps({"user": user, "day": day.isoformat(), "subject": cand.subject, "predicate": cand.predicate,
                        "existing": {"fact_id": old["id"], "predicate": old["predicate"], "object": old["object"], "explicitness": old["explicitness"]},
                        "candidate": {"object": cand.object, "explicitness": cand.explicitness},
                        "source": f"{cand.source_file}:{cand.line_start}-{cand.line_end}", "reason": reason}, ensure_ascii=False)
        )
        return None
