//! Runs: the shared timeline of a run (arrivals, then every call in time order), recorded once and
//! applied member by member, or redone per member when too long to record.

use crate::base::rng::SimRng;
use rand::{RngExt, SeedableRng};

use super::cache::{CacheStore, OwnEntries};
use super::draws::{session_length, session_rng, CallDraws};
use super::keys::segment_id;
use super::prepared::Prepared;
use super::prompt::{Prompt, Segment};
use super::queue::EventQueue;
use super::setup::SimSetup;
use super::workspace::{Lane, LaneCache, MemberState, Session, TimedCall, Workspace};
use crate::base::hash::chain;
use crate::input::scenario::{Arrival, Scenario};
use crate::model::tokens::{ListCounter, ToolRendering};
use crate::sim::billing::CallBill;

/// Several (model, strategy) simulations of one scenario, run on one timeline.
///
/// Nothing of a session's timeline depends on the model: arrivals, the amounts of each call and the
/// gaps between calls come from the scenario and the session's own stream. So the event queue and
/// the draws (about 40% of the instructions of a call on one model, and more of its time) are done
/// once per run: the run's calls are recorded in time order, then applied to each member in turn,
/// every member reusing the same per-session buffers (so the working set is that of one model, not
/// of all of them). Runs with more than [`MAX_RECORDED_CALLS`] calls are not recorded: each member
/// is then simulated alone, the timeline redone for each. Either way each member's bills are those
/// of its own [`Prepared::run`], bit for bit (tested).
#[derive(Debug, Clone)]
pub struct PreparedSet<'a> {
    pub(super) scenario: &'a Scenario,
    pub(super) members: Vec<Prepared<'a>>,
}

/// Tool and tool-list token counts kept across simulations, one `ListCounter` per distinct
/// rendering: a command that prepares a scenario several times (advise's candidates, TTL rows and
/// dropped tools) counts each tool and each list once.
#[derive(Debug, Default)]
pub struct ToolCounts {
    counters: Vec<ListCounter>,
}

impl ToolCounts {
    /// The counter of `rendering` (made on first use).
    pub(crate) fn counter(&mut self, rendering: &ToolRendering) -> &mut ListCounter {
        let i = match self
            .counters
            .iter()
            .position(|c| c.rendering() == rendering)
        {
            Some(i) => i,
            None => {
                self.counters.push(ListCounter::new(rendering));
                self.counters.len() - 1
            }
        };
        &mut self.counters[i]
    }

    /// Runs `f` with this thread's counts, kept between calls: a command prepares one scenario
    /// several times (`cached` tries each model's placements, then every pair is prepared), and
    /// each tool and list is then rendered and counted once per process, not once per set. The
    /// counts are a function of the rendering and the tools' content alone, so keeping them
    /// changes no result. Emptied when they exceed [`MAX_KEPT_COUNTS`] entries.
    pub(crate) fn with_thread_local<R>(f: impl FnOnce(&mut ToolCounts) -> R) -> R {
        thread_local! {
            static COUNTS: std::cell::RefCell<ToolCounts> = std::cell::RefCell::new(ToolCounts::default());
        }
        COUNTS.with(|counts| match counts.try_borrow_mut() {
            Ok(mut counts) => {
                if counts
                    .counters
                    .iter()
                    .map(ListCounter::entries)
                    .sum::<usize>()
                    > MAX_KEPT_COUNTS
                {
                    *counts = ToolCounts::default();
                }
                f(&mut counts)
            }
            // Re-entered on this thread (a set prepared inside another's preparation, as rayon
            // may schedule it): counts of its own.
            Err(_) => f(&mut ToolCounts::default()),
        })
    }
}

/// Entries (tools, lists, neighbouring pairs) a thread's [`ToolCounts`] keeps between sets, about
/// 10 MB at most.
const MAX_KEPT_COUNTS: usize = 1 << 18;

/// Calls of one run (sessions x calls) up to which [`PreparedSet::run`] records the timeline
/// (40 bytes a call: 10 MB at most) and applies it member by member.
pub const MAX_RECORDED_CALLS: usize = 1 << 18;

/// Calls of one run up to which [`PreparedSet::run_sharing_prompts`] records the timeline for the
/// members it runs one after another (40 bytes a call: 84 MB at most, a run at the bills limit):
/// with every placement of a model to compare, redoing the timeline (the event queue and the
/// draws) for each was most of the work of resolving `cached` at that limit.
const MAX_RECORDED_CALLS_SHARED: usize = 1 << 21;

impl<'a> PreparedSet<'a> {
    /// Prepares `scenario` for every setup.
    pub fn new(scenario: &'a Scenario, setups: &'a [SimSetup<'a>]) -> Self {
        ToolCounts::with_thread_local(|counts| Self::with_counts(scenario, setups, counts))
    }

    /// [`Self::new`] with the tool and list counts of `counts`, which keeps them for later sets
    /// (members whose models render tools alike share them).
    pub(crate) fn with_counts(
        scenario: &'a Scenario,
        setups: &'a [SimSetup<'a>],
        counts: &mut ToolCounts,
    ) -> Self {
        let members = setups
            .iter()
            .map(|s| Prepared::with_counter(scenario, s, counts.counter(s.model.rendering())))
            .collect();
        PreparedSet { scenario, members }
    }

    /// The members, in the order of the setups.
    pub(crate) fn members(&self) -> &[Prepared<'a>] {
        &self.members
    }

    /// The members split into sets of at most `size` consecutive members (at least one each).
    pub(crate) fn parts(&self, size: usize) -> Vec<PreparedSet<'a>> {
        self.members
            .chunks(size.max(1))
            .map(|part| PreparedSet {
                scenario: self.scenario,
                members: part.to_vec(),
            })
            .collect()
    }

    /// Simulated calls per run, over all members.
    pub fn calls_per_run(&self) -> usize {
        self.scenario.calls * self.scenario.sessions * self.members.len()
    }

    /// Simulates one run on every member, reusing the buffers of `ws`: `sink` gets each bill with
    /// its member's index, member after member, each member's bills in time order. Returns each
    /// member's total dollars.
    pub fn run(
        &self,
        run: u64,
        ws: &mut Workspace,
        sink: impl FnMut(usize, &CallBill),
    ) -> Vec<f64> {
        self.run_recording_up_to(run, ws, sink, MAX_RECORDED_CALLS)
    }

    /// [`PreparedSet::run`], recording runs of at most `max_recorded` calls (tests force either
    /// path with it).
    pub(crate) fn run_recording_up_to(
        &self,
        run: u64,
        ws: &mut Workspace,
        sink: impl FnMut(usize, &CallBill),
        max_recorded: usize,
    ) -> Vec<f64> {
        let mut totals = vec![0.0; self.members.len()];
        run_members(
            self.scenario,
            &self.members,
            run,
            ws,
            sink,
            max_recorded,
            &mut totals,
        );
        totals
    }
}

impl PreparedSet<'_> {
    /// Each member's total dollars in run `run`, as [`PreparedSet::run`] returns them (bit for
    /// bit, tested), without keeping bills: what resolving `cached` compares. Members sharing
    /// their prompts run as in [`PreparedSet::run_sharing_prompts`], on this thread; the members
    /// alone are split between rayon's threads, each part on a timeline of its own.
    pub(crate) fn totals(&self, run: u64) -> Vec<f64> {
        use rayon::prelude::*;
        let (groups, alone) = self.prompt_groups();
        let mut totals = vec![0.0; self.members.len()];
        for group in &groups {
            let group_totals = run_group(self.scenario, &self.members, group, run, &mut |_, _| {});
            for (&m, total) in group.iter().zip(group_totals) {
                totals[m] = total;
            }
        }
        let size = alone
            .len()
            .div_ceil(rayon::current_num_threads().max(1))
            .max(1);
        let parts: Vec<(usize, f64)> = alone
            .par_chunks(size)
            .flat_map_iter(|chunk| {
                let part_totals = self.run_alone(chunk, run, |_, _| {});
                chunk.iter().copied().zip(part_totals)
            })
            .collect();
        for (m, total) in parts {
            totals[m] = total;
        }
        totals
    }

    /// [`PreparedSet::run`] with members whose prompts are the same call by call
    /// ([`Prepared::same_prompts`]: the placements of one model) applied together, call after call,
    /// so each prompt is built once for all of them instead of once per member: a prompt rebuilt
    /// after a tool-list event re-appends the session's whole history, and with 10,000 events
    /// that was most of the work, done again for every placement. The other members run as in
    /// [`PreparedSet::run`] (on a timeline recorded once, up to a run at the bills limit). `sink`
    /// gets each member's bills in time order, those of one group's members interleaved call by
    /// call. Every member of a group keeps its cache at once (not one member's at a time).
    #[cfg(test)]
    pub(crate) fn run_sharing_prompts(
        &self,
        run: u64,
        mut sink: impl FnMut(usize, &CallBill),
    ) -> Vec<f64> {
        let (groups, alone) = self.prompt_groups();
        let mut totals = vec![0.0; self.members.len()];
        for group in &groups {
            let group_totals = run_group(self.scenario, &self.members, group, run, &mut sink);
            for (&m, total) in group.iter().zip(group_totals) {
                totals[m] = total;
            }
        }
        let part_totals = self.run_alone(&alone, run, sink);
        for (&m, total) in alone.iter().zip(part_totals) {
            totals[m] = total;
        }
        totals
    }

    /// The members that share their prompts, in groups of two or more (indices, in order), and
    /// the members alone. Only prompts rebuilt from their history are worth sharing: otherwise a
    /// call's prompt work is its growth, and members one after another keep one member's caches
    /// in memory at a time. Only runs short enough to record ([`MAX_RECORDED_CALLS`]) are shared:
    /// at the bills limit the caches of 21 placements at once outgrow the processor's (measured
    /// slower than one member after another).
    fn prompt_groups(&self) -> (Vec<Vec<usize>>, Vec<usize>) {
        let members = &self.members;
        let small =
            self.scenario.sessions.saturating_mul(self.scenario.calls) <= MAX_RECORDED_CALLS;
        let mut grouped = vec![false; members.len()];
        let (mut groups, mut alone) = (Vec::new(), Vec::new());
        for first in 0..members.len() {
            if grouped[first] {
                continue;
            }
            let group: Vec<usize> = if small && members[first].keeps_history {
                (first..members.len())
                    .filter(|&m| !grouped[m] && members[m].same_prompts(&members[first]))
                    .collect()
            } else {
                vec![first]
            };
            for &m in &group {
                grouped[m] = true;
            }
            if group.len() == 1 {
                alone.push(first);
            } else {
                groups.push(group);
            }
        }
        (groups, alone)
    }

    /// One run of the members `which` (indices), one after another as [`PreparedSet::run`] runs
    /// them, on a timeline recorded once up to [`MAX_RECORDED_CALLS_SHARED`] calls; `sink` gets
    /// each bill with its member's index in the set. Returns their totals in order.
    fn run_alone(
        &self,
        which: &[usize],
        run: u64,
        mut sink: impl FnMut(usize, &CallBill),
    ) -> Vec<f64> {
        if which.is_empty() {
            return Vec::new();
        }
        let part: Vec<Prepared> = which.iter().map(|&m| self.members[m].clone()).collect();
        let mut totals = vec![0.0; part.len()];
        run_members(
            self.scenario,
            &part,
            run,
            &mut Workspace::new(),
            |k, b| sink(which[k], b),
            MAX_RECORDED_CALLS_SHARED,
            &mut totals,
        );
        totals
    }
}

/// One run of `scenario` on the members of `group` (indices into `members`, whose prompts are the
/// same call by call), as it happens: each call's prompt is advanced once, on the session's one
/// lane, then billed on every member against its own caches. Returns the group's totals in order.
fn run_group(
    scenario: &Scenario,
    members: &[Prepared],
    group: &[usize],
    run: u64,
    sink: &mut impl FnMut(usize, &CallBill),
) -> Vec<f64> {
    let n_sessions = scenario.sessions;
    let mut ws = Workspace::new();
    let private = group.iter().any(|&m| members[m].private_caches);
    size_buffers(&mut ws.lanes, &mut ws.member, n_sessions, private);
    reset_member(scenario, run, &mut ws.lanes, &mut ws.member);
    let mut caches: Vec<Vec<LaneCache>> = group
        .iter()
        .map(|_| (0..n_sessions).map(|_| LaneCache::default()).collect())
        .collect();
    let mut states: Vec<MemberState> = group
        .iter()
        .map(|_| {
            let mut st = MemberState::default();
            size_buffers(&mut Vec::new(), &mut st, n_sessions, private);
            reset_member(scenario, run, &mut [], &mut st);
            st
        })
        .collect();
    let Workspace {
        sessions,
        lanes,
        queue,
        ..
    } = &mut ws;
    let lead = &members[group[0]];
    drive_timeline(scenario, run, sessions, queue, |s, c| {
        let si = c.session as usize;
        let lane = &mut lanes[si];
        let (growth, n) = growth_of(s, &c);
        let fresh_from = lead.advance(lane, s.uid, c.call, &growth[..n]);
        let last = c.call >= s.calls;
        for (k, &m) in group.iter().enumerate() {
            let (member, st) = (&members[m], &mut states[k]);
            let bill = member.bill(
                (lane.block, &lane.prompt),
                &mut caches[k][si],
                st,
                (s.index, s.uid),
                si,
                c.now,
                c.call,
                fresh_from,
                c.output,
            );
            sink(m, &bill);
            after_call(member, &mut caches[k][si], st, &c, last, n_sessions);
        }
        if last && n_sessions > KEEP_OWN_ENTRIES_UP_TO_SESSIONS {
            lane.prompt = Prompt::default();
            lane.history = Vec::new();
        }
    });
    states.iter().map(|st| st.cumulative).collect()
}

// The run of a single member is the timeline of a set of one: it lives here, beside the set's, so
// that `prepared` (the per-call step) does not import the timeline that drives it.
impl Prepared<'_> {
    /// Simulates one run (see [`super::simulate_run`]), reusing the buffers of `ws`.
    pub fn run(&self, run: u64, ws: &mut Workspace, mut sink: impl FnMut(&CallBill)) -> f64 {
        let mut total = [0.0];
        run_members(
            self.scenario,
            std::slice::from_ref(self),
            run,
            ws,
            |_, bill| sink(bill),
            MAX_RECORDED_CALLS,
            &mut total,
        );
        total[0]
    }
}

/// One run of `scenario` on every member (all prepared from it), member after member: recorded
/// once and applied to each when it has at most `max_recorded` calls, redone for each otherwise;
/// member `m`'s total goes to `totals[m]`.
#[inline(always)]
pub(super) fn run_members(
    scenario: &Scenario,
    members: &[Prepared],
    run: u64,
    ws: &mut Workspace,
    mut sink: impl FnMut(usize, &CallBill),
    max_recorded: usize,
    totals: &mut [f64],
) {
    if scenario.sessions.saturating_mul(scenario.calls) > max_recorded {
        // Too long to record: each member alone, the timeline redone for each.
        for (m, member) in members.iter().enumerate() {
            totals[m] = run_as_it_happens(scenario, member, run, ws, &mut |b| sink(m, b));
        }
        return;
    }
    let Workspace {
        sessions,
        lanes,
        queue,
        member: st,
        timeline,
    } = ws;
    timeline.clear();
    drive_timeline(scenario, run, sessions, queue, |_, call| {
        timeline.push(call)
    });
    let n_sessions = scenario.sessions;
    // One lane per session and one member state, reset for each member in turn.
    let private = members.iter().any(|m| m.private_caches);
    size_buffers(lanes, st, n_sessions, private);
    for (m, member) in members.iter().enumerate() {
        reset_member(scenario, run, lanes, st);
        for call in timeline.iter() {
            let s = &sessions[call.session as usize];
            let lane = &mut lanes[call.session as usize];
            apply_call(member, lane, st, s, call, n_sessions, &mut |b| sink(m, b));
        }
        totals[m] = st.cumulative;
    }
}

/// Runs the timeline of run `run`: session arrivals, then every call in time order (ties to the
/// lower session), each handed to `on_call` with its session before the session moves on to its
/// next call.
#[inline(always)]
pub(super) fn drive_timeline(
    scenario: &Scenario,
    run: u64,
    sessions: &mut Vec<Session>,
    queue: &mut EventQueue,
    mut on_call: impl FnMut(&Session, TimedCall),
) {
    let n_sessions = scenario.sessions;
    // Session start times.
    let mut arrivals_rng = SimRng::seed_from_u64(chain(scenario.seed, run.wrapping_add(0xa771)));
    queue.clear();
    let mut t = 0.0f64;
    for i in 0..n_sessions {
        let start = match scenario.arrival {
            Arrival::Every(e) => i as f64 * e,
            Arrival::Poisson(per_hour) => {
                if i > 0 {
                    let u: f64 = arrivals_rng.random_range(f64::EPSILON..1.0);
                    t += -u.ln() * 3600.0 / per_hour;
                }
                t
            }
        };
        queue.push(crate::model::strategy::seconds_to_ms(start), i as u32);
    }

    let draws = CallDraws::new(scenario);
    sessions.truncate(n_sessions);
    while sessions.len() < n_sessions {
        sessions.push(Session::default());
    }
    for (i, s) in sessions.iter_mut().enumerate() {
        s.index = i as u32 + 1;
        s.uid = chain(chain(scenario.seed, run), i as u64 + 1);
        s.rng = session_rng(scenario.seed, run, i as u64);
        s.next_call = 1;
        s.calls = session_length(scenario, run, i as u64);
        s.last_output = 0;
        s.drawn = draws.for_call(&mut s.rng, 1, s.calls);
    }

    // The session whose call comes next stays at the top of the queue while its call is handled
    // and is then moved to its next call's time in place (one sift instead of a pop and a push);
    // ties in time go to the lower session index, as with pop and push.
    while let Some((now, si)) = queue.peek() {
        let s = &mut sessions[si as usize];
        let call = TimedCall {
            now,
            session: si,
            call: s.next_call,
            previous_output: s.last_output,
            growth: s.drawn.growth,
            output: s.drawn.output,
        };
        on_call(s, call);
        s.last_output = call.output;
        s.next_call += 1;
        if call.call >= s.calls {
            queue.pop();
        } else {
            queue.replace_top(now.saturating_add(s.drawn.gap_ms), si);
            s.drawn = draws.for_call(&mut s.rng, s.next_call, s.calls);
        }
    }
}

/// Applies one call of session `s` to a member: its bill goes to `sink`; the session's own
/// entries and private cache are let go after its last call; expired entries are swept now and
/// then.
#[inline(always)]
pub(super) fn apply_call(
    member: &Prepared,
    lane: &mut Lane,
    st: &mut MemberState,
    s: &Session,
    c: &TimedCall,
    n_sessions: usize,
    sink: &mut impl FnMut(&CallBill),
) {
    let si = c.session as usize;
    let (growth, n) = growth_of(s, c);
    let bill = member.step(
        lane,
        st,
        (s.index, s.uid),
        si,
        c.now,
        c.call,
        &growth[..n],
        c.output,
    );
    sink(&bill);
    let last = c.call >= s.calls;
    if last && n_sessions > KEEP_OWN_ENTRIES_UP_TO_SESSIONS {
        lane.prompt = Prompt::default();
        lane.history = Vec::new();
    }
    after_call(member, &mut lane.cache, st, c, last, n_sessions);
}

/// The segments the conversation of session `s` grows by before call `c` (drawn before any event
/// is applied), and how many of the two there are.
#[inline(always)]
fn growth_of(s: &Session, c: &TimedCall) -> ([Segment; 2], usize) {
    let growth = if c.call == 1 {
        [
            Segment {
                tokens: c.growth,
                id: segment_id(s.uid, 1),
            },
            Segment::default(),
        ]
    } else {
        let k = u64::from(c.call);
        [
            Segment {
                tokens: c.previous_output,
                id: segment_id(s.uid, k * 4 + 2),
            },
            Segment {
                tokens: c.growth,
                id: segment_id(s.uid, k * 4 + 3),
            },
        ]
    };
    (growth, 1 + usize::from(c.call > 1))
}

/// What follows call `c` on a member besides its bill: when it was the session's last (`last`),
/// the session's own entries and private cache are let go (its prompt is the caller's); expired
/// entries are swept now and then.
#[inline(always)]
fn after_call(
    member: &Prepared,
    cache: &mut LaneCache,
    st: &mut MemberState,
    c: &TimedCall,
    last: bool,
    n_sessions: usize,
) {
    let si = c.session as usize;
    if last {
        // The conversation is over and nobody else can match its own entries. With many
        // sessions they are freed with its prompt, so memory follows the sessions in progress
        // rather than every session of the run; with few, the allocations are kept for the next
        // run (freeing and regrowing them every run measured ~30% slower on the bench).
        if n_sessions > KEEP_OWN_ENTRIES_UP_TO_SESSIONS {
            cache.own = OwnEntries::default();
        }
        if member.private_caches {
            // Nor does anybody else read its private cache.
            st.own[si].clear();
        }
    }
    st.calls_done += 1;
    // Expired entries are dropped now and then so memory stays bounded on long runs (dropping
    // them changes nothing: an expired entry is never read or refreshed again).
    if st.calls_done.is_multiple_of(65_536) {
        st.shared.sweep(c.now);
    }
    if member.private_caches && c.call.is_multiple_of(4_096) {
        st.own[si].sweep(c.now);
    }
}

/// Grows or shrinks the per-session buffers to one lane per session, and the member's private
/// caches to one per session when a member has them (`private`; allocations are kept for later
/// runs).
pub(super) fn size_buffers(
    lanes: &mut Vec<Lane>,
    st: &mut MemberState,
    n_sessions: usize,
    private: bool,
) {
    lanes.truncate(n_sessions);
    while lanes.len() < n_sessions {
        lanes.push(Lane::default());
    }
    let own_needed = if private { n_sessions } else { 0 };
    st.own.truncate(own_needed);
    while st.own.len() < own_needed {
        st.own.push(CacheStore::new());
    }
}

/// Makes the lanes ready for the sessions' first calls, empties the member's caches and restarts
/// its streams and totals for run `run`.
pub(super) fn reset_member(
    scenario: &Scenario,
    run: u64,
    lanes: &mut [Lane],
    st: &mut MemberState,
) {
    for lane in lanes.iter_mut() {
        lane.reset();
    }
    st.shared.clear();
    for store in &mut st.own {
        store.clear();
    }
    st.cache_rng = SimRng::seed_from_u64(chain(scenario.seed, run.wrapping_add(0xcace)));
    st.cumulative = 0.0;
    st.calls_done = 0;
}

/// The event loop applying each call to one member as it happens, without recording the
/// timeline: one run of `scenario` (which `member` was prepared from); returns its total dollars.
// Always inlined into `run_members`, its one caller: it is the bulk of a run.
#[inline(always)]
pub(super) fn run_as_it_happens(
    scenario: &Scenario,
    member: &Prepared,
    run: u64,
    ws: &mut Workspace,
    sink: &mut impl FnMut(&CallBill),
) -> f64 {
    debug_assert!(std::ptr::eq(member.scenario, scenario));
    let n_sessions = scenario.sessions;
    let Workspace {
        sessions,
        lanes,
        queue,
        member: st,
        timeline: _,
    } = ws;
    size_buffers(lanes, st, n_sessions, member.private_caches);
    reset_member(scenario, run, lanes, st);
    drive_timeline(scenario, run, sessions, queue, |s, call| {
        let lane = &mut lanes[call.session as usize];
        apply_call(member, lane, st, s, &call, n_sessions, sink);
    });
    st.cumulative
}

/// Runs with at most this many sessions keep each session's own-entry allocation between runs.
pub(super) const KEEP_OWN_ENTRIES_UP_TO_SESSIONS: usize = 1024;
