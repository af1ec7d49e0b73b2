//! `pcsim bench`'s table: what was measured, and the machine's load average beside it.

use std::fmt::Write as _;

use crate::report::table::TextTable;
use crate::sim::bench::BenchReport;

/// The bench report as text: a header naming the workload, the replayed input and the load
/// average, then one row per measure.
pub(crate) fn bench_text(r: &BenchReport) -> String {
    let mut out = String::new();
    let mut t = TextTable::new(&["measure", "value"], &[false, true]);
    let m = |x: f64| format!("{:.2} M", x / 1e6);
    t.row(vec![
        "simulated calls/s, 1 thread (6 models per pass)".into(),
        m(r.calls_per_second_1_thread),
    ]);
    t.row(vec![
        "  same, each model alone in turn".into(),
        m(r.calls_per_second_1_thread_models_apart),
    ]);
    if let Some(x) = r.calls_per_cpu_second_1_thread {
        t.row(vec![
            "simulated calls per CPU-second, 1 thread".into(),
            m(x),
        ]);
    }
    t.row(vec![
        "  same, every amount fixed at its mean (no draws)".into(),
        m(r.calls_per_cpu_second_1_thread_fixed_amounts),
    ]);
    t.row(vec![
        format!("simulated calls/s, {} threads", r.threads),
        m(r.calls_per_second_all_threads),
    ]);
    if let Some(x) = r.calls_per_cpu_second_all_threads {
        t.row(vec![
            "simulated calls per CPU-second, all threads".into(),
            m(x),
        ]);
    }
    if let Some(x) = r.cpu_share_1_thread {
        t.row(vec![
            "CPU share of the 1-thread run".into(),
            format!("{:.0}%", x * 100.0),
        ]);
    }
    t.row(vec![
        format!(
            "Monte Carlo, 1 session x 6 models x {} runs",
            r.montecarlo_runs
        ),
        format!("{:.3} s", r.montecarlo_seconds),
    ]);
    t.row(vec![
        "Monte Carlo, scaled to 10,000 runs".into(),
        format!("{:.3} s", r.montecarlo_10k_seconds),
    ]);
    for s in &r.per_model_1_thread {
        t.row(vec![
            format!("  {} alone, calls/s, 1 thread", s.model),
            m(s.calls_per_second),
        ]);
    }
    let ms = |x: Option<f64>| x.map_or("-".to_string(), |x| format!("{x:.1} ms"));
    t.row(vec![
        "tokenizer load (o200k_base, before the first count), CPU".into(),
        ms(r.tokenizer_load_cpu_ms),
    ]);
    t.row(vec!["  same, wall".into(), ms(r.tokenizer_load_ms)]);
    for (p, what) in [
        (&r.replay, "replay"),
        (
            &r.replay_compact,
            "replay of pcsim's own log (run --usage-log)",
        ),
    ] {
        let Some(p) = p else { continue };
        let mbs = |x: f64| format!("{x:.1} MB");
        if let Some(x) = p.mb_per_cpu_second {
            t.row(vec![
                format!("{what}, MB of log per CPU-second, 1 thread"),
                mbs(x),
            ]);
        }
        t.row(vec!["  same, per second".into(), mbs(p.mb_per_second)]);
        if let Some(x) = p.typed_parse_mb_per_cpu_second {
            t.row(vec![
                "  typed serde_json parse of the same lines, MB per CPU-second".into(),
                mbs(x),
            ]);
        }
        t.row(vec![
            "  replay time / typed parse time".into(),
            format!("{:.1}x", p.times_typed_parse),
        ]);
    }
    let load = |l: Option<[f64; 3]>| {
        l.map_or("unknown".to_string(), |[a, b, c]| {
            format!("{a:.2} {b:.2} {c:.2}")
        })
    };
    let _ = writeln!(
        out,
        "workload: {} (release build figures only mean something)",
        r.workload
    );
    if let Some(p) = &r.replay {
        let _ = writeln!(out, "replay: {}, {} bytes a pass", p.input, p.bytes);
    }
    if let Some(p) = &r.replay_compact {
        let _ = writeln!(
            out,
            "replay of pcsim's own log: {}, {} bytes a pass",
            p.input, p.bytes
        );
    }
    let _ = writeln!(
        out,
        "load average (1, 5, 15 min): {} before, {} after; {} threads",
        load(r.load_average_before),
        load(r.load_average_after),
        r.threads
    );
    out.push_str(&t.render());
    out
}
