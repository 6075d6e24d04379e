//! When an extension that stopped is started again: the restart policy, the backoff,
//! and the crash-loop breaker, all read from one history of recent exits (see
//! [`RestartPolicy`] for the rules).

use alloc::collections::VecDeque;
use core::time::Duration;

use crate::time::Instant;

/// When a stopped extension is started again.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum RestartWhen {
    /// As soon as the backoff delay is over.
    AtOnce,
    /// When a call for one of its tools is waiting (and the backoff delay is over).
    OnNextCall,
}

/// How an extension is restarted.
///
/// Every end of a process counts as an exit: an exit of its own, a kill after a
/// timeout, a failure to start. The exits within [`window`](RestartPolicy::window)
/// before one decide what follows it:
///
/// * with [`max_exits`](RestartPolicy::max_exits) or more of them (this one
///   included), the crash-loop breaker trips: the extension is marked failed, and
///   is not started again until [`Fleet::restart`](super::Fleet::restart) asks;
/// * otherwise it is started again after a delay: none when no other exit came
///   within the window, then [`backoff_initial`](RestartPolicy::backoff_initial),
///   doubling with each further exit up to [`backoff_cap`](RestartPolicy::backoff_cap);
/// * with [`RestartWhen::AtOnce`] as soon as the delay is over, with
///   [`RestartWhen::OnNextCall`] once a call for one of its tools waits (and the
///   delay is over).
///
/// ```
/// use core::time::Duration;
/// use dhara_protocol::fleet::{RestartPolicy, RestartWhen};
///
/// let policy = RestartPolicy::default().when(RestartWhen::OnNextCall).max_exits(3);
/// assert_eq!(policy.window, Duration::from_secs(180));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct RestartPolicy {
    /// When to start it again. Default [`RestartWhen::AtOnce`].
    pub when: RestartWhen,
    /// The delay before the second restart within the window. Default 1 s.
    pub backoff_initial: Duration,
    /// The longest delay. Default 30 s.
    pub backoff_cap: Duration,
    /// This many exits within the window mark the extension failed; 0: never.
    /// Default 5.
    pub max_exits: usize,
    /// How far back exits count, for the backoff and the breaker. Default 3 min.
    pub window: Duration,
}

impl Default for RestartPolicy {
    fn default() -> RestartPolicy {
        RestartPolicy {
            when: RestartWhen::AtOnce,
            backoff_initial: Duration::from_secs(1),
            backoff_cap: Duration::from_secs(30),
            max_exits: 5,
            window: Duration::from_secs(180),
        }
    }
}

impl RestartPolicy {
    /// Sets [`when`](RestartPolicy::when).
    #[must_use]
    pub fn when(mut self, when: RestartWhen) -> RestartPolicy {
        self.when = when;
        self
    }

    /// Sets [`backoff_initial`](RestartPolicy::backoff_initial) and
    /// [`backoff_cap`](RestartPolicy::backoff_cap).
    #[must_use]
    pub fn backoff(mut self, initial: Duration, cap: Duration) -> RestartPolicy {
        self.backoff_initial = initial;
        self.backoff_cap = cap;
        self
    }

    /// Sets [`max_exits`](RestartPolicy::max_exits).
    #[must_use]
    pub fn max_exits(mut self, max_exits: usize) -> RestartPolicy {
        self.max_exits = max_exits;
        self
    }

    /// Sets [`window`](RestartPolicy::window).
    #[must_use]
    pub fn window(mut self, window: Duration) -> RestartPolicy {
        self.window = window;
        self
    }
}

/// The most exits remembered: enough for any breaker that can trip, and for the
/// backoff to reach any cap (2^64 times the initial delay).
const HISTORY: usize = 64;

/// What follows an exit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum After {
    /// Start again no earlier than this.
    Restart { not_before: Instant },
    /// The breaker tripped: this many exits within the window.
    Failed { exits: usize },
}

/// The recent exits of one extension, oldest first.
#[derive(Clone, Debug, Default)]
pub(crate) struct History {
    exits: VecDeque<Instant>,
}

impl History {
    /// Records an exit at `now` and decides what follows it.
    pub(crate) fn exit(&mut self, now: Instant, policy: &RestartPolicy) -> After {
        let recent = self.within(now, policy.window);
        if self.exits.len() >= HISTORY {
            self.exits.pop_front();
        }
        self.exits.push_back(now);
        if policy.max_exits > 0 && recent + 1 >= policy.max_exits {
            return After::Failed { exits: recent + 1 };
        }
        After::Restart {
            not_before: now + delay(recent, policy),
        }
    }

    /// Forgets every exit: the next one restarts at once.
    pub(crate) fn clear(&mut self) {
        self.exits.clear();
    }

    /// How many exits came within `window` before `now`.
    fn within(&self, now: Instant, window: Duration) -> usize {
        self.exits
            .iter()
            .filter(|&&at| now.saturating_duration_since(at) <= window)
            .count()
    }
}

/// The delay before a restart that follows `earlier` exits within the window: none
/// for the first, then the initial delay doubling up to the cap.
pub(crate) fn delay(earlier: usize, policy: &RestartPolicy) -> Duration {
    let Some(doublings) = earlier.checked_sub(1) else {
        return Duration::ZERO;
    };
    let factor = 1u32.checked_shl(u32::try_from(doublings).unwrap_or(u32::MAX));
    factor
        .and_then(|f| policy.backoff_initial.checked_mul(f))
        .map_or(policy.backoff_cap, |d| d.min(policy.backoff_cap))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(n: u64) -> Instant {
        Instant::from_millis(n * 1000)
    }

    #[test]
    fn the_first_restart_is_at_once_then_the_delay_doubles_to_the_cap() {
        let policy = RestartPolicy::default()
            .max_exits(0)
            .backoff(Duration::from_secs(1), Duration::from_secs(5));
        let delays: alloc::vec::Vec<u64> = (0..7).map(|k| delay(k, &policy).as_secs()).collect();
        assert_eq!(delays, [0, 1, 2, 4, 5, 5, 5]);
        assert_eq!(delay(usize::MAX, &policy), Duration::from_secs(5));

        let mut history = History::default();
        assert_eq!(
            history.exit(s(10), &policy),
            After::Restart { not_before: s(10) }
        );
        assert_eq!(
            history.exit(s(11), &policy),
            After::Restart { not_before: s(12) }
        );
        assert_eq!(
            history.exit(s(13), &policy),
            After::Restart { not_before: s(15) }
        );
    }

    #[test]
    fn exits_older_than_the_window_are_forgotten() {
        let policy = RestartPolicy::default().window(Duration::from_secs(60));
        let mut history = History::default();
        history.exit(s(0), &policy);
        history.exit(s(30), &policy);
        // 61 s after the first, 31 s after the second: one earlier exit counts.
        assert_eq!(
            history.exit(s(61), &policy),
            After::Restart { not_before: s(62) }
        );
        // Long after all of them: at once again.
        assert_eq!(
            history.exit(s(500), &policy),
            After::Restart { not_before: s(500) }
        );
    }

    #[test]
    fn five_exits_within_three_minutes_trip_the_breaker() {
        let policy = RestartPolicy::default();
        let mut history = History::default();
        for t in [0, 40, 80, 120] {
            assert!(matches!(history.exit(s(t), &policy), After::Restart { .. }));
        }
        assert_eq!(history.exit(s(180), &policy), After::Failed { exits: 5 });

        // Spread out, they do not.
        let mut history = History::default();
        for t in [0, 50, 100, 150, 200, 250] {
            assert!(matches!(history.exit(s(t), &policy), After::Restart { .. }));
        }
        history.clear();
        assert_eq!(
            history.exit(s(251), &policy),
            After::Restart { not_before: s(251) }
        );
    }

    #[test]
    fn the_history_is_bounded() {
        let policy = RestartPolicy::default().max_exits(0);
        let mut history = History::default();
        for t in 0..1000 {
            history.exit(Instant::from_millis(t), &policy);
        }
        assert_eq!(history.exits.len(), HISTORY);
    }
}
