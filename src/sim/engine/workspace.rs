//! The reusable buffers of the event loop and the state they hold during a run: each session's
//! identity and stream, its prompt and caching on the member being simulated, the member's caches.

use crate::base::rng::SimRng;
use rand::SeedableRng;

use super::cache::{CacheStore, LeaseIds, OwnEntries};
use super::draws::DrawnCall;
use super::prompt::{Prompt, Segment};
use super::queue::EventQueue;
use crate::base::hash::chain;

/// Reusable buffers of the event loop, so repeated runs (Monte Carlo, benchmarks) allocate nothing
/// once warm. Its contents never influence results.
#[derive(Debug, Default)]
pub struct Workspace {
    pub(super) sessions: Vec<Session>,
    /// Each session's state on the member being simulated.
    pub(super) lanes: Vec<Lane>,
    /// Next call of each active session.
    pub(super) queue: EventQueue,
    /// The state of the member being simulated.
    pub(super) member: MemberState,
    /// A run's calls in time order, when recorded ([`PreparedSet::run`](super::PreparedSet::run)).
    pub(super) timeline: Vec<TimedCall>,
}

impl Workspace {
    /// Empty buffers.
    pub fn new() -> Self {
        Self::default()
    }

    /// Runs `f` with this thread's own workspace, kept warm between calls (e.g. between the chunks
    /// a rayon worker picks up), so parallel runs do not regrow their buffers from empty.
    pub(crate) fn with_thread_local<R>(f: impl FnOnce(&mut Workspace) -> R) -> R {
        thread_local! {
            static WS: std::cell::RefCell<Workspace> = std::cell::RefCell::new(Workspace::new());
        }
        WS.with(|ws| match ws.try_borrow_mut() {
            Ok(mut ws) => f(&mut ws),
            // Re-entered on this thread (a nested parallel call): use a fresh one.
            Err(_) => f(&mut Workspace::new()),
        })
    }
}

/// One member's state in a run: its caches, its best-effort stream and its running total.
#[derive(Debug)]
pub(super) struct MemberState {
    /// The account's cache (when sessions share it).
    pub(super) shared: CacheStore,
    /// Each session's private cache (when they do not).
    pub(super) own: Vec<CacheStore>,
    /// Decides best-effort misses.
    pub(super) cache_rng: SimRng,
    pub(super) cumulative: f64,
    /// Calls applied in this run (for the periodic sweep).
    pub(super) calls_done: u64,
}

impl Default for MemberState {
    fn default() -> Self {
        MemberState {
            shared: CacheStore::new(),
            own: Vec::new(),
            cache_rng: SimRng::seed_from_u64(0),
            cumulative: 0.0,
            calls_done: 0,
        }
    }
}

/// A session's state shared by every member: its identity, stream and next call.
#[derive(Debug)]
pub(super) struct Session {
    pub(super) index: u32,
    pub(super) uid: u64,
    pub(super) rng: SimRng,
    pub(super) next_call: u32,
    /// Calls the session makes in this run.
    pub(super) calls: u32,
    pub(super) last_output: u64,
    /// The amounts of the session's next call, drawn when its previous call ended.
    pub(super) drawn: DrawnCall,
}

impl Default for Session {
    fn default() -> Self {
        Session {
            index: 0,
            uid: 0,
            rng: SimRng::seed_from_u64(0),
            next_call: 1,
            calls: 1,
            last_output: 0,
            drawn: DrawnCall::default(),
        }
    }
}

/// A session's state on one member: its prompt as that model renders it, and its caching.
#[derive(Debug, Default)]
pub(super) struct Lane {
    /// Index of the next event to apply.
    pub(super) next_event: usize,
    /// Version of the tool block rendered in the prompt.
    pub(super) block: usize,
    /// History segments (messages) in order, kept only when the prompt can be rebuilt.
    pub(super) history: Vec<Segment>,
    pub(super) prompt: Prompt,
    /// The session's caching on the member being simulated.
    pub(super) cache: LaneCache,
}

/// A session's caching on one member: what a member keeps of a session besides its prompt (members
/// whose prompts are the same call by call share the prompt and keep one of these each).
#[derive(Debug, Default)]
pub(super) struct LaneCache {
    /// Lease ids of the session's chains in its store, for the head and machine they were made for.
    pub(super) leases: Option<SessionLeases>,
    /// The cache entries of this conversation's own prefixes (see [`super::cache::OwnEntries`]).
    pub(super) own: OwnEntries,
}

impl LaneCache {
    /// Makes it ready for a session's first call on a member.
    pub(super) fn reset(&mut self) {
        self.leases = None;
        self.own.clear();
    }
}

/// The lease ids a session's automatic calls use while its head and machine stay the same (looked
/// up once instead of on every call; ids never change while the store lives, and a session's store
/// lives as long as its run).
#[derive(Debug, Clone, Copy)]
pub(super) struct SessionLeases {
    pub(super) block: usize,
    pub(super) salt: u64,
    pub(super) ids: LeaseIds,
}

/// Leases of a session's chains on a head (tool-list version) and machine (key-space salt): the
/// head's chain, when heads of different tool lists share no entries, and the conversation's.
pub(super) fn session_leases(
    store: &mut CacheStore,
    base: &Prompt,
    block: usize,
    uid: u64,
    salt: u64,
    lease_heads: bool,
) -> SessionLeases {
    let head = base.cum_hash.last().copied();
    SessionLeases {
        block,
        salt,
        ids: LeaseIds {
            block_len: base.cum_hash.len(),
            block: match (lease_heads, head) {
                (true, Some(h)) => Some(store.lease_id(chain(h, salt))),
                _ => None,
            },
            // The conversation after this head is one chain (history only grows), also when the
            // session comes back to a head it left.
            history: store.lease_id(chain(chain(uid, head.unwrap_or(0)), salt ^ HISTORY_LEASE)),
        },
    }
}

impl Lane {
    /// Makes the lane ready for a session's first call on a member.
    pub(super) fn reset(&mut self) {
        self.next_event = 0;
        self.block = 0;
        self.history.clear();
        self.prompt.clear();
        self.cache.reset();
    }

    /// Appends a message segment to the prompt (and to the history when it is kept).
    #[inline]
    pub(super) fn append(&mut self, seg: Segment, keep_history: bool) {
        self.prompt.push(seg);
        if keep_history {
            self.history.push(seg);
        }
    }
}

/// Salt of the conversation leases' keys.
pub(super) const HISTORY_LEASE: u64 = 0x6869_7374_6f72_7900;

/// One call as a run's timeline fixes it, whatever the model.
#[derive(Debug, Clone, Copy)]
pub(super) struct TimedCall {
    /// Request start (ms).
    pub(super) now: u64,
    /// Session index (0-based).
    pub(super) session: u32,
    /// Call number (1-based).
    pub(super) call: u32,
    /// Output tokens of the session's previous call (0 before its first).
    pub(super) previous_output: u64,
    /// Tokens the conversation grows by after that output: the first user message on call 1, the
    /// tool result plus the user message after it.
    pub(super) growth: u64,
    /// Output tokens of this call.
    pub(super) output: u64,
}
