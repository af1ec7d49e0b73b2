//! Caching strategies: what the caller asks for (`none`, `cached`, `automatic`, `implicit`,
//! `explicit:tools+system+last`, with TTL tiers such as `tools@1h` and a tool-change option
//! `/tool-changes=append`), and their resolution against a model's rules.

use std::fmt;

use crate::error::{Error, Result};
use crate::model::catalog::{CacheRules, ModelSpec, ToolChangeRule};

/// Where an explicit breakpoint sits in the prompt.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Anchor {
    /// After the last tool definition: caches the tool block.
    Tools,
    /// After the system prompt.
    System,
    /// After the newest message; moves forward every call.
    Last,
}

impl Anchor {
    /// Spelling in strategy strings.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Anchor::Tools => "tools",
            Anchor::System => "system",
            Anchor::Last => "last",
        }
    }
}

/// One requested breakpoint: an anchor and optionally a TTL tier.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BreakpointSpec {
    /// Where it goes.
    pub anchor: Anchor,
    /// Tier name (`5m`, `1h`, ...); the model's default tier when absent.
    pub tier: Option<String>,
}

/// The caching mode of a strategy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// No caching: every prompt token is billed at the base input rate.
    None,
    /// Breakpoints chosen by the caller.
    Explicit,
    /// Provider-side prefix caching in blocks, guaranteed while alive.
    Automatic,
    /// Provider-side best-effort caching.
    Implicit,
}

impl Mode {
    /// Spelling in strategy strings.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Mode::None => "none",
            Mode::Explicit => "explicit",
            Mode::Automatic => "automatic",
            Mode::Implicit => "implicit",
        }
    }
}

/// A strategy as the user wrote it, not yet checked against a model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Strategy {
    /// `None` means "the model's own default" (`cached`).
    pub mode: Option<Mode>,
    /// Explicit breakpoints, in prompt order.
    pub breakpoints: Vec<BreakpointSpec>,
    /// Tool-change behaviour to request instead of the model's default.
    pub tool_changes: Option<ToolChangeRule>,
}

impl Strategy {
    /// No caching.
    pub fn none() -> Self {
        Strategy {
            mode: Some(Mode::None),
            breakpoints: vec![],
            tool_changes: None,
        }
    }

    /// Parses `none`, `cached`, `automatic`, `implicit`, `explicit:ANCHOR[@TIER]+...`, each optionally
    /// followed by `/tool-changes=RULE`.
    pub fn parse(text: &str) -> Result<Self> {
        let err = |problem: String| Error::Strategy {
            strategy: text.to_string(),
            problem,
        };
        let (body, option) = match text.split_once('/') {
            Some((b, o)) => (b.trim(), Some(o.trim())),
            None => (text.trim(), None),
        };
        let tool_changes = match option {
            None => None,
            Some(o) => {
                let rule = o
                    .strip_prefix("tool-changes=")
                    .ok_or_else(|| err(format!("unknown option `{o}`; the only option is `tool-changes=invalidate|preserve_prefix|append`")))?;
                Some(parse_rule(rule).ok_or_else(|| err(format!("unknown tool-change rule `{rule}`; use invalidate, preserve_prefix or append")))?)
            }
        };
        let (mode, breakpoints) = match body {
            "none" => (Some(Mode::None), vec![]),
            "cached" => (None, vec![]),
            "automatic" => (Some(Mode::Automatic), vec![]),
            "implicit" => (Some(Mode::Implicit), vec![]),
            other if other.starts_with("automatic@") || other.starts_with("implicit@") => {
                // A TTL tier for provider-side caching, e.g. `automatic@24h`.
                let (mode, tier) = other.split_once('@').unwrap_or((other, ""));
                if tier.is_empty() {
                    return Err(err("a tier name must follow `@`".into()));
                }
                let mode = if mode == "automatic" {
                    Mode::Automatic
                } else {
                    Mode::Implicit
                };
                (
                    Some(mode),
                    vec![BreakpointSpec {
                        anchor: Anchor::Last,
                        tier: Some(tier.to_string()),
                    }],
                )
            }
            other => {
                let anchors = other.strip_prefix("explicit:").ok_or_else(|| {
                    let hint = crate::base::text::closest(
                        other,
                        ["none", "cached", "automatic", "implicit", "explicit:tools+system+last"],
                    )
                    .map(|c| format!("; did you mean `{c}`?"))
                    .unwrap_or_default();
                    err(format!("expected none, cached, automatic, implicit or explicit:ANCHORS (anchors: tools, system, last; e.g. explicit:tools@1h+system+last){hint}"))
                })?;
                let mut bps = Vec::new();
                for part in anchors.split('+') {
                    let (a, tier) = match part.split_once('@') {
                        Some((a, t)) => (a, Some(t.to_string())),
                        None => (part, None),
                    };
                    let anchor = match a {
                        "tools" => Anchor::Tools,
                        "system" => Anchor::System,
                        "last" => Anchor::Last,
                        _ => {
                            let hint = crate::base::text::closest(a, ["tools", "system", "last"])
                                .map(|c| format!(" (did you mean `{c}`?)"))
                                .unwrap_or_default();
                            return Err(err(format!(
                                "unknown anchor `{a}`{hint}; use tools, system or last"
                            )));
                        }
                    };
                    if bps.iter().any(|b: &BreakpointSpec| b.anchor == anchor) {
                        return Err(err(format!("anchor `{a}` given twice")));
                    }
                    bps.push(BreakpointSpec { anchor, tier });
                }
                if bps.windows(2).any(|w| w[0].anchor > w[1].anchor) {
                    return Err(err(
                        "anchors must be in prompt order: tools, system, last".into()
                    ));
                }
                (Some(Mode::Explicit), bps)
            }
        };
        if tool_changes.is_some() && mode == Some(Mode::None) {
            return Err(err(
                "`none` caches nothing, so a tool-change rule does not apply".into(),
            ));
        }
        Ok(Strategy {
            mode,
            breakpoints,
            tool_changes,
        })
    }

    /// Checks the strategy against a model's rules and fixes every detail of it.
    // Over 120 lines: fixes every detail of a strategy on a model (mode, rules, tool-change rule,
    // breakpoints, tier), each refusal naming the strategy; the details depend on each other in
    // this order.
    pub fn resolve(&self, model: &ModelSpec) -> Result<ResolvedStrategy> {
        let concrete = match self.mode {
            Some(_) => self.clone(),
            None => {
                let mut s = Strategy::parse(&model.default_strategy)?;
                if s.mode.is_none() {
                    return Err(Error::Strategy {
                        strategy: model.default_strategy.clone(),
                        problem: "a model's default strategy cannot be `cached` itself".into(),
                    });
                }
                if self.tool_changes.is_some() {
                    s.tool_changes = self.tool_changes;
                }
                s
            }
        };
        let mode = concrete.mode.unwrap_or(Mode::None);
        let name = concrete.to_string();
        let err = |problem: String| Error::Strategy {
            strategy: name.clone(),
            problem: format!("{problem} (model `{}`)", model.id),
        };
        let rules: Option<&CacheRules> = match mode {
            Mode::None => None,
            Mode::Explicit => Some(
                model
                    .cache
                    .explicit
                    .as_ref()
                    .ok_or_else(|| err("the model offers no explicit caching".into()))?,
            ),
            Mode::Automatic => Some(
                model
                    .cache
                    .automatic
                    .as_ref()
                    .ok_or_else(|| err("the model offers no automatic caching".into()))?,
            ),
            Mode::Implicit => Some(
                model
                    .cache
                    .implicit
                    .as_ref()
                    .ok_or_else(|| err("the model offers no implicit caching".into()))?,
            ),
        };
        let Some(rules) = rules else {
            return Ok(ResolvedStrategy {
                name,
                mode,
                rules: None,
                breakpoints: vec![],
                tool_change: ToolChangeRule::Invalidate,
                default_tier: None,
            });
        };
        let tool_change = match concrete.tool_changes {
            None => rules.tool_change.value,
            Some(r) if rules.supports_tool_change(r) => r,
            Some(r) => {
                return Err(err(format!(
                    "tool-change rule `{}` is not offered",
                    r.as_str()
                )))
            }
        };
        let mut breakpoints = Vec::new();
        if mode == Mode::Explicit {
            let max = rules.max_breakpoints.as_ref().map_or(u32::MAX, |m| m.value) as usize;
            if concrete.breakpoints.len() > max {
                return Err(err(format!(
                    "{} breakpoints requested, at most {max} allowed",
                    concrete.breakpoints.len()
                )));
            }
            for bp in &concrete.breakpoints {
                if let Some(allowed) = &rules.allowed_anchors {
                    if !allowed.value.iter().any(|a| a == bp.anchor.as_str()) {
                        return Err(err(format!(
                            "a breakpoint at `{}` is not allowed; allowed: {} ({})",
                            bp.anchor.as_str(),
                            allowed.value.join(", "),
                            allowed.source
                        )));
                    }
                }
                let (tier_name, tier) = rules.tier(bp.tier.as_deref()).ok_or_else(|| {
                    err(format!(
                        "TTL tier `{}` is not offered (tiers: {})",
                        bp.tier.as_deref().unwrap_or(""),
                        rules.tiers.keys().cloned().collect::<Vec<_>>().join(", ")
                    ))
                })?;
                breakpoints.push(ResolvedBreakpoint {
                    anchor: bp.anchor,
                    tier: tier_name.to_string(),
                    ttl_ms: seconds_to_ms(tier.ttl_seconds.value),
                    write_multiplier: tier.write_multiplier.value,
                });
            }
            // Longer-lived entries must come first (a 1 h entry after a 5 min one is refused by the API).
            if breakpoints.windows(2).any(|w| w[0].ttl_ms < w[1].ttl_ms) {
                return Err(err(
                    "breakpoints with a longer TTL must come before those with a shorter one"
                        .into(),
                ));
            }
        }
        let wanted = if mode == Mode::Explicit {
            None
        } else {
            concrete.breakpoints.first().and_then(|b| b.tier.as_deref())
        };
        let (tier_name, tier) = rules.tier(wanted).ok_or_else(|| {
            err(format!(
                "TTL tier `{}` is not offered (tiers: {})",
                wanted.unwrap_or(&rules.default_tier),
                rules.tiers.keys().cloned().collect::<Vec<_>>().join(", ")
            ))
        })?;
        Ok(ResolvedStrategy {
            name,
            mode,
            rules: Some(rules.clone()),
            breakpoints,
            tool_change,
            default_tier: Some(ResolvedBreakpoint {
                anchor: Anchor::Last,
                tier: tier_name.to_string(),
                ttl_ms: seconds_to_ms(tier.ttl_seconds.value),
                write_multiplier: tier.write_multiplier.value,
            }),
        })
    }
}

fn parse_rule(s: &str) -> Option<ToolChangeRule> {
    match s {
        "invalidate" => Some(ToolChangeRule::Invalidate),
        "preserve_prefix" | "preserve-prefix" => Some(ToolChangeRule::PreservePrefix),
        "append" => Some(ToolChangeRule::Append),
        _ => None,
    }
}

/// Seconds to whole milliseconds (the engine's clock unit).
pub(crate) fn seconds_to_ms(s: f64) -> u64 {
    crate::base::quantity::round_u64(s * 1000.0)
}

impl fmt::Display for Strategy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.mode {
            None => write!(f, "cached")?,
            Some(Mode::Explicit) => {
                write!(f, "explicit:")?;
                for (i, b) in self.breakpoints.iter().enumerate() {
                    if i > 0 {
                        write!(f, "+")?;
                    }
                    write!(f, "{}", b.anchor.as_str())?;
                    if let Some(t) = &b.tier {
                        write!(f, "@{t}")?;
                    }
                }
            }
            Some(m) => {
                write!(f, "{}", m.as_str())?;
                if let Some(t) = self.breakpoints.first().and_then(|b| b.tier.as_ref()) {
                    write!(f, "@{t}")?;
                }
            }
        }
        if let Some(r) = self.tool_changes {
            write!(f, "/tool-changes={}", r.as_str())?;
        }
        Ok(())
    }
}

/// A breakpoint with its tier's numbers filled in.
#[derive(Debug, Clone, PartialEq)]
pub struct ResolvedBreakpoint {
    /// Where it goes.
    pub anchor: Anchor,
    /// Tier name.
    pub tier: String,
    /// Time to live in milliseconds.
    pub ttl_ms: u64,
    /// Write price relative to base input.
    pub write_multiplier: f64,
}

/// A strategy checked against one model: everything the engine needs.
#[derive(Debug, Clone)]
pub struct ResolvedStrategy {
    /// Canonical name, reported as `strategy` in results.
    pub name: String,
    /// The mode.
    pub mode: Mode,
    /// The model's rules for the mode (absent for `none`).
    pub rules: Option<CacheRules>,
    /// Explicit breakpoints in prompt order.
    pub breakpoints: Vec<ResolvedBreakpoint>,
    /// What a tool-list change does.
    pub tool_change: ToolChangeRule,
    /// The tier used by automatic and implicit writes.
    pub default_tier: Option<ResolvedBreakpoint>,
}

/// Every caching strategy `model` allows, as candidates: for explicit caching each non-empty set of
/// anchors (tools, system, last, in prompt order) within `max_breakpoints`, with every assignment of
/// the TTL tiers in which a longer-lived breakpoint never follows a shorter-lived one (the API's
/// rule); automatic and implicit caching at each of their tiers. The default tier is written
/// without `@`, as the other reports name it. Strategies the model refuses are left out.
pub fn placements(model: &ModelSpec) -> Vec<Strategy> {
    let mut out = Vec::new();
    let anchors = [Anchor::Tools, Anchor::System, Anchor::Last];
    if let Some(rules) = &model.cache.explicit {
        let max = rules
            .max_breakpoints
            .as_ref()
            .map_or(3, |m| m.value as usize);
        let tiers: Vec<Option<String>> = rules
            .tiers
            .keys()
            .map(|t| (*t != rules.default_tier).then(|| t.clone()))
            .collect();
        for mask in 1u32..8 {
            let chosen: Vec<Anchor> = (0..3)
                .filter(|i| mask & (1 << i) != 0)
                .map(|i| anchors[i])
                .collect();
            if chosen.len() > max {
                continue;
            }
            // Every tier for every chosen anchor (tiers^anchors: at most a few dozen).
            let mut assignments: Vec<Vec<Option<String>>> = vec![Vec::new()];
            for _ in &chosen {
                assignments = assignments
                    .into_iter()
                    .flat_map(|a| {
                        tiers.iter().map(move |t| {
                            let mut a = a.clone();
                            a.push(t.clone());
                            a
                        })
                    })
                    .collect();
            }
            for a in assignments {
                out.push(Strategy {
                    mode: Some(Mode::Explicit),
                    breakpoints: chosen
                        .iter()
                        .zip(a)
                        .map(|(&anchor, tier)| BreakpointSpec { anchor, tier })
                        .collect(),
                    tool_changes: None,
                });
            }
        }
    }
    for (mode, rules) in [
        (Mode::Automatic, &model.cache.automatic),
        (Mode::Implicit, &model.cache.implicit),
    ] {
        let Some(rules) = rules else { continue };
        for tier in rules.tiers.keys() {
            let breakpoints = if *tier == rules.default_tier {
                Vec::new()
            } else {
                vec![BreakpointSpec {
                    anchor: Anchor::Last,
                    tier: Some(tier.clone()),
                }]
            };
            out.push(Strategy {
                mode: Some(mode),
                breakpoints,
                tool_changes: None,
            });
        }
    }
    out.retain(|s| s.resolve(model).is_ok());
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips() {
        for s in [
            "none",
            "cached",
            "automatic",
            "implicit",
            "explicit:tools",
            "explicit:tools@1h+system+last",
            "explicit:last/tool-changes=append",
        ] {
            assert_eq!(Strategy::parse(s).unwrap().to_string(), s);
        }
    }

    #[test]
    fn suggests_the_closest_spelling() {
        let e = Strategy::parse("cachd").unwrap_err().to_string();
        assert!(e.contains("did you mean `cached`?"), "{e}");
        let e = Strategy::parse("explicit:tool+last")
            .unwrap_err()
            .to_string();
        assert!(e.contains("did you mean `tools`?"), "{e}");
    }

    #[test]
    fn rejects_nonsense() {
        for s in [
            "explicit:",
            "explicit:foo",
            "explicit:last+tools",
            "explicit:tools+tools",
            "often",
            "automatic/x=y",
            "none/tool-changes=append",
        ] {
            assert!(Strategy::parse(s).is_err(), "{s} accepted");
        }
    }
}
