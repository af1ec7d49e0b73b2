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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::input::mcpconfig::{Client, ServerEntry, SkippedServer};
    use crate::model::catalog::Catalog;
    use crate::model::tools::synthetic_tools;

    fn config(servers: Vec<ServerEntry>, skipped: Vec<SkippedServer>) -> McpConfig {
        McpConfig {
            origin: "cfg.json".into(),
            client: Client::ClaudeCode,
            servers,
            skipped,
        }
    }

    /// A captured server with `count` synthetic tools from `first` and a raw list of `raw_bytes`.
    fn captured(name: &str, first: usize, count: usize, raw_bytes: usize) -> ServerOutcome {
        ServerOutcome {
            entry: ServerEntry::new(name, "unused", Vec::new()),
            tools: Ok(synthetic_tools(first, count, 1)),
            raw: Some("x".repeat(raw_bytes)),
            listed: Some(count),
        }
    }

    fn capture_of(outcomes: Vec<ServerOutcome>) -> ConfigCapture {
        ConfigCapture {
            config: config(Vec::new(), Vec::new()),
            outcomes,
        }
    }

    #[test]
    fn a_configuration_without_stdio_server_warns_then_fails() {
        let skipped = SkippedServer {
            name: "docs".into(),
            reason: "remote server".into(),
        };
        let mut warnings = Vec::new();
        let err = capture_config(
            config(Vec::new(), vec![skipped]),
            &CaptureOptions::default(),
            &mut |w| warnings.push(w),
        )
        .unwrap_err()
        .to_string();
        assert_eq!(warnings, ["server `docs` not captured: remote server"]);
        assert!(
            err.contains("cfg.json") && err.contains("no stdio server"),
            "{err}"
        );
    }

    #[test]
    fn a_configuration_whose_every_server_fails_names_each_then_fails() {
        let entry = ServerEntry::new("gone", "/nonexistent/pcsim-test-program", Vec::new());
        let mut warnings = Vec::new();
        let err = capture_config(
            config(vec![entry], Vec::new()),
            &CaptureOptions::default(),
            &mut |w| warnings.push(w),
        )
        .unwrap_err()
        .to_string();
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        assert!(warnings[0].contains("`gone`"), "{warnings:?}");
        assert!(
            err.contains("no server of the configuration could be captured"),
            "{err}"
        );
    }

    #[test]
    fn overheads_per_server_and_together_name_duplicates() {
        let catalog = Catalog::embedded().unwrap();
        let models = catalog.select(&[]).unwrap();
        // Tools 0..3 and 2..4: `synthetic_tool_02` is defined by both servers.
        let c = capture_of(vec![captured("a", 0, 3, 10), captured("b", 2, 2, 10)]);
        let o = c.overheads(&models).unwrap();
        assert_eq!(o.rows.len(), models.len() * 3);
        assert_eq!(o.duplicates, ["synthetic_tool_02"]);
        let total = o.rows.iter().find(|r| r.server.is_none()).unwrap();
        assert_eq!(total.tools, 5);
        let a = o
            .rows
            .iter()
            .find(|r| r.server.as_deref() == Some("a"))
            .unwrap();
        assert!(a.block_tokens > 0 && a.block_tokens < total.block_tokens);
    }

    #[test]
    fn the_limits_apply_to_the_servers_lists_together() {
        let catalog = Catalog::embedded().unwrap();
        let models = catalog.select(&[]).unwrap();
        let half = MAX_TOOLS / 2 + 1;
        let c = capture_of(vec![
            captured("a", 0, half, 10),
            captured("b", half, half, 10),
        ]);
        let err = c.overheads(&models).unwrap_err().to_string();
        assert!(
            err.contains(&format!("{} tools together", 2 * half)),
            "{err}"
        );
        let bytes = (MAX_TOOL_BYTES / 2 + 1) as usize;
        let c = capture_of(vec![captured("a", 0, 1, bytes), captured("b", 1, 1, bytes)]);
        let err = c.overheads(&models).unwrap_err().to_string();
        assert!(
            err.contains(&format!("{} bytes together", 2 * bytes)),
            "{err}"
        );
        // Exactly the limit together passes.
        let c = capture_of(vec![
            captured("a", 0, 1, bytes),
            captured("b", 1, 1, MAX_TOOL_BYTES as usize - bytes),
        ]);
        assert!(c.overheads(&models).is_ok());
    }
}
