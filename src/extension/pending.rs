//! The requests waiting for the author's answer, by handle.

use alloc::collections::VecDeque;

use super::{Pending, RequestHandle};

/// The pending requests in the order their handles were given out, which is the
/// order of the handles themselves: a new one goes at the back, and one is found by
/// binary search. Answers mostly come in order, so most are taken from the front.
#[derive(Debug, Default)]
pub(super) struct PendingRequests {
    requests: VecDeque<(RequestHandle, Pending)>,
}

impl PendingRequests {
    pub(super) fn len(&self) -> usize {
        self.requests.len()
    }

    pub(super) fn is_empty(&self) -> bool {
        self.requests.is_empty()
    }

    /// Adds a request whose handle is greater than every handle already given out.
    pub(super) fn push(&mut self, request: RequestHandle, pending: Pending) {
        debug_assert!(self.requests.back().is_none_or(|(last, _)| *last < request));
        self.requests.push_back((request, pending));
    }

    pub(super) fn get(&self, request: RequestHandle) -> Option<&Pending> {
        let at = self.position(request)?;
        self.requests.get(at).map(|(_, pending)| pending)
    }

    pub(super) fn remove(&mut self, request: RequestHandle) -> Option<Pending> {
        let (_, pending) = match self.position(request)? {
            0 => self.requests.pop_front(),
            at => self.requests.remove(at),
        }?;
        Some(pending)
    }

    fn position(&self, request: RequestHandle) -> Option<usize> {
        match self.requests.front() {
            Some((first, _)) if *first == request => Some(0),
            _ => self
                .requests
                .binary_search_by_key(&request, |(r, _)| *r)
                .ok(),
        }
    }
}
