//! What `pcsim config` prints: the servers of a client configuration with their status, the
//! tool-block overhead per call per model and server (table or JSON), and its report document.

use std::fmt::Write as _;

use crate::error::Result;
use crate::input::mcpconfig::{McpConfig, Overhead, ServerOutcome};
use crate::report::chart::ChartOptions;
use crate::report::document::{price_sources, Block, Document, Provenance, Section};
use crate::report::table::TextTable;
use crate::report::{report_charts, table, usd};

/// The command line a server was started with, as the tables show it.
fn command_of(o: &ServerOutcome) -> String {
    std::iter::once(o.entry.command.as_str())
        .chain(o.entry.args.iter().map(String::as_str))
        .collect::<Vec<_>>()
        .join(" ")
}

/// `pcsim config --format json`: the configuration, each server's capture, the skipped servers, the
/// tool names defined twice and the overhead rows.
pub(crate) fn json(
    cfg: &McpConfig,
    outcomes: &[ServerOutcome],
    rows: &[Overhead],
    dups: &[String],
) -> serde_json::Value {
    let servers: Vec<_> = outcomes
        .iter()
        .map(|o| {
            serde_json::json!({
                "name": o.entry.name,
                "command": o.entry.command,
                "args": o.entry.args,
                "cwd": o.entry.cwd,
                "include_tools": o.entry.include_tools,
                "exclude_tools": o.entry.exclude_tools,
                "tools_listed": o.listed,
                "tools": o.tools.as_ref().ok().map(|t| t.len()),
                "tool_names": o.tools.as_ref().ok().map(|t| t.iter().map(|x| x.name.clone()).collect::<Vec<_>>()),
                "error": o.tools.as_ref().err(),
            })
        })
        .collect();
    let v = serde_json::json!({
        "config": cfg.origin,
        "client": cfg.client,
        "servers": servers,
        "skipped": cfg.skipped,
        "duplicate_tool_names": dups,
        "overhead": rows,
    });
    v
}

/// `pcsim config` as tables: the servers with their status, then the tool-block overhead per call.
pub(crate) fn text(cfg: &McpConfig, outcomes: &[ServerOutcome], rows: &[Overhead]) -> String {
    let mut s = String::new();
    let mut t = TextTable::new(
        &["server", "command", "tools", "status"],
        &[false, false, true, false],
    );
    for o in outcomes {
        let cmd = command_of(o);
        match &o.tools {
            Ok(tools) => t.row(vec![
                o.entry.name.clone(),
                cmd,
                tools.len().to_string(),
                match o.listed {
                    Some(n) if n != tools.len() => {
                        format!(
                            "ok ({} of {n} listed tools exposed by the client's filters)",
                            tools.len()
                        )
                    }
                    _ => "ok".into(),
                },
            ]),
            Err(e) => t.row(vec![
                o.entry.name.clone(),
                cmd,
                "-".into(),
                format!("error: {e}"),
            ]),
        }
    }
    for s in &cfg.skipped {
        t.row(vec![
            s.name.clone(),
            "-".into(),
            "-".into(),
            format!("skipped: {}", s.reason),
        ]);
    }
    let _ = writeln!(s, "{} (read as {})\n", cfg.origin, cfg.client.as_str());
    s.push_str(&t.render());
    let _ = writeln!(s, "\nTool-block overhead per call:\n");
    let mut t = TextTable::new(
        &[
            "model",
            "server",
            "tools",
            "block tok",
            "$/call uncached",
            "$/call cache read",
        ],
        &[false, false, true, true, true, true],
    );
    for r in rows {
        t.row(vec![
            r.model.clone(),
            r.server.clone().unwrap_or_else(|| "(all servers)".into()),
            r.tools.to_string(),
            r.block_tokens.to_string(),
            usd(r.usd_per_call),
            r.usd_per_call_cached.map_or("-".into(), usd),
        ]);
    }
    s.push_str(&t.render());
    s
}

/// The `config` report: the servers, their tool-block overhead per model, and a chart of it.
pub(crate) fn document(
    cfg: &crate::input::mcpconfig::McpConfig,
    outcomes: &[crate::input::mcpconfig::ServerOutcome],
    rows: &[crate::input::mcpconfig::Overhead],
    dups: &[String],
    models: &[&crate::model::catalog::ModelSpec],
    png: &ChartOptions,
    provenance: Provenance,
) -> Result<Document> {
    use crate::report::chart::{grouped_bar_chart, Axis, Bar, ChartFile, ColourKey, Unit};
    let servers = outcomes
        .iter()
        .map(|o| {
            let cmd = command_of(o);
            match &o.tools {
                Ok(t) => vec![o.entry.name.clone(), cmd, t.len().to_string(), "ok".into()],
                Err(e) => vec![o.entry.name.clone(), cmd, "-".into(), format!("error: {e}")],
            }
        })
        .chain(cfg.skipped.iter().map(|s| {
            vec![
                s.name.clone(),
                "-".into(),
                "-".into(),
                format!("skipped: {}", s.reason),
            ]
        }))
        .collect();
    let overhead = rows
        .iter()
        .map(|r| {
            vec![
                r.model.clone(),
                r.server.clone().unwrap_or_else(|| "(all servers)".into()),
                r.tools.to_string(),
                r.block_tokens.to_string(),
                usd(r.usd_per_call),
                r.usd_per_call_cached.map_or("-".into(), usd),
            ]
        })
        .collect();
    let colours = ColourKey::new(models.iter().map(|m| m.id.as_str()));
    let bars: Vec<Bar> = rows
        .iter()
        .filter(|r| r.server.is_some())
        .map(|r| Bar {
            label: format!("{} {}", r.model, r.server.clone().unwrap_or_default()),
            value: r.usd_per_call,
            group: r.model.clone(),
            note: format!("{} tokens", r.block_tokens),
        })
        .collect();
    let title = format!(
        "Tool-block cost per call, per server: {}\nuncached, at each model's base input price",
        cfg.origin
    );
    let charts = if bars.is_empty() {
        Vec::new()
    } else {
        report_charts(
            png,
            |_| "Tool-block dollars per call of each server, uncached.".into(),
            |o| {
                Ok(vec![ChartFile {
                    name: format!("config-overhead.{}", o.extension()),
                    bytes: grouped_bar_chart(
                        &title,
                        &Axis::new("USD per call", Unit::Usd),
                        &bars,
                        &colours,
                        o,
                    )?,
                }])
            },
        )?
    };
    let mut assumptions = vec![
        "Each server was started and asked for its tool list (tools/list) once; the figures are the tool definitions as the model receives them, rendered per model family.".to_string(),
        "Uncached: every call pays the tool block at the base input price; cache read: the same block read from cache under the model's default strategy.".to_string(),
        "The whole configuration counts the provider's tool preamble once, so it is less than the sum of the servers.".to_string(),
    ];
    if !dups.is_empty() {
        assumptions.push(format!(
            "Tool names defined by more than one server: {} (model APIs reject duplicates; clients rename them).",
            dups.join(", ")
        ));
    }
    Ok(Document {
        title: format!("pcsim config: {}", cfg.origin),
        summary: "What the tool definitions of every server of this MCP client configuration cost on each call, per model.".into(),
        sections: vec![
            Section {
                heading: "Servers".into(),
                blocks: vec![table(
                    &["server", "command", "tools", "status"],
                    &[false, false, true, false],
                    servers,
                )],
            },
            Section {
                heading: "Tool-block overhead per call".into(),
                blocks: vec![table(
                    &["model", "server", "tools", "block tokens", "USD per call uncached", "USD per call cache read"],
                    &[false, false, true, true, true, true],
                    overhead,
                )],
            },
            Section {
                heading: "Charts".into(),
                blocks: charts.into_iter().collect::<Vec<Block>>(),
            },
        ],
        assumptions,
        scenario_text: None,
        prices: price_sources(models),
        provenance,
    })
}
