//! One money precision and one sign convention (issue 16): every dollar amount pcsim prints has the
//! same number of decimals, in tables, prose lines, CSV and reports, and every saving is positive
//! when the change or strategy saves.

use std::path::Path;

use crate::common::{pcsim, root};

/// Decimals of every printed amount (`pcsim::base::text::USD_DECIMALS`, repeated here on purpose:
/// a change of the rule must be a deliberate change of this test too).
const DECIMALS: usize = 6;

/// Every `$` amount in `text` whose decimals differ from [`DECIMALS`] (or that has none), as
/// `(line, amount)`. Only `$` followed by a digit counts: `$ pcsim` prompts and `$/call` headers
/// are not amounts. A catalog number's `source` (`source = "..."` in TOML, `"source": "..."` in
/// JSON, as `models` and `import-litellm` echo it) quotes its source in the source's own words and
/// precision: from there to the end of the line nothing counts.
fn odd_amounts(text: &str) -> Vec<(String, String)> {
    let mut bad = Vec::new();
    for full in text.lines() {
        let quote = ["source = \"", "\"source\": \""]
            .iter()
            .filter_map(|m| full.find(m))
            .min()
            .unwrap_or(full.len());
        let line = &full[..quote];
        let b = line.as_bytes();
        for (i, _) in line.match_indices('$') {
            if !b.get(i + 1).is_some_and(u8::is_ascii_digit) {
                continue;
            }
            let rest = &line[i + 1..];
            let end = rest
                .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == ','))
                .unwrap_or(rest.len());
            let amount = rest[..end].trim_end_matches(['.', ',']);
            let ok = match amount.split_once('.') {
                Some((whole, frac)) => {
                    !whole.contains(',') && frac.len() == DECIMALS && !frac.contains(['.', ','])
                }
                None => false,
            };
            if !ok {
                bad.push((full.to_string(), format!("${amount}")));
            }
        }
    }
    bad
}

/// The terminal transcripts of a Markdown page: fenced blocks whose first line is `$ pcsim ...`.
fn transcripts(page: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut block: Option<Vec<&str>> = None;
    for line in page.lines() {
        match &mut block {
            None if line.trim_start().starts_with("```") => block = Some(Vec::new()),
            None => {}
            Some(b) if line.trim_start().starts_with("```") => {
                if b.first().is_some_and(|l| l.starts_with("$ pcsim")) {
                    out.push(b.join("\n"));
                }
                block = None;
            }
            Some(b) => b.push(line),
        }
    }
    out
}

#[test]
fn the_checker_sees_a_second_precision() {
    assert!(odd_amounts("total $1.234567, saves -$0.000100; $ pcsim run; $/call").is_empty());
    let bad = odd_amounts("total $1.2346 and $0.000001 and $12 and $1,234.500000");
    let amounts: Vec<&str> = bad.iter().map(|(_, a)| a.as_str()).collect();
    assert_eq!(amounts, ["$1.2346", "$12", "$1,234.500000"]);
    // A catalog source quotes; an amount before it still counts.
    let quoted = odd_amounts(
        "x = { value = 1.0, source = \"cost $0.0029 per call\" }\n\"source\": \"at $1.01\"\n$1.5 \"source\": \"$2\"",
    );
    let amounts: Vec<&str> = quoted.iter().map(|(_, a)| a.as_str()).collect();
    assert_eq!(amounts, ["$1.5"]);
    let t = transcripts("x\n```\n$ pcsim run a\n$1.50\n```\n```\nnot $1.5\n```\n");
    assert_eq!(t, ["$ pcsim run a\n$1.50"]);
}

/// Every snapshot (each checked against the command's output by `snapshots`) and every docs
/// transcript (checked by `docs`) prints its amounts with the one precision.
#[test]
fn every_printed_amount_has_the_one_precision() {
    let mut bad = Vec::new();
    let mut amounts = 0usize;
    let mut scan = |name: &str, text: &str| {
        amounts += text.matches('$').count();
        for (line, a) in odd_amounts(text) {
            bad.push(format!("{name}: {a} in `{line}`"));
        }
    };
    let snaps = root().join("tests/snapshots");
    let mut n_snaps = 0;
    for e in std::fs::read_dir(&snaps).expect("tests/snapshots") {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "out") {
            n_snaps += 1;
            scan(
                &p.display().to_string(),
                &std::fs::read_to_string(&p).unwrap(),
            );
        }
    }
    let mut pages = vec![root().join("README.md")];
    for e in std::fs::read_dir(root().join("docs")).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "md") {
            pages.push(p);
        }
    }
    let mut n_blocks = 0;
    for p in &pages {
        for t in transcripts(&std::fs::read_to_string(p).unwrap()) {
            n_blocks += 1;
            scan(&p.display().to_string(), &t);
        }
    }
    assert!(
        n_snaps >= 10 && n_blocks >= 20,
        "{n_snaps} snapshots, {n_blocks} transcripts"
    );
    assert!(amounts > 200, "only {amounts} amounts seen");
    assert!(
        bad.is_empty(),
        "amounts with another precision:\n{}",
        bad.join("\n")
    );
}

/// The money columns of every CSV pcsim writes: same decimals as the tables.
#[test]
fn csv_money_columns_have_the_one_precision() {
    let dir = tempfile::tempdir().unwrap();
    let ex = |f: &str| root().join("examples").join(f);
    let runs: Vec<(&str, Vec<String>)> = vec![
        (
            "run",
            vec!["run".into(), ex("small-toolset.toml").display().to_string()],
        ),
        (
            "compare",
            vec![
                "compare".into(),
                ex("explicit-vs-automatic.toml").display().to_string(),
            ],
        ),
        (
            "whatif",
            vec![
                "whatif".into(),
                ex("tool-change.toml").display().to_string(),
                "--at-call".into(),
                "25".into(),
                "--remove-tools".into(),
                "web_search".into(),
            ],
        ),
    ];
    let mut cells = 0;
    for (name, args) in runs {
        let out = pcsim()
            .current_dir(dir.path())
            .args(&args)
            .args(["--format", "csv"])
            .output()
            .unwrap();
        assert!(out.status.success(), "{name}: {:?}", out);
        let text = String::from_utf8(out.stdout).unwrap();
        let mut lines = text.lines();
        let header: Vec<&str> = lines.next().unwrap().split(',').collect();
        let money: Vec<usize> = (0..header.len())
            .filter(|&i| header[i].contains("usd"))
            .collect();
        assert!(!money.is_empty(), "{name}: no money column in {header:?}");
        for l in lines {
            let f: Vec<&str> = l.split(',').collect();
            for &i in &money {
                let v = f[i];
                if v.is_empty() {
                    continue;
                }
                cells += 1;
                let frac = v.split_once('.').map(|(_, d)| d.len());
                assert_eq!(frac, Some(DECIMALS), "{name}: {} = {v}", header[i]);
            }
        }
    }
    assert!(cells > 50, "{cells} money cells");
}

fn json(args: &[&str]) -> serde_json::Value {
    let out = pcsim()
        .current_dir(root())
        .args(args)
        .args(["--format", "json"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{args:?}: {out:?}");
    serde_json::from_slice(&out.stdout).unwrap()
}

fn table(args: &[&str]) -> String {
    let out = pcsim().current_dir(root()).args(args).output().unwrap();
    assert!(out.status.success(), "{args:?}: {out:?}");
    String::from_utf8(out.stdout).unwrap()
}

/// Savings are positive when they save: `run`'s column against no caching, and `whatif`'s saving
/// column, each equal to what the JSON totals give.
#[test]
fn savings_are_positive_when_they_save() {
    let scen = Path::new("examples/small-toolset.toml");
    let args = ["run", scen.to_str().unwrap(), "--model", "claude-opus-4.8"];
    let j = json(&args);
    let results = j["results"].as_array().unwrap();
    let total = |s: &str| {
        results
            .iter()
            .find(|r| r["strategy"] == s)
            .unwrap_or_else(|| panic!("{s}"))["total_usd"]
            .as_f64()
            .unwrap()
    };
    let none = total("none");
    // `cached`, whatever placement it resolved to (the cheapest on this scenario).
    let cached_name = results
        .iter()
        .find(|r| r["strategy_requested"] == "cached")
        .unwrap()["strategy"]
        .as_str()
        .unwrap()
        .to_string();
    let cached = total(&cached_name);
    assert!(cached < none);
    let want = format!("{:.1}", (none - cached) / none * 100.0);
    let text = table(&args);
    let header = text.lines().nth(1).unwrap();
    assert!(header.ends_with("saving %"), "{header}");
    let row = text
        .lines()
        .find(|l| l.split_whitespace().nth(1) == Some(cached_name.as_str()))
        .unwrap();
    assert!(row.ends_with(&format!(" {want}")), "{row} (want {want})");
    assert!(!want.starts_with('-'));

    // whatif: removing tools mid-session under caching costs more (re-write), without caching saves.
    let args = [
        "whatif",
        "examples/tool-change.toml",
        "--at-call",
        "25",
        "--remove-tools",
        "web_search,fetch_page,search_code",
        "--model",
        "kimi-k3",
    ];
    let j = json(&args);
    let text = table(&args);
    let mut signs = Vec::new();
    for o in j["outcomes"].as_array().unwrap() {
        let saving = o["baseline_usd"].as_f64().unwrap() - o["changed_usd"].as_f64().unwrap();
        assert!((o["saving_usd"].as_f64().unwrap() - saving).abs() < 1e-9);
        assert!((o["extra_usd"].as_f64().unwrap() + saving).abs() < 1e-9);
        let shown = pcsim::report::usd(saving);
        let strategy = o["strategy"].as_str().unwrap();
        let row = text
            .lines()
            .find(|l| l.split_whitespace().nth(1) == Some(strategy))
            .unwrap_or_else(|| panic!("{strategy} in {text}"));
        assert!(row.contains(&format!(" {shown} ")), "{row} lacks {shown}");
        signs.push(saving > 0.0);
    }
    assert!(signs.contains(&true) && signs.contains(&false), "{signs:?}");
}
