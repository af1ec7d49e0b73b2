//! A scenario file written from an MCP client configuration (`pcsim config --scenario-out FILE`):
//! one `[[tools.server]]` per captured server, pointing at the tool list the client sends (saved
//! beside it), and the built-in default session to edit.

use std::fmt::Write as _;

/// One captured server of the scenario: its name in the configuration and the file (relative to the
/// scenario) that holds the tool list as the client sends it.
pub(crate) struct ScenarioServer<'a> {
    /// Name of the server in the configuration.
    pub name: &'a str,
    /// The saved tool list, relative to the scenario file.
    pub file: &'a str,
}

/// TOML text of a scenario string value (basic string, escaped).
fn quoted(s: &str) -> String {
    toml::Value::String(s.to_string()).to_string()
}

/// The scenario text: a header saying where it came from, the name, the models (empty: the
/// scenario's default models), one server table per captured server, and the `[session]` and later
/// tables of the built-in default scenario (`examples/default.toml`).
pub(crate) fn scenario_from_config(
    config: &str,
    client: &str,
    name: &str,
    models: &[String],
    servers: &[ScenarioServer],
) -> String {
    let mut t = String::new();
    let _ = writeln!(
        t,
        "# Written by `pcsim config {}` (client: {client}): the tool lists this client sends,",
        config.replace('\n', " ")
    );
    let _ = writeln!(
        t,
        "# one [[tools.server]] per captured server. The session below is pcsim's built-in default\n# (a 20-call coding agent): edit it to match your agent."
    );
    let _ = writeln!(t, "name = {}", quoted(name));
    let _ = writeln!(
        t,
        "description = {}",
        quoted(&format!("the MCP servers of {config}"))
    );
    if !models.is_empty() {
        let list: Vec<String> = models.iter().map(|m| quoted(m)).collect();
        let _ = writeln!(t, "models = [{}]", list.join(", "));
    }
    let _ = writeln!(t, "strategies = [\"none\", \"cached\"]\nseed = 1");
    for s in servers {
        let _ = writeln!(
            t,
            "\n[[tools.server]]\nname = {}\nfile = {}",
            quoted(s.name),
            quoted(s.file)
        );
    }
    // The built-in session, from its `[session]` table on.
    let default = crate::input::scenario::DEFAULT_SCENARIO;
    if let Some(at) = default.find("\n[session]") {
        t.push_str(&default[at..]);
    }
    t
}
