//! Output as it happens: each row printed the moment it is decided, and, on a
//! terminal, a status line on stderr saying what the check is waiting for and for
//! how long.
//!
//! The status line is drawn by a thread of its own, ten times a second, only while a
//! wait has lasted a moment (so fast checks do not flicker), and erased before each
//! row is printed: rows go to stdout, the status line to stderr, and both take the
//! same lock, so on a terminal they never cut into each other.

use std::io::{IsTerminal, Write};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread;
use std::time::{Duration, Instant};

/// How often the status line is redrawn.
const TICK: Duration = Duration::from_millis(100);
/// How long a wait lasts before the status line shows it.
const SHOW_AFTER: Duration = Duration::from_millis(300);
/// Erases the terminal line the cursor is on.
const ERASE: &str = "\r\x1b[2K";

/// What is being waited for, shared with the drawing thread.
#[derive(Default)]
struct State {
    waiting: Option<(String, Instant, Duration)>,
    drawn: bool,
    finished: bool,
}

/// The status line and the printing of rows (cheap to clone: one shared state).
#[derive(Clone)]
pub(super) struct Live {
    state: Arc<Mutex<State>>,
    enabled: bool,
}

impl Live {
    /// A status line drawn on stderr when `wanted` and stderr is a terminal.
    pub(super) fn new(wanted: bool) -> Live {
        let live = Live {
            state: Arc::new(Mutex::new(State::default())),
            enabled: wanted && std::io::stderr().is_terminal(),
        };
        if live.enabled {
            let state = Arc::clone(&live.state);
            thread::spawn(move || draw(&state));
        }
        live
    }

    /// Shows that the check now waits for `what`, `limit` at most.
    pub(super) fn waiting(&self, what: impl Into<String>, limit: Duration) {
        if self.enabled {
            self.lock().waiting = Some((what.into(), Instant::now(), limit));
        }
    }

    /// The wait is over.
    pub(super) fn done(&self) {
        if self.enabled {
            let mut state = self.lock();
            state.waiting = None;
            erase(&mut state);
        }
    }

    /// Prints `text` on stdout at once, with the status line out of its way.
    pub(super) fn print(&self, text: &str) {
        let mut state = self.lock();
        erase(&mut state);
        let mut out = std::io::stdout().lock();
        // A closed stdout (as when piped into `head`) is not an error of the check.
        let _ = out.write_all(text.as_bytes()).and_then(|()| out.flush());
    }

    /// Stops drawing for good and erases the status line.
    pub(super) fn finish(&self) {
        let mut state = self.lock();
        state.finished = true;
        erase(&mut state);
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // A panic elsewhere cannot leave the state half-written: recover it.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// The drawing thread: redraws the status line until the check finishes.
fn draw(state: &Mutex<State>) {
    loop {
        thread::sleep(TICK);
        let mut state = state.lock().unwrap_or_else(|e| e.into_inner());
        if state.finished {
            return;
        }
        let Some((what, since, limit)) = &state.waiting else {
            continue;
        };
        let waited = since.elapsed();
        if waited < SHOW_AFTER {
            continue;
        }
        let line = format!(
            "{ERASE}  ... {:.1}s of {}: waiting for {what}",
            waited.as_secs_f64(),
            crate::args::format_duration(*limit)
        );
        let mut err = std::io::stderr().lock();
        let _ = err.write_all(line.as_bytes()).and_then(|()| err.flush());
        state.drawn = true;
    }
}

fn erase(state: &mut State) {
    if state.drawn {
        let mut err = std::io::stderr().lock();
        let _ = err.write_all(ERASE.as_bytes()).and_then(|()| err.flush());
        state.drawn = false;
    }
}
