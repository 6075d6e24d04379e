//! Collecting the replies of a batch until the last one is known.
//!
//! JSON-RPC 2.0 answers a batch with one array holding a response per request in it
//! (in any order), and with nothing at all when it held only notifications. Some of
//! those responses are known at once (automatic errors, `initialize`, `tools/list`);
//! others come later from the author (`tools/execute`, custom methods), in any order.
//! A batch stays open here until its entries have all been read and none of its
//! requests is left to the author; then its responses go out as one line.

use alloc::collections::BTreeMap;
use alloc::vec::Vec;

use crate::rpc::Response;

/// A batch whose reply is being collected.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct BatchId(u64);

#[derive(Debug, Default)]
struct Batch {
    /// The responses known so far.
    replies: Vec<Response>,
    /// Requests of this batch the author has not answered yet.
    waiting: usize,
    /// All entries of the batch have been read.
    sealed: bool,
}

impl Batch {
    fn is_complete(&self) -> bool {
        self.sealed && self.waiting == 0
    }
}

/// The open batches. A batch only stays open while one of its requests is pending,
/// so their number is bounded by the pending-request limit (plus the one being read).
#[derive(Debug, Default)]
pub(crate) struct Batches {
    open: BTreeMap<BatchId, Batch>,
    next: u64,
}

impl Batches {
    /// Starts collecting a batch whose entries are about to be read.
    pub(crate) fn open(&mut self) -> BatchId {
        let id = BatchId(self.next);
        self.next = self.next.wrapping_add(1);
        self.open.insert(id, Batch::default());
        id
    }

    /// Adds a response known now.
    pub(crate) fn add(&mut self, batch: BatchId, response: Response) {
        if let Some(b) = self.open.get_mut(&batch) {
            b.replies.push(response);
        }
    }

    /// Notes one more request of the batch left for the author to answer.
    pub(crate) fn expect(&mut self, batch: BatchId) {
        if let Some(b) = self.open.get_mut(&batch) {
            b.waiting += 1;
        }
    }

    /// All entries have been read. Returns the batch's responses when they are all
    /// known (empty for a batch of notifications: nothing is sent).
    pub(crate) fn seal(&mut self, batch: BatchId) -> Option<Vec<Response>> {
        if let Some(b) = self.open.get_mut(&batch) {
            b.sealed = true;
        }
        self.take_if_complete(batch)
    }

    /// The author answered one of the batch's requests. Returns the batch's
    /// responses when this was the last one.
    pub(crate) fn answer(&mut self, batch: BatchId, response: Response) -> Option<Vec<Response>> {
        if let Some(b) = self.open.get_mut(&batch) {
            b.replies.push(response);
            b.waiting = b.waiting.saturating_sub(1);
        }
        self.take_if_complete(batch)
    }

    fn take_if_complete(&mut self, batch: BatchId) -> Option<Vec<Response>> {
        if self.open.get(&batch).is_some_and(Batch::is_complete) {
            self.open.remove(&batch).map(|b| b.replies)
        } else {
            None
        }
    }
}
