//! pcsim binary: parse arguments, run, map errors to exit codes (0 ok, 2 user error, 1 internal).

mod cli;

use std::io::Write;
use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    let cli = cli::Cli::parse();
    // Every input file read from here on is remembered, so no report can be written over one.
    pcsim::base::files::protect_inputs();
    let stdout = std::io::stdout();
    use std::io::IsTerminal;
    // Names and descriptions from inputs may hold escape sequences: a terminal gets them escaped
    // (`\u{1b}`); a pipe or file gets the bytes as they are (CSV and JSON stay exact).
    let raw = std::io::BufWriter::new(stdout.lock());
    let mut out: Box<dyn Write> = if std::io::stdout().is_terminal() {
        Box::new(pcsim::report::terminal::EscapingWriter::new(raw))
    } else {
        Box::new(raw)
    };
    // A panic is a bug, never the user's fault: report it with the documented internal-error code 1
    // (the default would be 101). The panic message itself is printed by the default hook.
    let result = match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        cli::run(cli, &mut out).and_then(|()| out.flush().map_err(Into::into))
    })) {
        Ok(r) => r,
        Err(_) => {
            let _ = writeln!(
                std::io::stderr(),
                "error: internal error (a bug in pcsim); please report it with the command line"
            );
            return ExitCode::from(1);
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            // A closed pipe (`pcsim ... | head`) is not a failure.
            if e.chain().any(|c| {
                c.downcast_ref::<std::io::Error>()
                    .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
            }) {
                return ExitCode::SUCCESS;
            }
            let _ = writeln!(
                std::io::stderr(),
                "error: {}",
                pcsim::report::terminal::escape(&message(&e))
            );
            let user = e.chain().any(|c| {
                c.downcast_ref::<pcsim::Error>()
                    .is_some_and(pcsim::Error::is_user_error)
            });
            ExitCode::from(if user { 2 } else { 1 })
        }
    }
}

/// The error and its causes on one line, skipping a cause whose text the message already holds (a
/// library error that prints its I/O cause would otherwise show it twice).
fn message(e: &anyhow::Error) -> String {
    let mut out = String::new();
    for cause in e.chain() {
        let text = cause.to_string();
        if out.contains(&text) {
            continue;
        }
        if !out.is_empty() {
            out.push_str(": ");
        }
        out.push_str(&text);
    }
    out
}
