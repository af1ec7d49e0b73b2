//! Catalog flags of issue 16: `--catalog FILE` lays a file on the built-in catalog, `--only-catalog
//! FILE` replaces it, `--price MODEL=IN,OUT` overrides one model's list prices.

use std::path::Path;

use serde_json::Value;

use crate::common::{pcsim, root};

fn builtin() -> String {
    std::fs::read_to_string(root().join("models.toml")).unwrap()
}

/// The `[[model]]` block of `id` in the built-in catalog, as text (with its sub-tables).
fn model_block(id: &str) -> String {
    let text = builtin();
    let at = text.find(&format!("id = \"{id}\"")).unwrap();
    let start = text[..at].rfind("[[model]]").unwrap();
    let end = text[at..].find("\n[[").map_or(text.len(), |e| at + e + 1);
    text[start..end].to_string()
}

fn json(args: &[&std::ffi::OsStr]) -> Value {
    let out = pcsim().current_dir(root()).args(args).output().unwrap();
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

fn os(s: &str) -> &std::ffi::OsStr {
    s.as_ref()
}

fn ids(models: &Value) -> Vec<String> {
    models["models"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["id"].as_str().unwrap().to_string())
        .collect()
}

fn total(v: &Value, model: &str, strategy: &str) -> f64 {
    v["results"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["model"] == model && r["strategy"] == strategy)
        .unwrap_or_else(|| panic!("{model} / {strategy}"))["total_usd"]
        .as_f64()
        .unwrap()
}

fn write(dir: &Path, name: &str, text: &str) -> std::path::PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

#[test]
fn catalog_adds_a_model_to_the_built_in_ones_and_only_catalog_replaces_them() {
    let dir = tempfile::tempdir().unwrap();
    // A new model, a copy of Kimi K3 under another id: its family (`kimi`) is built-in.
    let block = model_block("kimi-k3")
        .replacen("id = \"kimi-k3\"", "id = \"my-kimi\"", 1)
        .replacen("name = \"Kimi K3\"", "name = \"My Kimi\"", 1);
    let f = write(dir.path(), "add.toml", &block);
    let all = json(&[
        os("--catalog"),
        f.as_os_str(),
        os("models"),
        os("--format"),
        os("json"),
    ]);
    let builtin_ids = ids(&json(&[os("models"), os("--format"), os("json")]));
    let mut want = builtin_ids.clone();
    want.push("my-kimi".into());
    assert_eq!(ids(&all), want);
    assert_eq!(all["overlaid_on"], "built-in models.toml");
    // The copy bills exactly as the original on the same scenario.
    let run = |catalog: &Path, model: &str| {
        json(&[
            os("--catalog"),
            catalog.as_os_str(),
            os("run"),
            os("examples/small-toolset.toml"),
            os("--model"),
            os(model),
            os("--format"),
            os("json"),
        ])
    };
    let mine = run(&f, "my-kimi");
    let theirs = run(&f, "kimi-k3");
    assert_eq!(
        total(&mine, "my-kimi", "automatic"),
        total(&theirs, "kimi-k3", "automatic")
    );
    // --only-catalog: nothing built-in is kept, so the file lacks the family and is refused.
    let out = pcsim()
        .args(["--only-catalog"])
        .arg(&f)
        .arg("models")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("add.toml") && err.contains("model `my-kimi`.family") && err.contains("kimi"),
        "{err}"
    );
    // With the family it loads, holding only that model.
    let fam = {
        let text = builtin();
        let at = text.find("id = \"kimi\"").unwrap();
        let start = text[..at].rfind("[[family]]").unwrap();
        let end = at + text[at..].find("\n[[").unwrap() + 1;
        text[start..end].to_string()
    };
    let g = write(dir.path(), "only.toml", &format!("{fam}\n{block}"));
    let only = json(&[
        os("--only-catalog"),
        g.as_os_str(),
        os("models"),
        os("--format"),
        os("json"),
    ]);
    assert_eq!(ids(&only), ["my-kimi"]);
    assert!(only["overlaid_on"].is_null());
    // Both flags at once: refused.
    pcsim()
        .arg("--catalog")
        .arg(&f)
        .arg("--only-catalog")
        .arg(&g)
        .arg("models")
        .assert()
        .code(2);
}

#[test]
fn catalog_replaces_a_built_in_model_by_id() {
    let dir = tempfile::tempdir().unwrap();
    let block = model_block("claude-opus-4.8");
    let price = {
        let at = block.find("input_usd_per_mtok = { value = ").unwrap() + 31;
        let end = at + block[at..].find(',').unwrap();
        block[at..end].parse::<f64>().unwrap()
    };
    let doubled = block.replacen(
        &format!("input_usd_per_mtok = {{ value = {price:?},"),
        &format!("input_usd_per_mtok = {{ value = {:?},", price * 2.0),
        1,
    );
    assert_ne!(doubled, block, "the price line was not found");
    let f = write(dir.path(), "opus.toml", &doubled);
    let args = |cat: Option<&Path>| {
        let mut a: Vec<std::ffi::OsString> = Vec::new();
        if let Some(c) = cat {
            a.push("--catalog".into());
            a.push(c.into());
        }
        for s in [
            "run",
            "examples/small-toolset.toml",
            "--model",
            "claude-opus-4.8",
            "--strategy",
            "none",
            "--format",
            "json",
        ] {
            a.push(s.into());
        }
        a
    };
    let a = args(None);
    let base = json(&a.iter().map(|s| s.as_os_str()).collect::<Vec<_>>());
    let a = args(Some(&f));
    let over = json(&a.iter().map(|s| s.as_os_str()).collect::<Vec<_>>());
    let prompt = base["results"][0]["totals"]["prompt_tokens"]
        .as_f64()
        .unwrap();
    // Without caching every prompt token is at the input price: doubling it adds prompt x price.
    let want = total(&base, "claude-opus-4.8", "none") + prompt * price / 1e6;
    let got = total(&over, "claude-opus-4.8", "none");
    assert!((got - want).abs() < 1e-9, "{got} != {want}");
    // The other built-in models are still there, in their place.
    let m = json(&[
        os("--catalog"),
        f.as_os_str(),
        os("models"),
        os("--format"),
        os("json"),
    ]);
    assert_eq!(
        ids(&m),
        ids(&json(&[os("models"), os("--format"), os("json")]))
    );
}

/// A whole catalog file given to `--catalog` gives, for every model it defines, what it gave when
/// `--catalog` replaced the catalog (now `--only-catalog`).
#[test]
fn a_full_catalog_overlaid_gives_what_it_gave_alone() {
    let dir = tempfile::tempdir().unwrap();
    // A full catalog with Kimi's read multiplier changed, so that it differs from the built-in one.
    let text = builtin();
    let kimi = model_block("kimi-k3");
    let changed = kimi.replacen(
        "read_multiplier = { value = 0.1,",
        "read_multiplier = { value = 0.2,",
        1,
    );
    assert_ne!(changed, kimi);
    let full = write(dir.path(), "full.toml", &text.replacen(&kimi, &changed, 1));
    let run = |flag: &str| {
        json(&[
            os(flag),
            full.as_os_str(),
            os("compare"),
            os("examples/tool-change.toml"),
            os("--model"),
            os("kimi-k3"),
            os("--model"),
            os("claude-opus-4.8"),
            os("--format"),
            os("json"),
        ])
    };
    let over = run("--catalog");
    let only = run("--only-catalog");
    assert_eq!(over["comparisons"], only["comparisons"]);
    let builtin_run = json(&[
        os("compare"),
        os("examples/tool-change.toml"),
        os("--model"),
        os("kimi-k3"),
        os("--format"),
        os("json"),
    ]);
    assert_ne!(
        builtin_run["comparisons"][0], over["comparisons"][0],
        "the changed read price must show"
    );
    // The report names the file and what it was laid on.
    let report = dir.path().join("r.md");
    pcsim()
        .current_dir(root())
        .arg("--catalog")
        .arg(&full)
        .args([
            "run",
            "examples/small-toolset.toml",
            "--model",
            "kimi-k3",
            "--report",
        ])
        .arg(&report)
        .assert()
        .success();
    let md = std::fs::read_to_string(&report).unwrap();
    assert!(
        md.contains("full.toml laid on built-in models.toml"),
        "{md}"
    );
}

/// Two calls on GPT-5.6 Sol (writes 1.25x, reads 0.1x of the input price) at `--price
/// gpt-5.6-sol=2,10`: no tools, system 2,000 tokens, first message 100, then 50 output and 100 user.
/// Call 1 sends 2,100 tokens, call 2 sends 2,100 + 50 + 100 = 2,250.
/// - none: (2,100 + 2,250) x 2e-6 + 2 x 50 x 10e-6 = 0.0087 + 0.001 = $0.0097;
/// - explicit:system+last: call 1 writes 2,100 at 1.25x: 0.00525, plus 0.0005 output; call 2 reads
///   2,100 at 0.1x: 0.00042, writes 150 at 1.25x: 0.000375, plus 0.0005: total $0.007045;
/// - with `--service-tier batch` (0.5x in and out): half of each.
const TWO_CALLS: &str = "[session]\ncalls = 2\nsystem_tokens = 2000\nfirst_user_tokens = 100\nuser_tokens = 100\ntool_result_tokens = 0\noutput_tokens = 50\ngap_seconds = 30\n";

#[test]
fn price_flag_bills_at_the_given_prices() {
    let dir = tempfile::tempdir().unwrap();
    let s = write(dir.path(), "two.toml", TWO_CALLS);
    let run = |extra: &[&str], model: &str| {
        let mut a: Vec<&std::ffi::OsStr> = vec![os("--on"), os("2026-12-03")];
        a.extend(extra.iter().map(|x| os(x)));
        a.extend([
            os("run"),
            s.as_os_str(),
            os("--model"),
            os(model),
            os("--strategy"),
            os("none"),
            os("--strategy"),
            os("explicit:system+last"),
            os("--format"),
            os("json"),
        ]);
        json(&a)
    };
    let close = |a: f64, b: f64| (a - b).abs() < 1e-12;
    let v = run(&["--price", "gpt-5.6-sol=2,10"], "gpt-5.6-sol");
    let none = total(&v, "gpt-5.6-sol", "none");
    let cached = total(&v, "gpt-5.6-sol", "explicit:system+last");
    assert!(close(none, 0.0097), "{none}");
    assert!(close(cached, 0.007045), "{cached}");
    // The alias gpt-5.6 copies gpt-5.6-sol, so it takes the same price.
    let v = run(&["--price", "gpt-5.6-sol=2,10"], "gpt-5.6");
    assert!(close(total(&v, "gpt-5.6", "none"), 0.0097));
    // A service tier scales the given prices as it scales list prices.
    let v = run(
        &["--price", "gpt-5.6-sol=2,10", "--service-tier", "batch"],
        "gpt-5.6-sol",
    );
    assert!(close(total(&v, "gpt-5.6-sol", "none"), 0.0097 / 2.0));
    assert!(close(
        total(&v, "gpt-5.6-sol", "explicit:system+last"),
        0.007045 / 2.0
    ));
    // Repeatable: one price per model; the other models keep their list prices.
    let both = json(&[
        os("--on"),
        os("2026-12-03"),
        os("--price"),
        os("gpt-5.6-sol=2,10"),
        os("--price"),
        os("kimi-k3=1,4"),
        os("models"),
        os("--format"),
        os("json"),
    ]);
    let m = |id: &str| {
        both["models"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["id"] == id)
            .unwrap()
            .clone()
    };
    assert_eq!(m("kimi-k3")["input_usd_per_mtok"]["value"], 1.0);
    assert_eq!(m("kimi-k3")["output_usd_per_mtok"]["value"], 4.0);
    assert_eq!(
        m("kimi-k3")["input_usd_per_mtok"]["source"],
        "command line --price kimi-k3=1,4"
    );
    let list = json(&[
        os("--on"),
        os("2026-12-03"),
        os("models"),
        os("--format"),
        os("json"),
    ]);
    let opus = |v: &Value| {
        v["models"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["id"] == "claude-opus-4.8")
            .unwrap()["input_usd_per_mtok"]
            .clone()
    };
    assert_eq!(opus(&both), opus(&list));
}

#[test]
fn price_flag_errors_name_the_flag_and_what_is_wrong() {
    for (arg, want) in [
        (
            "kimi-k4=1,2",
            "has no model `kimi-k4`; did you mean `kimi-k3`?",
        ),
        // An id outside the catalog: where its caching rules go (issue 27).
        (
            "claude-3-opus-20240229=15,75",
            "needs a [[model]] entry in --catalog FILE first",
        ),
        ("kimi-k3=1", "expected two prices IN,OUT"),
        ("kimi-k3:1,2", "expected MODEL=IN,OUT"),
        ("kimi-k3=one,2", "input price `one` is not a number"),
        ("kimi-k3=0,2", "input price 0 must be above 0"),
        ("kimi-k3=1,-2", "output price -2 must be 0 or more"),
        ("=1,2", "no model id"),
    ] {
        let out = pcsim()
            .args(["--price", arg, "run", "--model", "kimi-k3"])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{arg}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("--price") && err.contains(arg) && err.contains(want),
            "{arg}: {err}"
        );
    }
    let out = pcsim()
        .args(["--price", "kimi-k3=1,2", "--price", "kimi-k3=3,4", "models"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("priced twice"));
}

/// The report's price-sources table says where a command-line price came from.
#[test]
fn a_report_names_the_command_line_price() {
    let dir = tempfile::tempdir().unwrap();
    let report = dir.path().join("r.html");
    pcsim()
        .current_dir(root())
        .args([
            "--price",
            "kimi-k3=1.5,6",
            "compare",
            "examples/small-toolset.toml",
            "--model",
            "kimi-k3",
            "--report",
        ])
        .arg(&report)
        .assert()
        .success();
    let html = std::fs::read_to_string(&report).unwrap();
    let at = html
        .find("command line --price kimi-k3=1.5,6")
        .expect("the price source in the report");
    // The row carries the given value.
    let row_start = html[..at].rfind("<tr>").unwrap();
    let row = &html[row_start..at];
    assert!(row.contains("kimi-k3") && row.contains(">1.5<"), "{row}");
}

/// A prompt above a model's `context_window` is warned about on standard error, in the JSON and
/// in the report, naming the model, the call and the sizes; a model with a larger window is not.
#[test]
fn a_prompt_above_the_context_window_is_warned_about() {
    let dir = tempfile::tempdir().unwrap();
    // Prompts grow by 30,050 tokens a call from 150,000: above Haiku 4.5's 200,000 from call 3,
    // far below Opus 4.8's 1,000,000.
    let s = write(
        dir.path(),
        "big.toml",
        "[session]\ncalls = 4\nfirst_user_tokens = 150000\nuser_tokens = 30000\ntool_result_tokens = 0\noutput_tokens = 50\n",
    );
    let window = |id: &str| {
        let m = json(&[os("models"), os("--format"), os("json")]);
        m["models"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["id"] == id)
            .unwrap()["context_window"]["value"]
            .as_u64()
            .unwrap()
    };
    let haiku_window = window("claude-haiku-4.5");
    let report = dir.path().join("r.md");
    let out = pcsim()
        .args(["run"])
        .arg(&s)
        .args([
            "--model",
            "claude-haiku-4.5",
            "--model",
            "claude-opus-4.8",
            "--strategy",
            "none",
            "--format",
            "json",
            "--report",
        ])
        .arg(&report)
        .output()
        .unwrap();
    assert!(out.status.success());
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let calls = v["results"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["model"] == "claude-haiku-4.5")
        .unwrap()["calls"]
        .as_array()
        .unwrap()
        .clone();
    let prompts: Vec<u64> = calls
        .iter()
        .map(|c| c["prompt_tokens"].as_u64().unwrap())
        .collect();
    let first = prompts.iter().position(|&p| p > haiku_window).unwrap();
    let over = prompts.iter().filter(|&&p| p > haiku_window).count();
    assert!(first > 0 && over >= 1, "{prompts:?}");
    let w = v["context_warnings"].as_array().unwrap();
    assert_eq!(w.len(), 1, "{w:?}");
    assert_eq!(w[0]["model"], "claude-haiku-4.5");
    assert_eq!(w[0]["context_window"], haiku_window);
    assert_eq!(w[0]["first_call"], first as u64 + 1);
    assert_eq!(w[0]["first_prompt_tokens"], prompts[first]);
    assert_eq!(w[0]["calls_over"], over as u64);
    assert_eq!(w[0]["max_prompt_tokens"], *prompts.iter().max().unwrap());
    let err = String::from_utf8_lossy(&out.stderr);
    let line = format!(
        "warning: claude-haiku-4.5: call {} of session 1 sends {} prompt tokens, above the model's context window of {haiku_window} tokens",
        first + 1,
        prompts[first]
    );
    assert!(err.contains(&line), "{err}");
    assert!(!err.contains("claude-opus-4.8:"), "{err}");
    let md = std::fs::read_to_string(&report).unwrap();
    assert!(
        md.contains(&line["warning: ".len()..]),
        "report lacks the warning"
    );
    // Within every window: no warning and no key.
    let small = json(&[
        os("run"),
        os("examples/small-toolset.toml"),
        os("--format"),
        os("json"),
    ]);
    assert!(small.get("context_warnings").is_none());
}
