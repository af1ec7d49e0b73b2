"""pcsim from Python: what an LLM agent session costs on each model, with and without prompt caching.

A typed API over pcsim's Rust library (the request step every ``pcsim`` command starts from, not
the command line): the same figures as the commands, returned as objects.

>>> import pcsim
>>> r = pcsim.run()                       # the built-in scenario on six models, as `pcsim run`
>>> print(r.table)                        # the table `pcsim run` prints
>>> r.result("claude-opus-4.8", "cached").total_usd
>>> pcsim.tools_cost(tools_list_dict, models=["gpt-5.6"]).models[0].usd_per_call

Every function takes ``catalog=`` (a :class:`Catalog`; default: the built-in one priced today) and
a scenario as a :class:`Scenario`, TOML text, a path or a dict (``None``: the built-in default).
Simulations release the GIL: threads run them in parallel. Errors are :class:`PcsimError`
subclasses carrying the file, field and message pcsim produces. Results pickle.
"""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Union

from . import _pcsim
from ._errors import (
    FileError,
    InputError,
    InternalError,
    InvalidValueError,
    ParseError,
    PcsimError,
    ServerError,
    StrategyError,
    UnknownModelError,
    UnsupportedError,
)
from ._results import (
    AdviceResult,
    Buckets,
    Call,
    CallBuckets,
    CallCause,
    CauseTotal,
    ChangeSummary,
    CompareResult,
    ExplainedCall,
    ExplainResult,
    FixSaving,
    SkippedRecord,
    ToolBlockSample,
    ModelAdvice,
    ModelComparison,
    ModelToolCost,
    MonteCarlo,
    Recommendation,
    ReplayResult,
    ReplayTotals,
    Result,
    RunResult,
    SimResult,
    Skip,
    StrategyOutcome,
    ToolCost,
    ToolsCost,
    Totals,
    TrimSaving,
    WhatifOutcome,
    WhatifResult,
)

__version__: str = _pcsim.__version__

__all__ = [
    "Catalog",
    "Scenario",
    "run",
    "compare",
    "whatif",
    "advise",
    "explain",
    "tools_cost",
    "replay",
    "replay_files",
    "log_files",
    "usd",
    # results
    "Result",
    "RunResult",
    "SimResult",
    "Totals",
    "Call",
    "MonteCarlo",
    "Skip",
    "CompareResult",
    "ModelComparison",
    "StrategyOutcome",
    "WhatifResult",
    "WhatifOutcome",
    "ChangeSummary",
    "AdviceResult",
    "ModelAdvice",
    "Recommendation",
    "ToolsCost",
    "ModelToolCost",
    "ToolCost",
    "TrimSaving",
    "ReplayResult",
    "ReplayTotals",
    "Buckets",
    "ExplainResult",
    "ExplainedCall",
    "CallBuckets",
    "CallCause",
    "CauseTotal",
    "FixSaving",
    "ToolBlockSample",
    "SkippedRecord",
    # errors
    "PcsimError",
    "InputError",
    "ParseError",
    "InvalidValueError",
    "UnknownModelError",
    "StrategyError",
    "UnsupportedError",
    "FileError",
    "ServerError",
    "InternalError",
]

PathLike = Union[str, "os.PathLike[str]"]


class Catalog:
    """The model catalog with its prices chosen, as the global flags of ``pcsim`` choose them.

    Args:
        overlay: a catalog file laid on the built-in ``models.toml`` (``--catalog FILE``).
        only: a catalog file used instead of the built-in one (``--only-catalog FILE``).
        text: catalog TOML text laid on the built-in catalog (as ``overlay``, from a string).
        on: list prices of a day, ``YYYY-MM-DD`` (``--on``; default today).
        price_sheet: a named rate card (``--price-sheet``), e.g. ``study-2026-07-31``.
        service_tier: ``batch``, ``flex``, ``priority`` or ``off-peak`` (``--service-tier``).
        regional: regional endpoint pricing (``--regional``).
        prices: ``MODEL=IN,OUT`` overrides in USD per million tokens (``--price``).

    Raises:
        PcsimError: a file that cannot be read, bad TOML, an invalid value, an unknown sheet.
    """

    def __init__(
        self,
        overlay: Optional[PathLike] = None,
        *,
        only: Optional[PathLike] = None,
        text: Optional[str] = None,
        on: Optional[str] = None,
        price_sheet: Optional[str] = None,
        service_tier: Optional[str] = None,
        regional: bool = False,
        prices: Sequence[str] = (),
    ) -> None:
        self._args: Dict[str, Any] = dict(
            overlay=None if overlay is None else os.fspath(overlay),
            only=None if only is None else os.fspath(only),
            overlay_text=text,
            on=on,
            price_sheet=price_sheet,
            service_tier=service_tier,
            regional=regional,
            prices=list(prices),
        )
        self._native = _pcsim.Catalog(**self._args)

    @property
    def model_ids(self) -> List[str]:
        """Every model id of the catalog, in catalog order."""
        return self._native.model_ids()

    @property
    def origin(self) -> str:
        """Where the catalog was read from."""
        return self._native.origin

    def __reduce__(self):  # rebuilt from its arguments in the receiving process
        return (_catalog_from_args, (self._args,))

    def __repr__(self) -> str:
        given = {k: v for k, v in self._args.items() if v not in (None, False, [])}
        return f"Catalog({', '.join(f'{k}={v!r}' for k, v in given.items())})"


def _catalog_from_args(args: Dict[str, Any]) -> Catalog:
    c = Catalog.__new__(Catalog)
    c._args = args
    c._native = _pcsim.Catalog(**args)
    return c


_default_catalog: Optional[Catalog] = None
_default_lock = threading.Lock()


def _catalog(catalog: Optional[Catalog]) -> Catalog:
    global _default_catalog
    if catalog is not None:
        if not isinstance(catalog, Catalog):
            raise TypeError(f"catalog must be a pcsim.Catalog, not {type(catalog).__name__}")
        return catalog
    with _default_lock:
        if _default_catalog is None:
            _default_catalog = Catalog()
        return _default_catalog


class Scenario:
    """A validated scenario (the TOML format of the README, "Scenario format").

    Build one with :meth:`default`, :meth:`load` (a file), :meth:`from_toml` (text) or
    :meth:`from_dict`; every function also accepts those forms directly.
    """

    def __init__(self, _native: Any, _source: tuple) -> None:
        self._native = _native
        self._source = _source

    @classmethod
    def default(cls) -> "Scenario":
        """The built-in default scenario (what ``pcsim run`` simulates without a file)."""
        return cls(_pcsim.Scenario.builtin_default(), ("default",))

    @classmethod
    def load(cls, path: PathLike) -> "Scenario":
        """A scenario file; its tool files are relative to its folder."""
        p = os.fspath(path)
        return cls(_pcsim.Scenario.load(p), ("load", p))

    @classmethod
    def from_toml(cls, text: str, *, base_dir: PathLike = ".", origin: str = "<toml>") -> "Scenario":
        """Scenario TOML text; tool files are relative to ``base_dir``; ``origin`` names it in errors."""
        b = os.fspath(base_dir)
        return cls(_pcsim.Scenario.from_toml(text, origin, b), ("toml", text, origin, b))

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], *, base_dir: PathLike = ".", origin: str = "<dict>") -> "Scenario":
        """A scenario as a dict of the TOML document's structure (``{"session": {"calls": 20}, ...}``)."""
        text = json.dumps(data)
        b = os.fspath(base_dir)
        return cls(_pcsim.Scenario.from_json(text, origin, b), ("json", text, origin, b))

    name = property(lambda self: self._native.name, doc="The scenario's name.")
    description = property(lambda self: self._native.description, doc="Its one-line description.")
    origin = property(lambda self: self._native.origin, doc="Where it was read from.")
    calls = property(lambda self: self._native.calls, doc="Calls per session.")
    sessions = property(lambda self: self._native.sessions, doc="Sessions.")
    runs = property(lambda self: self._native.runs, doc="Monte Carlo runs.")
    seed = property(lambda self: self._native.seed, doc="Seed of the random draws.")
    models = property(lambda self: self._native.models, doc="Model ids (empty: the six measured).")
    strategies = property(lambda self: self._native.strategies, doc="Strategies.")

    @property
    def tool_names(self) -> List[str]:
        """Names of the tools at the start of a session."""
        return self._native.tool_names()

    def __reduce__(self):
        return (_scenario_from_source, (self._source,))

    def __repr__(self) -> str:
        return f"<Scenario {self.name!r} from {self.origin}>"


def _scenario_from_source(source: tuple) -> Scenario:
    kind, *args = source
    if kind == "default":
        return Scenario.default()
    if kind == "load":
        return Scenario.load(args[0])
    native = _pcsim.Scenario.from_toml(*args) if kind == "toml" else _pcsim.Scenario.from_json(*args)
    return Scenario(native, source)


ScenarioLike = Union[Scenario, str, "os.PathLike[str]", Mapping[str, Any], None]


def _scenario(s: ScenarioLike) -> Scenario:
    if s is None:
        return Scenario.default()
    if isinstance(s, Scenario):
        return s
    if isinstance(s, Mapping):
        return Scenario.from_dict(s)
    if isinstance(s, os.PathLike):
        return Scenario.load(s)
    if isinstance(s, str):
        # TOML text always has a `=` or a newline; a path usually has neither.
        if "\n" in s or "=" in s:
            return Scenario.from_toml(s)
        return Scenario.load(s)
    raise TypeError(f"scenario must be a Scenario, TOML text, a path or a dict, not {type(s).__name__}")


def _strings(x: Union[str, Iterable[str], None]) -> List[str]:
    if x is None:
        return []
    if isinstance(x, str):
        return [x]
    return [str(v) for v in x]


def run(
    scenario: ScenarioLike = None,
    *,
    models: Union[str, Sequence[str]] = (),
    strategies: Union[str, Sequence[str]] = (),
    runs: Optional[int] = None,
    seed: Optional[int] = None,
    per_call: bool = False,
    catalog: Optional[Catalog] = None,
) -> RunResult:
    """``pcsim run``: what a session costs per model and strategy, per call and in total.

    ``runs`` > 1 makes a Monte Carlo (each result then has ``.montecarlo``); ``per_call`` adds the
    per-call table to ``.table`` (``--calls``). Empty ``models`` / ``strategies``: the scenario's.
    """
    cat, sc = _catalog(catalog), _scenario(scenario)
    m, s = _strings(models), _strings(strategies)
    report, js, table, csv = _pcsim.run(cat._native, sc._native, m, s, runs, seed, per_call)
    rerun = _Rerun(run, sc, dict(models=m, strategies=s, runs=runs, seed=seed, per_call=per_call, catalog=cat))
    return RunResult(js, table, csv, report, rerun)


def compare(
    scenario: ScenarioLike = None,
    *,
    strategies: Union[str, Sequence[str]] = (),
    models: Union[str, Sequence[str]] = (),
    runs: Optional[int] = None,
    seed: Optional[int] = None,
    catalog: Optional[Catalog] = None,
) -> CompareResult:
    """``pcsim compare``: strategies side by side on the same session; ``none`` is the baseline.

    Empty ``strategies``: the command's default list (breakpoint placements, 1 h TTL, automatic,
    implicit); a strategy a model does not offer is in ``.skipped`` with its reason.
    """
    cat, sc = _catalog(catalog), _scenario(scenario)
    m, s = _strings(models), _strings(strategies)
    report, js, table, csv = _pcsim.compare(cat._native, sc._native, m, s, runs, seed)
    rerun = _Rerun(compare, sc, dict(models=m, strategies=s, runs=runs, seed=seed, catalog=cat))
    return CompareResult(js, table, csv, report, rerun)


ToolsLike = Union[PathLike, Mapping[str, Any], Sequence[Mapping[str, Any]]]


def _tool_texts(tools: Any, what: str) -> List[tuple]:
    """Tool lists as (JSON text, origin) pairs: a path, a JSON string, an MCP ``tools/list``
    response or result, or a list of MCP / OpenAI / Anthropic tool dicts; or a list of those."""
    if tools is None:
        return []
    if isinstance(tools, os.PathLike):
        tools = os.fspath(tools)
    if isinstance(tools, str):
        if tools.lstrip().startswith(("{", "[")):
            return [(tools, f"<{what}>")]
        return [(Path(tools).read_text(encoding="utf-8") if _is_file(tools) else _missing(tools), tools)]
    if isinstance(tools, Mapping):
        return [(json.dumps(tools), f"<{what}>")]
    if isinstance(tools, Sequence):
        items = list(tools)
        if all(isinstance(t, Mapping) and not _is_list_document(t) for t in items):
            return [(json.dumps(items), f"<{what}>")]
        out: List[tuple] = []
        for i, t in enumerate(items):
            out += _tool_texts(t, f"{what}[{i}]")
        return out
    raise TypeError(f"{what}: expected a path, JSON text, a dict or a list of tool dicts, not {type(tools).__name__}")


def _is_list_document(d: Mapping[str, Any]) -> bool:
    # A whole tools/list document (JSON-RPC response or result) rather than one tool.
    return "tools" in d or "result" in d or "jsonrpc" in d


def _is_file(p: str) -> bool:
    return os.path.isfile(p)


def _missing(p: str) -> str:
    if os.path.isdir(p):
        raise InvalidValueError(f"{p}: field `path`: is a folder, not a file", p, "path", "is a folder, not a file")
    raise FileError(f"{p}: cannot read: No such file or directory (os error 2)", p, None,
                    "cannot read: No such file or directory (os error 2)")


def tools_cost(
    tools: ToolsLike,
    *,
    models: Union[str, Sequence[str]] = (),
    catalog: Optional[Catalog] = None,
) -> ToolsCost:
    """``pcsim tools``: what a tool list costs per call on each model, per tool, and trimmed.

    ``tools``: an MCP ``tools/list`` response or result dict, a list of MCP, OpenAI
    (``{"type": "function", "function": {...}}``) or Anthropic (``input_schema``) tool dicts, JSON
    text, a path, or a list of several such lists (several connected servers). Empty ``models``:
    the six measured models.
    """
    cat = _catalog(catalog)
    js = _pcsim.tools_cost(cat._native, _tool_texts(tools, "tools"), _strings(models))
    return ToolsCost(js)


def whatif(
    scenario: ScenarioLike = None,
    *,
    at_call: int,
    add_tools: Optional[ToolsLike] = None,
    remove_tools: Union[str, Sequence[str]] = (),
    keep_tools: Optional[Sequence[str]] = None,
    remove_servers: Union[str, Sequence[str]] = (),
    trim: Optional[str] = None,
    replace_tools: Optional[ToolsLike] = None,
    models: Union[str, Sequence[str]] = (),
    strategies: Union[str, Sequence[str]] = (),
    runs: Optional[int] = None,
    seed: Optional[int] = None,
    catalog: Optional[Catalog] = None,
) -> WhatifResult:
    """``pcsim whatif``: the session against the same session with its tool list changed before
    call ``at_call`` (tools added, removed, kept, servers removed, trimmed or replaced); what it
    costs and when it pays back, with the ``/tool-changes=append`` variant where a model offers it.
    """
    cat, sc = _catalog(catalog), _scenario(scenario)
    args: Dict[str, Any] = dict(
        add=_tool_texts(add_tools, "add_tools"),
        remove=_strings(remove_tools),
        keep=None if keep_tools is None else _strings(keep_tools),
        remove_servers=_strings(remove_servers),
        trim=trim,
        replace=None if replace_tools is None else _tool_texts(replace_tools, "replace_tools"),
        models=_strings(models),
        strategies=_strings(strategies),
        runs=runs,
        seed=seed,
    )
    report, js, table, csv = _pcsim.whatif(cat._native, sc._native, at_call, **args)
    rerun = _Rerun(_whatif_native, sc, dict(args, at_call=at_call, catalog=cat))
    return WhatifResult(js, table, csv, report, rerun)


def _whatif_native(scenario: Scenario, *, catalog: Catalog, at_call: int, **args: Any) -> WhatifResult:
    report, js, table, csv = _pcsim.whatif(catalog._native, scenario._native, at_call, **args)
    return WhatifResult(js, table, csv, report)


def advise(
    scenario: ScenarioLike = None,
    *,
    models: Union[str, Sequence[str]] = (),
    runs: Optional[int] = None,
    seed: Optional[int] = None,
    catalog: Optional[Catalog] = None,
) -> AdviceResult:
    """``pcsim advise``: per model, breakpoints, TTL tier and tools to drop, each with its
    simulated saving."""
    cat, sc = _catalog(catalog), _scenario(scenario)
    m = _strings(models)
    report, js, table, _ = _pcsim.advise(cat._native, sc._native, m, runs, seed)
    rerun = _Rerun(advise, sc, dict(models=m, runs=runs, seed=seed, catalog=cat))
    return AdviceResult(js, table, "", report, rerun)


def explain(
    traces: Union[PathLike, Sequence[PathLike]],
    *,
    model: Optional[str] = None,
    session_gap_minutes: float = 0.0,
    redact: bool = False,
    catalog: Optional[Catalog] = None,
) -> ExplainResult:
    """``pcsim explain TRACE...``: why each call of a trace missed the cache, what it cost, and
    what the mechanical fixes (tool order, volatile system text, breakpoints, TTL, cache key,
    unused tools) would save on the same trace (docs/explain.md).

    Args:
        traces: trace files or folders (searched for ``.jsonl``, ``.json`` and ``.har``): pcsim's
            JSON Lines (``pcsim run --trace-out``), HAR, claude-tap.
        model: explain every call as this catalog model (``--model``; default: the model each
            request names).
        session_gap_minutes: a longer pause between two calls of a session starts a new
            conversation (``--session-gap-minutes``; 0: never).
        redact: no prompt text in any detail (``--redact``).

    Raises:
        InvalidValueError: no call could be explained (the command's error), a bad option.
        FileError: a trace that cannot be read.
    """
    if isinstance(traces, (str, os.PathLike)):
        traces = [traces]
    paths = [os.fspath(t) for t in traces]
    js, table, csv = _pcsim.explain(_catalog(catalog)._native, paths, model,
                                    float(session_gap_minutes), redact)
    return ExplainResult(js, table, csv)


class _Rerun:
    """A picklable way to compute a result again (for the charts of an unpickled result), and
    the call that made it (for the provenance of its report document)."""

    def __init__(self, fn: Any, scenario: Scenario, kwargs: Dict[str, Any]) -> None:
        self.fn, self.scenario, self.kwargs = fn, scenario, kwargs

    def __call__(self) -> Result:
        return self.fn(self.scenario, **self.kwargs)

    def describe(self) -> str:
        """The call as Python source, e.g. ``python: pcsim.run('examples/default.toml',
        models=['gpt-5.6'])`` (tool lists by their origin; the catalog is in the provenance)."""
        name = "whatif" if self.fn is _whatif_native else self.fn.__name__
        words = [repr(self.scenario.origin)]
        for k, v in self.kwargs.items():
            if k == "catalog" or v is None or v is False or (isinstance(v, list) and not v):
                continue
            if k in ("add", "replace"):
                v = [origin for _, origin in v]
            if k in ("add", "replace", "remove", "keep"):
                k = f"{k}_tools"
            words.append(f"{k}={v!r}")
        return f"python: pcsim.{name}({', '.join(words)})"


def log_files(paths: Union[PathLike, Sequence[PathLike]]) -> List[str]:
    """The log files ``pcsim replay`` reads for ``paths``: files as given, folders searched
    recursively for ``.jsonl`` and ``.json`` files in sorted order."""
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    out: List[str] = []
    for p in (os.fspath(x) for x in paths):
        if os.path.isdir(p):
            before = len(out)
            _walk(p, out)
            if len(out) == before:
                raise InvalidValueError(f"{p}: field `LOG`: the folder holds no .jsonl or .json file",
                                        p, "LOG", "the folder holds no .jsonl or .json file")
        else:
            out.append(p)
    return out


def _walk(d: str, out: List[str]) -> None:
    for name in sorted(os.listdir(d), key=os.fsencode):
        p = os.path.join(d, name)
        if os.path.isdir(p):
            _walk(p, out)
        elif name.endswith((".jsonl", ".json")):
            out.append(p)


def replay_files(
    files: Sequence[PathLike],
    *,
    models: Union[str, Sequence[str]] = (),
    strategies: Union[str, Sequence[str]] = (),
    gap_seconds: float = 30.0,
    prefix_tokens: int = 0,
    session_gap_minutes: float = 0.0,
    seed: Optional[int] = None,
    keep_calls: bool = False,
    skip_bad: bool = True,
    catalog: Optional[Catalog] = None,
) -> ReplayResult:
    """Replays the log files with the library's replay, the one ``pcsim replay`` runs (files in
    parallel, each file's figures listed on its own): the unit of work of a distributed replay,
    done in one native call with the GIL released. Each call is billed at its own model unless
    ``models`` names some; calls of models the catalog does not know are left out, and no priced
    call at all raises. A file that cannot be read is skipped with its reason in
    ``.files_skipped`` when ``skip_bad`` (the command's behaviour with several files); otherwise
    its exception is raised."""
    cat = _catalog(catalog)
    js = _pcsim.replay_files(cat._native, [os.fspath(f) for f in files], _strings(models),
                             _strings(strategies), gap_seconds, prefix_tokens, session_gap_minutes,
                             seed, keep_calls, skip_bad)
    return ReplayResult(js)


def replay(
    logs: Union[PathLike, Sequence[PathLike]],
    *,
    models: Union[str, Sequence[str]] = (),
    strategies: Union[str, Sequence[str]] = (),
    gap_seconds: float = 30.0,
    prefix_tokens: int = 0,
    session_gap_minutes: float = 0.0,
    seed: Optional[int] = None,
    keep_calls: bool = False,
    catalog: Optional[Catalog] = None,
) -> ReplayResult:
    """``pcsim replay LOG...``: usage logs (files or folders) logged against predicted, in total
    per (model, strategy). One log's problem raises; with several, a bad log is skipped (listed
    in ``.files_skipped``), and none replayable raises :class:`UnsupportedError`."""
    files = log_files(logs)
    r = replay_files(files, models=models, strategies=strategies, gap_seconds=gap_seconds,
                     prefix_tokens=prefix_tokens, session_gap_minutes=session_gap_minutes,
                     seed=seed, keep_calls=keep_calls, skip_bad=len(files) > 1, catalog=catalog)
    if not r.files:
        msg = "no log could be replayed: " + "; ".join(r.files_skipped)
        raise UnsupportedError(msg, None, None, msg)
    return r


def usd(x: float) -> str:
    """Dollars as pcsim prints them: ``$0.000388`` (six decimals)."""
    return _pcsim.usd(x)
