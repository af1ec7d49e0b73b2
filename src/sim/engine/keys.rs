//! Identities and key spaces: message segment ids, the routing key of a prompt and the salt of each
//! machine's key space under the routing model.

use super::prompt::Prompt;
use crate::base::hash::chain;

/// Identity of a message segment of a session: `uid` is already a well-mixed random 64-bit value
/// unique to the session and run, so an offset by the segment's number is unique too; the prompt's
/// prefix hash mixes it.
#[inline]
pub(super) fn segment_id(uid: u64, n: u64) -> u64 {
    uid.wrapping_add(n)
}

/// Tokens after which the routing key is taken (providers hash about the first 256 tokens).
pub(crate) const ROUTING_PREFIX_TOKENS: u64 = 256;

/// The routing key of a prompt: the identity of its prefix at the first boundary at or beyond
/// [`ROUTING_PREFIX_TOKENS`] (the whole prompt when shorter).
pub(crate) fn routing_key(p: &Prompt) -> u64 {
    let i = p.cum_tokens.partition_point(|&t| t < ROUTING_PREFIX_TOKENS);
    let i = i.min(p.cum_hash.len().saturating_sub(1));
    p.cum_hash.get(i).copied().unwrap_or(0)
}

/// Key-space salt of a machine: entries on machine m are keyed `prefix ^ salt(m)`; machine 0 is the
/// unsalted key space, so a model without routing behaves exactly as before.
pub(crate) fn machine_salt(machine: u32) -> u64 {
    if machine == 0 {
        0
    } else {
        chain(0x6d61_6368_696e_6500, u64::from(machine))
    }
}
