//! Docs that cannot drift: every command shown in README.md and docs/*.md runs here, from the files
//! in the repository, and what it prints must be what the page shows.
//!
//! How a page is read:
//!
//! * A fenced block whose first line starts with `$ ` is a terminal transcript: each `$ COMMAND`
//!   line is run by `sh` (standard error merged into standard output, as a terminal shows them) and
//!   the lines up to the next `$ ` line are its expected output.
//! * `<!-- doc-test: ... -->` on the line before a fence qualifies the block:
//!   `file="NAME"` writes the block to NAME in the page's work folder (scenarios and tool lists the
//!   page shows, so a reader can copy them and the test uses exactly them); `command="CMD"` runs CMD
//!   for a block with no `$` line, with `from="TEXT"` (start at the first line containing TEXT) and
//!   `lines=N` (keep N lines) to show an excerpt; `exit=N` is the exit status every command of the
//!   block must end with (default 0); `unchecked="WHY"` runs the commands but does not compare their
//!   output (timings); `skip="WHY"` does not run them (only for commands that need the network).
//! * Inline code `` `pcsim ...` `` that is a concrete command (no placeholder such as FILE, K or
//!   `[...]`) must run with exit status 0.
//!
//! Every page runs in its own fresh folder holding a copy of `examples/`, `tests/fixtures/` and
//! `models.toml` (what a clean clone has), blocks in page order, so a page can build on its own
//! earlier steps; `pcsim` on `PATH` is the binary under test.
//!
//! When figures change on purpose, regenerate the pages' outputs with
//! `PCSIM_UPDATE_DOCS=1 cargo test --test integration docs` and review the diff.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::common;

/// What the line before a fence says about the block.
#[derive(Debug, Default, Clone, PartialEq)]
struct Directive {
    file: Option<String>,
    command: Option<String>,
    from: Option<String>,
    lines: Option<usize>,
    exit: Option<i32>,
    unchecked: Option<String>,
    skip: Option<String>,
    /// On a line of its own: inline commands starting with this are not run (with `why`).
    inline_not_run: Option<String>,
    why: Option<String>,
}

/// Parses `doc-test: key="value" key=value` (values without spaces need no quotes).
fn parse_directive(line: &str) -> Option<std::result::Result<Directive, String>> {
    let inner = line
        .trim()
        .strip_prefix("<!--")?
        .strip_suffix("-->")?
        .trim()
        .strip_prefix("doc-test:")?;
    let mut d = Directive::default();
    let mut rest = inner.trim();
    while !rest.is_empty() {
        let Some((key, after)) = rest.split_once('=') else {
            return Some(Err(format!("`{rest}`: expected key=value")));
        };
        let key = key.trim();
        let (value, after) = if let Some(q) = after.strip_prefix('"') {
            match q.split_once('"') {
                Some((v, a)) => (v.to_string(), a),
                None => return Some(Err(format!("{key}: unterminated quote"))),
            }
        } else {
            let end = after.find(' ').unwrap_or(after.len());
            (after[..end].to_string(), &after[end..])
        };
        let num = |v: &str| {
            v.parse::<i64>()
                .map_err(|_| format!("{key}={v}: not a number"))
        };
        match key {
            "file" => d.file = Some(value),
            "command" => d.command = Some(value),
            "from" => d.from = Some(value),
            "lines" => match num(&value) {
                Ok(n) => d.lines = Some(n as usize),
                Err(e) => return Some(Err(e)),
            },
            "exit" => match num(&value) {
                Ok(n) => d.exit = Some(n as i32),
                Err(e) => return Some(Err(e)),
            },
            "unchecked" => d.unchecked = Some(value),
            "skip" => d.skip = Some(value),
            "inline-not-run" => d.inline_not_run = Some(value),
            "why" => d.why = Some(value),
            other => return Some(Err(format!("unknown key `{other}`"))),
        }
        rest = after.trim_start();
    }
    Some(Ok(d))
}

/// A fenced block: the index range of its content lines in the page, and what precedes it.
#[derive(Debug)]
struct Block {
    /// Index of the first content line (after the opening fence).
    start: usize,
    /// Index one past the last content line (the closing fence).
    end: usize,
    directive: Option<Directive>,
}

fn blocks(lines: &[String], page: &str) -> Vec<Block> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let fence = lines[i].trim_start();
        if let Some(rest) = fence.strip_prefix("```") {
            let _lang = rest.trim();
            let start = i + 1;
            let mut end = start;
            while end < lines.len() && !lines[end].trim_start().starts_with("```") {
                end += 1;
            }
            let directive = (0..i)
                .rev()
                .find(|&j| !lines[j].trim().is_empty())
                .and_then(|j| parse_directive(&lines[j]))
                .map(|r| r.unwrap_or_else(|e| panic!("{page}:{i}: bad doc-test directive: {e}")));
            out.push(Block {
                start,
                end,
                directive,
            });
            i = end + 1;
        } else {
            if let Some(r) = parse_directive(&lines[i]) {
                let d =
                    r.unwrap_or_else(|e| panic!("{page}:{}: bad doc-test directive: {e}", i + 1));
                if d.inline_not_run.is_some() {
                    assert!(
                        d.why.is_some(),
                        "{page}:{}: inline-not-run needs why=",
                        i + 1
                    );
                    i += 1;
                    continue;
                }
                // Any other directive must sit right before a fence (blank lines allowed).
                let next = (i + 1..lines.len()).find(|&j| !lines[j].trim().is_empty());
                let ok = next.is_some_and(|j| lines[j].trim_start().starts_with("```"));
                assert!(
                    ok,
                    "{page}:{}: doc-test directive not followed by a fenced block",
                    i + 1
                );
            }
            i += 1;
        }
    }
    out
}

/// Inline code spans that are concrete `pcsim` commands (no placeholders), with their line number.
fn inline_commands(lines: &[String]) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let mut in_fence = false;
    for (n, line) in lines.iter().enumerate() {
        if line.trim_start().starts_with("```") {
            in_fence = !in_fence;
            continue;
        }
        if in_fence {
            continue;
        }
        let parts: Vec<&str> = line.split('`').collect();
        // Odd indices are inside backticks (the Markdown of these pages has no double backticks).
        for span in parts.iter().skip(1).step_by(2) {
            let span = span.replace("\\|", "|");
            // `pcsim run` alone names a command in prose; a runnable example has an argument.
            let words = span.split_whitespace().count();
            if span.starts_with("pcsim ") && words >= 3 && is_concrete(&span) {
                out.push((n + 1, span));
            }
        }
    }
    out
}

/// Whether an inline `pcsim ...` is a command one can paste, not a synopsis: no `[options]`, no
/// `...`, no `a|b` alternatives, no upper-case placeholder (FILE, DIR, K, N, ID, WxH).
fn is_concrete(span: &str) -> bool {
    if span.contains(['[', '(', '<']) || span.contains("...") {
        return false;
    }
    if span.contains('|') && !span.contains(" | ") {
        return false;
    }
    !span.split([' ', '=', ',']).any(|w| {
        let w = w.trim_matches(|c: char| !c.is_ascii_alphanumeric());
        !w.is_empty()
            && w.chars().any(|c| c.is_ascii_uppercase())
            && w.chars().all(|c| c.is_ascii_uppercase() || c == 'x')
    })
}

/// A fresh folder with what a clean clone has for the examples, and `bin/pcsim`.
struct Workdir {
    _tmp: tempfile::TempDir,
    dir: PathBuf,
    path_env: String,
}

fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let target = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_tree(&e.path(), &target);
        } else {
            std::fs::copy(e.path(), &target).unwrap();
        }
    }
}

impl Workdir {
    fn new() -> Self {
        let tmp = tempfile::tempdir().unwrap();
        let root = common::root();
        let dir = tmp.path().join("pcsim");
        for sub in ["examples", "tests/fixtures"] {
            copy_tree(&root.join(sub), &dir.join(sub));
        }
        std::fs::copy(root.join("models.toml"), dir.join("models.toml")).unwrap();
        let bin = tmp.path().join("bin");
        std::fs::create_dir_all(&bin).unwrap();
        std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_pcsim"), bin.join("pcsim")).unwrap();
        let path_env = format!(
            "{}:{}",
            bin.display(),
            std::env::var("PATH").unwrap_or_default()
        );
        Workdir {
            _tmp: tmp,
            dir,
            path_env,
        }
    }

    /// Runs `cmd` with `sh`, standard error merged into standard output; (status, lines).
    fn run(&self, cmd: &str) -> (i32, Vec<String>) {
        let out = Command::new("sh")
            .arg("-c")
            .arg(format!("exec 2>&1\n{cmd}"))
            .current_dir(&self.dir)
            .env("PATH", &self.path_env)
            .env("NO_COLOR", "1")
            .env_remove("PCSIM_UPDATE_DOCS")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .output()
            .unwrap_or_else(|e| panic!("cannot run sh for `{cmd}`: {e}"));
        let text = String::from_utf8_lossy(&out.stdout);
        (out.status.code().unwrap_or(-1), normalise(&text))
    }
}

/// Lines without trailing blanks and without trailing empty lines.
fn normalise(text: &str) -> Vec<String> {
    let mut lines: Vec<String> = text.lines().map(|l| l.trim_end().to_string()).collect();
    while lines.last().is_some_and(|l| l.is_empty()) {
        lines.pop();
    }
    lines
}

/// What one page's check found.
#[derive(Default)]
struct PageResult {
    /// Commands run (blocks and inline).
    commands: usize,
    /// Blocks not run, with the reason.
    skipped: Vec<String>,
    /// Failures, each a readable message.
    failures: Vec<String>,
    /// Blocks whose expected text should become the actual (for the update mode).
    replacements: Vec<(usize, usize, Vec<String>)>,
}

/// Runs and checks every example of `page` (relative to the project root).
fn check_page(page: &str) -> PageResult {
    let path = common::root().join(page);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{page}: {e}"));
    let lines: Vec<String> = text.lines().map(str::to_string).collect();
    let work = Workdir::new();
    let mut res = PageResult::default();
    for b in blocks(&lines, page) {
        let content = &lines[b.start..b.end];
        let d = b.directive.clone().unwrap_or_default();
        let at = format!("{page}:{}", b.start);
        if let Some(name) = &d.file {
            let target = work.dir.join(name);
            if let Some(parent) = target.parent() {
                std::fs::create_dir_all(parent).unwrap();
            }
            let mut body = content.join("\n");
            body.push('\n');
            std::fs::write(&target, body).unwrap();
            continue;
        }
        let transcript = content.first().is_some_and(|l| l.starts_with("$ "));
        if !transcript && d.command.is_none() {
            // A block with a command line anywhere else would silently go unchecked.
            if let Some(l) = content.iter().find(|l| l.starts_with("$ pcsim")) {
                res.failures.push(format!(
                    "{at}: `{l}` is not on the first line of its block, so it would not be run"
                ));
            }
            continue;
        }
        if let Some(why) = &d.skip {
            res.skipped.push(format!("{at}: {why}"));
            continue;
        }
        // (command, expected output lines) pairs.
        let mut steps: Vec<(String, Vec<String>)> = Vec::new();
        if let Some(cmd) = &d.command {
            steps.push((cmd.clone(), content.to_vec()));
        } else {
            for l in content {
                match l.strip_prefix("$ ") {
                    Some(cmd) => steps.push((cmd.to_string(), Vec::new())),
                    None => steps.last_mut().unwrap().1.push(l.clone()),
                }
            }
        }
        let mut actual_block: Vec<String> = Vec::new();
        let mut block_differs = false;
        for (i, (cmd, expected)) in steps.iter().enumerate() {
            res.commands += 1;
            let (status, mut out) = work.run(cmd);
            let want = d.exit.unwrap_or(0);
            if status != want {
                res.failures.push(format!(
                    "{at}: `{cmd}` exited with {status}, the page expects {want}; it printed:\n{}",
                    out.join("\n")
                ));
            }
            if let Some(from) = &d.from {
                match out.iter().position(|l| l.contains(from.as_str())) {
                    Some(p) => {
                        out.drain(..p);
                    }
                    None => res
                        .failures
                        .push(format!("{at}: `{cmd}` printed no line containing `{from}`")),
                }
            }
            if let Some(n) = d.lines {
                out.truncate(n);
            }
            let mut expected = normalise(&expected.join("\n"));
            if d.command.is_none() && i + 1 < steps.len() {
                // A blank line separates one command's output from the next `$` line.
                while expected.last().is_some_and(|l| l.is_empty()) {
                    expected.pop();
                }
            }
            if d.unchecked.is_none() && out != expected {
                block_differs = true;
                res.failures.push(format!(
                    "{at}: `{cmd}` prints something else than the page shows:\n{}",
                    diff(&expected, &out)
                ));
            }
            if d.command.is_none() {
                actual_block.push(format!("$ {cmd}"));
            }
            if d.unchecked.is_some() {
                actual_block.extend(expected);
            } else {
                actual_block.extend(out);
            }
            if d.command.is_none() && i + 1 < steps.len() {
                actual_block.push(String::new());
            }
        }
        if d.unchecked.is_none() {
            res.failures
                .extend(check_prose(page, &lines, b.end + 1, &actual_block));
        }
        if block_differs {
            res.replacements.push((b.start, b.end, actual_block));
        }
    }
    let not_run: Vec<(String, String)> = lines
        .iter()
        .filter_map(|l| parse_directive(l)?.ok())
        .filter_map(|d| Some((d.inline_not_run?, d.why.unwrap_or_default())))
        .collect();
    for (n, cmd) in inline_commands(&lines) {
        if let Some((_, why)) = not_run.iter().find(|(p, _)| cmd.starts_with(p.as_str())) {
            res.skipped.push(format!("{page}:{n}: `{cmd}`: {why}"));
            continue;
        }
        res.commands += 1;
        let (status, out) = work.run(&cmd);
        if status != 0 {
            res.failures.push(format!(
                "{page}:{n}: inline command `{cmd}` exited with {status}:\n{}",
                out.join("\n")
            ));
        }
    }
    res
}

/// Dollar figures (`$0.1079`, `-$3.64`) in `text`, as (value, decimals).
fn dollars(text: &str) -> Vec<(f64, usize, String)> {
    let mut out = Vec::new();
    let b = text.as_bytes();
    for (i, _) in text.match_indices('$') {
        let digits: String = text[i + 1..]
            .chars()
            .take_while(|c| c.is_ascii_digit() || *c == '.' || *c == ',')
            .collect();
        let digits = digits.trim_end_matches(['.', ',']);
        let Ok(v) = digits.replace(',', "").parse::<f64>() else {
            continue;
        };
        let decimals = digits.split_once('.').map_or(0, |(_, f)| f.len());
        let neg = i > 0 && b[i - 1] == b'-';
        out.push((if neg { -v } else { v }, decimals, format!("${digits}")));
    }
    out
}

/// The prose after a checked block (up to the next fence or heading) may quote its figures: every
/// dollar amount there must be one the block prints (to the prose's precision), and every
/// `~N calls` pay-back must be printed as such, so the explanation cannot drift from the example.
fn check_prose(page: &str, lines: &[String], from: usize, output: &[String]) -> Vec<String> {
    let printed: Vec<f64> = output
        .iter()
        .flat_map(|l| dollars(l))
        .map(|d| d.0.abs())
        .collect();
    let all = output.join("\n");
    let mut failures = Vec::new();
    for (n, line) in lines.iter().enumerate().skip(from) {
        let t = line.trim_start();
        if t.starts_with("```") || t.starts_with('#') || t.starts_with("<!--") {
            break;
        }
        for (v, decimals, text) in dollars(line) {
            let scale = 10f64.powi(decimals as i32);
            let found = printed
                .iter()
                .any(|p| ((p * scale).round() - v.abs() * scale).abs() < 0.5);
            if !found {
                failures.push(format!(
                    "{page}:{}: the prose quotes {text}, which the example above does not print \
                     (fix the sentence by hand after regenerating)",
                    n + 1
                ));
            }
        }
        let mut rest = line.as_str();
        while let Some(i) = rest.find('~') {
            let tail = &rest[i..];
            let end = tail.find(" calls").map(|e| e + " calls".len());
            if let Some(e) = end.filter(|e| tail[1..e - 6].chars().all(|c| c.is_ascii_digit())) {
                let quoted = &tail[..e];
                if !all.contains(quoted) {
                    failures.push(format!(
                        "{page}:{}: the prose quotes `{quoted}`, which the example above does not print",
                        n + 1
                    ));
                }
            }
            rest = &rest[i + 1..];
        }
    }
    failures
}

/// A line diff: `-` lines the page shows that were not printed, `+` lines printed instead.
fn diff(expected: &[String], actual: &[String]) -> String {
    // Longest common subsequence; pages are short.
    let (n, m) = (expected.len(), actual.len());
    let mut lcs = vec![vec![0u32; m + 1]; n + 1];
    for i in (0..n).rev() {
        for j in (0..m).rev() {
            lcs[i][j] = if expected[i] == actual[j] {
                lcs[i + 1][j + 1] + 1
            } else {
                lcs[i + 1][j].max(lcs[i][j + 1])
            };
        }
    }
    let (mut i, mut j, mut out) = (0, 0, String::new());
    while i < n || j < m {
        if i < n && j < m && expected[i] == actual[j] {
            i += 1;
            j += 1;
        } else if j < m && (i == n || lcs[i][j + 1] >= lcs[i + 1][j]) {
            let _ = writeln!(out, "+ {}", actual[j]);
            j += 1;
        } else {
            let _ = writeln!(out, "- {}", expected[i]);
            i += 1;
        }
    }
    out
}

/// Checks `page`; with `PCSIM_UPDATE_DOCS=1` rewrites its outputs from the runs instead of failing
/// on a difference (exit statuses must still be right).
fn check(page: &str) {
    let res = check_page(page);
    for s in &res.skipped {
        eprintln!("not run: {s}");
    }
    let update = std::env::var("PCSIM_UPDATE_DOCS").is_ok_and(|v| v == "1");
    if update && !res.replacements.is_empty() {
        let path = common::root().join(page);
        let text = std::fs::read_to_string(&path).unwrap();
        let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
        for (start, end, new) in res.replacements.iter().rev() {
            lines.splice(start..end, new.iter().cloned());
        }
        let mut body = lines.join("\n");
        body.push('\n');
        std::fs::write(&path, body).unwrap();
        eprintln!(
            "updated {} block(s) of {page} from the runs",
            res.replacements.len()
        );
        let left: Vec<&String> = res
            .failures
            .iter()
            .filter(|f| !f.contains("prints something else"))
            .collect();
        assert!(left.is_empty(), "{page}:\n{}", join(&left));
        return;
    }
    assert!(
        res.failures.is_empty(),
        "{} example(s) of {page} do not reproduce (regenerate with \
         `PCSIM_UPDATE_DOCS=1 cargo test --test integration docs` if the change is intended):\n\n{}",
        res.failures.len(),
        join(&res.failures.iter().collect::<Vec<_>>())
    );
    assert!(res.commands > 0, "{page}: no command was run");
}

fn join(items: &[&String]) -> String {
    items
        .iter()
        .map(|s| s.as_str())
        .collect::<Vec<_>>()
        .join("\n\n")
}

/// The pages whose examples are checked: README.md and every page in docs/.
const PAGES: [&str; 10] = [
    "README.md",
    "docs/charts.md",
    "docs/explain.md",
    "docs/fit.md",
    "docs/inputs.md",
    "docs/prices.md",
    "docs/python.md",
    "docs/time.md",
    "docs/tools.md",
    "docs/whatif.md",
];

#[test]
fn docs_every_page_is_checked() {
    let mut found: Vec<String> = std::fs::read_dir(common::root().join("docs"))
        .unwrap()
        .filter_map(|e| {
            let name = e.unwrap().file_name().to_string_lossy().into_owned();
            // architecture.md has no commands: its drawing is checked by layers.rs.
            (name.ends_with(".md") && name != "architecture.md").then(|| format!("docs/{name}"))
        })
        .collect();
    found.push("README.md".into());
    found.sort();
    let mut listed: Vec<String> = PAGES.iter().map(|s| s.to_string()).collect();
    listed.sort();
    assert_eq!(found, listed, "add the new page to PAGES and a test for it");
}

#[test]
fn docs_readme() {
    check("README.md");
}

#[test]
fn docs_charts() {
    check("docs/charts.md");
}

#[test]
fn docs_explain() {
    check("docs/explain.md");
}

#[test]
fn docs_fit() {
    check("docs/fit.md");
}

#[test]
fn docs_inputs() {
    check("docs/inputs.md");
}

#[test]
fn docs_prices() {
    check("docs/prices.md");
}

#[test]
fn docs_python() {
    // Its Python examples run in python/tests/test_docs.py; here its `pcsim` commands.
    check("docs/python.md");
}

#[test]
fn docs_time() {
    check("docs/time.md");
}

#[test]
fn docs_tools() {
    check("docs/tools.md");
}

#[test]
fn docs_whatif() {
    check("docs/whatif.md");
}

#[test]
fn docs_checker_sees_a_drifted_figure_and_a_wrong_exit_status() {
    // The checker itself must be able to fail: a page with a wrong figure, a command that fails
    // where the page expects success, and an excerpt.
    let tmp = tempfile::tempdir().unwrap();
    let work = Workdir::new();
    let (_, real) = work.run("pcsim sweep --max-tools 1 --model gpt-5.6");
    assert!(real.len() > 3, "{real:?}");
    let mut drifted = real.clone();
    let row = drifted
        .iter()
        .position(|l| l.starts_with("gpt-5.6"))
        .unwrap();
    // Drift the first figure of the row (whatever the catalog makes it) by one.
    let figure = drifted[row]
        .split_whitespace()
        .find(|w| w.contains('.') && w.parse::<f64>().is_ok())
        .unwrap()
        .to_string();
    let wrong = format!("{:.1}", figure.parse::<f64>().unwrap() + 1.0);
    drifted[row] = drifted[row].replacen(&figure, &wrong, 1);
    let page = format!(
        "# t\n\n```\n$ pcsim sweep --max-tools 1 --model gpt-5.6\n{}\n```\n\n\
         <!-- doc-test: command=\"pcsim sweep --max-tools 1 --model gpt-5.6\" from=\"gpt-5.6 \" lines=1 -->\n\
         ```\n{}\n```\n\n```\n$ pcsim run no-such-file.toml\n```\n",
        drifted.join("\n"),
        real[row],
    );
    let rel = tmp.path().join("page.md");
    std::fs::write(&rel, &page).unwrap();
    let lines: Vec<String> = page.lines().map(str::to_string).collect();
    assert_eq!(blocks(&lines, "page.md").len(), 3);
    // check_page reads pages relative to the root; an absolute path joins to itself.
    let res = check_page(rel.to_str().unwrap());
    assert_eq!(res.commands, 3);
    assert_eq!(res.failures.len(), 3, "{}", res.failures.join("\n"));
    assert!(res.failures[0].contains("- gpt-5.6") && res.failures[0].contains(&wrong));
    assert!(
        res.failures[1].contains("exited with 2"),
        "{}",
        res.failures[1]
    );
    assert!(res.failures[2].contains("prints something else"));
    assert_eq!(res.replacements.len(), 2);
}

#[test]
fn docs_inline_commands_are_told_from_synopses() {
    for concrete in [
        "pcsim run examples/small-toolset.toml",
        "pcsim whatif examples/tool-change.toml --at-call 25 --remove-tools web_search,fetch_page",
        "pcsim run --calls | head",
    ] {
        assert!(is_concrete(concrete), "{concrete}");
    }
    for synopsis in [
        "pcsim run [SCENARIO]",
        "pcsim config FILE",
        "pcsim models --format table|json",
        "pcsim ... | head",
        "pcsim whatif SCENARIO --at-call K",
        "pcsim run --chart-size WxH",
        "pcsim run examples/default.toml --out <tmp>",
    ] {
        assert!(!is_concrete(synopsis), "{synopsis}");
    }
}
