//! Newline framing: one JSON message per line.
//!
//! Each message travels as one line of compact JSON ending in `\n`. The
//! [`LineDecoder`] turns the bytes read from a pipe, in whatever chunks they
//! arrive, back into lines; [`write_line`] frames an outgoing message.
//!
//! What the decoder does (the Framing section of the project's decisions):
//!
//! - A line ends at `\n`; a `\r\n` ending is accepted too. The ending is not part
//!   of the line handed out.
//! - Lines holding only whitespace (space, tab, `\r`) are skipped.
//! - A UTF-8 byte-order mark (`EF BB BF`) at the very start of the stream is
//!   skipped, even when it arrives split over several chunks.
//! - A line is at most [`LineDecoder::max_line_bytes`] long. The limit counts the
//!   line's content only: neither the `\n` nor the `\r` of a `\r\n` ending. A
//!   longer line is discarded up to its `\n` as it arrives, so memory stays
//!   bounded, and is reported as [`Frame::TooLong`] with its first bytes (so the
//!   `"id"` of an oversized request can still be found) and its full length. The
//!   stream is back in sync right after it. An oversized line is reported even if
//!   it holds only whitespace: the limit is checked before the content is looked
//!   at, the same way whatever the chunking.
//! - When the stream ends ([`LineDecoder::end`]) in the middle of a line, that
//!   line is reported as [`Frame::Truncated`] (unless it holds only whitespace).
//! - Decoding is linear in the bytes fed, whatever the chunking: no byte is
//!   searched for `\n` twice when lines are taken out as they complete, and
//!   never more than twice otherwise.
//!
//! Oversized and truncated lines are frames rather than errors, so they come out
//! in stream order with the lines around them.
//!
//! ```
//! use dhara_protocol::frame::{Frame, LineDecoder};
//!
//! let mut decoder = LineDecoder::new();
//! decoder.push(b"{\"jsonrpc\":\"2.0\",\"method\":\"ping\"}\r\n\n{\"jsonrpc\":");
//! assert_eq!(
//!     decoder.next_frame(),
//!     Some(Frame::Line(b"{\"jsonrpc\":\"2.0\",\"method\":\"ping\"}"))
//! );
//! assert_eq!(decoder.next_frame(), None); // the rest of the line is still to come
//!
//! decoder.push(b"\"2.0\"");
//! decoder.end(); // the peer closed its end of the pipe
//! assert_eq!(
//!     decoder.next_frame(),
//!     Some(Frame::Truncated { prefix: b"{\"jsonrpc\":\"2.0\"", len: 16 })
//! );
//! assert_eq!(decoder.next_frame(), None);
//! ```

use crate::json::scan;
use alloc::collections::VecDeque;
use alloc::vec::Vec;
use core::fmt;

/// Default bound on one line's length.
pub const DEFAULT_MAX_LINE_BYTES: usize = 64 * 1024 * 1024;

/// How much of an oversized line is kept so the endpoint can still find its `"id"`.
///
/// When the line limit is smaller than this, only as many bytes as the limit
/// are kept: a decoder never holds more of one line than its limit allows.
pub const KEPT_PREFIX_BYTES: usize = 4096;

/// How many times larger the decoder's buffer gets when the stream outgrows it.
///
/// Each time the buffer grows, the allocator copies what it holds. A line of
/// megabytes arriving in reads of 64 KiB outgrows it several times: growing
/// 8-fold rather than doubling, a third as often (64 KiB, 512 KiB, 4 MiB
/// rather than 64 KiB, 128 KiB, ... 4 MiB), and the bytes copied along the way
/// add up to far less. The buffer then keeps its size for the lines after.
const GROWTH: usize = 8;

/// The UTF-8 byte-order mark, skipped at the very start of a stream.
const BYTE_ORDER_MARK: [u8; 3] = [0xEF, 0xBB, 0xBF];

/// One unit of the incoming stream, in stream order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Frame<'a> {
    /// One complete line, without its `\n` or `\r\n`. Never empty or only whitespace.
    Line(&'a [u8]),
    /// A line longer than the limit: its first bytes (at most
    /// [`KEPT_PREFIX_BYTES`]) and its full length, not counting its ending.
    /// The stream is back in sync after it.
    TooLong {
        /// The first bytes of the line.
        prefix: &'a [u8],
        /// The length of the whole line, not counting its `\n` or `\r\n`.
        len: u64,
    },
    /// The stream ended in the middle of a line (after [`LineDecoder::end`]): what
    /// was kept of it (all of it, unless it was over the limit) and its length.
    Truncated {
        /// The bytes kept of the unfinished line.
        prefix: &'a [u8],
        /// The length of the whole unfinished line.
        len: u64,
    },
}

impl fmt::Display for Frame<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Frame::Line(line) => write!(f, "a line of {} bytes", line.len()),
            Frame::TooLong { len, .. } => {
                write!(f, "a line of {len} bytes, longer than the line limit")
            }
            Frame::Truncated { len, .. } => {
                write!(f, "the stream ended in the middle of a line ({len} bytes)")
            }
        }
    }
}

/// A frame, as where it lies in the decoder's buffer.
enum Span {
    Line(core::ops::Range<usize>),
    TooLong(core::ops::Range<usize>, u64),
    Truncated(core::ops::Range<usize>, u64),
}

impl Span {
    /// The frame, in the buffer it was found in.
    fn frame(self, buf: &[u8]) -> Frame<'_> {
        match self {
            Span::Line(line) => Frame::Line(buf.get(line).unwrap_or_default()),
            Span::TooLong(prefix, len) => Frame::TooLong {
                prefix: buf.get(prefix).unwrap_or_default(),
                len,
            },
            Span::Truncated(prefix, len) => Frame::Truncated {
                prefix: buf.get(prefix).unwrap_or_default(),
                len,
            },
        }
    }
}

/// Appends one message plus `\n` to `out`: `write` appends the message bytes.
///
/// The message is written straight into the caller's buffer, with no
/// intermediate copy. It must not hold a raw `\n` (compact JSON never does: the
/// JSON writer escapes every control character).
///
/// ```
/// use dhara_protocol::frame::write_line;
///
/// let mut out = Vec::new();
/// write_line(&mut out, |buf| buf.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}"));
/// write_line(&mut out, |buf| buf.extend_from_slice(b"{}"));
/// assert_eq!(out, b"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n{}\n");
/// ```
pub fn write_line(out: &mut Vec<u8>, write: impl FnOnce(&mut Vec<u8>)) {
    write(out);
    out.push(b'\n');
}

/// The outgoing side of an endpoint: lines waiting to be written, in one buffer that
/// is reused for every message.
///
/// An endpoint appends lines with [`write_line`](OutputBuffer::write_line), and
/// hands what is waiting to its driver with [`hand_out`](OutputBuffer::hand_out),
/// which borrows the buffer; the next write or [`reclaim`](OutputBuffer::reclaim)
/// clears it. So nothing is allocated per message once the buffer has grown, and a
/// buffer grown by one huge message shrinks back afterwards.
///
/// ```
/// use dhara_protocol::frame::OutputBuffer;
///
/// let mut out = OutputBuffer::new();
/// out.write_line(|buf| buf.extend_from_slice(b"{}"));
/// assert_eq!(out.hand_out(), Some(&b"{}\n"[..]));
/// out.reclaim(); // the driver wrote those bytes
/// assert_eq!(out.hand_out(), None);
/// ```
#[derive(Debug, Default)]
pub struct OutputBuffer {
    bytes: Vec<u8>,
    /// `bytes` was handed out: clear it before writing again.
    handed: bool,
}

impl OutputBuffer {
    /// Past this capacity, the buffer shrinks back once its bytes were handed out.
    pub const KEEP_BYTES: usize = 1 << 20;

    /// An empty buffer.
    pub const fn new() -> OutputBuffer {
        OutputBuffer {
            bytes: Vec::new(),
            handed: false,
        }
    }

    /// Appends one line: `write` appends the message, then `\n` follows.
    pub fn write_line(&mut self, write: impl FnOnce(&mut Vec<u8>)) {
        self.reclaim();
        write_line(&mut self.bytes, write);
    }

    /// The lines waiting to be written, if any. They count as handed out: the next
    /// write or [`reclaim`](OutputBuffer::reclaim) clears them.
    pub fn hand_out(&mut self) -> Option<&[u8]> {
        self.reclaim();
        if self.bytes.is_empty() {
            return None;
        }
        self.handed = true;
        Some(&self.bytes)
    }

    /// `true` when lines wait to be handed out.
    pub fn is_pending(&self) -> bool {
        !self.handed && !self.bytes.is_empty()
    }

    /// Clears what was handed out (the driver has written it).
    pub fn reclaim(&mut self) {
        if core::mem::take(&mut self.handed) {
            self.bytes.clear();
            if self.bytes.capacity() > Self::KEEP_BYTES {
                self.bytes.shrink_to(Self::KEEP_BYTES);
            }
        }
    }
}

/// An incremental line decoder: push bytes in as they are read, take frames out.
///
/// See the [module documentation](self) for the rules it applies. Typical use:
/// after each read, [`push`](LineDecoder::push) the bytes, then call
/// [`next_frame`](LineDecoder::next_frame) until it returns `None`; when the
/// peer closes the stream, call [`end`](LineDecoder::end) and drain it once more.
///
/// # Memory
///
/// The decoder holds the bytes of the complete lines not yet taken out, plus the
/// unfinished last line. The unfinished line never takes more than
/// `max_line_bytes + 1` bytes (the `+ 1` is a `\r` that may start a `\r\n`):
/// past that, only its first [`KEPT_PREFIX_BYTES`] are kept and the rest is
/// dropped as it arrives. Bytes already handed out are released lazily, on a
/// later [`push`](LineDecoder::push), once they make up half of the buffer.
///
/// The buffer keeps its capacity from one line to the next. When the stream
/// outgrows it, it grows 8-fold at a time up to the line limit (and only
/// doubles past it), so a line of megabytes arriving in 64 KiB reads is moved
/// to a larger buffer only a few times.
pub struct LineDecoder {
    /// The longest line content accepted.
    max_line_bytes: usize,
    /// Buffered stream bytes. `buf[..start]` has been handed out already.
    buf: Vec<u8>,
    /// Where the next frame begins.
    start: usize,
    /// `buf[start..searched]` holds no `\n` (when `searched > start`).
    searched: usize,
    /// Where the unfinished last line begins: `buf[tail..]` holds no `\n`.
    tail: usize,
    /// Complete lines over the limit whose middle was dropped, oldest first.
    /// Each one's kept prefix sits in `buf` at its `at`.
    oversized: VecDeque<Oversized>,
    /// The unfinished last line, once it is over the limit. Its kept prefix
    /// is `buf[tail..]`, and the rest of it is dropped as it arrives.
    discarding: Option<Oversized>,
    /// Whether a byte-order mark may still be coming, and how much of it has.
    stream_start: StreamStart,
    /// Whether [`end`](LineDecoder::end) was called.
    ended: bool,
    /// [`next_frame`](LineDecoder::next_frame) last found no frame, and nothing
    /// was pushed or ended since: asking again finds none at once.
    drained: bool,
    /// Bytes searched for `\n` so far (the linearity tests read it).
    scanned: u64,
}

/// A line over the limit, of which only the first bytes are buffered.
#[derive(Debug, Clone, Copy)]
struct Oversized {
    /// Where its kept prefix begins in the buffer.
    at: usize,
    /// How many bytes of it are kept.
    kept: usize,
    /// How many bytes of it have arrived, not counting its `\n`.
    len: u64,
    /// Whether the last byte that arrived was a `\r` (which is part of the
    /// ending, not of the content, if a `\n` follows it).
    ends_with_cr: bool,
}

impl Oversized {
    /// Counts more bytes of the line, which are not kept.
    fn extend(&mut self, bytes: &[u8]) {
        self.len += bytes.len() as u64;
        if let Some(&last) = bytes.last() {
            self.ends_with_cr = last == b'\r';
        }
    }

    /// The length of the line's content, once its `\n` has arrived.
    fn content_len(&self) -> u64 {
        self.len - u64::from(self.ends_with_cr)
    }
}

/// How far the stream is into a possible byte-order mark at its very start.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum StreamStart {
    /// Only the first `n` bytes of the mark have arrived so far.
    Matched(usize),
    /// The start of the stream is behind us.
    Passed,
}

impl Default for LineDecoder {
    fn default() -> LineDecoder {
        LineDecoder::new()
    }
}

impl fmt::Debug for LineDecoder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LineDecoder")
            .field("max_line_bytes", &self.max_line_bytes)
            .field("buffered", &self.buf.len())
            .field("ended", &self.ended)
            .finish_non_exhaustive()
    }
}

impl LineDecoder {
    /// A decoder with the default line limit, [`DEFAULT_MAX_LINE_BYTES`].
    pub fn new() -> LineDecoder {
        LineDecoder::with_max_line_bytes(DEFAULT_MAX_LINE_BYTES)
    }

    /// A decoder that accepts lines of at most `max` bytes (not counting the
    /// `\n` or `\r\n` ending).
    pub fn with_max_line_bytes(max: usize) -> LineDecoder {
        LineDecoder {
            max_line_bytes: max,
            buf: Vec::new(),
            start: 0,
            searched: 0,
            tail: 0,
            oversized: VecDeque::new(),
            discarding: None,
            stream_start: StreamStart::Matched(0),
            ended: false,
            drained: false,
            scanned: 0,
        }
    }

    /// The longest line accepted, not counting its `\n` or `\r\n` ending.
    pub fn max_line_bytes(&self) -> usize {
        self.max_line_bytes
    }

    /// Appends a chunk of the stream.
    ///
    /// Never stores more than a bounded amount for the current unfinished line:
    /// once it passes `max_line_bytes` the rest of that line is discarded as it
    /// arrives (keeping its first [`KEPT_PREFIX_BYTES`]), so memory stays
    /// bounded even when a 1 GiB line is fed in chunks. Only the end of the
    /// chunk, after its last `\n`, is searched here; the lines before it are
    /// found by [`next_frame`](LineDecoder::next_frame).
    ///
    /// Bytes pushed after [`end`](LineDecoder::end) are ignored.
    pub fn push(&mut self, bytes: &[u8]) {
        if self.ended {
            return;
        }
        self.drained = false;
        let rest = self.skip_byte_order_mark(bytes);
        self.append(rest);
    }

    /// Marks the end of the stream (EOF). Idempotent.
    ///
    /// After it, [`next_frame`](LineDecoder::next_frame) hands out the rest of
    /// the complete lines and then, if the stream stopped in the middle of a
    /// line, a [`Frame::Truncated`].
    pub fn end(&mut self) {
        if self.ended {
            return;
        }
        // The first bytes of a byte-order mark, with nothing after them, were data.
        if let StreamStart::Matched(n) = self.stream_start {
            self.stream_start = StreamStart::Passed;
            self.append(BYTE_ORDER_MARK.get(..n).unwrap_or_default());
        }
        self.ended = true;
        self.drained = false;
    }

    /// The next frame in stream order, or `None` if more bytes are needed (or,
    /// after [`end`](LineDecoder::end), when everything has been handed out).
    ///
    /// Only the work for one frame is done: the search for `\n` stops at the end
    /// of the line handed out (blank lines before it are skipped on the way), and
    /// once it has found none, asking again before more bytes are pushed (or the
    /// stream ends) costs nothing.
    pub fn next_frame(&mut self) -> Option<Frame<'_>> {
        let span = self.next_span()?;
        Some(span.frame(&self.buf))
    }

    /// [`next_frame`](LineDecoder::next_frame), with the frame given as where it
    /// lies in the buffer.
    #[inline(always)]
    fn next_span(&mut self) -> Option<Span> {
        if self.drained {
            return None;
        }
        loop {
            // Complete lines run up to the next oversized line, or else up to
            // the unfinished one; the byte just before that boundary is a `\n`.
            let boundary = self.oversized.front().map_or(self.tail, |line| line.at);
            if self.start < boundary {
                debug_assert_eq!(self.buf.get(boundary - 1), Some(&b'\n'));
                let from = self.searched.max(self.start);
                let newline = match self.find_newline(from, boundary - 1) {
                    Some(newline) => newline,
                    None => boundary - 1,
                };
                let line_start = self.start;
                self.start = newline + 1;
                self.searched = self.start;
                let content = self.content_end(line_start, newline);
                if content - line_start > self.max_line_bytes {
                    let kept = line_start + self.kept_prefix_len();
                    let len = (content - line_start) as u64;
                    return Some(Span::TooLong(line_start..kept, len));
                }
                if is_blank(&self.buf[line_start..content]) {
                    continue;
                }
                // The last complete line buffered: the next ask finds none at once.
                if self.start == self.tail {
                    self.drained = !self.ended && self.oversized.is_empty();
                }
                return Some(Span::Line(line_start..content));
            }
            if let Some(line) = self.oversized.pop_front() {
                self.start = line.at + line.kept;
                self.searched = self.start;
                let len = line.content_len();
                return Some(Span::TooLong(line.at..self.start, len));
            }
            // Only the unfinished line is left; it is a frame only at the end.
            if !self.ended || (self.start == self.buf.len() && self.discarding.is_none()) {
                self.drained = true;
                return None;
            }
            let line_start = self.start;
            self.start = self.buf.len();
            self.searched = self.start;
            self.tail = self.start;
            let len = match self.discarding.take() {
                Some(line) => line.len,
                None if is_blank(&self.buf[line_start..]) => continue,
                None => (self.buf.len() - line_start) as u64,
            };
            return Some(Span::Truncated(line_start..self.buf.len(), len));
        }
    }

    /// The line that has begun and not ended: its first bytes as kept (at most
    /// `max_line_bytes`, or [`KEPT_PREFIX_BYTES`] of a line over the limit) and its
    /// length so far. `None` when every byte handed in so far ended a line, or the
    /// unfinished one is blank. An endpoint names these bytes when a reply never
    /// comes: most often the peer wrote its reply without the final newline, or did
    /// not flush it.
    pub fn unfinished_line(&self) -> Option<(&[u8], u64)> {
        let kept = self
            .buf
            .get(self.tail.max(self.start)..)
            .unwrap_or_default();
        let len = match &self.discarding {
            Some(line) => line.len,
            None if is_blank(kept) => return None,
            None => kept.len() as u64,
        };
        Some((kept, len))
    }

    /// Bytes currently buffered (for bounds checks and tests), including bytes
    /// already handed out that have not been released yet.
    pub fn buffered(&self) -> usize {
        self.buf.len()
    }

    /// How many bytes have been searched for `\n` so far. For tests that check
    /// decoding is linear in the bytes fed.
    #[doc(hidden)]
    pub fn scanned_bytes(&self) -> u64 {
        self.scanned
    }

    /// Strips a byte-order mark off the very start of the stream, returning the
    /// rest of `bytes`.
    fn skip_byte_order_mark<'b>(&mut self, bytes: &'b [u8]) -> &'b [u8] {
        let mut rest = bytes;
        while let StreamStart::Matched(n) = self.stream_start {
            let (Some(&expected), Some((&byte, after))) =
                (BYTE_ORDER_MARK.get(n), rest.split_first())
            else {
                break;
            };
            if byte == expected {
                rest = after;
                self.stream_start = if n + 1 == BYTE_ORDER_MARK.len() {
                    StreamStart::Passed
                } else {
                    StreamStart::Matched(n + 1)
                };
            } else {
                // Not a byte-order mark: the bytes that looked like one are data.
                self.stream_start = StreamStart::Passed;
                self.append(BYTE_ORDER_MARK.get(..n).unwrap_or_default());
            }
        }
        rest
    }

    /// Adds stream bytes to the buffer, dropping what is over the limit of the
    /// unfinished last line.
    fn append(&mut self, mut bytes: &[u8]) {
        if bytes.is_empty() {
            return;
        }
        self.release_handed_out();

        // The unfinished line is over the limit already: drop bytes up to its end.
        if let Some(mut line) = self.discarding.take() {
            let newline = find_newline(bytes, &mut self.scanned);
            let Some(newline) = newline else {
                line.extend(bytes);
                self.discarding = Some(line);
                return;
            };
            line.extend(&bytes[..newline]);
            self.oversized.push_back(line);
            bytes = &bytes[newline + 1..];
            self.tail = self.buf.len();
        }

        let old_len = self.buf.len();
        if self.start == self.tail {
            // All that is left unread is the unfinished line, which holds no `\n`.
            self.searched = old_len;
        }
        let tail = match rfind_newline(bytes, &mut self.scanned) {
            Some(newline) => old_len + newline + 1,
            None => self.tail,
        };
        let line_len = old_len + bytes.len() - tail;
        let ends_with_cr = bytes.last() == Some(&b'\r');
        if line_len - usize::from(ends_with_cr) <= self.max_line_bytes {
            self.store(bytes);
            self.tail = tail;
            return;
        }

        // The new unfinished line is over the limit: keep its prefix only.
        let kept = self.kept_prefix_len();
        let kept_end = tail + kept;
        if kept_end <= old_len {
            self.buf.truncate(kept_end);
        } else {
            self.store(&bytes[..kept_end - old_len]);
        }
        self.searched = self.searched.min(kept_end);
        self.tail = tail;
        self.discarding = Some(Oversized {
            at: tail,
            kept,
            len: line_len as u64,
            ends_with_cr,
        });
    }

    /// Copies stream bytes to the end of the buffer.
    ///
    /// A buffer too small for them grows [`GROWTH`]-fold, up to the line
    /// limit, and at least doubles past it.
    fn store(&mut self, bytes: &[u8]) {
        let needed = self.buf.len() + bytes.len();
        if needed > self.buf.capacity() {
            let grown = self.buf.capacity().saturating_mul(GROWTH);
            let target = grown.min(self.max_line_bytes).max(needed);
            // `reserve` at least doubles the buffer, even past the line limit.
            self.buf.reserve(target - self.buf.len());
        }
        self.buf.extend_from_slice(bytes);
    }

    /// Drops the bytes already handed out once they make up half of the buffer,
    /// so the cost of moving the rest is paid for by the bytes consumed.
    fn release_handed_out(&mut self) {
        let done = self.start;
        if done == 0 || done < self.buf.len() / 2 {
            return;
        }
        self.buf.drain(..done);
        self.start = 0;
        self.searched = self.searched.saturating_sub(done);
        self.tail -= done;
        for line in self.oversized.iter_mut().chain(self.discarding.as_mut()) {
            line.at -= done;
        }
    }

    /// Searches `buf[from..to]` for `\n`, returning its position in `buf`.
    fn find_newline(&mut self, from: usize, to: usize) -> Option<usize> {
        find_newline(&self.buf[from..to], &mut self.scanned).map(|at| from + at)
    }

    /// Where a line's content ends, given where its `\n` is: before a `\r`
    /// that comes just before the `\n`.
    fn content_end(&self, line_start: usize, newline: usize) -> usize {
        if newline > line_start && self.buf.get(newline - 1) == Some(&b'\r') {
            newline - 1
        } else {
            newline
        }
    }

    /// How much of an oversized line is kept.
    fn kept_prefix_len(&self) -> usize {
        KEPT_PREFIX_BYTES.min(self.max_line_bytes)
    }
}

/// Takes the next frame out of the decoder that `owner` keeps (at `decoder(owner)`)
/// and hands both to `handle`; returns whether there was a frame.
///
/// The decoder's buffer is set aside while `handle` runs (moved out and back, not
/// copied), so the frame, which borrows it, and `owner` can be used together: a line
/// is handled where it lies, without copying it out. `handle` must not use the
/// decoder, whose buffer is away. When the decoder has no frame, nothing is moved.
/// Both endpoints read their input this way.
///
/// ```
/// use dhara_protocol::frame::{self, Frame, LineDecoder};
///
/// struct Endpoint { decoder: LineDecoder, lines: usize }
/// impl Endpoint {
///     fn handle(&mut self, frame: Frame<'_>) {
///         if let Frame::Line(_) = frame { self.lines += 1; }
///     }
/// }
///
/// let mut e = Endpoint { decoder: LineDecoder::new(), lines: 0 };
/// e.decoder.push(b"{}\n[]\n");
/// while frame::handle_next_frame(&mut e, |e| &mut e.decoder, Endpoint::handle) {}
/// assert_eq!(e.lines, 2);
/// ```
#[inline]
pub fn handle_next_frame<T>(
    owner: &mut T,
    decoder: fn(&mut T) -> &mut LineDecoder,
    handle: fn(&mut T, Frame<'_>),
) -> bool {
    let decoder_now = decoder(owner);
    // Nothing came in since the decoder last had no frame: not even a call.
    if decoder_now.drained {
        return false;
    }
    let Some(span) = decoder_now.next_span() else {
        return false;
    };
    // Only the buffer is set aside (three words), not the whole decoder.
    let buf = core::mem::take(&mut decoder(owner).buf);
    handle(owner, span.frame(&buf));
    decoder(owner).buf = buf;
    true
}

/// Whether a line holds only whitespace (space, tab, `\r`), and so is skipped.
fn is_blank(line: &[u8]) -> bool {
    line.iter().all(|&b| matches!(b, b' ' | b'\t' | b'\r'))
}

/// The position of the first `\n` in `hay`, adding the bytes looked at to `scanned`.
fn find_newline(hay: &[u8], scanned: &mut u64) -> Option<usize> {
    let found = scan::newline(hay);
    *scanned += found.map_or(hay.len(), |i| i + 1) as u64;
    found
}

/// The position of the last `\n` in `hay`, adding the bytes looked at to `scanned`.
fn rfind_newline(hay: &[u8], scanned: &mut u64) -> Option<usize> {
    let found = scan::last_newline(hay);
    *scanned += found.map_or(hay.len(), |i| hay.len() - i) as u64;
    found
}

/// At most this many bytes of a bad line are kept in an [`Excerpt`]: enough to recognise
/// the line in a report (an endpoint's `PeerError`).
pub const EXCERPT_BYTES: usize = 200;

/// The start of a line, kept to report it: at most [`EXCERPT_BYTES`] bytes, as they
/// came (they may not be UTF-8).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Excerpt {
    /// The first bytes of the line.
    pub start: Vec<u8>,
    /// The length of the whole line, in bytes.
    pub len: u64,
}

impl Excerpt {
    /// The excerpt of `line`, whose whole length is `len`.
    pub(crate) fn of(line: &[u8], len: u64) -> Excerpt {
        let start = line.get(..EXCERPT_BYTES).unwrap_or(line);
        Excerpt {
            start: start.to_vec(),
            len,
        }
    }
}

impl fmt::Display for Excerpt {
    /// The start as text (bytes that are not UTF-8 become U+FFFD), with `…` when the
    /// line was longer.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for chunk in self.start.utf8_chunks() {
            f.write_str(chunk.valid())?;
            if !chunk.invalid().is_empty() {
                f.write_str("\u{FFFD}")?;
            }
        }
        if (self.start.len() as u64) < self.len {
            f.write_str("…")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::format;
    use alloc::string::String;
    use alloc::vec;

    fn naive_find(hay: &[u8]) -> Option<usize> {
        hay.iter().position(|&b| b == b'\n')
    }

    fn naive_rfind(hay: &[u8]) -> Option<usize> {
        hay.iter().rposition(|&b| b == b'\n')
    }

    /// Feeds `line` and its `\n` in reads of `chunk` bytes, taking the line out
    /// at the end; returns the buffer's capacity after each read.
    fn capacities(decoder: &mut LineDecoder, line: &[u8], chunk: usize) -> Vec<usize> {
        let mut seen = Vec::new();
        for piece in line.chunks(chunk) {
            decoder.push(piece);
            assert_eq!(decoder.next_frame(), None);
            seen.push(decoder.buf.capacity());
        }
        decoder.push(b"\n");
        assert_eq!(decoder.next_frame(), Some(Frame::Line(line)));
        seen
    }

    #[test]
    fn a_drained_decoder_looks_again_only_after_a_push_or_the_end() {
        let mut decoder = LineDecoder::new();
        decoder.push(b"{\"a\":1}\n{\"b\"");
        assert_eq!(decoder.next_frame(), Some(Frame::Line(b"{\"a\":1}")));
        assert_eq!(decoder.next_frame(), None);
        let scanned = decoder.scanned_bytes();
        assert_eq!(decoder.next_frame(), None);
        assert_eq!(decoder.scanned_bytes(), scanned, "nothing searched again");
        decoder.push(b":2}\n");
        assert_eq!(decoder.next_frame(), Some(Frame::Line(b"{\"b\":2}")));
        assert_eq!(decoder.next_frame(), None);
        decoder.push(b"[");
        assert_eq!(decoder.next_frame(), None);
        decoder.end();
        assert_eq!(
            decoder.next_frame(),
            Some(Frame::Truncated {
                prefix: b"[",
                len: 1
            })
        );
        assert_eq!(decoder.next_frame(), None);
        decoder.push(b"ignored after the end\n");
        assert_eq!(decoder.next_frame(), None);
    }

    #[test]
    fn the_last_complete_line_leaves_the_decoder_drained() {
        let mut decoder = LineDecoder::new();
        decoder.push(b"a\n\nb\n[");
        assert_eq!(decoder.next_frame(), Some(Frame::Line(b"a")));
        assert!(!decoder.drained, "a blank line and another line follow");
        assert_eq!(decoder.next_frame(), Some(Frame::Line(b"b")));
        assert!(decoder.drained, "only the unfinished line is left");
        assert_eq!(decoder.next_frame(), None);
        decoder.push(b"]\n");
        assert_eq!(decoder.next_frame(), Some(Frame::Line(b"[]")));
        decoder.push(b"{");
        decoder.end();
        let cut = Frame::Truncated {
            prefix: b"{",
            len: 1,
        };
        assert_eq!(decoder.next_frame(), Some(cut));
        assert_eq!(decoder.next_frame(), None);
    }

    /// An owner of a decoder that writes down every frame it is handed.
    struct Owner {
        decoder: LineDecoder,
        frames: Vec<String>,
    }

    impl Owner {
        fn handle(&mut self, frame: Frame<'_>) {
            self.frames.push(format!("{frame:?}"));
        }
    }

    #[test]
    fn frames_handed_to_an_owner_are_those_the_decoder_gives() {
        let input: &[&[u8]] = &[b"{\"a\":1}\r\n \n0123456789", b"abc\n[1]\n", b"[2"];
        let mut owner = Owner {
            decoder: LineDecoder::with_max_line_bytes(8),
            frames: Vec::new(),
        };
        let mut alone = LineDecoder::with_max_line_bytes(8);
        let mut expected = Vec::new();
        for (i, chunk) in input.iter().enumerate() {
            owner.decoder.push(chunk);
            alone.push(chunk);
            if i == input.len() - 1 {
                owner.decoder.end();
                alone.end();
            }
            while handle_next_frame(&mut owner, |o| &mut o.decoder, Owner::handle) {}
            while let Some(frame) = alone.next_frame() {
                expected.push(format!("{frame:?}"));
            }
        }
        assert_eq!(owner.frames, expected);
        assert_eq!(
            owner.frames.len(),
            4,
            "a line, one too long, a line, a cut one"
        );
        assert_eq!(
            owner.decoder.buffered(),
            alone.buffered(),
            "the buffer came back"
        );
    }

    #[test]
    fn a_long_line_outgrows_the_buffer_only_a_few_times() {
        let line = vec![b'A'; 3 << 20];
        let mut decoder = LineDecoder::new();
        let mut seen = capacities(&mut decoder, &line, 64 * 1024);
        seen.dedup();
        assert_eq!(seen, [64 << 10, 512 << 10, 4 << 20]);
        // The next line fits: the buffer keeps its size.
        let seen = capacities(&mut decoder, &line, 64 * 1024);
        assert!(seen.iter().all(|&capacity| capacity == 4 << 20), "{seen:?}");
    }

    #[test]
    fn the_buffer_grows_faster_only_up_to_the_line_limit() {
        let line = vec![b'A'; 90_000];
        let mut decoder = LineDecoder::with_max_line_bytes(100_000);
        let seen = capacities(&mut decoder, &line, 64 * 1024);
        // 64 KiB, then room for the two reads: no more than doubling.
        assert_eq!(seen.last(), Some(&(128 << 10)));
    }

    #[test]
    fn word_search_agrees_with_a_byte_search() {
        // Bytes around `\n` that a sloppy zero-byte test confuses with it.
        let alphabet = [0x0B, 0x09, 0x8A, 0x00, 0xFF, 0x0A ^ 0x80, b'a'];
        let mut seed = 0x2545_F491_4F6C_DD1Du64;
        let mut random = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed as usize
        };
        for len in 0..200 {
            for newlines in 0..4 {
                for _ in 0..20 {
                    let mut hay: Vec<u8> = (0..len)
                        .map(|_| alphabet[random() % alphabet.len()])
                        .collect();
                    for _ in 0..newlines.min(len) {
                        let at = random() % len;
                        hay[at] = b'\n';
                    }
                    let mut scanned = 0;
                    let found = find_newline(&hay, &mut scanned);
                    assert_eq!(found, naive_find(&hay), "{hay:?}");
                    assert_eq!(scanned, found.map_or(len, |i| i + 1) as u64);
                    // As it is, and ending a line, as most chunks do.
                    for ends_a_line in [false, true] {
                        if let Some(last) = hay.last_mut().filter(|_| ends_a_line) {
                            *last = b'\n';
                        }
                        let mut scanned = 0;
                        let found = rfind_newline(&hay, &mut scanned);
                        assert_eq!(found, naive_rfind(&hay), "{hay:?}");
                        assert_eq!(scanned, found.map_or(len, |i| len - i) as u64);
                    }
                }
            }
        }
    }
}
