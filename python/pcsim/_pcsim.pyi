"""Type stubs of the native module `pcsim._pcsim` (the Rust half of the package).

Use the typed API of `pcsim` instead; these functions return what the commands print: JSON text,
the text table and the CSV, with a `Report` kept for the charts.
"""

from typing import List, Optional, Sequence, Tuple

__version__: str

ToolTexts = Sequence[Tuple[str, str]]  # (JSON text of a tool list, name in errors)

class Catalog:
    def __init__(
        self,
        overlay: Optional[str] = None,
        only: Optional[str] = None,
        overlay_text: Optional[str] = None,
        on: Optional[str] = None,
        price_sheet: Optional[str] = None,
        service_tier: Optional[str] = None,
        regional: bool = False,
        prices: Sequence[str] = ...,
    ) -> None: ...
    def model_ids(self) -> List[str]: ...
    @property
    def origin(self) -> str: ...

class Scenario:
    @staticmethod
    def from_toml(text: str, origin: str, base_dir: str) -> "Scenario": ...
    @staticmethod
    def from_json(json: str, origin: str, base_dir: str) -> "Scenario": ...
    @staticmethod
    def load(path: str) -> "Scenario": ...
    @staticmethod
    def builtin_default() -> "Scenario": ...
    @property
    def name(self) -> str: ...
    @property
    def description(self) -> str: ...
    @property
    def origin(self) -> str: ...
    @property
    def calls(self) -> int: ...
    @property
    def sessions(self) -> int: ...
    @property
    def runs(self) -> int: ...
    @property
    def seed(self) -> int: ...
    @property
    def models(self) -> List[str]: ...
    @property
    def strategies(self) -> List[str]: ...
    def tool_names(self) -> List[str]: ...

class Report:
    def charts(
        self, width: int = 1600, height: int = 1000, svg: bool = False, log_scale: bool = False
    ) -> List[Tuple[str, bytes]]: ...
    def report_files(
        self,
        path: str,
        command_line: str,
        width: int = 1600,
        height: int = 1000,
        log_scale: bool = False,
        write: bool = False,
    ) -> List[Tuple[str, bytes]]: ...

Printed = Tuple[Report, str, str, str]  # report, JSON, table, CSV

def run(
    catalog: Catalog,
    scenario: Scenario,
    models: Sequence[str],
    strategies: Sequence[str],
    runs: Optional[int] = None,
    seed: Optional[int] = None,
    per_call: bool = False,
) -> Printed: ...
def compare(
    catalog: Catalog,
    scenario: Scenario,
    models: Sequence[str],
    strategies: Sequence[str],
    runs: Optional[int] = None,
    seed: Optional[int] = None,
) -> Printed: ...
def advise(
    catalog: Catalog,
    scenario: Scenario,
    models: Sequence[str],
    runs: Optional[int] = None,
    seed: Optional[int] = None,
) -> Printed: ...
def whatif(
    catalog: Catalog,
    scenario: Scenario,
    at_call: int,
    add: ToolTexts,
    remove: Sequence[str],
    keep: Optional[Sequence[str]],
    remove_servers: Sequence[str],
    trim: Optional[str],
    replace: Optional[ToolTexts],
    models: Sequence[str],
    strategies: Sequence[str],
    runs: Optional[int] = None,
    seed: Optional[int] = None,
) -> Printed: ...
def explain(
    catalog: Catalog,
    paths: Sequence[str],
    model: Optional[str] = None,
    session_gap_minutes: float = 0.0,
    redact: bool = False,
) -> Tuple[str, str, str]: ...
def tools_cost(catalog: Catalog, lists: ToolTexts, models: Sequence[str]) -> str: ...
def replay_files(
    catalog: Catalog,
    paths: Sequence[str],
    models: Sequence[str],
    strategies: Sequence[str],
    gap_seconds: float = 30.0,
    prefix_tokens: int = 0,
    session_gap_minutes: float = 0.0,
    seed: Optional[int] = None,
    keep_calls: bool = False,
    skip_bad: bool = False,
) -> str: ...
def usd(x: float) -> str: ...
