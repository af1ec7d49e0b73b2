//! Tool-block sizes from billed input tokens (`explain --calibrate-out`): for each model and each
//! distinct tool list a trace sends, the billed prompt minus pcsim's count of everything that is
//! not a tool (system blocks, messages), taken on the call with the least of that (the smallest
//! conversation start), so that the estimate's share is smallest. Lists that differ give the real
//! size of a tool block per model, which the CLI fits as `pcsim calibrate` fits.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::base::hash::{chain, fnv1a};
use crate::input::trace::{Content, Exchange, RegionKind};
use crate::model::catalog::ModelSpec;
use crate::model::tools::Tool;

/// The measured tool block of one tool list on one model.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ToolBlockSample {
    /// Catalog model.
    pub model: String,
    /// Where the call was.
    pub at: String,
    /// Tools in the list.
    pub tools: usize,
    /// Billed prompt minus pcsim's count of the rest: the tool block as billed.
    pub measured_tokens: f64,
    /// pcsim's tool block for the same list (its token model, before scaling).
    pub modelled_tokens: u64,
    /// Tools of the list (for the fit; not in the output).
    #[serde(skip)]
    pub list: Vec<Tool>,
    /// pcsim's count of the rest of the prompt.
    #[serde(skip)]
    rest: u64,
}

/// Distinct lists kept per model (the fit needs a few; memory stays bounded).
const LISTS_PER_MODEL: usize = 64;

/// Samples by (model, list fingerprint).
#[derive(Debug, Default)]
pub(crate) struct Collector {
    by_list: BTreeMap<(String, u64), ToolBlockSample>,
}

impl Collector {
    /// Looks at one call (sizes before scaling to the bill).
    pub(crate) fn observe(
        &mut self,
        ex: &Exchange,
        model: &ModelSpec,
        sizes: &[u64],
        preamble: u64,
    ) {
        let mut list_hash = fnv1a(b"tools");
        let mut tools = 0usize;
        let (mut tool_tokens, mut rest) = (preamble, 0u64);
        for (r, &n) in ex.regions.iter().zip(sizes) {
            if r.kind == RegionKind::Tool {
                list_hash = chain(list_hash, r.hash);
                tools += 1;
                tool_tokens += n;
            } else {
                rest += n;
            }
        }
        let billed = ex.billed.prompt_tokens;
        if tools == 0 || billed <= rest {
            return;
        }
        let key = (model.id.clone(), list_hash);
        if let Some(s) = self.by_list.get(&key) {
            if s.rest <= rest {
                return;
            }
        } else if self.by_list.keys().filter(|(m, _)| *m == model.id).count() >= LISTS_PER_MODEL {
            return;
        }
        let list = ex
            .regions
            .iter()
            .filter_map(|r| match &r.content {
                Content::Tool(t) => Some(t.clone()),
                _ => None,
            })
            .collect();
        self.by_list.insert(
            key,
            ToolBlockSample {
                model: model.id.clone(),
                at: ex.at.clone(),
                tools,
                measured_tokens: (billed - rest) as f64,
                modelled_tokens: tool_tokens,
                list,
                rest,
            },
        );
    }

    /// Every sample, by model then list.
    pub(crate) fn samples(&self) -> Vec<ToolBlockSample> {
        self.by_list.values().cloned().collect()
    }
}
