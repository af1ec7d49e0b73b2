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
