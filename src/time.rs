//! Time as an input: the endpoints never read a clock.
//!
//! An [`Instant`] is a [`Duration`] since an origin the driver chooses (process
//! start, boot, `performance.now()`'s zero, a simulation's step 0). Only differences
//! between instants matter, so any monotonic source works. Under the `std` feature,
//! [`Clock`] converts from [`std::time::Instant`].
//!
//! ```
//! use core::time::Duration;
//! use dhara_protocol::time::Instant;
//!
//! // A driver on a microcontroller counts milliseconds since boot.
//! let sent = Instant::from_millis(1_000);
//! let deadline = sent + Duration::from_secs(30);
//! let now = Instant::from_millis(25_000);
//! assert!(now < deadline);
//! // How long to sleep before reporting the timeout:
//! assert_eq!(deadline.saturating_duration_since(now), Duration::from_secs(6));
//! ```

use core::ops::{Add, Sub};
use core::time::Duration;

/// A point in time, as a [`Duration`] since an origin chosen by the driver.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Instant(Duration);

impl Instant {
    /// The origin.
    pub const ZERO: Instant = Instant(Duration::ZERO);

    /// The instant `since_origin` after the origin.
    pub const fn from_duration(since_origin: Duration) -> Instant {
        Instant(since_origin)
    }

    /// The instant `ms` milliseconds after the origin.
    pub const fn from_millis(ms: u64) -> Instant {
        Instant(Duration::from_millis(ms))
    }

    /// The time since the origin.
    pub const fn since_origin(self) -> Duration {
        self.0
    }

    /// `self + d`, saturating at the largest representable instant.
    #[must_use]
    pub fn saturating_add(self, d: Duration) -> Instant {
        Instant(self.0.saturating_add(d))
    }

    /// `self - earlier`, or zero when `earlier` is later.
    pub fn saturating_duration_since(self, earlier: Instant) -> Duration {
        self.0.saturating_sub(earlier.0)
    }
}

impl Add<Duration> for Instant {
    type Output = Instant;
    /// Saturating: never panics.
    fn add(self, d: Duration) -> Instant {
        self.saturating_add(d)
    }
}

impl Sub<Instant> for Instant {
    type Output = Duration;
    /// Saturating: zero when `rhs` is later.
    fn sub(self, rhs: Instant) -> Duration {
        self.saturating_duration_since(rhs)
    }
}

/// Converts [`std::time::Instant`] to and from [`Instant`] around a fixed origin.
///
/// ```
/// use dhara_protocol::time::Clock;
/// let clock = Clock::new();
/// let now = clock.now();
/// assert!(clock.to_std(now) <= std::time::Instant::now());
/// ```
#[cfg(feature = "std")]
#[derive(Clone, Copy, Debug)]
pub struct Clock {
    origin: std::time::Instant,
}

#[cfg(feature = "std")]
impl Clock {
    /// A clock whose origin is now.
    pub fn new() -> Clock {
        Clock {
            origin: std::time::Instant::now(),
        }
    }

    /// A clock with the given origin.
    pub fn with_origin(origin: std::time::Instant) -> Clock {
        Clock { origin }
    }

    /// The current time.
    pub fn now(&self) -> Instant {
        self.at(std::time::Instant::now())
    }

    /// The [`Instant`] for a `std` instant (the origin, if `t` is earlier).
    pub fn at(&self, t: std::time::Instant) -> Instant {
        Instant(t.saturating_duration_since(self.origin))
    }

    /// The `std` instant for an [`Instant`]. One too far in the future for
    /// [`std::time::Instant`] (such as a deadline saturated at [`Duration::MAX`])
    /// gives a far-future `std` instant, never one in the past.
    ///
    /// ```
    /// use std::time::Duration;
    /// use dhara_protocol::time::{Clock, Instant};
    ///
    /// let clock = Clock::new();
    /// let never = Instant::from_duration(Duration::MAX);
    /// assert!(clock.to_std(never) > std::time::Instant::now() + Duration::from_secs(3600));
    /// ```
    pub fn to_std(&self, t: Instant) -> std::time::Instant {
        let mut since_origin = t.0;
        loop {
            if let Some(at) = self.origin.checked_add(since_origin) {
                return at;
            }
            // Halving reaches zero, which always fits, within 128 steps.
            since_origin /= 2;
        }
    }
}

#[cfg(feature = "std")]
impl Default for Clock {
    fn default() -> Clock {
        Clock::new()
    }
}
