//! Deadlines: when a call times out, when the grace period after `shutdown` ends, and
//! which comes first.
//!
//! The Core keeps two kinds of timer, each with its reason: one deadline per call in
//! flight (sent time + timeout; progress may push it later when the caller opted in,
//! never past the cap), and the grace timer started with `shutdown`. The earliest is
//! what [`Output::Wait`](super::Output::Wait) names. When the driver reports any input
//! at or after a timer's instant, the Core fires every timer that is due, earliest
//! first.

use core::time::Duration;

use super::calls::CallId;
use crate::time::Instant;

/// A pending timer: when it fires, and why.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Timer {
    /// The instant it fires.
    pub at: Instant,
    /// What happens then.
    pub reason: TimerReason,
}

/// Why a timer exists.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum TimerReason {
    /// The deadline of a call: it ends with `CallError::Timeout` and the shutdown of
    /// the extension starts.
    CallDeadline(CallId),
    /// The end of the grace period after `shutdown`: the Core asks for a kill.
    GraceEnd,
}

/// The deadline of one call and the policy that moves it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Deadline {
    timeout: Duration,
    /// `Some(limit)` when progress extends the deadline: it never moves past `limit`.
    extends_until: Option<Instant>,
    at: Instant,
}

impl Deadline {
    /// The deadline of a request sent at `sent`.
    pub(crate) fn new(
        sent: Instant,
        timeout: Duration,
        progress_extends: bool,
        cap: Option<Duration>,
    ) -> Deadline {
        let extends_until = progress_extends.then(|| match cap {
            Some(cap) => sent + cap,
            None => Instant::from_duration(Duration::MAX),
        });
        let mut at = sent + timeout;
        if let Some(limit) = extends_until {
            at = at.min(limit);
        }
        Deadline {
            timeout,
            extends_until,
            at,
        }
    }

    /// The instant the call times out.
    pub(crate) fn at(&self) -> Instant {
        self.at
    }

    /// The deadline after progress reported at `now`, when it moves: a full timeout
    /// from `now`, capped at `sent + cap`, never earlier than before.
    pub(crate) fn after_progress(&self, now: Instant) -> Option<Deadline> {
        let limit = self.extends_until?;
        let at = (now + self.timeout).min(limit);
        (at > self.at).then_some(Deadline { at, ..*self })
    }
}

/// The earlier of two optional timers (ties go to `a`).
pub(crate) fn earliest(a: Option<Timer>, b: Option<Timer>) -> Option<Timer> {
    match (a, b) {
        (Some(a), Some(b)) if b.at < a.at => Some(b),
        (Some(a), _) => Some(a),
        (None, b) => b,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Instant {
        Instant::from_millis(n)
    }

    #[test]
    fn progress_moves_nothing_unless_asked() {
        let d = Deadline::new(ms(0), Duration::from_millis(100), false, None);
        assert_eq!(d.at(), ms(100));
        assert_eq!(d.after_progress(ms(50)), None);
    }

    #[test]
    fn progress_extends_up_to_the_cap() {
        let d = Deadline::new(
            ms(0),
            Duration::from_millis(100),
            true,
            Some(Duration::from_millis(250)),
        );
        let d = d.after_progress(ms(90)).unwrap_or(d);
        assert_eq!(d.at(), ms(190));
        let d = d.after_progress(ms(180)).unwrap_or(d);
        assert_eq!(d.at(), ms(250));
        assert_eq!(d.after_progress(ms(240)), None);
    }

    #[test]
    fn a_cap_below_the_timeout_shortens_it() {
        let d = Deadline::new(
            ms(0),
            Duration::from_millis(100),
            true,
            Some(Duration::from_millis(40)),
        );
        assert_eq!(d.at(), ms(40));
    }

    #[test]
    fn the_earliest_timer_wins_ties_to_the_first() {
        let a = Timer {
            at: ms(5),
            reason: TimerReason::GraceEnd,
        };
        let b = Timer {
            at: ms(5),
            reason: TimerReason::CallDeadline(CallId::for_tests(1)),
        };
        assert_eq!(earliest(Some(a), Some(b)), Some(a));
        assert_eq!(earliest(None, Some(b)), Some(b));
        assert_eq!(earliest(Some(b), None), Some(b));
    }
}
