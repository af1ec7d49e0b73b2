//! `pcsim capture -- COMMAND [ARGS...]`: read a live MCP server's tool list over stdio.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, Result};
use clap::ValueEnum;

use crate::input::capture::{
    capture_command, CaptureOptions, ClientCapabilities, DEFAULT_PROTOCOL_VERSION,
};
use crate::report;

/// Client capabilities on the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Default)]
pub(crate) enum CapsArg {
    /// No optional capability.
    #[default]
    Minimal,
    /// roots, sampling, elicitation and tasks.
    Full,
}

/// Options shared by every command that starts MCP servers.
#[derive(Debug, Clone, clap::Args)]
pub(crate) struct ServerOptions {
    /// Capabilities advertised to the server (some servers register more tools for `full`).
    #[arg(long, value_enum, default_value_t = CapsArg::Minimal)]
    pub client_capabilities: CapsArg,
    /// Give up on a server after this many seconds (the whole handshake and listing).
    #[arg(long, value_name = "S", default_value_t = 30.0)]
    pub timeout_seconds: f64,
    /// Largest output accepted from a server, in bytes.
    #[arg(long, value_name = "N", default_value_t = 32 << 20)]
    pub max_bytes: usize,
    /// `protocolVersion` asked for in `initialize`.
    #[arg(long, value_name = "V", default_value = DEFAULT_PROTOCOL_VERSION)]
    pub protocol_version: String,
}

impl ServerOptions {
    /// The library's options, after checking the numbers.
    pub(crate) fn to_options(&self) -> Result<CaptureOptions> {
        if !(self.timeout_seconds.is_finite()
            && self.timeout_seconds > 0.0
            && self.timeout_seconds <= 86_400.0)
        {
            anyhow::bail!(crate::Error::invalid(
                "command line",
                "--timeout-seconds",
                format!(
                    "value {} must be a number of seconds above 0 and at most 86400",
                    self.timeout_seconds
                )
            ));
        }
        if self.max_bytes < 1024 {
            anyhow::bail!(crate::Error::invalid(
                "command line",
                "--max-bytes",
                format!("value {} must be at least 1024", self.max_bytes)
            ));
        }
        Ok(CaptureOptions {
            timeout: Duration::from_secs_f64(self.timeout_seconds),
            // One message may use up to 8 MiB (a quarter of the total for very large totals), never
            // more than the total.
            max_message_bytes: (self.max_bytes / 4).max(8 << 20).min(self.max_bytes),
            max_total_bytes: self.max_bytes,
            capabilities: match self.client_capabilities {
                CapsArg::Minimal => ClientCapabilities::Minimal,
                CapsArg::Full => ClientCapabilities::Full,
            },
            protocol_version: self.protocol_version.clone(),
            ..CaptureOptions::default()
        })
    }
}

/// Arguments of `capture`.
#[derive(Debug, clap::Args)]
pub(crate) struct CaptureArgs {
    /// Write the `{ "tools": [...] }` result to this file (atomically) instead of standard output.
    /// (`--out` is the old spelling: `--out` names a folder in the other commands.)
    #[arg(long = "tools-out", alias = "out", value_name = "FILE")]
    pub out: Option<PathBuf>,
    #[command(flatten)]
    pub server: ServerOptions,
    /// The server's command line, after `--`, e.g. `-- npx -y @modelcontextprotocol/server-memory`.
    #[arg(required = true, num_args = 1.., trailing_var_arg = true, value_name = "COMMAND")]
    pub command: Vec<String>,
}

/// The word of `command` (or its value after `=`, as in `--config=FILE`) that names the existing
/// file `out` (same file: same device and inode, or same canonical path): `capture --out srv.py --
/// python3 srv.py` replaced the server's own script (issue 29).
fn command_file_at(out: &Path, command: &[String]) -> Option<String> {
    let target = std::fs::metadata(out)
        .ok()
        .filter(std::fs::Metadata::is_file)?;
    let id = crate::base::files::FileId::of(&target);
    let canonical = std::fs::canonicalize(out).ok();
    command.iter().find_map(|word| {
        let value = word.split_once('=').map(|(_, v)| v);
        [Some(word.as_str()), value]
            .into_iter()
            .flatten()
            .find_map(|w| {
                let meta = std::fs::metadata(w).ok()?;
                let same = (id.is_some() && crate::base::files::FileId::of(&meta) == id)
                    || (canonical.is_some() && std::fs::canonicalize(w).ok() == canonical);
                same.then(|| w.to_string())
            })
    })
}

/// Runs `pcsim capture`.
pub(crate) fn cmd_capture(a: CaptureArgs, out: &mut dyn Write) -> Result<()> {
    let opts = a.server.to_options()?;
    // Refused before the server is started.
    if let Some(path) = &a.out {
        report::check_output_path(path)?;
        if let Some(arg) = command_file_at(path, &a.command) {
            anyhow::bail!(crate::Error::invalid(
                path.display().to_string(),
                "--tools-out",
                format!(
                    "is `{arg}`, a file of the server's command line; pcsim never writes over its inputs (choose another output path)"
                )
            ));
        }
    }
    let (program, args) = a.command.split_first().context("no command given")?;
    let label = a.command.join(" ");
    let cap = capture_command(&label, program, args, &BTreeMap::new(), &opts)?;
    // The server's own text, key order included (a Value would sort the keys).
    let mut json = cap.result_json_text();
    json.push('\n');
    let server = cap
        .server_info
        .as_ref()
        .map(|s| {
            format!(
                "{} {}",
                s.get("name").and_then(|v| v.as_str()).unwrap_or("?"),
                s.get("version").and_then(|v| v.as_str()).unwrap_or("")
            )
        })
        .unwrap_or_else(|| "unnamed server".into());
    let summary = format!(
        "captured {} tools from {} (protocol {}, {} page{}; skipped {} non-JSON-RPC lines, {} notifications, answered {} server requests)",
        cap.tools.len(),
        server.trim(),
        cap.protocol_version.as_deref().unwrap_or("?"),
        cap.pages,
        if cap.pages == 1 { "" } else { "s" },
        cap.skipped_lines,
        cap.notifications,
        cap.server_requests
    );
    match &a.out {
        Some(path) => {
            report::write_atomic(path, json.as_bytes())
                .with_context(|| format!("writing {}", path.display()))?;
            writeln!(out, "{summary}")?;
            writeln!(out, "wrote {}", path.display())?;
        }
        None => {
            out.write_all(json.as_bytes())?;
            eprintln_safe!("{summary}");
        }
    }
    Ok(())
}
