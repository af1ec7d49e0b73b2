//! `pcsim replay` over a folder reads and replays its files in parallel (issue 30): the output must
//! not depend on the number of threads (files summed in file order, Claude Code messages found again
//! in a later file counted once across the chunks of files in flight).

use std::path::Path;

use crate::common::{pcsim, root};

/// A folder of every usage fixture, plus one Claude Code transcript twice, far apart (a sub-agent's
/// transcript and its parent's progress lines repeat messages), so the second copy is read long
/// after the first was summed.
fn folder(dir: &Path) -> usize {
    let usage = root().join("tests/fixtures/usage");
    let mut n = 0;
    for e in std::fs::read_dir(&usage).unwrap() {
        let p = e.unwrap().path();
        if matches!(
            p.extension().and_then(|x| x.to_str()),
            Some("json" | "jsonl")
        ) {
            std::fs::copy(&p, dir.join(p.file_name().unwrap())).unwrap();
            n += 1;
        }
    }
    let session = usage.join("claude_code_session.jsonl");
    std::fs::copy(&session, dir.join("aaa_first_copy.jsonl")).unwrap();
    std::fs::copy(&session, dir.join("zzz_second_copy.jsonl")).unwrap();
    n + 2
}

/// stdout and stderr of `pcsim ARGS` on `threads` rayon threads; it must succeed.
fn on_threads(threads: usize, args: &[&str]) -> (String, String) {
    let out = pcsim()
        .env("RAYON_NUM_THREADS", threads.to_string())
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "pcsim {args:?} on {threads} threads failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    (
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

#[test]
fn a_folder_replays_the_same_on_one_and_on_several_threads() {
    let dir = tempfile::tempdir().unwrap();
    let files = folder(dir.path());
    let d = dir.path().to_str().unwrap();
    let runs: [&[&str]; 3] = [
        &["replay", d, "--format", "json"],
        &[
            "replay",
            d,
            "--model",
            "claude-opus-4.8",
            "--model",
            "gemini-3.6-flash",
            "--strategy",
            "none",
            "--strategy",
            "cached",
            "--prefix-tokens",
            "1200",
            "--format",
            "json",
        ],
        &[
            "replay",
            d,
            "--tool-tokens-delta",
            "400",
            "--prefix-tokens",
            "900",
            "--invoice-usd",
            "2",
        ],
    ];
    for args in runs {
        let one = on_threads(1, args);
        // More files than one thread reads ahead of the sums.
        assert!(files > 8, "{files} files");
        for threads in [2, 3, 8] {
            let many = on_threads(threads, args);
            assert_eq!(one.0, many.0, "stdout of {args:?}, 1 vs {threads} threads");
            assert_eq!(one.1, many.1, "stderr of {args:?}, 1 vs {threads} threads");
        }
        if args.contains(&"json") {
            let v: serde_json::Value = serde_json::from_str(&one.0).unwrap();
            assert_eq!(v["files"], files);
            // The second copy of the transcript is counted once, though read in another chunk.
            assert!(v["duplicates_across_files"].as_u64().unwrap() > 0, "{v}");
            assert!(v["results"][0]["calls_total"].as_u64().unwrap() > 0);
        }
    }
}

/// Unreadable files far apart are skipped and named in file order, whatever the number of threads
/// (files are read ahead of the sums, by whichever thread is free).
#[test]
fn unreadable_files_in_several_chunks_are_named_in_file_order() {
    let dir = tempfile::tempdir().unwrap();
    let files = folder(dir.path());
    let bad = ["aab_bad.jsonl", "mmm_bad.jsonl", "zzzz_bad.jsonl"];
    for name in bad {
        std::fs::write(dir.path().join(name), "not a log\n").unwrap();
    }
    let d = dir.path().to_str().unwrap();
    let args = ["replay", d, "--format", "json"];
    let one = on_threads(1, &args);
    for threads in [2, 3] {
        assert_eq!(one, on_threads(threads, &args), "1 vs {threads} threads");
    }
    let v: serde_json::Value = serde_json::from_str(&one.0).unwrap();
    assert_eq!(v["files"], files);
    let skipped: Vec<&str> = v["files_skipped"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_str().unwrap())
        .collect();
    assert_eq!(skipped.len(), bad.len(), "{skipped:?}");
    for (s, name) in skipped.iter().zip(bad) {
        assert!(s.contains(name), "{name} not in {s}");
    }
}

/// A transcript whose messages all came in an earlier file adds nothing: a folder holding a Claude
/// Code transcript and a copy of it sums to the transcript alone (the copy's calls taken out and the
/// copy replayed again without them), on one thread and on two; with a copy that shares only part
/// of the messages, the calls the copy alone has are replayed and counted.
#[test]
fn a_copy_of_a_transcript_in_the_same_folder_adds_nothing() {
    let session = root().join("tests/fixtures/usage/claude_code_session.jsonl");
    let text = std::fs::read_to_string(&session).unwrap();
    let alone = tempfile::tempdir().unwrap();
    std::fs::write(alone.path().join("a.jsonl"), &text).unwrap();
    // Two files are needed for the folder's cross-file rule: the second holds one unrelated call.
    let other = r#"{"sent_at":"2026-01-01T00:00:00Z","session_id":"s","model":"claude-opus-4.8","usage":{"input_tokens":5000,"output_tokens":10}}"#;
    std::fs::write(alone.path().join("b.jsonl"), format!("{other}\n")).unwrap();
    let twice = tempfile::tempdir().unwrap();
    for name in ["a.jsonl", "b.jsonl"] {
        std::fs::copy(alone.path().join(name), twice.path().join(name)).unwrap();
    }
    std::fs::write(twice.path().join("c.jsonl"), &text).unwrap();
    let totals = |dir: &Path, threads: usize| {
        let d = dir.to_str().unwrap();
        let (out, _) = on_threads(threads, &["replay", d, "--format", "json"]);
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        let r = &v["results"][0];
        (
            r["calls_total"].as_u64().unwrap(),
            r["predicted"]["cost_usd"].as_f64().unwrap(),
            r["logged"]["cost_usd"].as_f64().unwrap(),
            v["duplicates_across_files"].as_u64().unwrap(),
        )
    };
    let one = totals(alone.path(), 1);
    assert!(one.0 > 1 && one.1 > 0.0, "{one:?}");
    assert_eq!(one.3, 0);
    for threads in [1, 2] {
        let both = totals(twice.path(), threads);
        assert_eq!(
            (both.0, both.1, both.2),
            (one.0, one.1, one.2),
            "{threads} threads"
        );
        assert_eq!(
            both.3 as usize,
            one.0 as usize - 1,
            "every call of the copy taken out"
        );
    }
    // A copy that also has a message of its own: that call is replayed and counted, once.
    let partly = tempfile::tempdir().unwrap();
    for name in ["a.jsonl", "b.jsonl"] {
        std::fs::copy(alone.path().join(name), partly.path().join(name)).unwrap();
    }
    let last = text
        .lines()
        .rev()
        .find(|l| l.contains("\"usage\""))
        .unwrap();
    let own = last.replace("\"id\": \"msg_", "\"id\": \"msg_own_");
    assert_ne!(own, last, "the fixture's message ids start with msg_");
    std::fs::write(partly.path().join("c.jsonl"), format!("{text}{own}\n")).unwrap();
    for threads in [1, 2] {
        let more = totals(partly.path(), threads);
        assert_eq!(more.0, one.0 + 1, "{threads} threads");
        assert!(more.1 > one.1, "{threads} threads: {more:?} vs {one:?}");
    }
}

/// `pcsim fit` reads a folder's logs in parallel and adds them in file order: the fitted scenario,
/// the report and the warnings for unreadable files are the same on one thread and on several.
#[test]
fn fit_on_a_folder_is_the_same_on_one_and_on_several_threads() {
    let dir = tempfile::tempdir().unwrap();
    folder(dir.path());
    for name in ["aab_bad.jsonl", "zzzz_bad.jsonl"] {
        std::fs::write(dir.path().join(name), "not a log\n").unwrap();
    }
    let out = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap();
    let fitted = |threads: usize| {
        let scenario = out.path().join(format!("fitted-{threads}.toml"));
        let s = scenario.to_str().unwrap();
        let (stdout, stderr) = on_threads(
            threads,
            &["fit", d, "--model", "claude-opus-4.8", "--scenario-out", s],
        );
        let toml = std::fs::read_to_string(&scenario).unwrap();
        // The report names the file written: the same name in every run.
        let stdout = stdout.replace(&format!("fitted-{threads}"), "fitted");
        let toml = toml.replace(&format!("fitted-{threads}"), "fitted");
        (stdout, stderr, toml)
    };
    let one = fitted(1);
    assert_eq!(one.1.matches("warning: skipped").count(), 2, "{}", one.1);
    assert!(one.1.find("aab_bad").unwrap() < one.1.find("zzzz_bad").unwrap());
    assert!(
        one.2.contains("[session]") || one.2.contains("calls"),
        "{}",
        one.2
    );
    for threads in [2, 3] {
        assert_eq!(one, fitted(threads), "1 vs {threads} threads");
    }
}
