use super::*;
use crate::input::usagelog::{parse_log, parse_rfc3339};
use crate::model::catalog::Catalog;
use crate::model::strategy::Strategy;

#[test]
fn rfc3339() {
    assert_eq!(parse_rfc3339("1970-01-01T00:00:00Z"), Some(0.0));
    assert_eq!(parse_rfc3339("2000-03-01T00:00:00Z"), Some(951_868_800.0));
    assert_eq!(
        parse_rfc3339("2026-12-02T10:00:01.500+01:00"),
        parse_rfc3339("2026-12-02T09:00:01.5Z")
    );
    assert_eq!(parse_rfc3339("yesterday"), None);
}

#[test]
fn reads_each_usage_shape() {
    let text = r#"[
      {"usage":{"input_tokens":10,"cache_creation_input_tokens":100,"cache_read_input_tokens":1000,"output_tokens":5,
                "cache_creation":{"ephemeral_5m_input_tokens":40,"ephemeral_1h_input_tokens":60}}},
      {"created":1700000000,"usage":{"prompt_tokens":2000,"completion_tokens":7,"prompt_tokens_details":{"cached_tokens":1536}}},
      {"usage":{"input_tokens":3000,"output_tokens":9,"input_tokens_details":{"cached_tokens":2048},"output_tokens_details":{"reasoning_tokens":4}}},
      {"input_tokens":1,"output_tokens":2,"brand_new_counter":3},
      {"type":"user","message":{"role":"user","content":"hi"}}
    ]"#;
    let log = parse_log(text, "t.json").unwrap();
    let got: Vec<_> = log
        .calls
        .iter()
        .map(|c| {
            (
                c.format,
                c.prompt_tokens,
                c.uncached_tokens,
                c.cache_write_5m_tokens,
                c.cache_write_1h_tokens,
                c.cache_read_tokens,
                c.output_tokens,
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            ("anthropic", 1110, 10, 40, 60, 1000, 5),
            ("openai-chat", 2000, 464, 0, 0, 1536, 7),
            ("openai-responses", 3000, 952, 0, 0, 2048, 9),
            ("anthropic", 1, 1, 0, 0, 0, 2),
        ]
    );
    assert_eq!(log.calls[1].unix_time, Some(1.7e9));
    assert_eq!(log.unknown_fields["brand_new_counter"], 1);
    assert_eq!(log.records_without_usage, 1);
}

#[test]
fn bad_rows_are_counted_and_named_never_fatal() {
    let log = parse_log(
        "{\"usage\":{\"input_tokens\":-3}}\n{\"x\":1}\n{oops\n{\"usage\":{\"input_tokens\":7}}\n",
        "l.jsonl",
    )
    .unwrap();
    assert_eq!(log.calls.len(), 1);
    assert_eq!(log.unreadable, 2);
    let e = &log.unreadable_examples;
    assert!(
        e[0].contains("l.jsonl")
            && e[0].contains("line 1: usage.input_tokens")
            && e[0].contains("-3"),
        "{e:?}"
    );
    assert!(
        e[1].contains("line 3") && e[1].contains("not valid JSON"),
        "{e:?}"
    );
    let log = parse_log(
        "{\"usage\":{\"input_tokens\":1}}\n{\"usage\":{\"inp",
        "l.jsonl",
    )
    .unwrap();
    assert!(log.truncated_last_line);
    assert_eq!(log.unreadable, 0);
    let log = parse_log(
        "{\"usage\":{\"input_tokens\":1,\"cache_creation_input_tokens\":5,\"cache_creation\":{\"ephemeral_5m_input_tokens\":1}}}\n{\"usage\":{\"input_tokens\":1}}\n",
        "x",
    )
    .unwrap();
    assert!(
        log.unreadable_examples[0].contains("do not add up"),
        "{log:?}"
    );
    // Nothing readable at all: an error that says why, with the rows it could not read.
    let e = parse_log("{\"usage\":{\"input_tokens\":\"ten\"}}\n", "b.jsonl")
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("no usage record") && e.contains("\"ten\""),
        "{e}"
    );
}

#[test]
fn matches_api_model_names() {
    let c = Catalog::embedded().unwrap();
    assert_eq!(
        match_model(&c, "claude-opus-4-8-20260501").unwrap().id,
        "claude-opus-4.8"
    );
    assert_eq!(match_model(&c, "gpt-5.6").unwrap().id, "gpt-5.6");
    assert!(match_model(&c, "llama-3").is_none());
}

#[test]
fn growing_conversation_reads_the_previous_prompt() {
    let c = Catalog::embedded().unwrap();
    let m = c.model("claude-opus-4.8").unwrap();
    let line = |p: u64, t: &str| {
        format!(r#"{{"timestamp":"{t}","input_tokens":{p},"output_tokens":100}}"#)
    };
    let text = [
        line(5000, "2026-01-01T00:00:00Z"),
        line(6000, "2026-01-01T00:01:00Z"),
        line(6500, "2026-01-01T00:20:00Z"), // past the 5-minute lifetime
        line(3000, "2026-01-01T00:21:00Z"), // shorter: a new conversation
    ]
    .join("\n");
    let log = parse_log(&text, "s.jsonl").unwrap();
    let r = replay(
        &log,
        m,
        &Strategy::parse("explicit:last").unwrap(),
        &ReplayOptions::default(),
    )
    .unwrap();
    let p: Vec<_> = r
        .calls
        .iter()
        .map(|c| {
            (
                c.time_s,
                c.predicted.cache_read_tokens,
                c.predicted.cache_write_tokens,
                c.predicted.uncached_tokens,
            )
        })
        .collect();
    assert_eq!(
        p,
        [
            (0.0, 0, 5000, 0),
            (60.0, 5000, 1000, 0),
            (1200.0, 0, 6500, 0),
            (1260.0, 0, 3000, 0)
        ]
    );
    // With a 2,000-token fixed prefix and the tools breakpoint, the restart still reads the prefix.
    let opts = ReplayOptions {
        prefix_tokens: 2000,
        ..Default::default()
    };
    let r = replay(
        &log,
        m,
        &Strategy::parse("explicit:tools+last").unwrap(),
        &opts,
    )
    .unwrap();
    assert_eq!(r.calls[3].predicted.cache_read_tokens, 2000);
    assert_eq!(r.calls[3].predicted.cache_write_tokens, 1000);
    // Logged buckets here are all uncached: logged dollars are the plain input and output prices.
    let want = m.input_usd(20_500.0) + m.output_usd(400.0);
    assert!((r.logged.cost_usd - want).abs() < 1e-12);
    assert!((uncached_usd(m, &log) - want).abs() < 1e-12);
}

/// A log of one conversation of `calls` calls 30 s apart, its prompt growing by 300 tokens a call
/// from `first` tokens.
fn one_growing_conversation(calls: u64, first: u64) -> crate::input::usagelog::UsageLog {
    let text: Vec<String> = (0..calls)
        .map(|i| {
            format!(
                r#"{{"timestamp":{},"input_tokens":{},"output_tokens":100}}"#,
                1_767_225_600 + 30 * i,
                first + 300 * i
            )
        })
        .collect();
    parse_log(&text.join("\n"), "conversation.jsonl").unwrap()
}

/// The automatic-caching replay walk is linear in a conversation's length: a conversation of 2n
/// calls visits about twice the boundaries of one of n calls (a walk over every earlier call, as
/// before the conversation lease, visits about four times as many). Counted, not timed.
#[test]
fn automatic_replay_walk_is_linear_in_calls() {
    use crate::sim::engine::cache::walk_steps;
    let c = Catalog::embedded().unwrap();
    let steps = |id: &str, n: u64| {
        let log = one_growing_conversation(n, 2000);
        let before = walk_steps::get();
        let r = replay(
            &log,
            c.model(id).unwrap(),
            &Strategy::parse("automatic").unwrap(),
            &ReplayOptions::default(),
        )
        .unwrap();
        let read = r.calls.iter().filter(|c| c.predicted.cache_read_tokens > 0);
        // One conversation that reads its previous prompt on (almost) every call: the case that
        // made the old walk quadratic.
        assert_eq!(r.conversations, 1, "{id}");
        assert!(read.count() as u64 >= n - 2, "{id}: too few reads");
        walk_steps::get() - before
    };
    for id in ["gpt-5.2", "deepseek-v3.2", "glm-5.2", "kimi-k3"] {
        let (one, two) = (steps(id, 2000), steps(id, 4000));
        assert!(
            one >= 2000,
            "{id}: {one} steps for 2,000 calls: the counter is not reached"
        );
        assert!(
            two * 10 <= one * 25,
            "{id}: {one} walk steps for 2,000 calls but {two} for 4,000: not linear"
        );
    }
}

/// The random stream seeded on its first draw is the one seeded up front from the log's content:
/// on a best-effort model (hits at 0.9) the replay with no seed bills as with
/// `seed = content_seed(calls)`, and another seed bills differently (so the stream is drawn).
#[test]
fn the_stream_seeded_on_first_draw_is_the_content_seeded_one() {
    let c = Catalog::embedded().unwrap();
    let m = c.model("grok-4.7").unwrap();
    let rules = m.cache.implicit.as_ref().unwrap();
    assert!(rules.hit_probability.as_ref().unwrap().value < 1.0);
    let log = one_growing_conversation(400, 4000);
    let strategy = Strategy::parse("implicit").unwrap();
    let reads = |seed: Option<u64>| {
        let opts = ReplayOptions {
            seed,
            ..Default::default()
        };
        let r = replay(&log, m, &strategy, &opts).unwrap();
        r.calls
            .iter()
            .map(|c| c.predicted.cache_read_tokens)
            .collect::<Vec<_>>()
    };
    let unseeded = reads(None);
    assert_eq!(unseeded, reads(Some(content_seed(&log.calls))));
    assert_ne!(unseeded, reads(Some(content_seed(&log.calls) ^ 1)));
    assert!(unseeded.contains(&0) && unseeded.iter().any(|&r| r > 0));
}
