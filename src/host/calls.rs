//! The calls in flight, the ids the Core issues, and the ids of calls that ended
//! recently.
//!
//! Outgoing ids are integers from 1, never reused in a session, and kept below 2^53 so
//! JavaScript peers read them exactly. A response is matched only by an integer id
//! equal to one the Core issued; anything else is reported, never guessed. Once a call
//! ends nothing of it is kept except its id and how it ended, in a ring of
//! `Config::recent_ids` entries, so a late or duplicate reply is reported as such.

use alloc::collections::VecDeque;

use super::timers::Deadline;
use crate::rpc::Id;
use crate::time::Instant;

/// The largest id the Core issues: 2^53 - 1, the largest integer a JavaScript number
/// holds exactly.
pub const MAX_CALL_ID: u64 = (1 << 53) - 1;

/// One call the Core started: equal to the JSON-RPC id it sent.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct CallId(u64);

impl CallId {
    /// The JSON-RPC id of the call's request.
    pub const fn get(self) -> u64 {
        self.0
    }
}

#[cfg(test)]
impl CallId {
    pub(crate) const fn for_tests(n: u64) -> CallId {
        CallId(n)
    }
}

impl From<CallId> for Id {
    fn from(call: CallId) -> Id {
        Id::from(call.0)
    }
}

/// How a call ended, as remembered for a reply that comes after.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum EndReason {
    /// It was answered (a second reply is a duplicate).
    Answered,
    /// Its deadline passed.
    TimedOut,
    /// The caller cancelled it.
    Cancelled,
    /// Its reply was too large.
    TooLarge,
}

/// The method a call is waiting on, which decides how its result is read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum CallKind {
    Initialize,
    ListTools,
    Execute,
}

/// A call in flight.
#[derive(Clone, Debug)]
pub(crate) struct Call {
    pub(crate) kind: CallKind,
    pub(crate) deadline: Deadline,
}

/// What an incoming response id refers to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Match {
    /// A call in flight, and the method it waits on.
    InFlight(CallId, CallKind),
    /// A call the Core issued that already ended (how, if remembered).
    Ended(CallId, Option<EndReason>),
    /// No id the Core issued.
    Unknown,
}

/// The table of calls in flight, ordered by id and by deadline.
#[derive(Debug)]
pub(crate) struct Calls {
    next: u64,
    /// The calls in flight in the order they were issued, which is the order of
    /// their ids: a new one goes at the back, and one is found by binary search.
    in_flight: VecDeque<(CallId, Call)>,
    /// `(deadline, call)` for every call in flight, earliest first: see [`Deadlines`].
    deadlines: Deadlines,
    recent: VecDeque<(CallId, EndReason)>,
    recent_capacity: usize,
}

impl Calls {
    pub(crate) fn new(recent_capacity: usize) -> Calls {
        Calls {
            next: 1,
            in_flight: VecDeque::new(),
            deadlines: Deadlines::default(),
            recent: VecDeque::new(),
            recent_capacity,
        }
    }

    /// The id the next call will get, if any is left.
    pub(crate) fn next_id(&self) -> Option<CallId> {
        (self.next <= MAX_CALL_ID).then_some(CallId(self.next))
    }

    /// Starts the call with id [`next_id`](Self::next_id).
    pub(crate) fn insert(&mut self, call: Call) -> CallId {
        let id = CallId(self.next);
        self.next = self.next.saturating_add(1);
        self.deadlines.insert((call.deadline.at(), id));
        self.in_flight.push_back((id, call));
        id
    }

    /// Ends a call in flight, remembering how.
    pub(crate) fn end(&mut self, id: CallId, how: Option<EndReason>) -> Option<Call> {
        // Mostly the first, answered in the order the calls were made.
        let (_, call) = match self.position(id)? {
            0 => self.in_flight.pop_front(),
            at => self.in_flight.remove(at),
        }?;
        self.deadlines.remove((call.deadline.at(), id));
        if let Some(how) = how {
            self.remember(id, how);
        }
        Some(call)
    }

    fn remember(&mut self, id: CallId, how: EndReason) {
        if self.recent_capacity == 0 {
            return;
        }
        while self.recent.len() >= self.recent_capacity {
            self.recent.pop_front();
        }
        self.recent.push_back((id, how));
    }

    /// What `id` refers to: only an integer the Core issued matches.
    pub(crate) fn lookup(&self, id: &Id) -> Match {
        let Some(n) = id.as_u64() else {
            return Match::Unknown;
        };
        if n == 0 || n >= self.next {
            return Match::Unknown;
        }
        let id = CallId(n);
        if let Some(call) = self.get(id) {
            return Match::InFlight(id, call.kind);
        }
        let how = self
            .recent
            .iter()
            .rev()
            .find(|(c, _)| *c == id)
            .map(|(_, how)| *how);
        Match::Ended(id, how)
    }

    pub(crate) fn get(&self, id: CallId) -> Option<&Call> {
        let at = self.position(id)?;
        self.in_flight.get(at).map(|(_, call)| call)
    }

    /// Where the call `id` is in `in_flight`.
    fn position(&self, id: CallId) -> Option<usize> {
        match self.in_flight.front() {
            Some((first, _)) if *first == id => Some(0),
            _ => self.in_flight.binary_search_by_key(&id, |(c, _)| *c).ok(),
        }
    }

    /// Moves a call's deadline for progress reported at `now`, when its policy says
    /// so (see [`Deadline::after_progress`]).
    pub(crate) fn extend_deadline(&mut self, id: CallId, now: Instant) {
        let Some((_, call)) = self.position(id).and_then(|at| self.in_flight.get_mut(at)) else {
            return;
        };
        if let Some(later) = call.deadline.after_progress(now) {
            self.deadlines.remove((call.deadline.at(), id));
            self.deadlines.insert((later.at(), id));
            call.deadline = later;
        }
    }

    /// The call whose deadline comes first (ties: the lower id).
    pub(crate) fn earliest_deadline(&self) -> Option<(Instant, CallId)> {
        self.deadlines.first()
    }

    /// The call with the lowest id.
    pub(crate) fn first(&self) -> Option<CallId> {
        self.in_flight.front().map(|(id, _)| *id)
    }

    /// The call in flight, if there is exactly one.
    pub(crate) fn single(&self) -> Option<CallId> {
        match self.in_flight.len() {
            1 => self.first(),
            _ => None,
        }
    }

    pub(crate) fn len(&self) -> usize {
        self.in_flight.len()
    }

    pub(crate) fn remembered(&self) -> usize {
        self.recent.len()
    }

    #[cfg(test)]
    pub(crate) fn skip_to(&mut self, next: u64) {
        self.next = next;
    }
}

/// The deadlines of the calls in flight, `(deadline, call)` in order, earliest
/// first.
///
/// Calls mostly share one timeout and are answered in the order they were sent, so
/// a new deadline mostly goes at the back and the one removed is mostly at the
/// front: both are found without a search, and any other place by binary search.
#[derive(Debug, Default)]
struct Deadlines {
    sorted: VecDeque<(Instant, CallId)>,
}

impl Deadlines {
    fn insert(&mut self, deadline: (Instant, CallId)) {
        match self.sorted.back() {
            Some(last) if *last > deadline => {
                let at = self.sorted.partition_point(|d| *d < deadline);
                self.sorted.insert(at, deadline);
            }
            _ => self.sorted.push_back(deadline),
        }
    }

    fn remove(&mut self, deadline: (Instant, CallId)) {
        if self.sorted.front() == Some(&deadline) {
            self.sorted.pop_front();
        } else if let Ok(at) = self.sorted.binary_search(&deadline) {
            self.sorted.remove(at);
        }
    }

    fn first(&self) -> Option<(Instant, CallId)> {
        self.sorted.front().copied()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host::timers::Deadline;
    use core::time::Duration;

    fn call() -> Call {
        Call {
            kind: CallKind::Execute,
            deadline: Deadline::new(Instant::ZERO, Duration::from_secs(1), false, None),
        }
    }

    #[test]
    fn deadlines_stay_in_order_whatever_the_order_of_changes() {
        use alloc::collections::BTreeSet;
        let mut deadlines = Deadlines::default();
        let mut model = BTreeSet::new();
        let mut state = 0x2545_f491_4f6c_dd1d_u64;
        for step in 0..2000u64 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let at = Instant::from_millis(state % 50);
            let entry = (at, CallId(step));
            match state % 3 {
                // A removal of some entry, often the first, sometimes a missing one.
                0 => {
                    let target = match state % 4 {
                        0 => model
                            .iter()
                            .nth((state as usize / 8) % (model.len() + 1))
                            .copied(),
                        _ => model.first().copied(),
                    };
                    let target = target.unwrap_or(entry);
                    deadlines.remove(target);
                    model.remove(&target);
                }
                _ => {
                    deadlines.insert(entry);
                    model.insert(entry);
                }
            }
            assert_eq!(deadlines.first(), model.first().copied());
            assert!(deadlines.sorted.iter().eq(model.iter()));
        }
    }

    #[test]
    fn ids_stop_below_two_to_the_53() {
        let mut calls = Calls::new(4);
        calls.skip_to(MAX_CALL_ID);
        assert_eq!(calls.next_id(), Some(CallId(MAX_CALL_ID)));
        let last = calls.insert(call());
        assert_eq!(last.get(), (1 << 53) - 1);
        assert_eq!(calls.next_id(), None);
    }

    #[test]
    fn the_ring_of_ended_ids_is_bounded() {
        let mut calls = Calls::new(3);
        for _ in 0..10 {
            let id = calls.insert(call());
            calls.end(id, Some(EndReason::TimedOut));
        }
        assert_eq!(calls.remembered(), 3);
        assert_eq!(
            calls.lookup(&Id::from(10)),
            Match::Ended(CallId(10), Some(EndReason::TimedOut))
        );
        assert_eq!(calls.lookup(&Id::from(2)), Match::Ended(CallId(2), None));
        assert_eq!(calls.lookup(&Id::from(11)), Match::Unknown);
        assert_eq!(calls.lookup(&Id::from("10")), Match::Unknown);
        assert_eq!(calls.lookup(&Id::from(0)), Match::Unknown);
    }

    #[test]
    fn no_memory_when_the_ring_is_empty() {
        let mut calls = Calls::new(0);
        let id = calls.insert(call());
        calls.end(id, Some(EndReason::Cancelled));
        assert_eq!(calls.remembered(), 0);
        assert_eq!(calls.lookup(&Id::from(1)), Match::Ended(CallId(1), None));
        assert_eq!(calls.len(), 0);
    }
}
