//! Scenario files: the agent session to simulate (tools, prompt growth, timing, tool-list events,
//! sessions, models and strategies). See `examples/*.toml` and the README for the format.
//!
//! One concept: a scenario file read into a validated [`Scenario`]: the file's shape (`Raw*`), the
//! validated form, and the pass between them, one function per section (`Validation`). The file is
//! over 800 lines because that pass checks every field against its limit with an error that names
//! it.

use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::base::files::read_text;
use crate::base::quantity::Quantity;
use crate::base::text::{closest, num};
use crate::error::{Error, Result};
use crate::input::trim::Trim;
use crate::model::tools::{load_tool_files_within, synthetic_tools, Tool};

/// The built-in default scenario (also `examples/default.toml`).
pub const DEFAULT_SCENARIO: &str = include_str!("../../examples/default.toml");

/// Upper bound on calls simulated per session, so a typo cannot ask for unbounded work.
pub const MAX_CALLS_PER_SESSION: usize = 100_000;
/// Upper bound on sessions per scenario.
pub(crate) const MAX_SESSIONS: usize = 1_000_000;
/// Upper bound on calls in one simulated run (sessions x calls).
pub(crate) const MAX_CALLS_PER_RUN: u64 = 50_000_000;
/// Upper bound on calls over all Monte Carlo runs (runs x sessions x calls): minutes of work.
pub(crate) const MAX_CALLS_PER_SCENARIO: u64 = 1_000_000_000;
/// Upper bound on the tokens of one message (system prompt, task, tool result, user turn, output): ten
/// times any model's context window. Fixed values and distribution means above it are refused; random
/// draws are clamped to it, so token sums cannot overflow.
pub const MAX_TOKENS_PER_MESSAGE: u64 = 10_000_000;
/// Upper bound on the expected prompt of a session's last call (mean draws): a conversation that
/// would outgrow every context window a hundred times over is a typo, not a scenario.
pub(crate) const MAX_PROMPT_TOKENS: u64 = 1_000_000_000;
/// Upper bound on any duration in a scenario (gaps, arrival intervals): 30 days.
pub(crate) const MAX_SECONDS: f64 = 30.0 * 86_400.0;
/// Upper bound on the seconds until a response starts.
pub(crate) const MAX_FIRST_TOKEN_SECONDS: f64 = 3_600.0;
/// Smallest Poisson arrival rate (sessions per hour); slower rates are idle simulations.
pub(crate) const MIN_POISSON_PER_HOUR: f64 = 1e-3;
/// Upper bound on the tools in the list at any call (also per tool file and per `pcsim tools` run).
pub use crate::model::tools::MAX_TOOLS;
/// Upper bound on the tools loaded or generated in a whole scenario (initial list plus every event).
pub(crate) const MAX_TOOLS_LOADED: usize = 100_000;
/// Upper bound on the tool-list events of a scenario.
pub const MAX_EVENTS: usize = 10_000;
/// Upper bound on the tools of all the lists a scenario goes through (the initial list plus the
/// whole list after each event): the engine prepares every list for every model, so its work and
/// memory grow with this sum, linearly.
pub const MAX_LISTED_TOOLS: usize = 1_000_000;
/// Upper bound on the parameters of one synthetic tool (`synthetic.params`, `sweep --params`).
pub(crate) const MAX_PARAMS_PER_TOOL: usize = 1_000;
/// Upper bound on the parameters of all the synthetic tools of a scenario: its `synthetic` list and
/// every event's `add_synthetic` together (each entry is checked with those before it, before its
/// tools are made). Every parameter is rendered and counted on every model of a command: at
/// 200,000 `advise` took 10 s on one model, and with no sum over events 40 events of 10,000
/// parameters took 6.6 s and 320 MB (10,000 events would have taken half an hour).
pub const MAX_SYNTHETIC_PARAMS: usize = 50_000;

/// A change of the tool list before a given call.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolEvent {
    /// 1-based call number before which the change applies (in every session).
    pub at_call: usize,
    /// Tools added at the end of the list.
    pub add: Vec<Tool>,
    /// Names of tools removed.
    pub remove: Vec<String>,
    /// When set, only these tools are kept (applied after `remove`).
    pub keep: Option<Vec<String>>,
    /// When set, the whole list is replaced by these tools.
    pub replace: Option<Vec<Tool>>,
}

impl ToolEvent {
    /// Applies the event to a tool list. Names are checked when the scenario is validated.
    pub fn apply(&self, tools: &[Tool]) -> Vec<Tool> {
        if let Some(r) = &self.replace {
            return r.clone();
        }
        // Hash sets: an event's cost grows with the list and the names, not their product.
        let remove: std::collections::HashSet<&str> =
            self.remove.iter().map(String::as_str).collect();
        let keep: Option<std::collections::HashSet<&str>> = self
            .keep
            .as_ref()
            .map(|k| k.iter().map(String::as_str).collect());
        let mut out: Vec<Tool> = tools
            .iter()
            .filter(|t| {
                !remove.contains(t.name.as_str())
                    && keep.as_ref().is_none_or(|k| k.contains(t.name.as_str()))
            })
            .cloned()
            .collect();
        out.extend(self.add.iter().cloned());
        out
    }
}

/// A change of a request setting before a given call (`[[event]] change = "tool_choice"`): the
/// catalog says, per model and caching mode, which prompt parts it invalidates
/// ([`crate::model::catalog::CacheRules::invalidates`]).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct SettingEvent {
    /// 1-based call number before which the setting changes (in every session).
    pub at_call: usize,
    /// The setting, one of `crate::model::catalog::SETTING_CHANGES`.
    pub change: String,
}

impl ToolEvent {
    /// [`ToolEvent::apply`] on borrowed tools: the same list, by reference, in the same order, in
    /// time linear in the list and the event (no tool is copied), so that preparing a scenario with
    /// many events costs the pointers of each list, not copies of every definition.
    pub(crate) fn apply_refs<'t>(&'t self, tools: &[&'t Tool]) -> Vec<&'t Tool> {
        if let Some(r) = &self.replace {
            return r.iter().collect();
        }
        let remove: std::collections::HashSet<&str> =
            self.remove.iter().map(String::as_str).collect();
        let keep: Option<std::collections::HashSet<&str>> = self
            .keep
            .as_ref()
            .map(|k| k.iter().map(String::as_str).collect());
        let mut out: Vec<&Tool> = tools
            .iter()
            .copied()
            .filter(|t| {
                !remove.contains(t.name.as_str())
                    && keep.as_ref().is_none_or(|k| k.contains(t.name.as_str()))
            })
            .collect();
        out.extend(self.add.iter());
        out
    }

    /// [`ToolEvent::apply`] on an owned list (no definition is copied but the added ones).
    fn apply_owned(&self, mut tools: Vec<Tool>) -> Vec<Tool> {
        if let Some(r) = &self.replace {
            return r.clone();
        }
        let remove: std::collections::HashSet<&str> =
            self.remove.iter().map(String::as_str).collect();
        let keep: Option<std::collections::HashSet<&str>> = self
            .keep
            .as_ref()
            .map(|k| k.iter().map(String::as_str).collect());
        tools.retain(|t| {
            !remove.contains(t.name.as_str())
                && keep.as_ref().is_none_or(|k| k.contains(t.name.as_str()))
        });
        tools.extend(self.add.iter().cloned());
        tools
    }
}

/// One MCP server's share of a scenario's tools (`[[tools.server]]` or an event's `add_server`):
/// the names it contributes, as sent (with its prefix), so a whole server can be removed by name.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct ServerTools {
    /// Server name (`github`).
    pub name: String,
    /// Prefix put before each of its tool names (`mcp__github__`, as Claude Code does; empty: none).
    pub prefix: String,
    /// Its tool names as sent to the model (prefix included), in list order.
    pub tools: Vec<String>,
}

/// How sessions arrive when there are several.
#[derive(Debug, Clone, PartialEq)]
pub enum Arrival {
    /// Session i starts at i x `every_seconds`.
    Every(f64),
    /// Poisson arrivals at this many sessions per hour.
    Poisson(f64),
}

/// A validated scenario.
#[derive(Debug, Clone)]
pub struct Scenario {
    /// Short name used in titles and file names.
    pub name: String,
    /// One-line description.
    pub description: String,
    /// Where the scenario came from.
    pub origin: String,
    /// Model ids (empty: the six measured models).
    pub models: Vec<String>,
    /// Strategy strings (see [`crate::model::strategy::Strategy::parse`]).
    pub strategies: Vec<String>,
    /// The tool list at the first call.
    pub tools: Vec<Tool>,
    /// The MCP servers named in the scenario (initial list and events) and the tools of each.
    pub servers: Vec<ServerTools>,
    /// System prompt tokens (0: no system prompt).
    pub system_tokens: u64,
    /// Calls per session; with `session_calls`, the most calls a session makes.
    pub calls: usize,
    /// Session lengths to draw from (`calls = { dist = "empirical", values = [...] }`): each
    /// session makes one of these numbers of calls, drawn uniformly with replacement from its own
    /// stream. Empty: every session makes `calls` calls.
    pub session_calls: Vec<usize>,
    /// Tokens of the task message of the first call.
    pub first_user_tokens: Quantity,
    /// Extra user tokens sent with each later call.
    pub user_tokens: Quantity,
    /// Tool-result tokens sent with each later call.
    pub tool_result_tokens: Quantity,
    /// Output tokens of each call (also appended to the history).
    pub output_tokens: Quantity,
    /// Seconds from one call's start to the next call's start.
    pub gap_seconds: Quantity,
    /// Seconds until a response starts; cache writes become visible then.
    pub first_token_seconds: f64,
    /// Tool-list changes.
    pub events: Vec<ToolEvent>,
    /// Request-setting changes (tool_choice, images, thinking), in call order.
    pub setting_events: Vec<SettingEvent>,
    /// Number of sessions.
    pub sessions: usize,
    /// How sessions arrive.
    pub arrival: Arrival,
    /// Whether sessions share one account's cache.
    pub shared_cache: bool,
    /// How requests set OpenAI's `prompt_cache_key` (`[sessions] prompt_cache_key`).
    pub prompt_cache_key: PromptCacheKey,
    /// Seed of the random draws.
    pub seed: u64,
    /// Monte Carlo runs (1: a single run).
    pub runs: usize,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawScenario {
    name: Option<String>,
    description: Option<String>,
    #[serde(default)]
    models: Vec<String>,
    #[serde(default)]
    strategies: Vec<String>,
    seed: Option<u64>,
    runs: Option<usize>,
    #[serde(default)]
    tools: RawTools,
    session: RawSession,
    sessions: Option<RawSessions>,
    #[serde(default, rename = "event")]
    events: Vec<RawEvent>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawTools {
    #[serde(default)]
    files: Vec<PathBuf>,
    synthetic: Option<RawSynthetic>,
    #[serde(default, rename = "server")]
    servers: Vec<RawServer>,
    /// Applied to the whole initial list, after `keep` and `drop`.
    trim: Option<String>,
    keep: Option<Vec<String>>,
    #[serde(default)]
    drop: Vec<String>,
}

/// `[[tools.server]]` / `[[event.add_server]]`: one server's tool file(s), optionally prefixed,
/// trimmed and filtered (`keep`/`drop` use the names in the file, without the prefix).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawServer {
    name: String,
    file: Option<PathBuf>,
    #[serde(default)]
    files: Vec<PathBuf>,
    #[serde(default)]
    prefix: String,
    trim: Option<String>,
    keep: Option<Vec<String>>,
    #[serde(default)]
    drop: Vec<String>,
}

#[derive(Deserialize, Clone, Copy)]
#[serde(deny_unknown_fields)]
struct RawSynthetic {
    count: usize,
    #[serde(default = "default_params")]
    params: usize,
}

fn default_params() -> usize {
    3
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSession {
    calls: toml::Value,
    #[serde(default)]
    system_tokens: u64,
    first_user_tokens: Option<toml::Value>,
    user_tokens: Option<toml::Value>,
    tool_result_tokens: Option<toml::Value>,
    output_tokens: Option<toml::Value>,
    gap_seconds: Option<toml::Value>,
    first_token_seconds: Option<f64>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSessions {
    count: usize,
    every_seconds: Option<f64>,
    poisson_per_hour: Option<f64>,
    #[serde(default = "yes")]
    shared_cache: bool,
    prompt_cache_key: Option<String>,
}

/// How the requests of a scenario set a `prompt_cache_key`, the routing hint of providers that
/// route requests to cache machines by prompt prefix and key (in the catalog: the models with
/// `routing_rpm_per_prefix`, OpenAI's automatic caching). Other providers' caches are per
/// account whatever the key, so it changes nothing there.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PromptCacheKey {
    /// One key (or none) for the whole workload: every session with the same prefix goes to the
    /// same machines, shares their cache and their requests-per-minute budget (`"shared"`).
    #[default]
    Shared,
    /// A key per session (per user or conversation): each session is routed on its own, with its
    /// own budget and, as its key sends it to its own machine, its own cache (`"per_session"`).
    PerSession,
}

fn yes() -> bool {
    true
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawEvent {
    at_call: usize,
    #[serde(default)]
    add_files: Vec<PathBuf>,
    add_synthetic: Option<RawSynthetic>,
    #[serde(default)]
    remove: Vec<String>,
    /// Same as `remove` (the spelling `tools --drop` uses).
    #[serde(default)]
    drop: Vec<String>,
    keep: Option<Vec<String>>,
    replace_files: Option<Vec<PathBuf>>,
    /// Every tool of these servers (as named in `[[tools.server]]` or an earlier `add_server`).
    #[serde(default)]
    remove_servers: Vec<String>,
    #[serde(default, rename = "add_server")]
    add_servers: Vec<RawServer>,
    /// Trims the list (after the other changes of the event) from this call on.
    trim: Option<String>,
    /// A request setting that changes from this call on (`tool_choice`, `images`, `thinking`).
    change: Option<String>,
}

impl RawEvent {
    /// Whether the event changes the tool list (an event may only change a setting).
    fn changes_tools(&self) -> bool {
        !self.add_files.is_empty()
            || self.add_synthetic.is_some()
            || !self.remove.is_empty()
            || !self.drop.is_empty()
            || self.keep.is_some()
            || self.replace_files.is_some()
            || !self.remove_servers.is_empty()
            || !self.add_servers.is_empty()
            || self.trim.is_some()
    }
}

/// What a JSON file given where a scenario is expected is, with the command that reads it
/// (`pcsim run .mcp.json` said only "invalid key-value pair"); `None` for anything else, which is then
/// parsed as TOML with TOML's own error.
fn other_input_kind(text: &str) -> Option<&'static str> {
    let t = text.trim_start_matches('\u{feff}').trim_start();
    if !(t.starts_with('{') || t.starts_with('[')) {
        return None;
    }
    let first: serde_json::Value = match serde_json::from_str(t) {
        Ok(v) => v,
        // JSON Lines: the first line alone is a record.
        Err(_) => serde_json::from_str(t.lines().next()?).ok()?,
    };
    let has = |k: &str| first.get(k).is_some();
    Some(
        if has("mcpServers") || has("servers") || has("context_servers") || has("mcp") {
            "an MCP client configuration: `pcsim config FILE` captures its servers and prices their tools (`--scenario-out` writes a scenario)"
        } else if has("tools") || first.is_array() || (has("name") && has("inputSchema")) {
            "a tool list: `pcsim tools FILE` prices it; a scenario names it in `[tools] files`"
        } else if has("usage") || has("message") || has("type") || has("request") || has("log") {
            "a usage log or trace: `pcsim replay FILE` replays it"
        } else {
            "a JSON file: a scenario is TOML (see examples/default.toml), a tool list is read by `pcsim tools`, a client configuration by `pcsim config`, a usage log by `pcsim replay`"
        },
    )
}

impl Scenario {
    /// The built-in default scenario.
    pub fn builtin_default() -> Result<Self> {
        Self::from_toml_str(
            DEFAULT_SCENARIO,
            "built-in default scenario",
            Path::new("."),
        )
    }

    /// Loads a scenario file; tool files are resolved relative to its folder.
    pub fn load(path: &Path) -> Result<Self> {
        let text = read_text(path)?;
        if let Some(kind) = other_input_kind(&text) {
            return Err(Error::invalid(
                path.display().to_string(),
                "scenario",
                format!("not a scenario (TOML) but {kind}"),
            ));
        }
        crate::base::files::check_toml_size(text.len(), &path.display().to_string())?;
        let base = path.parent().unwrap_or(Path::new("."));
        Self::from_toml_str(&text, &path.display().to_string(), base)
    }

    /// Parses and validates scenario text; errors name `origin` and, where the field can be found in
    /// the text, its line and column.
    pub fn from_toml_str(text: &str, origin: &str, base: &Path) -> Result<Self> {
        Self::parse_and_validate(text, origin, base).map_err(|e| e.located_in(text, origin))
    }

    /// Parses the text, then validates its sections in the file's dependency order (each error
    /// names the first field that fails): strategies, the initial tool list, `[session]`'s counts,
    /// `[sessions]`, `runs`, the events (which refer to both the list and the session), and last
    /// the session's message sizes.
    fn parse_and_validate(text: &str, origin: &str, base: &Path) -> Result<Self> {
        let raw: RawScenario =
            toml::from_str(text).map_err(|e| crate::base::tomlpos::toml_error(origin, text, &e))?;
        let mut v = Validation {
            origin,
            base,
            tool_bytes: 0,
            synthetic_params: 0,
            loaded: 0,
            servers: Vec::new(),
        };
        v.check_strategies(&raw.strategies)?;
        let tools = v.initial_tools(raw.tools)?;
        let (session, session_calls) = v.session_counts(raw.session)?;
        let sessions = v.sessions(raw.sessions, session.calls)?;
        let runs = raw.runs.unwrap_or(1);
        check_runs(runs as u64, sessions.count, session.calls).map_err(|p| v.inv("runs", p))?;
        let (events, setting_events) = v.events(raw.events, &tools, session.calls)?;
        let sizes = v.session_sizes(&session)?;
        Ok(Scenario {
            name: raw.name.unwrap_or_else(|| {
                Path::new(origin)
                    .file_stem()
                    .map_or("scenario".into(), |s| s.to_string_lossy().into_owned())
            }),
            description: raw.description.unwrap_or_default(),
            origin: origin.to_string(),
            models: raw.models,
            strategies: if raw.strategies.is_empty() {
                vec!["none".into(), "cached".into()]
            } else {
                raw.strategies
            },
            tools,
            servers: v.servers,
            system_tokens: session.system_tokens,
            calls: session.calls,
            session_calls,
            first_user_tokens: sizes.first_user_tokens,
            user_tokens: sizes.user_tokens,
            tool_result_tokens: sizes.tool_result_tokens,
            output_tokens: sizes.output_tokens,
            gap_seconds: sizes.gap_seconds,
            first_token_seconds: session.first_token_seconds.unwrap_or(1.0),
            events,
            setting_events,
            sessions: sessions.count,
            arrival: sessions.arrival,
            shared_cache: sessions.shared_cache,
            prompt_cache_key: sessions.prompt_cache_key,
            seed: raw.seed.unwrap_or(1),
            runs,
        })
    }

    /// Sets the Monte Carlo runs to `runs` (a `--runs` override), refused on the same limits as
    /// `runs` in the file (at most [`MAX_CALLS_PER_SCENARIO`] calls over all runs); errors name
    /// `origin` and `field`.
    pub(crate) fn set_runs(&mut self, runs: u64, origin: &str, field: &str) -> Result<()> {
        check_runs(runs, self.sessions, self.calls)
            .map_err(|p| Error::invalid(origin, field, format!("{p} ({})", self.origin)))?;
        self.runs = runs as usize;
        Ok(())
    }
}

/// What the validation of one scenario file carries from section to section: where its errors
/// point, where its tool files are found, and the running totals that shared limits hold.
struct Validation<'a> {
    /// The file errors name.
    origin: &'a str,
    /// The folder tool files are resolved from.
    base: &'a Path,
    /// Bytes of every tool file the scenario loads (initial list, servers, events), held to
    /// MAX_TOOL_BYTES before each file is parsed.
    tool_bytes: u64,
    /// Parameters of every synthetic tool made so far (initial list and events).
    synthetic_params: usize,
    /// Tools loaded or generated so far (initial list and events), held to [`MAX_TOOLS_LOADED`].
    loaded: usize,
    /// The MCP servers named so far and their tools.
    servers: Vec<ServerTools>,
}

/// `[sessions]`, validated.
struct SessionsSection {
    count: usize,
    arrival: Arrival,
    shared_cache: bool,
    prompt_cache_key: PromptCacheKey,
}

/// The message sizes and the gap of `[session]`, validated.
struct SessionSizes {
    first_user_tokens: Quantity,
    user_tokens: Quantity,
    tool_result_tokens: Quantity,
    output_tokens: Quantity,
    gap_seconds: Quantity,
}

impl Validation<'_> {
    /// An error about `field` of this file.
    fn inv(&self, field: &str, problem: String) -> Error {
        Error::invalid(self.origin, field, problem)
    }

    /// A quantity field, `default` when absent.
    fn quantity(&self, v: &Option<toml::Value>, field: &str, default: f64) -> Result<Quantity> {
        match v {
            Some(v) => Quantity::from_toml(v, self.origin, field),
            None => Ok(Quantity::fixed(default)),
        }
    }

    /// Loads tool files named in the scenario (relative to its folder), counting their bytes.
    fn load_files(&mut self, files: &[PathBuf]) -> Result<Vec<Tool>> {
        let paths: Vec<PathBuf> = files.iter().map(|f| self.base.join(f)).collect();
        load_tool_files_within(&paths, &mut self.tool_bytes)
    }

    /// Loads one server entry (see [`load_server`]) at `at`.
    fn load_server(&mut self, rs: &RawServer, at: &str) -> Result<(ServerTools, Vec<Tool>)> {
        let base = self.base;
        let resolve =
            |files: &[PathBuf]| -> Vec<PathBuf> { files.iter().map(|f| base.join(f)).collect() };
        load_server(rs, self.origin, at, &resolve, &mut self.tool_bytes)
    }

    /// `strategies`: each string parses. Whether a model offers them is only known when the
    /// scenario is run; checked here, where the error can point at the line.
    fn check_strategies(&self, strategies: &[String]) -> Result<()> {
        for text in strategies {
            crate::model::strategy::Strategy::parse(text).map_err(|e| match e {
                Error::Strategy { strategy, problem } => {
                    self.inv("strategies", format!("`{strategy}`: {problem}"))
                }
                other => other,
            })?;
        }
        Ok(())
    }

    /// `[tools]`: the list at the first call (files, servers, synthetic tools, then `keep`,
    /// `drop` and `trim`).
    fn initial_tools(&mut self, raw: RawTools) -> Result<Vec<Tool>> {
        let origin = self.origin;
        let mut tools = self.load_files(&raw.files)?;
        for (i, rs) in raw.servers.iter().enumerate() {
            let at = format!("tools.server[{i}]");
            let (server, list) = self.load_server(rs, &at)?;
            let names: std::collections::HashSet<&str> =
                tools.iter().map(|t| t.name.as_str()).collect();
            check_clashes(
                &|n| names.contains(n),
                &list,
                &server,
                &self.servers,
                origin,
                &at,
            )?;
            tools.extend(list);
            upsert_server(&mut self.servers, server);
        }
        if let Some(s) = raw.synthetic {
            check_synthetic(s, origin, "tools.synthetic", &mut self.synthetic_params)?;
            tools.extend(synthetic_tools(1, s.count, s.params));
        }
        let mut tools = filter_tools(tools, raw.keep.as_deref(), &raw.drop, origin, "tools")?;
        if let Some(t) = &raw.trim {
            tools = parse_trim(t, origin, "tools.trim")?.apply(&tools);
        }
        check_tool_count(tools.len(), origin, "tools")?;
        self.loaded = tools.len();
        Ok(tools)
    }

    /// `[session]`'s counts: calls (with the session lengths to draw from, empty for a whole
    /// number), system tokens and the seconds to the first token.
    fn session_counts(&self, raw: RawSession) -> Result<(SessionCounts, Vec<usize>)> {
        let (calls, session_calls) =
            session_lengths(&raw.calls).map_err(|p| self.inv("session.calls", p))?;
        let session = SessionCounts {
            calls,
            ..raw.into()
        };
        if session.calls == 0 {
            return Err(self.inv(
                "session.calls",
                "value 0: a session needs at least one call".into(),
            ));
        }
        if session.calls > MAX_CALLS_PER_SESSION {
            return Err(self.inv(
                "session.calls",
                format!(
                    "value {} exceeds the limit of {MAX_CALLS_PER_SESSION} calls per session",
                    session.calls
                ),
            ));
        }
        if session.system_tokens > MAX_TOKENS_PER_MESSAGE {
            return Err(self.inv(
                "session.system_tokens",
                format!(
                    "value {} is beyond any model's context (limit {MAX_TOKENS_PER_MESSAGE})",
                    session.system_tokens
                ),
            ));
        }
        let first_token_seconds = session.first_token_seconds.unwrap_or(1.0);
        if !(0.0..=MAX_FIRST_TOKEN_SECONDS).contains(&first_token_seconds) {
            return Err(self.inv(
                "session.first_token_seconds",
                format!(
                    "value {} must be a number from 0 to {MAX_FIRST_TOKEN_SECONDS}",
                    num(first_token_seconds)
                ),
            ));
        }
        Ok((session, session_calls))
    }

    /// `[sessions]` (one session when absent), held with `calls` per session to the calls of a run.
    fn sessions(&self, raw: Option<RawSessions>, calls: usize) -> Result<SessionsSection> {
        let key_text = raw.as_ref().and_then(|s| s.prompt_cache_key.clone());
        let (count, arrival, shared_cache) = match raw {
            None => (1, Arrival::Every(0.0), true),
            Some(s) => {
                if s.count == 0 {
                    return Err(self.inv(
                        "sessions.count",
                        "value 0: at least one session is needed".into(),
                    ));
                }
                if s.count > MAX_SESSIONS {
                    return Err(self.inv(
                        "sessions.count",
                        format!("value {} exceeds the limit of {MAX_SESSIONS}", s.count),
                    ));
                }
                (s.count, self.arrival(&s)?, s.shared_cache)
            }
        };
        let prompt_cache_key = match key_text.as_deref() {
            None | Some("shared") => PromptCacheKey::Shared,
            Some("per_session") => PromptCacheKey::PerSession,
            Some(other) => {
                let hint = closest(other, ["shared", "per_session"])
                    .map(|c| format!("; did you mean `{c}`?"))
                    .unwrap_or_default();
                return Err(self.inv(
                    "sessions.prompt_cache_key",
                    format!("unknown value `{other}`{hint} (values: shared, per_session)"),
                ));
            }
        };
        if (count as u64).saturating_mul(calls as u64) > MAX_CALLS_PER_RUN {
            return Err(self.inv(
                "sessions.count",
                format!("{count} sessions x {calls} calls exceeds the limit of {MAX_CALLS_PER_RUN} calls per run"),
            ));
        }
        Ok(SessionsSection {
            count,
            arrival,
            shared_cache,
            prompt_cache_key,
        })
    }

    /// How the sessions of `[sessions]` arrive: every so many seconds or at a Poisson rate.
    fn arrival(&self, s: &RawSessions) -> Result<Arrival> {
        Ok(match (s.every_seconds, s.poisson_per_hour) {
            (Some(_), Some(_)) => {
                return Err(self.inv(
                    "sessions",
                    "give either every_seconds or poisson_per_hour, not both".into(),
                ))
            }
            (Some(e), None) if (0.0..=MAX_SECONDS).contains(&e) => Arrival::Every(e),
            (Some(e), None) => {
                return Err(self.inv(
                    "sessions.every_seconds",
                    format!(
                        "value {} must be a number from 0 to {MAX_SECONDS} (30 days)",
                        num(e)
                    ),
                ))
            }
            (None, Some(r)) if r.is_finite() && r >= MIN_POISSON_PER_HOUR => Arrival::Poisson(r),
            (None, Some(r)) => {
                return Err(self.inv(
                    "sessions.poisson_per_hour",
                    format!("value {r} must be a finite number >= {MIN_POISSON_PER_HOUR}"),
                ))
            }
            (None, None) => Arrival::Every(0.0),
        })
    }

    /// `[[event]]`s, in call order (errors name them by their place in the file): the tool-list
    /// changes and the setting changes, each tool-list version checked against the limits.
    fn events(
        &mut self,
        raw: Vec<RawEvent>,
        tools: &[Tool],
        calls: usize,
    ) -> Result<(Vec<ToolEvent>, Vec<SettingEvent>)> {
        let raw_events_len = raw.len();
        if raw_events_len > MAX_EVENTS {
            return Err(self.inv(
                "event",
                format!(
                    "{raw_events_len} events exceed the limit of {MAX_EVENTS} tool-list events"
                ),
            ));
        }
        let mut events = Vec::new();
        let mut setting_events = Vec::new();
        let mut current: Vec<Tool> = tools.to_vec();
        let mut listed: usize = current.len();
        let mut raw_events: Vec<(usize, RawEvent)> = raw.into_iter().enumerate().collect();
        raw_events.sort_by_key(|(_, e)| e.at_call);
        for (i, (in_file, e)) in raw_events.into_iter().enumerate() {
            let at = format!("event[{in_file}]");
            if e.at_call < 2 || e.at_call > calls {
                return Err(self.inv(
                    &format!("{at}.at_call"),
                    format!("value {}: an event must come before a call from 2 to {calls} (the session's calls)", e.at_call),
                ));
            }
            if let Some(change) = &e.change {
                setting_events.push(self.setting_change(&at, e.at_call, change)?);
            }
            // A setting-only event leaves the tool list (and its versions) alone.
            if e.change.is_some() && !e.changes_tools() {
                continue;
            }
            let event = self.tool_event(&at, i, e, &current)?;
            let next = event.apply_owned(std::mem::take(&mut current));
            let mut names = std::collections::HashSet::new();
            if let Some(t) = next.iter().find(|t| !names.insert(t.name.as_str())) {
                return Err(self.inv(
                    &at,
                    format!(
                        "adding tool `{}` would duplicate a name already in the list",
                        t.name
                    ),
                ));
            }
            check_tool_count(next.len(), self.origin, &at)?;
            // Each list version is prepared per model (its tools measured and placed): bounded.
            listed = listed.saturating_add(next.len());
            if listed > MAX_LISTED_TOOLS {
                return Err(self.inv(
                    &at,
                    format!("the tool lists of all {} events hold more than {MAX_LISTED_TOOLS} tools in all (each event's list counts whole)", raw_events_len),
                ));
            }
            current = next;
            events.push(event);
        }
        Ok((events, setting_events))
    }

    /// An event's `change`: one of the settings the catalog knows.
    fn setting_change(&self, at: &str, at_call: usize, change: &str) -> Result<SettingEvent> {
        let settings = crate::model::catalog::SETTING_CHANGES;
        if !settings.contains(&change) {
            let hint = closest(change, settings.iter().copied())
                .map(|c| format!("; did you mean `{c}`?"))
                .unwrap_or_default();
            return Err(self.inv(
                &format!("{at}.change"),
                format!(
                    "unknown setting `{change}`{hint} (settings: {})",
                    settings.join(", ")
                ),
            ));
        }
        Ok(SettingEvent {
            at_call,
            change: change.to_string(),
        })
    }

    /// The tool-list change of event `i` (in call order) at `at`, on the list `current` before it:
    /// additions, removals (names that must be in the list), a replacement, then a trim.
    fn tool_event(
        &mut self,
        at: &str,
        i: usize,
        e: RawEvent,
        current: &[Tool],
    ) -> Result<ToolEvent> {
        // The names in the list before this event: every check below is a hash lookup.
        let in_list: std::collections::HashSet<&str> =
            current.iter().map(|t| t.name.as_str()).collect();
        let add = self.event_additions(at, i, &e, current.len(), &in_list)?;
        self.loaded += add.len();
        let remove = self.event_removals(at, &e, &in_list)?;
        let replace = match &e.replace_files {
            Some(f) => Some(self.load_files(f)?),
            None => None,
        };
        self.loaded += replace.as_ref().map_or(0, Vec::len);
        if self.loaded > MAX_TOOLS_LOADED {
            return Err(self.inv(
                at,
                format!("the scenario loads more than {MAX_TOOLS_LOADED} tools in all (initial list and events)"),
            ));
        }
        let event = ToolEvent {
            at_call: e.at_call,
            add,
            remove,
            keep: e.keep,
            replace,
        };
        let Some(t) = &e.trim else {
            return Ok(event);
        };
        // A trim rewrites every definition: the event becomes the whole trimmed list.
        let trimmed =
            parse_trim(t, self.origin, &format!("{at}.trim"))?.apply(&event.apply(current));
        // Every definition is new: loaded like a replacement list.
        self.loaded += trimmed.len();
        if self.loaded > MAX_TOOLS_LOADED {
            return Err(self.inv(
                &format!("{at}.trim"),
                format!("the scenario loads more than {MAX_TOOLS_LOADED} tools in all (initial list and events, trimmed lists included)"),
            ));
        }
        Ok(ToolEvent {
            at_call: e.at_call,
            add: Vec::new(),
            remove: Vec::new(),
            keep: None,
            replace: Some(trimmed),
        })
    }

    /// The tools event `i` adds: its files, its synthetic tools and its servers (whose names must
    /// not clash with the list's `in_list` or each other's).
    fn event_additions(
        &mut self,
        at: &str,
        i: usize,
        e: &RawEvent,
        current_len: usize,
        in_list: &std::collections::HashSet<&str>,
    ) -> Result<Vec<Tool>> {
        let origin = self.origin;
        let mut add = self.load_files(&e.add_files)?;
        if let Some(s) = e.add_synthetic {
            check_synthetic(
                s,
                origin,
                &format!("{at}.add_synthetic"),
                &mut self.synthetic_params,
            )?;
            let first = current_len + 1000 * (i + 1);
            add.extend(synthetic_tools(first, s.count, s.params));
        }
        for (j, rs) in e.add_servers.iter().enumerate() {
            let at = format!("{at}.add_server[{j}]");
            let (server, list) = self.load_server(rs, &at)?;
            let added: std::collections::HashSet<&str> =
                add.iter().map(|t| t.name.as_str()).collect();
            let present = |n: &str| in_list.contains(n) || added.contains(n);
            check_clashes(&present, &list, &server, &self.servers, origin, &at)?;
            add.extend(list);
            upsert_server(&mut self.servers, server);
        }
        Ok(add)
    }

    /// The names an event removes (`remove`, `drop` and the tools of `remove_servers` still in the
    /// list); every name it removes or keeps must be in the list `in_list`.
    fn event_removals(
        &self,
        at: &str,
        e: &RawEvent,
        in_list: &std::collections::HashSet<&str>,
    ) -> Result<Vec<String>> {
        let mut remove = e.remove.clone();
        remove.extend(e.drop.iter().cloned());
        for (j, name) in e.remove_servers.iter().enumerate() {
            let field = format!("{at}.remove_servers[{j}]");
            let server = self.servers.iter().find(|s| &s.name == name).ok_or_else(|| {
                let hint = closest(name, self.servers.iter().map(|s| s.name.as_str()))
                    .map(|c| format!("; did you mean `{c}`?"))
                    .unwrap_or_default();
                self.inv(
                    &field,
                    format!(
                        "no server `{name}` is defined before call {}{hint} (servers come from [[tools.server]] and earlier add_server entries)",
                        e.at_call
                    ),
                )
            })?;
            let removed: std::collections::HashSet<&String> = remove.iter().collect();
            let present: Vec<String> = server
                .tools
                .iter()
                .filter(|t| in_list.contains(t.as_str()) && !removed.contains(t))
                .cloned()
                .collect();
            if present.is_empty() && !server.tools.iter().any(|t| removed.contains(t)) {
                return Err(self.inv(
                    &field,
                    format!(
                        "none of server `{name}`'s tools is in the tool list at call {}",
                        e.at_call
                    ),
                ));
            }
            remove.extend(present);
        }
        for name in remove.iter().chain(e.keep.iter().flatten()) {
            if !in_list.contains(name.as_str()) {
                return Err(self.inv(
                    at,
                    format!(
                        "tool `{name}` is not in the tool list at call {}",
                        e.at_call
                    ),
                ));
            }
        }
        Ok(remove)
    }

    /// `[session]`'s message sizes and gap, each within its limit, and the conversation they grow
    /// to by the last call.
    fn session_sizes(&self, session: &SessionCounts) -> Result<SessionSizes> {
        let sizes = SessionSizes {
            first_user_tokens: self.quantity(
                &session.first_user_tokens,
                "session.first_user_tokens",
                200.0,
            )?,
            user_tokens: self.quantity(&session.user_tokens, "session.user_tokens", 0.0)?,
            tool_result_tokens: self.quantity(
                &session.tool_result_tokens,
                "session.tool_result_tokens",
                500.0,
            )?,
            output_tokens: self.quantity(&session.output_tokens, "session.output_tokens", 200.0)?,
            gap_seconds: self.quantity(&session.gap_seconds, "session.gap_seconds", 10.0)?,
        };
        for (q, field) in [
            (&sizes.first_user_tokens, "session.first_user_tokens"),
            (&sizes.user_tokens, "session.user_tokens"),
            (&sizes.tool_result_tokens, "session.tool_result_tokens"),
            (&sizes.output_tokens, "session.output_tokens"),
        ] {
            check_upper(
                q,
                MAX_TOKENS_PER_MESSAGE as f64,
                "tokens",
                self.origin,
                field,
            )?;
        }
        check_upper(
            &sizes.gap_seconds,
            MAX_SECONDS,
            "seconds",
            self.origin,
            "session.gap_seconds",
        )?;
        // The conversation grows by a tool result, a user turn and an output per call.
        let growth =
            sizes.tool_result_tokens.mean() + sizes.user_tokens.mean() + sizes.output_tokens.mean();
        let last_prompt = session.system_tokens as f64
            + sizes.first_user_tokens.mean()
            + growth * (session.calls - 1) as f64;
        if last_prompt > MAX_PROMPT_TOKENS as f64 {
            return Err(self.inv(
                "session.calls",
                format!(
                    "value {}: the conversation would grow to about {:.0} tokens by the last call (mean sizes), beyond the limit of {MAX_PROMPT_TOKENS}; use fewer calls or smaller messages",
                    session.calls, last_prompt
                ),
            ));
        }
        Ok(sizes)
    }
}

/// A trim named in a scenario; the error lists the names there are.
fn parse_trim(text: &str, origin: &str, field: &str) -> Result<Trim> {
    Trim::parse(text).ok_or_else(|| {
        let names: Vec<&str> = Trim::ALL.iter().map(|t| t.as_str()).collect();
        let hint = closest(text, names.iter().copied())
            .map(|c| format!("; did you mean `{c}`?"))
            .unwrap_or_default();
        Error::invalid(
            origin,
            field,
            format!("unknown trim `{text}`{hint} (one of {})", names.join(", ")),
        )
    })
}

/// `list` without the `drop` names and, when `keep` is given, with only those; every name must be
/// in the list (a typo would otherwise keep or send tools silently).
fn filter_tools(
    list: Vec<Tool>,
    keep: Option<&[String]>,
    drop: &[String],
    origin: &str,
    field: &str,
) -> Result<Vec<Tool>> {
    for (name, key) in drop
        .iter()
        .map(|n| (n, "drop"))
        .chain(keep.into_iter().flatten().map(|n| (n, "keep")))
    {
        if !list.iter().any(|t| &t.name == name) {
            let hint = closest(name, list.iter().map(|t| t.name.as_str()))
                .map(|c| format!("; did you mean `{c}`?"))
                .unwrap_or_default();
            return Err(Error::invalid(
                origin,
                format!("{field}.{key}"),
                format!("tool `{name}` is not in the list{hint}"),
            ));
        }
    }
    Ok(list
        .into_iter()
        .filter(|t| !drop.contains(&t.name) && keep.is_none_or(|k| k.contains(&t.name)))
        .collect())
}

/// Loads one server entry: its files, `keep`/`drop` (names as in the files), its trim, then its
/// prefix on every name (the prefix is part of the name the model sees, so it costs tokens).
fn load_server(
    rs: &RawServer,
    origin: &str,
    at: &str,
    resolve: &dyn Fn(&[PathBuf]) -> Vec<PathBuf>,
    tool_bytes: &mut u64,
) -> Result<(ServerTools, Vec<Tool>)> {
    if rs.name.trim().is_empty() {
        return Err(Error::invalid(
            origin,
            format!("{at}.name"),
            "empty server name",
        ));
    }
    if !rs
        .prefix
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
    {
        return Err(Error::invalid(
            origin,
            format!("{at}.prefix"),
            format!(
                "value `{}`: model APIs accept only letters, digits, `_` and `-` in tool names",
                rs.prefix
            ),
        ));
    }
    let mut files = rs.files.clone();
    if let Some(f) = &rs.file {
        files.insert(0, f.clone());
    }
    if files.is_empty() {
        return Err(Error::invalid(
            origin,
            at,
            format!("server `{}` needs `file` (its tools/list capture)", rs.name),
        ));
    }
    let list = load_tool_files_within(&resolve(&files), tool_bytes)?;
    let list = filter_tools(list, rs.keep.as_deref(), &rs.drop, origin, at)?;
    let list = match &rs.trim {
        Some(t) => parse_trim(t, origin, &format!("{at}.trim"))?.apply(&list),
        None => list,
    };
    let list: Vec<Tool> = list
        .into_iter()
        .map(|mut t| {
            t.name = format!("{}{}", rs.prefix, t.name);
            t
        })
        .collect();
    let server = ServerTools {
        name: rs.name.clone(),
        prefix: rs.prefix.clone(),
        tools: list.iter().map(|t| t.name.clone()).collect(),
    };
    Ok((server, list))
}

/// Refuses a server whose tool names are already in the list, saying which server has them and
/// how real clients avoid the clash (a per-server prefix).
fn check_clashes(
    present: &dyn Fn(&str) -> bool,
    list: &[Tool],
    server: &ServerTools,
    servers: &[ServerTools],
    origin: &str,
    at: &str,
) -> Result<()> {
    let Some(t) = list.iter().find(|t| present(t.name.as_str())) else {
        return Ok(());
    };
    let owner = servers
        .iter()
        .find(|s| s.name != server.name && s.tools.contains(&t.name))
        .map(|s| format!("server `{}`", s.name))
        .unwrap_or_else(|| "another entry".into());
    Err(Error::invalid(
        origin,
        at,
        format!(
            "tool `{}` of server `{}` is already in the list (from {owner}); model APIs reject duplicate names: give the servers a prefix (prefix = \"mcp__{}__\", as Claude Code names them)",
            t.name, server.name, server.name
        ),
    ))
}

/// Records a server's tools (a server added again, e.g. reconnected, replaces its entry).
fn upsert_server(servers: &mut Vec<ServerTools>, server: ServerTools) {
    match servers.iter_mut().find(|s| s.name == server.name) {
        Some(s) => *s = server,
        None => servers.push(server),
    }
}

/// Refuses a quantity whose fixed value, mean or upper bound exceeds `max`.
fn check_upper(q: &Quantity, max: f64, unit: &str, origin: &str, field: &str) -> Result<()> {
    let (what, x) = match *q {
        Quantity::Fixed { value } => ("value", value),
        Quantity::Uniform { max, .. } => ("uniform max", max),
        _ => ("mean", q.mean()),
    };
    if x.is_finite() && x <= max {
        return Ok(());
    }
    Err(Error::invalid(
        origin,
        field,
        format!("{what} {} exceeds the limit of {max} {unit}", num(x)),
    ))
}

fn check_tool_count(n: usize, origin: &str, field: &str) -> Result<()> {
    if n > MAX_TOOLS {
        return Err(Error::invalid(
            origin,
            field,
            format!("{n} tools in the list exceed the limit of {MAX_TOOLS}"),
        ));
    }
    Ok(())
}

fn check_synthetic(s: RawSynthetic, origin: &str, field: &str, total: &mut usize) -> Result<()> {
    if s.count > MAX_TOOLS {
        return Err(Error::invalid(
            origin,
            format!("{field}.count"),
            format!("value {} exceeds {MAX_TOOLS} tools", s.count),
        ));
    }
    if s.params > MAX_PARAMS_PER_TOOL {
        return Err(Error::invalid(
            origin,
            format!("{field}.params"),
            format!(
                "value {} exceeds {MAX_PARAMS_PER_TOOL} parameters",
                s.params
            ),
        ));
    }
    let params = s.count.saturating_mul(s.params);
    if params > MAX_SYNTHETIC_PARAMS {
        return Err(Error::invalid(
            origin,
            field,
            format!(
                "{} tools x {} parameters exceed the limit of {MAX_SYNTHETIC_PARAMS} parameters",
                s.count, s.params
            ),
        ));
    }
    if total.saturating_add(params) > MAX_SYNTHETIC_PARAMS {
        return Err(Error::invalid(
            origin,
            field,
            format!(
                "{} tools x {} parameters with the {} of the synthetic tools before them exceed the limit of {MAX_SYNTHETIC_PARAMS} parameters in all",
                s.count, s.params, total
            ),
        ));
    }
    *total += params;
    Ok(())
}

/// Upper bound on Monte Carlo runs.
pub(crate) const MAX_RUNS: u64 = 10_000_000;

/// `session.calls`: a whole number, or `{ dist = "empirical", values = [...] }` (session lengths
/// drawn from the values); gives the most calls a session makes and the values (empty for a whole
/// number).
fn session_lengths(v: &toml::Value) -> std::result::Result<(usize, Vec<usize>), String> {
    let whole = |x: &toml::Value| -> std::result::Result<usize, String> {
        match x.as_integer() {
            Some(n) if n >= 0 => Ok(n as usize),
            _ => Err(format!("value {x} is not a whole number of calls")),
        }
    };
    match v {
        toml::Value::Integer(_) => Ok((whole(v)?, Vec::new())),
        toml::Value::Table(t) => {
            let dist = t.get("dist").and_then(toml::Value::as_str);
            if dist != Some("empirical") || t.keys().any(|k| k != "dist" && k != "values") {
                return Err(
                    "must be a whole number, or { dist = \"empirical\", values = [...] } (session lengths to draw from)".into(),
                );
            }
            let values = t
                .get("values")
                .and_then(toml::Value::as_array)
                .ok_or("an empirical session length needs `values`, a list of calls per session")?;
            let values: Vec<usize> = values
                .iter()
                .map(whole)
                .collect::<std::result::Result<_, _>>()?;
            if values.is_empty() || values.contains(&0) {
                return Err(
                    "`values` must list at least one session length, each of one call or more"
                        .into(),
                );
            }
            if values.len() > MAX_SESSION_LENGTHS {
                return Err(format!(
                    "{} session lengths exceed the limit of {MAX_SESSION_LENGTHS}",
                    values.len()
                ));
            }
            Ok((values.iter().copied().max().unwrap_or(1), values))
        }
        other => Err(format!("value {other} is not a number of calls")),
    }
}

/// Most values in an empirical list of session lengths.
pub(crate) const MAX_SESSION_LENGTHS: usize = 100_000;

/// `[session]` with its call count settled.
struct SessionCounts {
    calls: usize,
    system_tokens: u64,
    first_user_tokens: Option<toml::Value>,
    user_tokens: Option<toml::Value>,
    tool_result_tokens: Option<toml::Value>,
    output_tokens: Option<toml::Value>,
    gap_seconds: Option<toml::Value>,
    first_token_seconds: Option<f64>,
}

impl From<RawSession> for SessionCounts {
    fn from(r: RawSession) -> Self {
        SessionCounts {
            calls: 0,
            system_tokens: r.system_tokens,
            first_user_tokens: r.first_user_tokens,
            user_tokens: r.user_tokens,
            tool_result_tokens: r.tool_result_tokens,
            output_tokens: r.output_tokens,
            gap_seconds: r.gap_seconds,
            first_token_seconds: r.first_token_seconds,
        }
    }
}

/// The problem with `runs` Monte Carlo runs of `sessions` sessions of `calls` calls, if any.
fn check_runs(runs: u64, sessions: usize, calls: usize) -> std::result::Result<(), String> {
    if runs == 0 || runs > MAX_RUNS {
        return Err(format!("value {runs} must be between 1 and {MAX_RUNS}"));
    }
    let all_calls = runs
        .saturating_mul(sessions as u64)
        .saturating_mul(calls as u64);
    if all_calls > MAX_CALLS_PER_SCENARIO {
        return Err(format!(
            "{runs} runs x {sessions} sessions x {calls} calls = {all_calls} calls exceeds the limit of {MAX_CALLS_PER_SCENARIO} calls per scenario"
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(text: &str) -> String {
        Scenario::from_toml_str(text, "s.toml", Path::new("."))
            .unwrap_err()
            .to_string()
    }

    #[test]
    fn setting_changes_are_events_of_their_own() {
        let text = "[session]\ncalls = 5\n[tools]\nsynthetic = { count = 2 }\n[[event]]\nat_call = 3\nchange = \"tool_choice\"\n[[event]]\nat_call = 4\nchange = \"images\"\nremove = [\"synthetic_tool_01\"]\n";
        let s = Scenario::from_toml_str(text, "s.toml", Path::new(".")).unwrap();
        let changes: Vec<_> = s
            .setting_events
            .iter()
            .map(|e| (e.at_call, e.change.as_str()))
            .collect();
        assert_eq!(changes, [(3, "tool_choice"), (4, "images")]);
        // Only the second event touches the tool list.
        assert_eq!(s.events.len(), 1);
        assert_eq!(s.events[0].at_call, 4);
        let e = err("[session]\ncalls = 5\n[[event]]\nat_call = 3\nchange = \"tool_chioce\"\n");
        assert!(
            e.contains("s.toml")
                && e.contains("event[0].change")
                && e.contains("did you mean `tool_choice`"),
            "{e}"
        );
    }

    #[test]
    fn builtin_default_loads() {
        let s = Scenario::builtin_default().unwrap();
        assert_eq!(s.tools.len(), 26);
        assert_eq!(s.calls, 20);
    }

    #[test]
    fn event_beyond_session_is_rejected() {
        let e = err("[session]\ncalls = 5\n[tools]\nsynthetic = { count = 2 }\n[[event]]\nat_call = 9\nremove = [\"synthetic_tool_01\"]\n");
        assert!(
            e.contains("s.toml") && e.contains("event[0].at_call") && e.contains("9"),
            "{e}"
        );
    }

    #[test]
    fn removing_a_missing_tool_is_rejected() {
        let e = err("[session]\ncalls = 5\n[tools]\nsynthetic = { count = 2 }\n[[event]]\nat_call = 3\nremove = [\"nope\"]\n");
        assert!(e.contains("`nope`"), "{e}");
    }

    #[test]
    fn a_bad_strategy_is_refused_with_its_line() {
        let e = err("strategies = [\"none\",\n  \"explicit:tool\"]\n[session]\ncalls = 2\n");
        assert!(
            e.starts_with("s.toml:1:14: field `strategies`: `explicit:tool`"),
            "{e}"
        );
    }

    #[test]
    fn zero_calls_and_unknown_keys_are_rejected() {
        assert!(err("[session]\ncalls = 0\n").contains("session.calls"));
        assert!(err("[session]\ncalls = 3\ncals = 4\n").contains("unknown field `cals`"));
    }
}
