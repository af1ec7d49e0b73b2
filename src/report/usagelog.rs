//! A simulated run written as a usage log (`run --usage-log FILE`): one JSON Lines record per call in
//! the gateway-log form `replay` and `fit` read (`sent_at`, `session_id`, `model`, Anthropic-style
//! `usage`), so pcsim's own histories can be replayed and fitted like a real one.

use serde_json::json;

use crate::input::usagelog::utc_date;
use crate::sim::simulate::SimResult;

/// Unix time of the first simulated call: 2026-01-01T00:00:00Z (a fixed day, so logs repeat).
pub(crate) const LOG_EPOCH_UNIX: f64 = 1_767_225_600.0;

/// `YYYY-MM-DDTHH:MM:SS.mmmZ` of Unix seconds (milliseconds, the simulator's resolution).
pub(crate) fn rfc3339_ms(unix: f64) -> String {
    let ms = (unix * 1000.0).round() as i64;
    let day_ms = ms.rem_euclid(86_400_000);
    let (h, rest) = (day_ms / 3_600_000, day_ms % 3_600_000);
    let (m, rest) = (rest / 60_000, rest % 60_000);
    let (s, milli) = (rest / 1000, rest % 1000);
    format!(
        "{}T{h:02}:{m:02}:{s:02}.{milli:03}Z",
        utc_date(ms.div_euclid(1000) as f64)
    )
}

/// The calls of `result` (run 0), in time order, as usage-log lines: the cache buckets pcsim
/// computed, under `input_tokens` (uncached), `cache_creation_input_tokens` and
/// `cache_read_input_tokens`, so the log's prompt of each call is pcsim's prompt.
pub(crate) fn usage_log_jsonl(result: &SimResult) -> String {
    let mut out = String::new();
    for c in &result.calls {
        let v = json!({
            "sent_at": rfc3339_ms(LOG_EPOCH_UNIX + c.time_s),
            "session_id": format!("session-{}", c.session),
            "model": result.model,
            "usage": {
                "input_tokens": c.uncached_tokens,
                "cache_creation_input_tokens": c.cache_write_tokens,
                "cache_read_input_tokens": c.cache_read_tokens,
                "output_tokens": c.output_tokens,
            }
        });
        out.push_str(&v.to_string());
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::input::usagelog::parse_rfc3339;

    #[test]
    fn times_round_trip_through_the_log_parser() {
        for t in [0.0, 12.345, 86_399.999, 3.0 * 86_400.0 + 61.5] {
            let s = rfc3339_ms(LOG_EPOCH_UNIX + t);
            let back = parse_rfc3339(&s).unwrap() - LOG_EPOCH_UNIX;
            assert!((back - t).abs() < 5e-4, "{t} -> {s} -> {back}");
        }
        assert_eq!(rfc3339_ms(LOG_EPOCH_UNIX), "2026-01-01T00:00:00.000Z");
    }
}
