"""Result objects of the pcsim Python API.

Every result keeps the JSON document the corresponding ``pcsim`` command prints with
``--format json`` (:meth:`Result.to_dict`, :meth:`Result.to_json`), its text table
(:attr:`Result.table`, what the command prints by default) and, where the command has one, its CSV
(:attr:`Result.csv`). Typed attributes give the figures; :meth:`Result.to_dicts` gives flat rows, and
:meth:`Result.to_pandas` / :meth:`Result.to_polars` data frames when pandas or polars is installed.
The results of ``run``, ``compare``, ``whatif`` and ``advise`` also give the report document
``--report FILE`` writes (:meth:`Result.report_html`, :meth:`Result.report_markdown`,
:meth:`Result.write_report`). Results pickle (their charts and documents are re-rendered from the
request after unpickling).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Dict, List, Optional, Tuple, Union

__all__ = [
    "Result",
    "Skip",
    "Totals",
    "Call",
    "MonteCarlo",
    "SimResult",
    "RunResult",
    "StrategyOutcome",
    "ModelComparison",
    "CompareResult",
    "ChangeSummary",
    "WhatifOutcome",
    "WhatifResult",
    "Recommendation",
    "ModelAdvice",
    "AdviceResult",
    "ToolCost",
    "TrimSaving",
    "ModelToolCost",
    "ToolsCost",
    "Buckets",
    "ReplayTotals",
    "ReplayResult",
    "CallBuckets",
    "CallCause",
    "ExplainedCall",
    "CauseTotal",
    "FixSaving",
    "ToolBlockSample",
    "SkippedRecord",
    "ExplainResult",
]

Row = Dict[str, Any]


def _pick(cls, d: Dict[str, Any], **nested: Any):
    """An instance of dataclass ``cls`` from the keys of ``d`` it declares (others ignored)."""
    names = cls.__dataclass_fields__
    values = {k: v for k, v in d.items() if k in names}
    values.update(nested)
    return cls(**values)


@dataclass(frozen=True)
class Skip:
    """A (model, strategy) that was not simulated, and why (never dropped silently)."""

    model: str
    strategy: str
    reason: str


@dataclass(frozen=True)
class Totals:
    """Token buckets and dollars of one (model, strategy) over all calls of a run."""

    prompt_tokens: int
    uncached_tokens: int
    cache_write_tokens: int
    cache_read_tokens: int
    output_tokens: int
    cache_hit_ratio: float
    input_usd: float
    output_usd: float
    cache_write_tokens_by_tier: Dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class Call:
    """One simulated call: its buckets, cost and the running total."""

    session: int
    call: int
    time_s: float
    prompt_tokens: int
    uncached_tokens: int
    cache_write_tokens: int
    cache_read_tokens: int
    output_tokens: int
    tool_block_tokens: int
    cost_usd: float
    storage_usd: float
    cumulative_usd: float


@dataclass(frozen=True)
class MonteCarlo:
    """The distribution of a total over Monte Carlo runs."""

    runs: int
    mean_usd: float
    median_usd: float
    p5_usd: float
    p95_usd: float
    ci95_low_usd: Optional[float] = None
    ci95_high_usd: Optional[float] = None


@dataclass(frozen=True)
class SimResult:
    """One (model, strategy) of a run: its totals, its calls (the first run's) and, with several
    runs, the Monte Carlo distribution of its total."""

    model: str
    model_name: str
    strategy: str
    strategy_requested: str
    total_usd: float
    totals: Totals
    calls: List[Call]
    montecarlo: Optional[MonteCarlo] = None

    @classmethod
    def _of(cls, d: Dict[str, Any]) -> "SimResult":
        mc = d.get("montecarlo")
        return _pick(
            cls,
            d,
            totals=_pick(Totals, d["totals"]),
            calls=[_pick(Call, c) for c in d.get("calls", [])],
            montecarlo=_pick(MonteCarlo, mc) if mc else None,
        )


class Result:
    """Base of the results: the command's JSON, table and CSV, rows, data frames and charts."""

    #: The text table the command prints (``--format table``).
    table: str
    #: The CSV the command prints (``--format csv``), or ``""`` when it has none.
    csv: str

    def __init__(self, json_text: str, table: str = "", csv: str = "", report: Any = None,
                 rerun: Optional[Callable[[], Any]] = None) -> None:
        self._json = json_text
        self._raw: Dict[str, Any] = json.loads(json_text)
        self.table = table
        self.csv = csv
        self._report = report
        self._rerun = rerun
        self._parse()

    def _parse(self) -> None:  # overridden: typed attributes from self._raw
        pass

    def to_dict(self) -> Dict[str, Any]:
        """The JSON document ``pcsim ... --format json`` prints, as a dict (a fresh copy)."""
        return json.loads(self._json)

    def to_json(self) -> str:
        """The JSON text ``pcsim ... --format json`` prints."""
        return self._json

    def to_dicts(self) -> List[Row]:
        """Flat rows (one per model and strategy, or per outcome): what a data frame is made of."""
        raise NotImplementedError

    def to_pandas(self):
        """:meth:`to_dicts` as a ``pandas.DataFrame`` (needs pandas; not a dependency of pcsim)."""
        try:
            import pandas
        except ImportError as e:  # optional
            raise ImportError("to_pandas() needs pandas: pip install pandas") from e
        return pandas.DataFrame(self.to_dicts())

    def to_polars(self):
        """:meth:`to_dicts` as a ``polars.DataFrame`` (needs polars; not a dependency of pcsim)."""
        try:
            import polars
        except ImportError as e:  # optional
            raise ImportError("to_polars() needs polars: pip install polars") from e
        return polars.DataFrame(self.to_dicts())

    def charts(self, *, svg: bool = False, width: int = 1600, height: int = 1000,
               log_scale: bool = False) -> Dict[str, bytes]:
        """The charts ``--out DIR`` writes, as ``{file name: PNG bytes}`` (SVG text as UTF-8 bytes
        with ``svg=True``). An unpickled result re-runs its request first (same inputs, same seed,
        same figures)."""
        return dict(self._native_report("charts").charts(width, height, svg, log_scale))

    def _native_report(self, what: str) -> Any:
        if self._report is None:
            if self._rerun is None:
                raise TypeError(f"{type(self).__name__} has no {what}")
            self._report = self._rerun()._report
        return self._report

    def _document(self, path: str, width: int, height: int, log_scale: bool,
                  write: bool) -> List[Tuple[str, bytes]]:
        call = self._rerun.describe() if self._rerun is not None else "python: pcsim"
        return self._native_report("report document").report_files(
            path, call, width, height, log_scale, write)

    def report_html(self, *, width: int = 1600, height: int = 1000, log_scale: bool = False) -> str:
        """The HTML report ``pcsim ... --report FILE.html`` writes: one self-contained page with
        the tables, the charts inline as SVG (``width`` x ``height``, as ``--chart-size``), the
        assumptions, the scenario, every price used with its source and the provenance (which names
        this Python call where the command names its command line)."""
        [(_, html)] = self._document("report.html", width, height, log_scale, False)
        return html.decode("utf-8")

    def report_markdown(self, name: str = "report", *, width: int = 1600, height: int = 1000,
                        log_scale: bool = False) -> Tuple[str, Dict[str, bytes]]:
        """The Markdown report ``--report NAME.md`` writes, and its charts: ``(markdown, {PNG file
        name: bytes})``; the Markdown links each PNG by that name (``NAME-<chart>.png``), so write
        them beside it (or use :meth:`write_report`)."""
        *pngs, (_, md) = self._document(f"{name}.md", width, height, log_scale, False)
        return md.decode("utf-8"), {os.path.basename(p): b for p, b in pngs}

    def write_report(self, path: Union[str, "os.PathLike[str]"], *, width: int = 1600,
                     height: int = 1000, log_scale: bool = False) -> List[str]:
        """Writes the report as ``--report PATH`` does and returns the paths written: ``.html``
        one file; ``.md`` the PNGs beside it first, then the Markdown. Each file is written
        atomically; only a regular file is replaced.

        Raises:
            InvalidValueError: a name that does not end in ``.html`` / ``.md``.
            FileError: a file that cannot be written.
        """
        files = self._document(os.fspath(path), width, height, log_scale, True)
        return [p for p, _ in files]

    def __getstate__(self) -> Dict[str, Any]:
        state = dict(self.__dict__)
        state["_report"] = None  # native report: rebuilt on demand by _rerun
        return state

    def __setstate__(self, state: Dict[str, Any]) -> None:
        self.__dict__.update(state)

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self._raw.get('scenario', '')!r}>"

    def _repr_html_(self) -> str:  # notebooks show the table
        import html

        return "<pre>" + html.escape(self.table or self._json) + "</pre>"


class RunResult(Result):
    """What ``pcsim run`` reports: every (model, strategy) with totals and per-call bills."""

    scenario: str
    description: str
    results: List[SimResult]
    skipped: List[Skip]

    def _parse(self) -> None:
        d = self._raw
        self.scenario = d["scenario"]
        self.description = d.get("description", "")
        self.results = [SimResult._of(r) for r in d["results"]]
        self.skipped = [_pick(Skip, s) for s in d.get("skipped", [])]

    def result(self, model: str, strategy: Optional[str] = None) -> SimResult:
        """The result of ``model`` (and ``strategy``, as resolved or as requested)."""
        for r in self.results:
            if r.model == model and strategy in (None, r.strategy, r.strategy_requested):
                return r
        raise KeyError((model, strategy))

    def to_dicts(self) -> List[Row]:
        rows = []
        for r in self.results:
            row: Row = {
                "model": r.model,
                "strategy": r.strategy,
                "strategy_requested": r.strategy_requested,
                "calls": len(r.calls),
                "total_usd": r.total_usd,
            }
            t = r.totals
            for k in ("prompt_tokens", "uncached_tokens", "cache_write_tokens", "cache_read_tokens",
                      "output_tokens", "cache_hit_ratio", "input_usd", "output_usd"):
                row[k] = getattr(t, k)
            if r.montecarlo is not None:
                for k in ("runs", "mean_usd", "median_usd", "p5_usd", "p95_usd"):
                    row[f"mc_{k}"] = getattr(r.montecarlo, k)
            rows.append(row)
        return rows

    def calls_to_dicts(self) -> List[Row]:
        """One row per simulated call (the columns of ``pcsim run --format csv``)."""
        return [
            {"model": r.model, "strategy": r.strategy, **c.__dict__}
            for r in self.results
            for c in r.calls
        ]


@dataclass(frozen=True)
class StrategyOutcome:
    """One strategy of a comparison against the model's no-caching baseline."""

    strategy: str
    strategy_requested: str
    total_usd: float
    saving_usd: float
    saving_percent: float
    cache_write_tokens: int
    cache_read_tokens: int
    uncached_tokens: int
    prompt_tokens: int
    cache_hit_ratio: float


@dataclass(frozen=True)
class ModelComparison:
    """Every compared strategy on one model."""

    model: str
    model_name: str
    none_usd: float
    cheapest: str
    strategies: List[StrategyOutcome]


class CompareResult(Result):
    """What ``pcsim compare`` reports: strategies side by side per model, ``none`` the baseline."""

    scenario: str
    comparisons: List[ModelComparison]
    skipped: List[Skip]

    def _parse(self) -> None:
        d = self._raw
        self.scenario = d["scenario"]
        self.comparisons = [
            _pick(ModelComparison, c, strategies=[_pick(StrategyOutcome, s) for s in c["strategies"]])
            for c in d["comparisons"]
        ]
        self.skipped = [_pick(Skip, s) for s in d.get("skipped", [])]

    def to_dicts(self) -> List[Row]:
        return [
            {"model": c.model, "none_usd": c.none_usd, "cheapest": c.cheapest == s.strategy, **s.__dict__}
            for c in self.comparisons
            for s in c.strategies
        ]


@dataclass(frozen=True)
class ChangeSummary:
    """The tool-list change a what-if simulates."""

    description: str
    added: List[str]
    removed: List[str]
    tools_before: int
    tools_after: int


@dataclass(frozen=True)
class WhatifOutcome:
    """One (model, strategy): the session as it is against the changed session."""

    model: str
    model_name: str
    strategy: str
    strategy_requested: str
    tool_change_rule: str
    baseline_usd: float
    changed_usd: float
    extra_usd: float
    saving_usd: float
    saving_percent: float
    breakeven_calls: Optional[int]
    verdict: str
    raw: Dict[str, Any] = field(default_factory=dict, repr=False, compare=False)


class WhatifResult(Result):
    """What ``pcsim whatif`` reports: what a tool-list change costs and when it pays back."""

    scenario: str
    at_call: int
    change: ChangeSummary
    outcomes: List[WhatifOutcome]
    skipped: List[Skip]

    def _parse(self) -> None:
        d = self._raw
        self.scenario = d["scenario"]
        self.at_call = d["at_call"]
        self.change = _pick(ChangeSummary, d["change"])
        self.outcomes = [_pick(WhatifOutcome, o, raw=o) for o in d["outcomes"]]
        self.skipped = [_pick(Skip, s) for s in d.get("skipped", [])]

    def to_dicts(self) -> List[Row]:
        keep = ("model", "strategy", "strategy_requested", "tool_change_rule", "baseline_usd",
                "changed_usd", "extra_usd", "saving_usd", "saving_percent", "breakeven_calls")
        rows = []
        for o in self.outcomes:
            row = {k: getattr(o, k) for k in keep}
            row.update({k: v for k, v in o.raw.items() if k not in row and not isinstance(v, (dict, list))})
            rows.append(row)
        return rows


@dataclass(frozen=True)
class Recommendation:
    """The strategy advised for a model and what it saves against no caching."""

    strategy: str
    total_usd: float
    saving_usd: float
    saving_percent: float


@dataclass(frozen=True)
class ModelAdvice:
    """The advice for one model; ``raw`` holds every part (breakpoints, ttl, break_even,
    drop_tools) as the JSON has it."""

    model: str
    model_name: str
    none_usd: float
    recommended: Recommendation
    drop_tools: List[Dict[str, Any]]
    raw: Dict[str, Any] = field(default_factory=dict, repr=False, compare=False)


class AdviceResult(Result):
    """What ``pcsim advise`` reports: breakpoints, TTL tier and tools to drop per model."""

    scenario: str
    advice: List[ModelAdvice]

    def _parse(self) -> None:
        d = self._raw
        self.scenario = d["scenario"]
        self.advice = [
            _pick(ModelAdvice, a, recommended=_pick(Recommendation, a["recommended"]), raw=a,
                  drop_tools=a.get("drop_tools", []))
            for a in d["advice"]
        ]

    def to_dicts(self) -> List[Row]:
        return [
            {"model": a.model, "none_usd": a.none_usd, **{f"recommended_{k}": v for k, v in a.recommended.__dict__.items()}}
            for a in self.advice
        ]


@dataclass(frozen=True)
class ToolCost:
    """One tool's tokens on one model and its share of the tool block."""

    name: str
    tokens: int
    share: float


@dataclass(frozen=True)
class TrimSaving:
    """What one trim of the list would save per call on one model."""

    trim: str
    tool_block_tokens: int
    saved_tokens: int
    saved_percent: float
    saved_usd_per_call: float


@dataclass(frozen=True)
class ModelToolCost:
    """The tool block on one model: tokens and dollars per call (no caching), per tool and trim."""

    model: str
    model_name: str
    family: str
    input_usd_per_mtok: float
    tool_block_tokens: int
    preamble_tokens: int
    usd_per_call: float
    usd_per_10_calls: float
    tools: List[ToolCost]
    trims: List[TrimSaving]


class ToolsCost(Result):
    """What ``pcsim tools --format json`` reports for a tool list."""

    tool_count: int
    models: List[ModelToolCost]

    def _parse(self) -> None:
        d = self._raw
        self.tool_count = d["tool_count"]
        self.models = [
            _pick(ModelToolCost, m, tools=[_pick(ToolCost, t) for t in m["tools"]],
                  trims=[_pick(TrimSaving, t) for t in m["trims"]])
            for m in d["models"]
        ]

    def model(self, model_id: str) -> ModelToolCost:
        """The figures of one model."""
        for m in self.models:
            if m.model == model_id:
                return m
        raise KeyError(model_id)

    def to_dicts(self) -> List[Row]:
        return [
            {k: v for k, v in m.__dict__.items() if k not in ("tools", "trims")} for m in self.models
        ]

    def tools_to_dicts(self) -> List[Row]:
        """One row per (model, tool)."""
        return [{"model": m.model, **t.__dict__} for m in self.models for t in m.tools]

    def __repr__(self) -> str:
        return f"<ToolsCost {self.tool_count} tools on {len(self.models)} models>"


@dataclass(frozen=True)
class Buckets:
    """Token buckets and dollars of a call or a total (logged, or predicted by pcsim)."""

    uncached_tokens: int = 0
    cache_write_tokens: int = 0
    cache_read_tokens: int = 0
    cost_usd: float = 0.0

    def __add__(self, o: "Buckets") -> "Buckets":
        return Buckets(
            self.uncached_tokens + o.uncached_tokens,
            self.cache_write_tokens + o.cache_write_tokens,
            self.cache_read_tokens + o.cache_read_tokens,
            self.cost_usd + o.cost_usd,
        )


@dataclass(frozen=True)
class ReplayTotals:
    """A replay on one (model, strategy), summed over the replayed logs."""

    model: str
    strategy: str
    conversations: int
    calls_total: int
    logged: Buckets
    predicted: Buckets
    predicted_write_tokens_by_tier: Dict[str, int]

    def __add__(self, o: "ReplayTotals") -> "ReplayTotals":
        tiers = dict(self.predicted_write_tokens_by_tier)
        for k, v in o.predicted_write_tokens_by_tier.items():
            tiers[k] = tiers.get(k, 0) + v
        return ReplayTotals(self.model, self.strategy, self.conversations + o.conversations,
                            self.calls_total + o.calls_total, self.logged + o.logged,
                            self.predicted + o.predicted, tiers)


class ReplayResult(Result):
    """What ``pcsim replay`` reports in total over its logs: logged against predicted per (model,
    strategy). ``files`` lists each replayed log's own figures; :meth:`merge` sums results of
    disjoint sets of logs (the partitions of a distributed replay)."""

    files: List[Dict[str, Any]]
    files_skipped: List[str]
    results: List[ReplayTotals]

    def __init__(self, json_text: str) -> None:
        super().__init__(json_text)

    def _parse(self) -> None:
        self.files = self._raw["files"]
        self.files_skipped = self._raw["files_skipped"]
        # The command's rows: per (model, strategy) when models were named; otherwise each call
        # is on its own model and there is one row per strategy, its models (and strategy names)
        # joined in the order the files first show them, as `pcsim replay` prints them.
        models_named = self._raw.get("models_named", True)
        acc: Dict[Any, ReplayTotals] = {}
        labels: Dict[Any, tuple] = {}
        for f in self.files:
            for i, r in enumerate(f["results"]):
                t = ReplayTotals(r["model"], r["strategy"], r["conversations"], r["calls_total"],
                                 _pick(Buckets, r["logged"]), _pick(Buckets, r["predicted"]),
                                 dict(r["predicted_write_tokens_by_tier"]))
                key: Any = (t.model, t.strategy) if models_named else i
                if not models_named:
                    models, strategies = labels.setdefault(key, ([], []))
                    models.extend(m for m in t.model.split("+") if m not in models)
                    strategies.extend(s for s in t.strategy.split(" / ") if s not in strategies)
                acc[key] = acc[key] + t if key in acc else t
        for key, (models, strategies) in labels.items():
            acc[key] = replace(acc[key], model="+".join(models), strategy=" / ".join(strategies))
        self.results = list(acc.values())

    @property
    def calls_logged(self) -> int:
        """Calls read from the replayed logs."""
        return sum(f["calls_logged"] for f in self.files)

    @property
    def bytes(self) -> int:
        """Bytes of the replayed logs."""
        return sum(f["bytes"] for f in self.files)

    @staticmethod
    def merge(parts: List["ReplayResult"]) -> "ReplayResult":
        """One result from the results of disjoint sets of logs, files in log-path order (so the
        merged result is the one a single process gives for all the logs)."""
        files = sorted((f for p in parts for f in p.files), key=lambda f: f["log"])
        skipped = [s for p in parts for s in p.files_skipped]
        named = {p._raw.get("models_named", True) for p in parts}
        if len(named) > 1:
            raise ValueError("merge: the parts were replayed with and without models=")
        return ReplayResult(json.dumps({"files": files, "files_skipped": skipped,
                                        "models_named": named.pop() if named else True}))

    def to_dicts(self) -> List[Row]:
        rows = []
        for r in self.results:
            row: Row = {"model": r.model, "strategy": r.strategy, "conversations": r.conversations,
                        "calls": r.calls_total}
            for side in ("logged", "predicted"):
                for k, v in getattr(r, side).__dict__.items():
                    row[f"{side}_{k}"] = v
            rows.append(row)
        return rows

    def __repr__(self) -> str:
        return f"<ReplayResult {len(self.files)} logs, {self.calls_logged} calls>"


@dataclass(frozen=True)
class CallBuckets:
    """Token buckets of one explained call and its dollars (output included)."""

    uncached_tokens: int
    cache_write_tokens: int
    cache_read_tokens: int
    cost_usd: float


@dataclass(frozen=True)
class CallCause:
    """One cause of one call's cache miss: the tokens it kept from being read, their dollars
    beyond a read, and what shows it."""

    cause: str
    tokens: int
    usd: float
    detail: str


@dataclass(frozen=True)
class ExplainedCall:
    """One call of a trace: what the response billed, what pcsim's rules predict for the same
    prompt and cache, and the causes of the tokens not read."""

    call: int
    at: str
    conversation: int
    time_s: float
    model: str
    api: str
    regions: int
    prompt_tokens: int
    billed: CallBuckets
    predicted: CallBuckets
    agrees: bool
    causes: List[CallCause]


@dataclass(frozen=True)
class CauseTotal:
    """One cause over the whole trace, ranked by dollars."""

    cause: str
    calls: int
    tokens: int
    usd: float
    top_detail: str
    top_detail_calls: int


@dataclass(frozen=True)
class FixSaving:
    """A mechanical fix simulated on the same trace, and what it saves (positive: cheaper)."""

    fix: str
    description: str
    simulated: bool
    predicted_usd: float
    saving_usd: float
    note: str


@dataclass(frozen=True)
class ToolBlockSample:
    """A tool-block size inferred from a call's billed input tokens, beside pcsim's count."""

    model: str
    at: str
    tools: int
    measured_tokens: float
    modelled_tokens: int


@dataclass(frozen=True)
class SkippedRecord:
    """A trace record that was not explained, where it was and why."""

    at: str
    reason: str


class ExplainResult(Result):
    """What ``pcsim explain --format json`` reports: every call of the traces with its causes,
    the causes ranked over the trace, and the simulated fixes."""

    files: List[str]
    bytes: int
    records: int
    conversations: int
    calls: List[ExplainedCall]
    skipped_count: int
    skipped_by_reason: Dict[str, int]
    skipped: List[SkippedRecord]
    billed_usd: float
    predicted_usd: float
    disagreeing_calls: int
    unexplained_calls: int
    causes: List[CauseTotal]
    summary: str
    fixes: List[FixSaving]
    tool_blocks: List[ToolBlockSample]

    def _parse(self) -> None:
        d = self._raw
        for k in ("files", "bytes", "records", "conversations", "skipped_count", "skipped_by_reason",
                  "billed_usd", "predicted_usd", "disagreeing_calls", "unexplained_calls", "summary"):
            setattr(self, k, d[k])
        self.calls = [
            _pick(ExplainedCall, c, billed=_pick(CallBuckets, c["billed"]),
                  predicted=_pick(CallBuckets, c["predicted"]),
                  causes=[_pick(CallCause, k) for k in c["causes"]])
            for c in d["calls"]
        ]
        self.skipped = [_pick(SkippedRecord, r) for r in d["skipped"]]
        self.causes = [_pick(CauseTotal, c) for c in d["causes"]]
        self.fixes = [_pick(FixSaving, f) for f in d["fixes"]]
        self.tool_blocks = [_pick(ToolBlockSample, t) for t in d["tool_blocks"]]

    def to_dicts(self) -> List[Row]:
        """One row per call (the columns of ``pcsim explain --format csv``, its causes as
        ``cause=tokens`` joined by ``;``, and ``lost_usd``, their dollars beyond a read)."""
        rows = []
        for c in self.calls:
            row: Row = {k: getattr(c, k) for k in ("call", "at", "conversation", "time_s", "model",
                                                   "api", "regions", "prompt_tokens")}
            for side in ("billed", "predicted"):
                for k, v in getattr(c, side).__dict__.items():
                    row[f"{side}_{k}"] = v
            row["agrees"] = c.agrees
            row["causes"] = ";".join(f"{k.cause}={k.tokens}" for k in c.causes)
            row["lost_usd"] = sum(k.usd for k in c.causes)
            rows.append(row)
        return rows

    def causes_to_dicts(self) -> List[Row]:
        """One row per (call, cause)."""
        return [{"call": c.call, "model": c.model, **k.__dict__} for c in self.calls for k in c.causes]

    def fixes_to_dicts(self) -> List[Row]:
        """One row per fix."""
        return [dict(f.__dict__) for f in self.fixes]

    def __repr__(self) -> str:
        return f"<ExplainResult {len(self.calls)} calls, {len(self.files)} files>"
