//! Issue 15: one resolved request for every command, and the bugs that came from resolving it three
//! times (each test here fails on the code before the request existed).

use std::time::Duration;

use serde_json::Value;

use crate::common::{json_of, pcsim};

#[test]
fn runs_on_the_command_line_meet_the_scenarios_work_limit() {
    // large-toolset is 20 sessions x 40 calls: 2,000,000 runs are 1.6e9 calls, over the 1e9-call
    // limit that `runs = 2000000` in the file is refused for. The flag used to start the
    // work (minutes to hours); the timeout makes that a failure rather than a hang.
    let out = pcsim()
        .current_dir(crate::common::root())
        .args(["run", "examples/large-toolset.toml", "--runs", "2000000"])
        .timeout(Duration::from_secs(60))
        .assert()
        .code(2)
        .get_output()
        .stderr
        .clone();
    let err = String::from_utf8_lossy(&out);
    assert!(
        err.contains("command line: field `--runs`") && err.contains("calls per scenario"),
        "{err}"
    );
    // Within the limit the flag still works.
    let v = json_of(&[
        "run", "--runs", "3", "--model", "kimi-k3", "--format", "json",
    ]);
    assert_eq!(v["results"][0]["montecarlo"]["runs"], 3);
}

#[test]
fn repeated_model_ids_are_simulated_once() {
    let v = json_of(&[
        "run", "--model", "gpt-5.6", "--model", "gpt-5.6", "--format", "json",
    ]);
    // The default scenario's strategies, none and cached, once each.
    assert_eq!(v["results"].as_array().unwrap().len(), 2);
    let v = json_of(&[
        "compare", "--model", "kimi-k3", "--model", "kimi-k3", "--format", "json",
    ]);
    assert_eq!(v["comparisons"].as_array().unwrap().len(), 1);
}

#[test]
fn a_strategy_that_repeats_another_is_a_stated_skip_in_run_as_in_compare() {
    // On Claude and the built-in scenario `cached` is its cheapest placement, explicit:last (one
    // conversation: one moving breakpoint covers the whole prefix): `run` used to drop the second
    // silently.
    let args = [
        "--model",
        "claude-opus-4.8",
        "--strategy",
        "cached",
        "--strategy",
        "explicit:last",
        "--format",
        "json",
    ];
    for cmd in ["run", "compare"] {
        let mut all = vec![cmd];
        all.extend(args);
        let v = json_of(&all);
        let skipped = v["skipped"].as_array().unwrap();
        assert!(
            skipped.iter().any(|s| s["strategy"] == "explicit:last"
                && s["reason"]
                    .as_str()
                    .unwrap()
                    .contains("the same strategy as `cached`")),
            "{cmd}: {skipped:?}"
        );
    }
}

#[test]
fn a_bad_strategy_flag_is_named_as_the_flag_not_the_scenario_field() {
    let out = pcsim()
        .args(["run", "--strategy", "explicit:often"])
        .assert()
        .code(2)
        .get_output()
        .stderr
        .clone();
    let err = String::from_utf8_lossy(&out);
    assert!(err.contains("command line: field `--strategy`"), "{err}");
}

#[test]
fn commands_without_csv_refuse_it_as_a_usage_error_and_do_not_offer_it() {
    let log = crate::common::root().join("tests/fixtures/usage/anthropic_messages.jsonl");
    let config = crate::common::root().join("tests/fixtures/mcp.json");
    let scenario = crate::common::root().join("examples/tool-change.toml");
    let cases: [Vec<&std::ffi::OsStr>; 4] = [
        vec!["models".as_ref()],
        vec!["config".as_ref(), config.as_os_str()],
        vec!["replay".as_ref(), log.as_os_str()],
        // advise refused csv (exit 2) but its --help still listed it.
        vec!["advise".as_ref(), scenario.as_os_str()],
    ];
    for args in cases {
        // Used to be exit 1, "internal error", after the work was done.
        let out = pcsim()
            .args(&args)
            .args(["--format", "csv"])
            .timeout(Duration::from_secs(30))
            .assert()
            .code(2)
            .get_output()
            .stderr
            .clone();
        let err = String::from_utf8_lossy(&out);
        assert!(err.contains("invalid value 'csv'"), "{args:?}: {err}");
        let help = pcsim()
            .args([args[0], "--help".as_ref()])
            .assert()
            .success();
        let help = String::from_utf8_lossy(&help.get_output().stdout).to_string();
        let format_line = help
            .lines()
            .find(|l| l.contains("--format"))
            .unwrap_or_else(|| panic!("{help}"));
        let values = help
            .lines()
            .skip_while(|l| !l.contains("--format"))
            .take(6)
            .collect::<Vec<_>>()
            .join("\n");
        assert!(
            !format_line.contains("csv") && !values.contains("csv"),
            "{args:?}: {values}"
        );
        assert!(values.contains("json"), "{values}");
    }
}

#[test]
fn replay_predicts_the_same_for_the_same_log_under_any_name_and_takes_a_seed() {
    // grok-4.7's implicit hits are best effort (probability 0.9), so the draws matter. The seed used
    // to come from the log's path: six names, three different predictions.
    // 60 Anthropic responses of a growing conversation (no logged cache use).
    let text: String = (0..60u64)
        .map(|i| {
            format!(
                "{{\"id\":\"m{i}\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"claude-opus-4-8\",\"content\":[],\"usage\":{{\"input_tokens\":{},\"cache_creation_input_tokens\":0,\"cache_read_input_tokens\":0,\"output_tokens\":100}}}}\n",
                2000 + 300 * i
            )
        })
        .collect();
    let dir = tempfile::tempdir().unwrap();
    let predicted = |path: &std::path::Path, extra: &[&str]| -> Value {
        let out = pcsim()
            .arg("replay")
            .arg(path)
            .args(["--model", "grok-4.7", "--format", "json"])
            .args(extra)
            .assert()
            .success()
            .get_output()
            .stdout
            .clone();
        let v: Value = serde_json::from_slice(&out).unwrap();
        v["results"][0]["predicted"].clone()
    };
    let mut seen = Vec::new();
    for name in [
        "a.jsonl",
        "b.jsonl",
        "session.jsonl",
        "x",
        "log-2.jsonl",
        "zz.jsonl",
    ] {
        let p = dir.path().join(name);
        std::fs::write(&p, &text).unwrap();
        seen.push(predicted(&p, &[]));
    }
    assert!(seen.windows(2).all(|w| w[0] == w[1]), "{seen:?}");
    // `--seed` chooses the draws: some seed gives another prediction, and a seed repeats itself.
    let p = dir.path().join("a.jsonl");
    let seeded: Vec<Value> = (1..=8)
        .map(|s| predicted(&p, &["--seed", &s.to_string()]))
        .collect();
    assert_eq!(seeded[0], predicted(&p, &["--seed", "1"]));
    assert!(seeded.iter().any(|v| *v != seen[0]), "{seeded:?}");
}

/// `1.85` -> (1, 85, 0).
fn version(v: &str) -> (u64, u64, u64) {
    let mut p = v.split('.').map(|x| x.parse::<u64>().unwrap_or(0));
    (
        p.next().unwrap_or(0),
        p.next().unwrap_or(0),
        p.next().unwrap_or(0),
    )
}

#[test]
fn rust_version_is_at_least_what_every_locked_dependency_needs() {
    // Only one toolchain exists where this runs, so the MSRV cannot be checked by building with it;
    // what can be checked is that no locked dependency of the library and binary declares a newer
    // one (clippy's `incompatible_msrv` then checks pcsim's own use of the standard library).
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    // Resolved for this machine's platform only: an unfiltered resolve needs the sources of
    // Windows-only packages too, which a Linux build never downloaded (and --offline cannot fetch).
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let host = std::process::Command::new(rustc)
        .arg("-vV")
        .output()
        .unwrap();
    let host = String::from_utf8(host.stdout).unwrap();
    let host = host
        .lines()
        .find_map(|l| l.strip_prefix("host: "))
        .expect("rustc -vV names the host")
        .to_string();
    let out = std::process::Command::new(cargo)
        .current_dir(crate::common::root())
        .args(["metadata", "--format-version", "1", "--locked", "--offline"])
        .args(["--filter-platform", &host])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let m: Value = serde_json::from_slice(&out.stdout).unwrap();
    let packages: std::collections::HashMap<&str, &Value> = m["packages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| (p["id"].as_str().unwrap(), p))
        .collect();
    let nodes: std::collections::HashMap<&str, &Value> = m["resolve"]["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| (n["id"].as_str().unwrap(), n))
        .collect();
    let root = m["resolve"]["root"].as_str().unwrap();
    let ours = packages[root]["rust_version"].as_str().unwrap();
    // Everything the library and binary build with: normal and build dependencies, transitively.
    let mut seen = std::collections::HashSet::new();
    let mut todo = vec![root];
    while let Some(id) = todo.pop() {
        if !seen.insert(id) {
            continue;
        }
        for d in nodes[id]["deps"].as_array().unwrap() {
            let kinds = d["dep_kinds"].as_array().unwrap();
            if kinds
                .iter()
                .any(|k| k["kind"].is_null() || k["kind"] == "build")
            {
                todo.push(d["pkg"].as_str().unwrap());
            }
        }
    }
    assert!(seen.len() > 20, "{} packages", seen.len());
    let newer: Vec<String> = seen
        .iter()
        .filter_map(|id| {
            let p = packages[id];
            let v = p["rust_version"].as_str()?;
            (version(v) > version(ours))
                .then(|| format!("{} {} needs {v}", p["name"], p["version"]))
        })
        .collect();
    assert!(newer.is_empty(), "rust-version = {ours}, but {newer:?}");
}

/// Every file of the repository that a test, bench, script, example, doc or CI step may read, walked
/// from the root (target/ and .git/ aside).
fn repository_text_files() -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![crate::common::root()];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).unwrap() {
            let e = e.unwrap();
            let p = e.path();
            let name = e.file_name().to_string_lossy().into_owned();
            let ty = e.file_type().unwrap();
            if ty.is_dir() {
                if dir == crate::common::root()
                    && (name == "target" || name.starts_with('.') && name != ".ci")
                {
                    continue;
                }
                stack.push(p);
            } else if ty.is_file() && std::fs::metadata(&p).unwrap().len() < 4 << 20 {
                out.push(p);
            }
        }
    }
    out
}

/// A clone with nothing beside it must pass its tests: no file names the shared folder beside the
/// checkout (CI has it, a user's clone does not). The reference data lives in tests/fixtures/reference.
#[test]
fn no_test_doc_or_script_reads_a_path_outside_the_repository() {
    // Built from parts so this file does not match itself.
    let forbidden = [
        format!("../{}", "shared"),
        format!("{}/reference", "shared"),
        format!("PCSIM_{}", "SHARED"),
    ];
    let mut offenders = Vec::new();
    for f in repository_text_files() {
        if f.starts_with(crate::common::root().join("tests/fuzz/runs")) {
            continue; // logs of past fuzz runs: a record of what was read then, not a reader
        }
        let Ok(text) = std::fs::read_to_string(&f) else {
            continue; // binary (PNG, fonts): not a reader of paths
        };
        for pat in &forbidden {
            if text.contains(pat.as_str()) {
                offenders.push(format!("{} names {pat}", f.display()));
            }
        }
    }
    assert!(
        offenders.is_empty(),
        "paths outside the repository:\n{}",
        offenders.join("\n")
    );
    assert!(crate::common::capture("server-github").is_file());
}

/// Source with comments, string and character literals blanked (newlines kept), so braces and
/// `fn` can be counted on what the compiler reads as code.
fn code_only(text: &str) -> String {
    let b = text.as_bytes();
    let mut out = b.to_vec();
    let blank = |out: &mut Vec<u8>, from: usize, to: usize| {
        for c in &mut out[from..to.min(b.len())] {
            if *c != b'\n' {
                *c = b' ';
            }
        }
    };
    let mut i = 0;
    while i < b.len() {
        let rest = &b[i..];
        let after_word = i > 0 && (b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_');
        if rest.starts_with(b"//") {
            let end = text[i..].find('\n').map_or(b.len(), |k| i + k);
            blank(&mut out, i, end);
            i = end;
        } else if rest.starts_with(b"/*") {
            let (mut depth, mut j) = (0, i);
            while j < b.len() {
                if b[j..].starts_with(b"/*") {
                    depth += 1;
                    j += 2;
                } else if b[j..].starts_with(b"*/") {
                    depth -= 1;
                    j += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    j += 1;
                }
            }
            blank(&mut out, i, j);
            i = j;
        } else if !after_word
            && (rest.starts_with(b"r#") || rest.starts_with(b"r\"") || rest.starts_with(b"br"))
        {
            // Raw string: r"..", r#".."#, br"..".
            let start = if rest[0] == b'b' { i + 2 } else { i + 1 };
            let hashes = b[start..].iter().take_while(|&&c| c == b'#').count();
            if b.get(start + hashes) != Some(&b'"') {
                i += 1;
                continue;
            }
            let close = format!("\"{}", "#".repeat(hashes));
            let body = start + hashes + 1;
            let end = text[body..]
                .find(&close)
                .map_or(b.len(), |k| body + k + close.len());
            blank(&mut out, i, end);
            i = end;
        } else if b[i] == b'"' {
            let mut j = i + 1;
            while j < b.len() && b[j] != b'"' {
                j += if b[j] == b'\\' { 2 } else { 1 };
            }
            blank(&mut out, i, j + 1);
            i = j + 1;
        } else if b[i] == b'\'' {
            // A character literal ('{', '\n', '\u{7b}'); otherwise a lifetime, left alone.
            if b.get(i + 1) == Some(&b'\\') {
                // The closing quote comes after the escaped character (`'\''` escapes a quote).
                let end = text[i + 3..].find('\'').map_or(b.len(), |k| i + 3 + k + 1);
                blank(&mut out, i, end);
                i = end;
            } else if let Some(c) = text[i + 1..].chars().next() {
                let len = c.len_utf8();
                if b.get(i + 1 + len) == Some(&b'\'') {
                    blank(&mut out, i, i + 2 + len);
                    i += 2 + len;
                } else {
                    i += 1;
                }
            } else {
                i += 1;
            }
        } else {
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Every function with a body in `text` over `limit` lines (signature to closing brace): its name,
/// first line and length, and whether a plain comment in the block of comments and attributes
/// right above it gives the reason (it says `120 lines`). Test modules at the end of a file
/// (`#[cfg(test)] mod`) are left out: tests may be long.
fn long_functions(text: &str, limit: usize) -> Vec<(String, usize, usize, bool)> {
    let text = match text.find("\n#[cfg(test)]\nmod ") {
        Some(k) => &text[..k],
        None => text,
    };
    let code = code_only(text);
    let lines: Vec<&str> = text.lines().collect();
    let bytes = code.as_bytes();
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(k) = code[from..].find("fn ") {
        let at = from + k;
        from = at + 3;
        if at > 0 && (bytes[at - 1].is_ascii_alphanumeric() || bytes[at - 1] == b'_') {
            continue;
        }
        let name: String = code[at + 3..]
            .trim_start()
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        if name.is_empty() {
            continue; // `fn(` as a type
        }
        let Some(open) = code[at..].find(['{', ';']).map(|j| at + j) else {
            continue;
        };
        if bytes[open] == b';' {
            continue; // a declaration without a body
        }
        let mut depth = 0;
        let mut close = open;
        for (j, c) in code[open..].bytes().enumerate() {
            match c {
                b'{' => depth += 1,
                b'}' => {
                    depth -= 1;
                    if depth == 0 {
                        close = open + j;
                        break;
                    }
                }
                _ => {}
            }
        }
        let first = code[..at].matches('\n').count(); // 0-based
        let last = code[..close].matches('\n').count();
        let len = last - first + 1;
        if len <= limit {
            continue;
        }
        let reason = lines[..first]
            .iter()
            .rev()
            .map(|l| l.trim_start())
            .take_while(|l| l.starts_with("//") || l.starts_with("#["))
            .any(|l| l.starts_with("//") && !l.starts_with("///") && l.contains("120 lines"));
        out.push((name, first + 1, len, reason));
    }
    out
}

#[test]
fn the_length_scanner_counts_bodies_not_braces_in_strings_or_comments() {
    let body = "    let _ = \"}}}\"; // }\n    let _c = ('}', '\\'', '\\u{7d}');\n".repeat(3);
    let text = format!("fn short<'a>(x: &'a str) {{\n{body}}}\n");
    // Eight lines: counting the braces in the strings, comment or character would end it early.
    assert_eq!(long_functions(&text, 8), []);
    assert_eq!(
        long_functions(&text, 7),
        [("short".to_string(), 1, 8, false)]
    );
    let text = format!("/// Doc.\n// Over 120 lines: a reason.\n#[inline]\n{text}");
    assert_eq!(
        long_functions(&text, 7),
        [("short".to_string(), 4, 8, true)]
    );
    // A doc comment is not the reason; a declaration without a body is not a function body.
    let text = text.replace("// Over", "/// Over");
    assert_eq!(
        long_functions(&text, 7),
        [("short".to_string(), 4, 8, false)]
    );
    assert_eq!(long_functions("trait T {\n    fn f(&self);\n}\n", 0), []);
}

/// Every `.rs` file under `src/`: its path from the project root and its text.
fn rust_sources() -> Vec<(String, String)> {
    let mut stack = vec![crate::common::root().join("src")];
    let mut out = Vec::new();
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let p = entry.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|e| e == "rs") {
                let rel = p.strip_prefix(crate::common::root()).unwrap();
                let text = std::fs::read_to_string(&p).unwrap();
                out.push((rel.display().to_string(), text));
            }
        }
    }
    out
}

/// Issue 28: "No function over ~120 lines without a reason in a comment". Lists every function of
/// `src/` over 120 lines; each must be split or carry a plain `//` comment above it (among its doc
/// comments and attributes) that says why, mentioning `120 lines`.
#[test]
fn no_function_over_120_lines_without_a_reason_in_a_comment() {
    let (mut files, mut listed, mut unexplained) = (0, Vec::new(), Vec::new());
    for (rel, text) in rust_sources() {
        if rel.ends_with("/tests.rs") {
            continue;
        }
        files += 1;
        for (name, line, len, reason) in long_functions(&text, 120) {
            let row = format!("{rel}:{line} {name}: {len} lines");
            if !reason {
                unexplained.push(row.clone());
            }
            listed.push(row);
        }
    }
    // The scan read the source (a wrong folder would pass with nothing listed).
    assert!(files > 100, "{files} source files");
    eprintln!("functions over 120 lines:\n{}", listed.join("\n"));
    unexplained.sort();
    assert!(
        unexplained.is_empty(),
        "functions over 120 lines without a reason in a comment above them:\n{}",
        unexplained.join("\n")
    );
}

/// The text of a file's opening `//!` comment, one line per comment line (markers and one leading
/// space removed).
fn opening_doc_comment(text: &str) -> String {
    text.lines()
        .map_while(|l| l.trim_start().strip_prefix("//!"))
        .map(|l| l.strip_prefix(' ').unwrap_or(l))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Whether `doc` holds a sentence starting `One concept:`: at the comment's start, at a
/// paragraph's start, or after a full stop.
fn names_its_one_concept(doc: &str) -> bool {
    doc.match_indices("One concept:").any(|(i, _)| {
        let before = doc[..i].trim_end();
        before.is_empty() || before.ends_with('.') || doc[..i].ends_with("\n\n")
    })
}

#[test]
fn the_one_concept_check_reads_only_a_sentence_of_the_opening_comment() {
    assert!(names_its_one_concept(&opening_doc_comment(
        "//! Things.\n//!\n//! One concept: things.\nfn f() {}\n"
    )));
    assert!(names_its_one_concept(&opening_doc_comment(
        "//! Things. One concept: things.\n"
    )));
    // Not the opening comment, not a sentence's start, not the exact words.
    assert!(!names_its_one_concept(&opening_doc_comment(
        "//! Things.\nfn f() {}\n//! One concept: things.\n"
    )));
    assert!(!names_its_one_concept(&opening_doc_comment(
        "//! Things, with One concept: things.\n"
    )));
    assert!(!names_its_one_concept(&opening_doc_comment(
        "//! Things.\n//!\n//! One concept, things.\n//! one concept: things.\n"
    )));
    assert!(!names_its_one_concept(&opening_doc_comment(
        "// One concept: things.\n"
    )));
}

/// Issue 28, done when: "no file over 800 lines that holds more than one concept (say in its opening
/// comment what the one concept is)". Every `src/**/*.rs` file over 800 lines must have, in its
/// opening `//!` comment, a sentence starting `One concept:`; a file that holds two is split instead.
#[test]
fn every_source_file_over_800_lines_names_its_one_concept() {
    let (mut files, mut long, mut unnamed) = (0, Vec::new(), Vec::new());
    for (rel, text) in rust_sources() {
        files += 1;
        let lines = text.lines().count();
        if lines <= 800 {
            continue;
        }
        long.push(format!("{rel}: {lines} lines"));
        if !names_its_one_concept(&opening_doc_comment(&text)) {
            unnamed.push(format!("{rel}: {lines} lines"));
        }
    }
    // The scan read the source (a wrong folder would pass with nothing listed).
    assert!(files > 100, "{files} source files");
    eprintln!("files over 800 lines:\n{}", long.join("\n"));
    unnamed.sort();
    assert!(
        unnamed.is_empty(),
        "files over 800 lines without a sentence starting `One concept:` in their opening `//!` comment:\n{}",
        unnamed.join("\n")
    );
}

/// Issue 28: "Parsers split by what they read (`input/mcpconfig/` one file per client family)".
/// What differs between clients lives in `input/mcpconfig/clients/`, one module per family behind
/// one trait; the shared steps ask it and never test which client they read. Outside `clients/` and
/// `client.rs` (the enum, its command-line names and the order detection asks the families in), no
/// code of `input/mcpconfig/` names a client (tests excepted: they check what was detected).
#[test]
fn mcpconfig_steps_name_no_client_outside_the_family_modules() {
    let dir = crate::common::root().join("src/input/mcpconfig");
    let enum_text = std::fs::read_to_string(dir.join("client.rs")).unwrap();
    let body = &enum_text[enum_text.find("pub enum Client {").unwrap()..];
    let body = &body[..body.find("\n}").unwrap()];
    let variants: Vec<&str> = body
        .lines()
        .map(str::trim)
        .filter(|l| !l.starts_with("//") && !l.starts_with('#') && l.ends_with(','))
        .map(|l| l.trim_end_matches(','))
        .collect();
    // The enum was read (a moved enum would leave nothing to look for).
    assert!(
        variants.contains(&"ClaudeCode") && variants.contains(&"Goose") && variants.len() >= 10,
        "{variants:?}"
    );
    let families: Vec<String> = std::fs::read_dir(dir.join("clients"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".rs") && n != "mod.rs")
        .collect();
    assert!(families.len() >= 8, "{families:?}");
    let mut steps = 0;
    let mut named = Vec::new();
    for entry in std::fs::read_dir(&dir).unwrap() {
        let p = entry.unwrap().path();
        let file = p.file_name().unwrap().to_string_lossy().into_owned();
        if p.is_dir() || !file.ends_with(".rs") || file == "client.rs" {
            continue;
        }
        steps += 1;
        let text = std::fs::read_to_string(&p).unwrap();
        let code = text.split("#[cfg(test)]").next().unwrap();
        for (n, line) in code.lines().enumerate() {
            for v in &variants {
                let at = format!("Client::{v}");
                let whole = line.match_indices(&at).any(|(i, _)| {
                    !line[i + at.len()..].starts_with(|c: char| c.is_alphanumeric() || c == '_')
                });
                if whole {
                    named.push(format!(
                        "src/input/mcpconfig/{file}:{}: {}",
                        n + 1,
                        line.trim()
                    ));
                }
            }
        }
    }
    assert!(steps >= 6, "{steps} step files");
    assert!(
        named.is_empty(),
        "client-specific branches outside input/mcpconfig/clients/ (answer through clients::Format):\n{}",
        named.join("\n")
    );
}
