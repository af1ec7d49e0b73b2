use super::*;

#[test]
fn every_cause_has_a_summary_phrase() {
    for c in CAUSES {
        assert!(!summary::phrase(c, "").is_empty(), "{c}");
    }
}
