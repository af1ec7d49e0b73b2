//! The orchestration of `pcsim config FILE`: every stdio server of a loaded MCP client configuration
//! captured, the limits on their lists together checked, and the per-call cost of the tool block
//! computed per server and for the whole configuration, per model. The command line turns flags into
//! the inputs, calls these two steps and renders through `report::config`; the files it writes
//! (`--save`, `--scenario-out`) are named here.
//!
//! Two steps, not one, so that the command's order stays as it was: the tool lists are saved after
//! the capture and before the limits are checked.

use crate::error::{Error, Result};
use crate::input::capture::CaptureOptions;
use crate::input::mcpconfig::{capture_all, overheads, McpConfig, Overhead, ServerOutcome};
use crate::model::catalog::ModelSpec;
use crate::model::tools::{MAX_TOOLS, MAX_TOOL_BYTES};

/// A configuration with every stdio server captured (some may have failed: their error is in
/// [`ServerOutcome::tools`]).
#[derive(Debug, Clone)]
pub(crate) struct ConfigCapture {
    /// The configuration as loaded.
    pub config: McpConfig,
    /// One outcome per server, in the configuration's order.
    pub outcomes: Vec<ServerOutcome>,
}

/// The overheads of a captured configuration, per model.
#[derive(Debug, Clone)]
pub(crate) struct ConfigOverheads {
    /// One row per captured server and one for all of them together (`server: None`), per model
    /// (models outer).
    pub rows: Vec<Overhead>,
    /// Tool names defined by more than one server (model APIs reject duplicates; clients rename
    /// them).
    pub duplicates: Vec<String>,
}

/// Captures every stdio server of `config` (in parallel, each bounded by `opts`' timeout). Each
/// warning (a server the configuration does not let pcsim start, a server that could not be
/// captured) goes to `warn` as it is known, before any error.
///
/// # Errors
/// The configuration has no stdio server, or none of its servers could be captured.
pub(crate) fn capture_config(
    config: McpConfig,
    opts: &CaptureOptions,
    warn: &mut dyn FnMut(String),
) -> Result<ConfigCapture> {
    for s in &config.skipped {
        warn(format!("server `{}` not captured: {}", s.name, s.reason));
    }
    if config.servers.is_empty() {
        return Err(Error::invalid(
            &config.origin,
            "mcpServers",
            "no stdio server to capture",
        ));
    }
    let outcomes = capture_all(&config, opts);
    for o in &outcomes {
        if let Err(e) = &o.tools {
            warn(e.clone());
        }
    }
    if outcomes.iter().all(|o| o.tools.is_err()) {
        return Err(Error::Unsupported(format!(
            "{}: no server of the configuration could be captured",
            config.origin
        )));
    }
    Ok(ConfigCapture { config, outcomes })
}

impl ConfigCapture {
    /// The servers' lists together are one list sent to the model: the same limits as one tool file
    /// (tool count, then bytes of definitions) are checked, then the overhead of each server and of
    /// all of them computed for each model.
    ///
    /// # Errors
    /// The captured lists hold more than [`MAX_TOOLS`] tools or [`MAX_TOOL_BYTES`] bytes together.
    pub(crate) fn overheads(&self, models: &[&ModelSpec]) -> Result<ConfigOverheads> {
        let origin = &self.config.origin;
        let total: usize = self
            .outcomes
            .iter()
            .filter_map(|o| o.tools.as_ref().ok())
            .map(Vec::len)
            .sum();
        if total > MAX_TOOLS {
            return Err(Error::invalid(
                origin,
                "mcpServers",
                format!(
                    "the servers list {total} tools together, more than the limit of {MAX_TOOLS} tools in one list"
                ),
            ));
        }
        let bytes: usize = self
            .outcomes
            .iter()
            .filter(|o| o.tools.is_ok())
            .filter_map(|o| o.raw.as_ref())
            .map(String::len)
            .sum();
        if bytes as u64 > MAX_TOOL_BYTES {
            return Err(Error::invalid(
                origin,
                "mcpServers",
                format!(
                    "the servers' tool lists are {bytes} bytes together, more than the {MAX_TOOL_BYTES}-byte limit of tool definitions loaded together"
                ),
            ));
        }
        let (rows, duplicates) = overheads(models, &self.outcomes);
        Ok(ConfigOverheads { rows, duplicates })
    }

    /// The tool list of every server that returned one, as the client sends it, for `--save DIR`:
    /// (file name `<server>.tools.json`, text ending in a newline).
    pub(crate) fn tool_files(&self) -> Vec<(String, String)> {
        self.outcomes
            .iter()
            .filter_map(|o| {
                let raw = o.raw.as_ref()?;
                Some((
                    format!("{}.tools.json", sanitize(&o.entry.name)),
                    format!("{raw}\n"),
                ))
            })
            .collect()
    }

    /// The tool list of every captured server for a scenario named `stem`: (server name, file name
    /// `<stem>.<server>.tools.json`, text ending in a newline), in the configuration's order.
    pub(crate) fn scenario_tool_files(&self, stem: &str) -> Vec<(String, String, String)> {
        self.outcomes
            .iter()
            .filter(|o| o.tools.is_ok())
            .filter_map(|o| {
                let raw = o.raw.as_ref()?;
                Some((
                    o.entry.name.clone(),
                    format!("{}.{}.tools.json", sanitize(stem), sanitize(&o.entry.name)),
                    format!("{raw}\n"),
                ))
            })
            .collect()
    }
}

/// A server name as a file name: anything but letters, digits, `-`, `_` and `.` becomes `_`.
fn sanitize(name: &str) -> String {
    let s: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "-_.".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect();
    let s = if s.is_empty() || s.starts_with('.') {
        format!("server{s}")
    } else {
        s
    };
    // A long name is cut with a hash of the whole, so it stays a valid, distinct file name.
    crate::base::files::shorten_name(&s, 120)
}
