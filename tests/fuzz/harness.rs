//! A deterministic mutation fuzzer for pcsim's inputs (catalog TOML, scenario TOML, tool-list JSON,
//! usage logs for `replay`, LiteLLM price files for `import-litellm`, MCP client configurations, and
//! the output of an MCP server during `capture`), usable on a stable toolchain. Shared by the integration test (a fixed number of
//! inputs on every `cargo test`) and `examples/fuzz.rs` (long runs: `--seconds N`).
//!
//! Each input is a corpus file (tests/fuzz/corpus/) or a built-in one, mutated 1 to 4 times: bit and
//! byte flips, insertions, deletions, truncation, splices from other corpus files, numbers replaced by
//! edge values (nan, inf, -1, 1e308, 2^64, ...), dictionary words (field names, distribution names,
//! paths) and duplicated blocks (huge arrays). Each input runs on a worker thread: a panic is caught and
//! reported with the input; an input that runs past the hang limit is reported as a hang. Inputs that
//! parse are then simulated (a small simulation) so validation gaps show up as engine panics.

use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

use pcsim::analysis::explain::{explain_reader, ExplainOptions};
use pcsim::analysis::replay::{replay, ReplayOptions};
use pcsim::input::capture::{capture_command, capture_over, CaptureOptions, Received, Transport};
use pcsim::input::litellm::import;
use pcsim::input::mcpconfig::{parse_document, Client, LoadOptions};
use pcsim::input::scenario::Scenario;
use pcsim::input::usagelog::parse_log;
use pcsim::model::catalog::Catalog;
use pcsim::model::strategy::Strategy;
use pcsim::model::tools::parse_tool_list;
use pcsim::sim::simulate::run_scenario;

/// Which parser an input is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    /// `Catalog::from_toml_str`, then a small simulation on its models.
    Catalog,
    /// `Scenario::from_toml_str`, then a small simulation.
    Scenario,
    /// `tools::parse_tool_list`, then measuring every tool.
    Tools,
    /// `usagelog::parse_log` (every log format `replay` reads), then a replay on two models.
    Replay,
    /// `litellm::import` (which loads the catalog it generates).
    Litellm,
    /// `mcpconfig::parse_document` as detected, as Codex TOML and as Continue YAML (never started).
    Config,
    /// The output of an MCP server: `capture_over` on a scripted transport (the input, line by line),
    /// and every [`PROCESS_EVERY`]th input through a real process (`script_server.py`, python3).
    Mcp,
    /// A request/response trace (`explain`): every format it sniffs (HAR 1.2, claude-tap JSONL,
    /// pcsim's JSONL), explained on the built-in catalog, twice: as logged and redacted on one model.
    Trace,
}

/// One MCP input in this many is also captured from a real process (the scripted fake server).
pub const PROCESS_EVERY: u64 = 64;

impl Target {
    /// All targets.
    pub const ALL: [Target; 8] = [
        Target::Catalog,
        Target::Scenario,
        Target::Tools,
        Target::Replay,
        Target::Litellm,
        Target::Config,
        Target::Mcp,
        Target::Trace,
    ];

    /// Folder name under corpus/ and regressions/.
    pub fn dir(self) -> &'static str {
        match self {
            Target::Catalog => "catalog",
            Target::Scenario => "scenario",
            Target::Tools => "tools",
            Target::Replay => "replay",
            Target::Litellm => "litellm",
            Target::Config => "config",
            Target::Mcp => "mcp",
            Target::Trace => "trace",
        }
    }

    fn extension(self) -> &'static str {
        match self {
            Target::Tools | Target::Litellm | Target::Config => "json",
            Target::Replay | Target::Mcp | Target::Trace => "jsonl",
            _ => "toml",
        }
    }
}

/// The fuzz folder (tests/fuzz) of the crate.
pub fn fuzz_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests")
        .join("fuzz")
}

/// Seed inputs: the corpus files plus the built-in catalog and default scenario.
pub struct Corpus {
    /// (target, name, bytes).
    pub entries: Vec<(Target, String, Vec<u8>)>,
    /// Folder that scenario tool files are resolved against (the corpus's tools/).
    pub base: PathBuf,
}

/// Reads every file of `dir/<target>/` (sorted, so runs are reproducible).
pub fn read_dir_inputs(dir: &Path) -> Vec<(Target, String, Vec<u8>)> {
    let mut out = Vec::new();
    for target in Target::ALL {
        let mut files: Vec<PathBuf> = std::fs::read_dir(dir.join(target.dir()))
            .map(|rd| rd.filter_map(|e| e.ok().map(|e| e.path())).collect())
            .unwrap_or_default();
        files.sort();
        for f in files {
            if f.is_file()
                && !f
                    .file_name()
                    .is_some_and(|n| n.to_string_lossy().starts_with('.'))
            {
                if let Ok(bytes) = std::fs::read(&f) {
                    out.push((target, f.display().to_string(), bytes));
                }
            }
        }
    }
    out
}

impl Corpus {
    /// The corpus under tests/fuzz/corpus plus the built-in inputs.
    pub fn load() -> Self {
        let dir = fuzz_dir().join("corpus");
        let mut entries = read_dir_inputs(&dir);
        entries.push((
            Target::Catalog,
            "built-in models.toml".into(),
            pcsim::model::catalog::EMBEDDED_CATALOG.as_bytes().to_vec(),
        ));
        entries.push((
            Target::Scenario,
            "built-in default scenario".into(),
            pcsim::input::scenario::DEFAULT_SCENARIO.as_bytes().to_vec(),
        ));
        Corpus {
            entries,
            base: dir.join("tools"),
        }
    }

    /// Adds the real MCP `tools/list` captures of tests/fixtures/reference/mcp (copied into the
    /// repository with their provenance) as tool-list seeds; returns how many were added.
    pub fn add_reference_captures(&mut self) -> usize {
        let reference = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/reference");
        let mut files: Vec<PathBuf> = std::fs::read_dir(reference.join("mcp"))
            .map(|rd| rd.filter_map(|e| e.ok().map(|e| e.path())).collect())
            .unwrap_or_default();
        files.retain(|f| f.to_string_lossy().ends_with(".tools.json"));
        files.sort();
        let n = files.len();
        for f in files {
            if let Ok(bytes) = std::fs::read(&f) {
                self.entries
                    .push((Target::Tools, f.display().to_string(), bytes));
            }
        }
        n
    }

    fn of(&self, target: Target) -> Vec<&[u8]> {
        self.entries
            .iter()
            .filter(|(t, _, _)| *t == target)
            .map(|(_, _, b)| b.as_slice())
            .collect()
    }
}

/// Values that break naive numeric code.
const EDGE_NUMBERS: &[&str] = &[
    "nan",
    "inf",
    "-inf",
    "+inf",
    "-nan",
    "-1",
    "0",
    "-0",
    "0.0",
    "1",
    "1e308",
    "-1e308",
    "1e-308",
    "5e-324",
    "1.7976931348623157e308",
    "18446744073709551615",
    "18446744073709551616",
    "9223372036854775807",
    "-9223372036854775808",
    "4294967295",
    "4294967296",
    "1000000000000",
    "1e12",
    "1e19",
    "0.001",
    "0.5",
    "99999999999999999999999",
];

/// Words that steer mutations into the schemas' deeper paths.
const DICTIONARY: &[&str] = &[
    "calls",
    "sessions",
    "count",
    "every_seconds",
    "poisson_per_hour",
    "shared_cache",
    "dist",
    "\"exponential\"",
    "\"log_normal\"",
    "\"uniform\"",
    "\"gamma\"",
    "mean",
    "mu",
    "sigma",
    "min",
    "max",
    "shape",
    "scale",
    "at_call",
    "remove",
    "keep",
    "add_synthetic",
    "synthetic",
    "params",
    "files",
    "add_files",
    "replace_files",
    "system_tokens",
    "gap_seconds",
    "first_token_seconds",
    "first_user_tokens",
    "tool_result_tokens",
    "output_tokens",
    "user_tokens",
    "runs",
    "seed",
    "ttl_seconds",
    "write_multiplier",
    "min_tokens",
    "granularity",
    "read_multiplier",
    "refresh_on_hit",
    "max_breakpoints",
    "lookback_blocks",
    "hit_probability",
    "storage_usd_per_mtok_hour",
    "routing_rpm_per_prefix",
    "tool_change",
    "tool_change_options",
    "\"append\"",
    "\"invalidate\"",
    "\"preserve_prefix\"",
    "explicit",
    "automatic",
    "implicit",
    "default_tier",
    "default_strategy",
    "\"explicit:tools@1h+system+last\"",
    "\"cached\"",
    "\"none\"",
    "\"explicit:last/tool-changes=append\"",
    "tool_rendering",
    "family",
    "preamble_tokens",
    "structure_tokens_per_byte",
    "[[event]]",
    "[[model]]",
    "[[family]]",
    "[sessions]",
    "[session]",
    "[tools]",
    "\"mcp.json\"",
    "\"openai.json\"",
    "\"anthropic.json\"",
    "\"../tools/mcp.json\"",
    "\"\"",
    "\"nonexistent.json\"",
    "inputSchema",
    "input_schema",
    "parameters",
    "properties",
    "description",
    "name",
    "\"type\"",
    "\"function\"",
    "result",
    "tools",
    "null",
    "true",
    "false",
    "{}",
    "[]",
    "[[",
    "]]",
    "{",
    "}",
    "\"",
    "=",
    ",",
    "\n",
    "\"\\u0000\"",
    "\"\\ud800\"",
    "é",
    "\u{202e}",
    // Usage logs, LiteLLM entries, client configurations, JSON-RPC.
    "\"usage\"",
    "\"input_tokens\"",
    "\"cache_read_input_tokens\"",
    "\"cache_creation_input_tokens\"",
    "\"prompt_tokens\"",
    "\"cached_tokens\"",
    "\"timestamp\"",
    "\"2026-01-01T00:00:00Z\"",
    "\"model\"",
    "\"input_cost_per_token\"",
    "\"output_cost_per_token\"",
    "\"cache_read_input_token_cost\"",
    "\"litellm_provider\"",
    "\"mode\"",
    "\"mcpServers\"",
    "\"servers\"",
    "\"command\"",
    "\"args\"",
    "\"env\"",
    "\"${HOME}\"",
    "\"${input:x}\"",
    "\"jsonrpc\"",
    "\"id\"",
    "\"method\"",
    "\"nextCursor\"",
    "\"roots/list\"",
    "\"error\"",
    "\"2.0\"",
];

/// Applies 1 to 4 random mutations to `input`.
pub fn mutate(rng: &mut ChaCha8Rng, input: &[u8], others: &[&[u8]]) -> Vec<u8> {
    let mut data = input.to_vec();
    for _ in 0..rng.random_range(1..=4) {
        mutate_once(rng, &mut data, others);
        if data.len() > 1 << 20 {
            data.truncate(1 << 20);
        }
    }
    data
}

fn mutate_once(rng: &mut ChaCha8Rng, data: &mut Vec<u8>, others: &[&[u8]]) {
    let len = data.len();
    let pos = |rng: &mut ChaCha8Rng, n: usize| if n == 0 { 0 } else { rng.random_range(0..=n) };
    match rng.random_range(0..11) {
        0 if len > 0 => {
            let i = rng.random_range(0..len);
            data[i] ^= 1 << rng.random_range(0..8);
        }
        1 if len > 0 => {
            let i = rng.random_range(0..len);
            data[i] = rng.random();
        }
        2 => {
            let i = pos(rng, len);
            let n = rng.random_range(1..8);
            let bytes: Vec<u8> = (0..n).map(|_| rng.random()).collect();
            data.splice(i..i, bytes);
        }
        3 if len > 0 => {
            let i = rng.random_range(0..len);
            let j = (i + rng.random_range(1..64)).min(len);
            data.drain(i..j);
        }
        4 => {
            let i = pos(rng, len);
            data.truncate(i);
        }
        5 if !others.is_empty() => {
            // Splice a chunk of another input of the same kind.
            let o = others[rng.random_range(0..others.len())];
            if !o.is_empty() {
                let a = rng.random_range(0..o.len());
                let b = (a + rng.random_range(1..256)).min(o.len());
                let i = pos(rng, len);
                data.splice(i..i, o[a..b].iter().copied());
            }
        }
        6 | 7 => {
            // Replace a number with an edge value.
            let starts: Vec<usize> = (0..len)
                .filter(|&i| {
                    (data[i].is_ascii_digit() || data[i] == b'-')
                        && (i == 0 || !data[i - 1].is_ascii_alphanumeric() && data[i - 1] != b'_')
                })
                .collect();
            if let Some(&i) = starts.get(rng.random_range(0..starts.len().max(1))) {
                let mut j = i + 1;
                while j < len && (data[j].is_ascii_alphanumeric() || b".+-_".contains(&data[j])) {
                    j += 1;
                }
                let v = EDGE_NUMBERS[rng.random_range(0..EDGE_NUMBERS.len())];
                data.splice(i..j, v.bytes());
            }
        }
        8 => {
            let i = pos(rng, len);
            let w = DICTIONARY[rng.random_range(0..DICTIONARY.len())];
            data.splice(i..i, w.bytes());
        }
        9 if len > 0 => {
            // Duplicate a line block many times (huge arrays, repeated tables, long lists).
            let a = rng.random_range(0..len);
            let b = (a + rng.random_range(1..400)).min(len);
            let times = [2usize, 10, 100, 1000][rng.random_range(0..4)];
            let chunk = data[a..b].to_vec();
            let extra: Vec<u8> = chunk
                .iter()
                .copied()
                .cycle()
                .take(chunk.len() * times)
                .collect();
            data.splice(b..b, extra);
        }
        _ => {
            // Deep nesting.
            let i = pos(rng, len);
            let n = rng.random_range(1..300);
            let (open, close) = if rng.random() {
                (b'[', b']')
            } else {
                (b'{', b'}')
            };
            let mut v = vec![open; n];
            v.extend(std::iter::repeat_n(close, n));
            data.splice(i..i, v);
        }
    }
}

/// What happened to one input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// Parsed (and simulated) fine.
    Accepted,
    /// Refused with a user error (the message).
    Refused(String),
    /// Panicked (the panic message).
    Panicked(String),
    /// Still running after the hang limit.
    Hung,
    /// The worker process running it was ended or died: past its CPU or wall limit, its memory
    /// limit, an abort (the message says which).
    Ended(String),
}

/// Calls and sessions of the small simulation run on every accepted scenario: enough to exercise
/// events, expiry and sharing, small enough to keep inputs fast.
const SIM_CALLS: usize = 12;
const SIM_SESSIONS: usize = 3;

/// The built-in catalog, parsed once (parsing it per input would dominate the fuzzer's time).
fn embedded() -> &'static Catalog {
    static CATALOG: std::sync::OnceLock<Catalog> = std::sync::OnceLock::new();
    CATALOG.get_or_init(|| Catalog::embedded().expect("embedded catalog"))
}

/// Runs one input through its parser (and a small simulation when it parses). Panics propagate.
pub fn execute(target: Target, bytes: &[u8], base: &Path) -> Outcome {
    let text = String::from_utf8_lossy(bytes);
    let refused = |e: pcsim::Error| Outcome::Refused(e.to_string());
    match target {
        Target::Tools => match parse_tool_list(&text, "fuzz.json") {
            Ok(tools) => {
                let catalog = embedded();
                for m in &catalog.models {
                    m.rendering().block_tokens(&tools);
                }
                for t in &tools {
                    t.content_hash();
                }
                Outcome::Accepted
            }
            Err(e) => refused(e),
        },
        Target::Scenario => match Scenario::from_toml_str(&text, "fuzz.toml", base) {
            Ok(mut s) => {
                s.calls = s.calls.min(SIM_CALLS);
                s.sessions = s.sessions.min(SIM_SESSIONS);
                s.events.retain(|e| e.at_call <= s.calls);
                let catalog = embedded();
                let known = s.models.iter().all(|m| catalog.model(m).is_ok());
                let models: Vec<String> = if known && !s.models.is_empty() {
                    s.models.iter().take(3).cloned().collect()
                } else {
                    vec!["claude-opus-4.8".into(), "kimi-k3".into()]
                };
                match run_scenario(catalog, &s, &models, &[]) {
                    Ok(_) => Outcome::Accepted,
                    Err(e) => refused(e),
                }
            }
            Err(e) => refused(e),
        },
        Target::Replay => match parse_log(&text, "fuzz.jsonl") {
            Ok(log) => {
                let catalog = embedded();
                for id in ["claude-opus-4.8", "gpt-5.6"] {
                    let model = catalog.model(id).expect("measured model");
                    let strategy = Strategy::parse("cached").expect("strategy");
                    if let Err(e) = replay(&log, model, &strategy, &ReplayOptions::default()) {
                        return refused(e);
                    }
                }
                Outcome::Accepted
            }
            Err(e) => refused(e),
        },
        Target::Litellm => match import(&text, "fuzz-litellm.json", &[]) {
            Ok(_) => Outcome::Accepted,
            Err(e) => refused(e),
        },
        Target::Config => {
            let lookup = |k: &str| (k == "HOME").then(|| "/home/fuzz".to_string());
            // Accepted when one of the three readings takes it (the others refuse: JSON is no TOML).
            let mut outcome = None;
            for client in [None, Some(Client::Codex), Some(Client::Continue)] {
                let opts = LoadOptions {
                    client,
                    ..LoadOptions::default()
                };
                // Parsed only: a mutated command must never be started.
                match parse_document(&text, "fuzz-config", None, &opts, &lookup) {
                    Ok(_) => outcome = Some(Outcome::Accepted),
                    Err(e) if outcome.is_none() => outcome = Some(refused(e)),
                    Err(_) => {}
                }
            }
            outcome.unwrap_or(Outcome::Accepted)
        }
        Target::Mcp => {
            let opts = CaptureOptions {
                timeout: CAPTURE_TIMEOUT,
                ..CaptureOptions::default()
            };
            let mut script = Script::new(bytes);
            let deadline = Instant::now() + opts.timeout;
            match capture_over(&mut script, "fuzz-server", &opts, deadline) {
                Ok(cap) => match parse_tool_list(&cap.result_json_text(), "fuzz-server") {
                    Ok(_) => Outcome::Accepted,
                    Err(e) => refused(e),
                },
                Err(e) => refused(e),
            }
        }
        Target::Trace => {
            // The bytes as they are (a trace may hold base64 or invalid UTF-8 bodies), on both the
            // request's own models and one forced model, redacted.
            let catalog = embedded();
            let forced = ExplainOptions {
                redact: true,
                model: Some("gpt-5.6".into()),
                ..ExplainOptions::default()
            };
            for opts in [ExplainOptions::default(), forced] {
                if let Err(e) = explain_reader(catalog, bytes, "fuzz-trace", opts) {
                    return refused(e);
                }
            }
            Outcome::Accepted
        }
        Target::Catalog => match Catalog::from_toml_str(&text, "fuzz-models.toml") {
            Ok(catalog) => {
                let mut s = Scenario::builtin_default().expect("built-in scenario");
                s.calls = 6;
                let models: Vec<String> = catalog
                    .models
                    .iter()
                    .take(4)
                    .map(|m| m.id.clone())
                    .collect();
                let strategies: Vec<String> = [
                    "none",
                    "cached",
                    "automatic",
                    "implicit",
                    "explicit:tools+system+last",
                    "explicit:last/tool-changes=append",
                ]
                .iter()
                .map(|s| s.to_string())
                .collect();
                match run_scenario(&catalog, &s, &models, &strategies) {
                    Ok(_) => Outcome::Accepted,
                    Err(e) => refused(e),
                }
            }
            Err(e) => refused(e),
        },
    }
}

/// A server that says the input, line by line, whatever it is sent, then closes its output: the
/// in-process half of the MCP target (deterministic, no process, no network).
pub struct Script {
    lines: std::vec::IntoIter<String>,
}

impl Script {
    /// The script of `bytes` (lines split on `\n`, as the process transport splits them).
    pub fn new(bytes: &[u8]) -> Self {
        let text = String::from_utf8_lossy(bytes);
        let lines: Vec<String> = text.split('\n').map(str::to_string).collect();
        Script {
            lines: lines.into_iter(),
        }
    }
}

impl Transport for Script {
    fn send(&mut self, _message: &serde_json::Value) -> pcsim::Result<()> {
        Ok(())
    }

    fn recv(&mut self, _deadline: Instant) -> pcsim::Result<Received> {
        Ok(self.lines.next().map_or(Received::Closed, Received::Line))
    }

    fn describe_failure(&mut self) -> String {
        " (scripted fuzz server)".into()
    }
}

/// Captures the input from a real process: tests/fuzz/script_server.py writes it, byte for byte, and
/// closes its output. `None` when python3 cannot be started (the caller counts that as refused).
pub fn execute_process(bytes: &[u8], timeout: Duration) -> Outcome {
    let dir = match tempfile::tempdir() {
        Ok(d) => d,
        Err(e) => return Outcome::Refused(format!("no temporary folder: {e}")),
    };
    let file = dir.path().join("script.jsonl");
    if let Err(e) = std::fs::write(&file, bytes) {
        return Outcome::Refused(format!("cannot write the script: {e}"));
    }
    let opts = CaptureOptions {
        timeout,
        ..CaptureOptions::default()
    };
    let args = vec![
        fuzz_dir().join("script_server.py").display().to_string(),
        file.display().to_string(),
    ];
    match capture_command("fuzz-server", "python3", &args, &Default::default(), &opts) {
        Ok(cap) => match parse_tool_list(&cap.result_json_text(), "fuzz-server") {
            Ok(_) => Outcome::Accepted,
            Err(e) => Outcome::Refused(e.to_string()),
        },
        Err(e) => Outcome::Refused(e.to_string()),
    }
}

static LAST_PANIC_SITE: std::sync::Mutex<String> = std::sync::Mutex::new(String::new());

/// Replaces the panic hook with one that records where the last panic happened (file:line) instead
/// of printing it, so failures can be grouped by site. For the example binary only: the hook is
/// process-wide.
pub fn install_panic_recorder() {
    std::panic::set_hook(Box::new(|info| {
        if let Ok(mut site) = LAST_PANIC_SITE.lock() {
            *site = info
                .location()
                .map_or_else(String::new, |l| format!("{}:{}", l.file(), l.line()));
        }
    }));
}

fn last_panic_site() -> String {
    LAST_PANIC_SITE
        .lock()
        .map(|s| s.clone())
        .unwrap_or_default()
}

/// Runs `execute` on a worker thread, catching panics and abandoning inputs past `hang_limit`.
pub fn execute_guarded(target: Target, bytes: &[u8], base: &Path, hang_limit: Duration) -> Outcome {
    let (tx, rx) = mpsc::channel();
    let input = bytes.to_vec();
    let base = base.to_path_buf();
    let handle = std::thread::spawn(move || {
        let out = execute(target, &input, &base);
        let _ = tx.send(out);
    });
    match rx.recv_timeout(hang_limit) {
        Ok(out) => {
            let _ = handle.join();
            out
        }
        Err(mpsc::RecvTimeoutError::Timeout) => Outcome::Hung,
        Err(mpsc::RecvTimeoutError::Disconnected) => match handle.join() {
            Err(payload) => panic_outcome(payload.as_ref()),
            Ok(()) => Outcome::Panicked("worker ended without a result".into()),
        },
    }
}

/// Runs `execute` on this thread, catching a panic (for a worker process, whose main thread has
/// the larger stack and which its parent kills when it hangs).
pub fn execute_caught(target: Target, bytes: &[u8], base: &Path) -> Outcome {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        execute(target, bytes, base)
    })) {
        Ok(out) => out,
        Err(payload) => panic_outcome(payload.as_ref()),
    }
}

fn panic_outcome(payload: &(dyn std::any::Any + Send)) -> Outcome {
    let message = payload
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_else(|| "non-string panic".into());
    let site = last_panic_site();
    Outcome::Panicked(if site.is_empty() {
        message
    } else {
        format!("{message} at {site}")
    })
}

/// A failing input.
#[derive(Debug, Clone)]
pub struct Failure {
    /// Parser.
    pub target: Target,
    /// The input.
    pub input: Vec<u8>,
    /// Panic message or "hang".
    pub what: String,
}

impl Failure {
    /// Saves the input as a regression file (named by its content hash) and returns the path.
    pub fn save(&self, dir: &Path) -> std::io::Result<PathBuf> {
        let d = dir.join(self.target.dir());
        std::fs::create_dir_all(&d)?;
        let h = pcsim::base::hash::fnv1a(&self.input);
        let p = d.join(format!("crash-{h:016x}.{}", self.target.extension()));
        std::fs::write(&p, &self.input)?;
        Ok(p)
    }
}

/// Figures of a fuzzing session.
#[derive(Debug, Default)]
pub struct Stats {
    /// Inputs executed.
    pub executed: u64,
    /// Inputs accepted (parsed and simulated).
    pub accepted: u64,
    /// Inputs refused with a user error.
    pub refused: u64,
    /// Panics and hangs.
    pub failures: Vec<Failure>,
    /// Slowest input.
    pub slowest: Duration,
    /// Target and number of the slowest input.
    pub slowest_input: Option<(Target, u64)>,
    /// Wall time.
    pub elapsed: Duration,
    /// Per-target executed counts, in [`Target::ALL`] order.
    pub per_target: [u64; 8],
    /// Per-target accepted counts, in [`Target::ALL`] order.
    pub per_target_accepted: [u64; 8],
    /// Per-target time spent.
    pub per_target_time: [Duration; 8],
    /// MCP inputs also captured from a real process, and how many of those were accepted.
    pub process_runs: (u64, u64),
}

impl Stats {
    /// `name executed/accepted` per target, for reports.
    pub fn per_target_summary(&self) -> String {
        Target::ALL
            .iter()
            .enumerate()
            .map(|(i, t)| {
                format!(
                    "{} {} ({} accepted)",
                    t.dir(),
                    self.per_target[i],
                    self.per_target_accepted[i]
                )
            })
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// Runs one input for the fuzz loop: in this process ([`InProcess`]) or in a worker process that
/// can be killed ([`examples/fuzz.rs`]'s worker). `with_process` asks for the MCP target's real
/// process path too.
pub trait Executor {
    /// The outcome of `input`, and whether the real-process MCP path ran and accepted it.
    fn run(&mut self, target: Target, input: &[u8], with_process: bool) -> (Outcome, ProcessRun);
}

/// Whether an MCP input also went through a real process, and how that ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProcessRun {
    /// Not run through a process.
    NotRun,
    /// Run; the capture was accepted.
    Accepted,
    /// Run; the capture was refused.
    Refused,
}

/// The timeout of the MCP target's captures (in process and through python3). Generous: under a
/// loaded machine a short one would refuse good scripts and count as a difference between the paths.
pub const CAPTURE_TIMEOUT: Duration = Duration::from_secs(30);

/// Runs `input` through the real-process MCP path and combines it with the in-process `outcome`: a
/// script accepted in process but refused from a real process is a failure.
pub fn with_process_run(outcome: Outcome, input: &[u8]) -> (Outcome, ProcessRun) {
    let process = execute_process(input, CAPTURE_TIMEOUT);
    let run = if process == Outcome::Accepted {
        ProcessRun::Accepted
    } else {
        ProcessRun::Refused
    };
    let outcome = match (&outcome, &process) {
        (Outcome::Accepted, Outcome::Refused(why)) if !why.contains("python3") => {
            Outcome::Panicked(format!(
                "accepted in process but refused from a real process: {why}"
            ))
        }
        _ => outcome,
    };
    (outcome, run)
}

/// Runs inputs on a worker thread of this process ([`execute_guarded`]): a panic is caught, but a
/// hung input's thread cannot be stopped (it is abandoned and keeps its CPU and memory).
pub struct InProcess<'a> {
    /// Folder scenario tool files are resolved against.
    pub base: &'a Path,
    /// Wall time after which an input counts as hung.
    pub hang_limit: Duration,
}

impl Executor for InProcess<'_> {
    fn run(&mut self, target: Target, input: &[u8], with_process: bool) -> (Outcome, ProcessRun) {
        let outcome = execute_guarded(target, input, self.base, self.hang_limit);
        if with_process {
            with_process_run(outcome, input)
        } else {
            (outcome, ProcessRun::NotRun)
        }
    }
}

/// Live figures of a fuzzing session, for a progress line printed from another thread while an
/// input runs (the lock is never held while an input runs).
#[derive(Debug, Default)]
pub struct Progress {
    inner: std::sync::Mutex<Snapshot>,
}

/// What [`Progress`] holds.
#[derive(Debug, Default, Clone)]
pub struct Snapshot {
    /// Inputs finished.
    pub executed: u64,
    /// Inputs accepted.
    pub accepted: u64,
    /// Inputs refused.
    pub refused: u64,
    /// Failures (panics, hangs, worker deaths).
    pub failures: u64,
    /// Per-target finished counts, in [`Target::ALL`] order.
    pub per_target: [u64; 8],
    /// The input running now: target, its number (0-based), its length, when it started.
    pub current: Option<(Target, u64, usize, Instant)>,
    /// Slowest input so far: time, target, number.
    pub slowest: Option<(Duration, Target, u64)>,
}

impl Progress {
    /// A copy of the figures now.
    pub fn snapshot(&self) -> Snapshot {
        self.inner.lock().map(|s| s.clone()).unwrap_or_default()
    }

    fn update(&self, f: impl FnOnce(&mut Snapshot)) {
        if let Ok(mut s) = self.inner.lock() {
            f(&mut s);
        }
    }
}

impl Snapshot {
    /// One line: totals, per-target counts, failures and the input running now.
    pub fn line(&self, elapsed: Duration) -> String {
        let per: Vec<String> = Target::ALL
            .iter()
            .zip(self.per_target)
            .map(|(t, n)| format!("{} {n}", t.dir()))
            .collect();
        let current = match &self.current {
            Some((t, i, len, since)) => format!(
                "running {} input #{i} ({len} bytes) for {:.1?}",
                t.dir(),
                since.elapsed()
            ),
            None => "idle".into(),
        };
        let slowest = match &self.slowest {
            Some((d, t, i)) => format!("slowest {} #{i} {d:.1?}", t.dir()),
            None => "slowest -".into(),
        };
        format!(
            "[{:>6.0} s] {} inputs ({}); {} accepted, {} refused, {} failures; {slowest}; {current}",
            elapsed.as_secs_f64(),
            self.executed,
            per.join(", "),
            self.accepted,
            self.refused,
            self.failures
        )
    }
}

/// Fuzzes until `max_inputs` inputs ran or `deadline` passed, from `seed`, in this process.
pub fn fuzz(
    corpus: &Corpus,
    seed: u64,
    max_inputs: u64,
    deadline: Option<Duration>,
    hang_limit: Duration,
) -> Stats {
    let mut exec = InProcess {
        base: &corpus.base,
        hang_limit,
    };
    fuzz_with(
        corpus,
        seed,
        max_inputs,
        deadline,
        &mut exec,
        &Progress::default(),
        &mut |_| {},
    )
}

/// Fuzzes until `max_inputs` inputs ran or `deadline` passed, from `seed`, running each input with
/// `exec`; `progress` is kept up to date and `on_failure` is called at once for each failure (so a
/// long run can report and save it before it ends). The inputs depend only on `seed` and the corpus.
pub fn fuzz_with(
    corpus: &Corpus,
    seed: u64,
    max_inputs: u64,
    deadline: Option<Duration>,
    exec: &mut dyn Executor,
    progress: &Progress,
    on_failure: &mut dyn FnMut(&Failure),
) -> Stats {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut stats = Stats::default();
    let start = Instant::now();
    let by_target: Vec<Vec<&[u8]>> = Target::ALL.iter().map(|t| corpus.of(*t)).collect();
    while stats.executed < max_inputs && deadline.is_none_or(|d| start.elapsed() < d) {
        let ti = rng.random_range(0..Target::ALL.len());
        let target = Target::ALL[ti];
        let pool = &by_target[ti];
        if pool.is_empty() {
            continue;
        }
        let seed_input = pool[rng.random_range(0..pool.len())];
        let input = mutate(&mut rng, seed_input, pool);
        let number = stats.executed;
        let t0 = Instant::now();
        progress.update(|s| s.current = Some((target, number, input.len(), t0)));
        // The same script through a real process now and then: the process transport's own paths
        // (pipes, line splitting, the end of the server) on fuzzed output.
        let with_process = target == Target::Mcp && (stats.per_target[ti] + 1) % PROCESS_EVERY == 0;
        let (outcome, run) = exec.run(target, &input, with_process);
        let took = t0.elapsed();
        if took > stats.slowest {
            stats.slowest = took;
            stats.slowest_input = Some((target, number));
        }
        stats.per_target_time[ti] += took;
        stats.executed += 1;
        stats.per_target[ti] += 1;
        if run != ProcessRun::NotRun {
            stats.process_runs.0 += 1;
            if run == ProcessRun::Accepted {
                stats.process_runs.1 += 1;
            }
        }
        if outcome == Outcome::Accepted {
            stats.per_target_accepted[ti] += 1;
        }
        let failure = match outcome {
            Outcome::Accepted => {
                stats.accepted += 1;
                None
            }
            Outcome::Refused(_) => {
                stats.refused += 1;
                None
            }
            Outcome::Panicked(what) | Outcome::Ended(what) => Some(what),
            Outcome::Hung => Some(format!("hang: still running after {:?}", took)),
        };
        if let Some(what) = failure {
            let f = Failure {
                target,
                input,
                what: format!("input #{number}: {what}"),
            };
            on_failure(&f);
            stats.failures.push(f);
        }
        let failures = stats.failures.len() as u64;
        progress.update(|s| {
            s.executed = stats.executed;
            s.accepted = stats.accepted;
            s.refused = stats.refused;
            s.failures = failures;
            s.per_target = stats.per_target;
            s.current = None;
            if s.slowest.is_none_or(|(d, _, _)| took > d) {
                s.slowest = Some((took, target, number));
            }
        });
    }
    stats.elapsed = start.elapsed();
    stats
}
