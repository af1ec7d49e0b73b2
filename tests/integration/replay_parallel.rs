//! `pcsim replay` over a folder reads and replays its files in parallel (issue 30): the output must
//! not depend on the number of threads (files summed in file order, Claude Code messages found again
//! in a later file counted once across the chunks of files in flight).

use std::path::Path;

use crate::common::{pcsim, root};

/// A folder of every usage fixture, plus one Claude Code transcript twice, far apart (a sub-agent's
/// transcript and its parent's progress lines repeat messages), so the second copy is read in
/// another chunk than the first on one thread.
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
        // More files than one thread's chunk, so the sums cross chunks.
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

/// Unreadable files in several chunks are skipped and named in file order, whatever the number of
/// threads (the chunks go through a pipeline: a later chunk is read while an earlier one is summed).
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
