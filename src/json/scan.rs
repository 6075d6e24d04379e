//! The byte-scanning kernels of the JSON grammar, and the newline search framing
//! uses: where string text ends (`"`, `\\`, control bytes, and optionally every
//! byte from 0x80 up), where a UTF-8 run ends, escape tables, numbers, `\n`.
//!
//! Each kernel takes a byte slice and an index and returns an index; none reads past
//! the slice. Words of eight bytes are tested with bit tricks on a `u64`, long runs
//! in 64-byte blocks the compiler turns into vector compares.

use core::ops::ControlFlow;

use super::error::{ErrorKind, Sure};
/// What each two-character escape `\x` stands for, by the byte `x`; 0 for the rest.
pub(super) static SHORT_ESCAPES: [u8; 256] = {
    let mut table = [0u8; 256];
    table[b'"' as usize] = b'"';
    table[b'\\' as usize] = b'\\';
    table[b'/' as usize] = b'/';
    table[b'b' as usize] = 0x08;
    table[b'f' as usize] = 0x0C;
    table[b'n' as usize] = b'\n';
    table[b'r' as usize] = b'\r';
    table[b't' as usize] = b'\t';
    table
};

/// The value of each hex digit, by its byte; 0xFF for the bytes that are none.
static HEX_DIGITS: [u8; 256] = {
    let mut table = [0xFFu8; 256];
    let mut d = 0;
    while d < 10 {
        table[b'0' as usize + d] = d as u8;
        d += 1;
    }
    let mut d = 0;
    while d < 6 {
        table[b'a' as usize + d] = 10 + d as u8;
        table[b'A' as usize + d] = 10 + d as u8;
        d += 1;
    }
    table
};

/// The value of four hex digits at `input[at..]`.
#[inline]
pub(super) fn hex4(input: &[u8], at: usize) -> Option<u32> {
    let &[a, b, c, d] = input.get(at..at + 4)?.first_chunk::<4>()?;
    let [a, b, c, d] = [a, b, c, d].map(|x| HEX_DIGITS[usize::from(x)]);
    if (a | b | c | d) & 0xF0 != 0 {
        return None;
    }
    Some(u32::from(a) << 12 | u32::from(b) << 8 | u32::from(c) << 4 | u32::from(d))
}

/// The end of the JSON number starting at `input[start]`
/// (`-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`), or the error and its offset.
#[inline]
pub(crate) fn number_end(input: &[u8], start: usize) -> Result<usize, (ErrorKind, usize)> {
    let digits = |mut i: usize| {
        while matches!(input.get(i), Some(b'0'..=b'9')) {
            i += 1;
        }
        i
    };
    let fail = |i: usize| match input.get(i) {
        None => Err((ErrorKind::UnexpectedEnd, i)),
        Some(_) => Err((ErrorKind::InvalidNumber, i)),
    };
    let mut i = start;
    if input.get(i) == Some(&b'-') {
        i += 1;
    }
    match input.get(i) {
        Some(b'0') => i += 1,
        Some(b'1'..=b'9') => i = digits(i + 1),
        _ => return fail(i),
    }
    if input.get(i) == Some(&b'.') {
        let first = i + 1;
        i = digits(first);
        if i == first {
            return fail(i);
        }
    }
    if matches!(input.get(i), Some(b'e' | b'E')) {
        i += 1;
        if matches!(input.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        let first = i;
        i = digits(first);
        if i == first {
            return fail(i);
        }
    }
    Ok(i)
}

const ONES: u64 = 0x0101_0101_0101_0101;
pub(super) const HIGH: u64 = 0x8080_8080_8080_8080;

/// The bytes of `word` that a JSON string cannot hold raw: `"`, `\` and controls
/// below 0x20. The lowest flagged byte (high bit set in the mask) is always a true
/// match; bytes above it may be flagged falsely, which no caller looks at.
#[inline]
pub(super) fn special_bytes(word: u64) -> u64 {
    let quote = word ^ (ONES * b'"' as u64);
    let backslash = word ^ (ONES * b'\\' as u64);
    let has_quote = quote.wrapping_sub(ONES) & !quote;
    let has_backslash = backslash.wrapping_sub(ONES) & !backslash;
    let has_control = word.wrapping_sub(ONES * 0x20) & !word;
    (has_quote | has_backslash | has_control) & HIGH
}

/// The bytes of `word` that end a run of ASCII string text: the special bytes of
/// [`special_bytes`] and every byte from 0x80 up (part of a multi-byte character).
/// The lowest flagged byte is always a true match.
#[inline]
pub(super) fn special_or_high_bytes(word: u64) -> u64 {
    special_bytes(word) | (word & HIGH)
}

/// `true` for the bytes a JSON string cannot hold raw.
#[inline]
pub(super) fn is_special(b: u8) -> bool {
    b == b'"' || b == b'\\' || b < 0x20
}

/// `true` for the bytes [`special_or_high_bytes`] flags. As a signed byte, every
/// byte from 0x80 up is negative, so one compare takes controls and them together;
/// and with bit 1 flipped the quote (0x22) becomes 0x20, the one byte it meets
/// going up from the controls (controls stay controls, the space becomes 0x22), so
/// the same compare takes it too. Checking a block of bytes this way is a vector
/// compare fewer per 16 bytes.
#[inline]
pub(super) fn is_special_or_high(b: u8) -> bool {
    ((b ^ 0x02) as i8) < 0x21 || b == b'\\'
}

/// The eight bytes at `bytes[at..]` as a little-endian word.
#[inline]
pub(super) fn word_at(bytes: &[u8], at: usize) -> Option<u64> {
    let word = bytes.get(at..at + 8)?;
    <[u8; 8]>::try_from(word).ok().map(u64::from_le_bytes)
}

/// Whether `a` and `b` are the same bytes. Texts of 8 to 16 bytes (most method
/// and tool names) are compared as two words, the first eight bytes and the last
/// eight, without a call.
#[inline]
pub(crate) fn same_bytes(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    if !(8..=16).contains(&a.len()) {
        return a == b;
    }
    let last = a.len() - 8;
    word_at(a, 0) == word_at(b, 0) && word_at(a, last) == word_at(b, last)
}

/// The index of the first `"`, `\` or control byte at or after `from`, or
/// `input.len()`.
#[inline]
pub(super) fn find_special(input: &[u8], from: usize) -> usize {
    find_run_end::<false, { usize::MAX }>(input, from)
}

/// The index of the first `"`, `\`, control byte or byte from 0x80 up at or after
/// `from`, or `input.len()`: where a run of ASCII text ends. A string whose text
/// ends at its closing quote this way is known to be UTF-8 without a check.
#[inline]
pub(super) fn find_ascii_run_end(input: &[u8], from: usize) -> usize {
    find_run_end::<true, { usize::MAX }>(input, from)
}

/// [`find_ascii_run_end`] for runs that mostly end within a few words (names,
/// short values): the first four words are checked in line, and only a longer run
/// goes on in the search for long runs.
#[inline(always)]
pub(super) fn run_end(input: &[u8], mut i: usize) -> usize {
    for _ in 0..4 {
        let Some(word) = word_at(input, i) else { break };
        let found = special_or_high_bytes(word);
        if found != 0 {
            return i + (found.trailing_zeros() / 8) as usize;
        }
        i += 8;
    }
    find_ascii_run_end(input, i)
}

/// After the multi-byte characters starting at `input[i]` (a byte from 0x80 up):
/// the index of the first ASCII byte after them. `Err` with where the first one
/// starts that is not well-formed UTF-8 (Unicode's table 3-7: no overlong forms, no
/// surrogates, nothing past U+10FFFF, no sequence cut short).
#[inline(never)]
pub(super) fn characters_end(input: &[u8], mut i: usize) -> Result<usize, usize> {
    while let Some(&lead) = input.get(i) {
        // The sequence's length, and the range its second byte must be in.
        let (len, second) = match lead {
            0x00..=0x7F => return Ok(i),
            0xC2..=0xDF => (2, 0x80..=0xBF),
            0xE0 => (3, 0xA0..=0xBF),
            0xE1..=0xEC | 0xEE..=0xEF => (3, 0x80..=0xBF),
            0xED => (3, 0x80..=0x9F),
            0xF0 => (4, 0x90..=0xBF),
            0xF1..=0xF3 => (4, 0x80..=0xBF),
            0xF4 => (4, 0x80..=0x8F),
            _ => return Err(i),
        };
        let sequence = input.get(i..i + len).ok_or(i)?;
        let (&first_after, rest) = sequence.get(1..).and_then(<[u8]>::split_first).ok_or(i)?;
        if !second.contains(&first_after) || rest.iter().any(|&b| b & 0xC0 != 0x80) {
            return Err(i);
        }
        i += len;
    }
    Ok(i)
}

/// [`characters_end`] with the usual cases in line: a two-byte character, or a
/// three-byte one that is neither a surrogate nor overlong, is checked here and the
/// index after it returned; anything else goes on in [`characters_end`].
#[inline(always)]
pub(super) fn characters_at_end(input: &[u8], i: usize) -> Result<usize, usize> {
    match (input.get(i), input.get(i + 1)) {
        (Some(0xC2..=0xDF), Some(0x80..=0xBF)) => Ok(i + 2),
        (Some(0xE1..=0xEC | 0xEE..=0xEF), Some(0x80..=0xBF))
            if matches!(input.get(i + 2), Some(0x80..=0xBF)) =>
        {
            Ok(i + 3)
        }
        _ => characters_end(input, i),
    }
}

/// After the escape at `input[at]` (a backslash), checked without decoding it: the
/// index past it, or `None` if it is not a whole, valid escape. A `\u` escape
/// needs four hex digits; if `strict`, a high surrogate must be followed by an
/// escaped low one, and a low one must not stand alone.
#[inline(always)]
pub(super) fn escape_end(input: &[u8], at: usize, strict: bool) -> Option<usize> {
    let letter = *input.get(at + 1)?;
    if SHORT_ESCAPES[usize::from(letter)] != 0 {
        return Some(at + 2);
    }
    if letter != b'u' {
        return None;
    }
    let unit = hex4(input, at + 2)?;
    if !strict || !(0xD800..=0xDFFF).contains(&unit) {
        return Some(at + 6);
    }
    let low = match input.get(at + 6..at + 8) {
        Some(b"\\u") if unit <= 0xDBFF => hex4(input, at + 8),
        _ => None,
    };
    match low {
        Some(0xDC00..=0xDFFF) => Some(at + 12),
        _ => None,
    }
}

/// Whether the `N` bytes at `bytes[at..]` are all there and none ends a run: a
/// loop the compiler turns into vector compares and one test.
#[inline(always)]
fn blocks_pass<const ASCII: bool, const N: usize>(bytes: &[u8], at: usize) -> bool {
    let Some(Ok(blocks)) = bytes.get(at..at + N).map(<&[u8; N]>::try_from) else {
        return false;
    };
    let mut any = 0u8;
    for &b in blocks {
        any |= u8::from(ends_run::<ASCII>(b));
    }
    any == 0
}

/// Whether a byte ends a run: a special byte, or also any byte from 0x80 up when
/// `ASCII`.
#[inline(always)]
pub(super) fn ends_run<const ASCII: bool>(b: u8) -> bool {
    if ASCII {
        is_special_or_high(b)
    } else {
        is_special(b)
    }
}

/// The bytes of `word` that end a run (see [`ends_run`]).
#[inline(always)]
fn run_enders<const ASCII: bool>(word: u64) -> u64 {
    if ASCII {
        special_or_high_bytes(word)
    } else {
        special_bytes(word)
    }
}

/// [`find_special`] and [`find_ascii_run_end`], searching the first word and at
/// most `WITHIN` bytes after it (and so returning at most `from + 8 + WITHIN`).
///
/// Short runs (member names, small values, text between escapes) mostly end within
/// the first word, checked here with bit tricks on a `u64`; longer ones go on in
/// [`find_run_end_after`].
#[inline(always)]
pub(super) fn find_run_end<const ASCII: bool, const WITHIN: usize>(
    input: &[u8],
    from: usize,
) -> usize {
    match word_at(input, from) {
        Some(word) => {
            let found = run_enders::<ASCII>(word);
            if found != 0 {
                return from + (found.trailing_zeros() / 8) as usize;
            }
            find_run_end_after::<ASCII, WITHIN>(input, from + 8)
        }
        None => {
            let tail = input.get(from..).sure();
            from + tail
                .iter()
                .position(|&b| ends_run::<ASCII>(b))
                .unwrap_or(tail.len())
        }
    }
}

/// [`find_run_end`] past its first word, at most `WITHIN` bytes: three more words,
/// then words up to a 64-byte boundary of memory, then 64-byte blocks (past the
/// first, four at a time), written so the compiler checks them with vector
/// compares; the block holding the byte that ends the run is then searched a word
/// at a time.
#[inline(never)]
fn find_run_end_after<const ASCII: bool, const WITHIN: usize>(input: &[u8], from: usize) -> usize {
    const BLOCK: usize = 64;
    let rest = input.get(from..).sure();
    let rest = rest.get(..WITHIN).unwrap_or(rest);
    // Three words; then as many as it takes for the blocks to start on a 64-byte
    // boundary of memory, so that no vector load straddles two cache lines (the
    // last word may reach past that boundary: the block after it checks those
    // bytes again).
    let i = match words_run_end::<ASCII>(rest, 0, 24) {
        ControlFlow::Break(end) => return from + end,
        ControlFlow::Continue(i) => i,
    };
    let aligned = i + rest.as_ptr().wrapping_add(i).align_offset(BLOCK) % BLOCK;
    let mut i = match words_run_end::<ASCII>(rest, i, aligned) {
        ControlFlow::Break(end) => return from + end,
        ControlFlow::Continue(i) => i.min(aligned),
    };
    // A block; past it, four at a time (one test for 256 bytes: base64 images);
    // then blocks again, as far as they go.
    if blocks_pass::<ASCII, BLOCK>(rest, i) {
        i += BLOCK;
        while blocks_pass::<ASCII, { 4 * BLOCK }>(rest, i) {
            i += 4 * BLOCK;
        }
        while blocks_pass::<ASCII, BLOCK>(rest, i) {
            i += BLOCK;
        }
    }
    while let Some(word) = word_at(rest, i) {
        let found = run_enders::<ASCII>(word);
        if found != 0 {
            return from + i + (found.trailing_zeros() / 8) as usize;
        }
        i += 8;
    }
    let tail = rest.get(i..).sure();
    from + i
        + tail
            .iter()
            .position(|&b| ends_run::<ASCII>(b))
            .unwrap_or(tail.len())
}

/// The first byte ending a run in `rest[i..]`, searched a word at a time from `i`
/// for as long as a word starts before `end`: `Break` with where it is, or
/// `Continue` with where the search stopped (at or past `end`, or where less
/// than a word is left).
#[inline(always)]
fn words_run_end<const ASCII: bool>(
    rest: &[u8],
    mut i: usize,
    end: usize,
) -> ControlFlow<usize, usize> {
    while i < end {
        let Some(word) = word_at(rest, i) else { break };
        let found = run_enders::<ASCII>(word);
        if found != 0 {
            return ControlFlow::Break(i + (found.trailing_zeros() / 8) as usize);
        }
        i += 8;
    }
    ControlFlow::Continue(i)
}

/// Where the string whose text goes on at `input[from]` ends: the first `"` at or
/// after `from` with an even number of backslashes before it (or `input.len()`).
///
/// Only quotes are looked for, 64 bytes at a time, so text dense with escapes is
/// still passed over quickly; what lies between (escapes, control bytes) is checked
/// when the string is decoded. A run of backslashes is counted once, before the
/// quote that follows it.
#[inline]
pub(super) fn string_end(input: &[u8], from: usize) -> usize {
    const BLOCK: usize = 64;
    let mut i = from;
    loop {
        while let Some(block) = input.get(i..i + BLOCK) {
            if block.iter().fold(false, |any, &b| any | (b == b'"')) {
                break;
            }
            i += BLOCK;
        }
        let at = loop {
            let Some(word) = word_at(input, i) else {
                let rest = input.get(i..).sure();
                match rest.iter().position(|&b| b == b'"') {
                    Some(quote) => break i + quote,
                    None => return input.len(),
                }
            };
            let quote = word ^ (ONES * b'"' as u64);
            let found = quote.wrapping_sub(ONES) & !quote & HIGH;
            if found != 0 {
                break i + (found.trailing_zeros() / 8) as usize;
            }
            i += 8;
        };
        let before = input.get(from..at).sure();
        let backslashes = before.iter().rev().take_while(|&&b| b == b'\\').count();
        if backslashes % 2 == 0 {
            return at;
        }
        i = at + 1;
    }
}

/// How many bytes a short run is copied as, whole, before it is cut back.
pub(super) const WINDOW: usize = 32;

/// The `"`, `\\` and control bytes of a text, found 64 bytes at a time: each block
/// becomes a bit mask of them (bit `k` for `bytes[base + k]`), and the next one is
/// the lowest bit set from some position on. Text dense with escapes is so walked
/// without a search, or a hard-to-predict branch, per run.
pub(super) type Specials = RunEnds<false>;

/// The bytes that end runs of text, 64 at a time: [`Specials`], or, when `ASCII`,
/// also every byte from 0x80 up (where a multi-byte character is checked).
pub(super) struct RunEnds<const ASCII: bool> {
    base: usize,
    mask: u64,
}

impl<const ASCII: bool> RunEnds<ASCII> {
    pub(super) const BLOCK: usize = 64;

    /// The bytes ending runs in the block starting at `bytes[at]`.
    #[inline]
    pub(super) fn at(bytes: &[u8], at: usize) -> RunEnds<ASCII> {
        RunEnds {
            base: at,
            mask: RunEnds::<ASCII>::block(bytes, at),
        }
    }

    /// The index of the first byte ending a run at or after `from` (which is never
    /// before the current block), or `bytes.len()`.
    #[inline(always)]
    pub(super) fn next(&mut self, bytes: &[u8], mut from: usize) -> usize {
        loop {
            let offset = from.saturating_sub(self.base);
            if offset < Self::BLOCK {
                let left = self.mask & (u64::MAX << offset);
                if left != 0 {
                    return self.base + left.trailing_zeros() as usize;
                }
                from = self.base + Self::BLOCK;
            }
            if from >= bytes.len() {
                return bytes.len();
            }
            *self = RunEnds::at(bytes, from);
        }
    }

    /// The mask of the 64 bytes at `bytes[at..]` (fewer at the end of `bytes`).
    #[inline]
    fn block(bytes: &[u8], at: usize) -> u64 {
        let Some(block) = bytes.get(at..at + Self::BLOCK) else {
            let tail = bytes.get(at..).sure();
            return tail
                .iter()
                .enumerate()
                .filter(|&(_, &b)| ends_run::<ASCII>(b))
                .fold(0, |mask, (k, _)| mask | 1 << k);
        };
        // One byte per input byte, 1 where it ends a run: a loop the compiler turns
        // into vector compares. Then each eight flags gather into eight bits.
        let mut flags = [0u8; 64];
        for (flag, &b) in flags.iter_mut().zip(block) {
            *flag = u8::from(ends_run::<ASCII>(b));
        }
        flags
            .chunks_exact(8)
            .enumerate()
            .fold(0, |mask, (k, eight)| {
                let eight = <[u8; 8]>::try_from(eight).map_or(0, u64::from_le_bytes);
                mask | (eight.wrapping_mul(0x0102_0408_1020_4080) >> 56) << (8 * k)
            })
    }
}

// ---- Newlines, for framing -----------------------------------------------------------

/// Bytes tested per step by the newline search.
const NEWLINE_BLOCK: usize = 64;
/// `\n` in every byte of a word.
const NEWLINES: u64 = u64::from_ne_bytes([b'\n'; 8]);
/// The low seven bits of every byte of a word.
const LOW_SEVEN: u64 = u64::from_ne_bytes([0x7F; 8]);

/// Whether a block holds a `\n`: a loop without branches, so vector compares.
#[inline]
fn block_has_newline(block: &[u8]) -> bool {
    block.iter().fold(false, |any, &b| any | (b == b'\n'))
}

/// The top bit of each byte of `word` that is `\n`, exactly (no false matches,
/// so the last one can be found too): `x` is zero where the byte is `\n`, and
/// adding `0x7F` to its low bits sets bit 7 of every other byte without a carry.
#[inline]
fn newline_bits(word: u64) -> u64 {
    let x = word ^ NEWLINES;
    !(((x & LOW_SEVEN) + LOW_SEVEN) | x | LOW_SEVEN)
}

/// An eight-byte chunk as a little-endian word.
#[inline]
fn chunk_word(chunk: &[u8]) -> u64 {
    <[u8; 8]>::try_from(chunk).map_or(0, u64::from_le_bytes)
}

/// The first `\n` in a short slice, a word at a time.
#[inline]
fn first_newline_in(bytes: &[u8]) -> Option<usize> {
    let mut words = bytes.chunks_exact(8);
    let mut at = 0;
    for word in &mut words {
        let bits = newline_bits(chunk_word(word));
        if bits != 0 {
            return Some(at + (bits.trailing_zeros() / 8) as usize);
        }
        at += 8;
    }
    let rest = words.remainder();
    rest.iter().position(|&b| b == b'\n').map(|i| at + i)
}

/// The last `\n` in a short slice, a word at a time.
#[inline]
fn last_newline_in(bytes: &[u8]) -> Option<usize> {
    let mut words = bytes.rchunks_exact(8);
    let mut end = bytes.len();
    for word in &mut words {
        let bits = newline_bits(chunk_word(word));
        if bits != 0 {
            return Some(end - 1 - (bits.leading_zeros() / 8) as usize);
        }
        end -= 8;
    }
    words.remainder().iter().rposition(|&b| b == b'\n')
}

/// The index of the first `\n` in `hay`: 64-byte blocks tested whole, then the one
/// holding a `\n` a word at a time.
#[inline]
pub(crate) fn newline(hay: &[u8]) -> Option<usize> {
    let mut blocks = hay.chunks_exact(NEWLINE_BLOCK);
    let mut at = 0;
    loop {
        match blocks.next() {
            Some(block) if !block_has_newline(block) => at += NEWLINE_BLOCK,
            Some(block) => return first_newline_in(block).map(|i| at + i),
            None => return first_newline_in(blocks.remainder()).map(|i| at + i),
        }
    }
}

/// The index of the last `\n` in `hay`, searched from the end like [`newline`].
/// A chunk that ends with one (as whole lines do) is answered at once.
#[inline]
pub(crate) fn last_newline(hay: &[u8]) -> Option<usize> {
    if let Some((b'\n', _)) = hay.split_last() {
        return Some(hay.len() - 1);
    }
    let mut blocks = hay.rchunks_exact(NEWLINE_BLOCK);
    let mut end = hay.len();
    loop {
        match blocks.next() {
            Some(block) if !block_has_newline(block) => end -= NEWLINE_BLOCK,
            Some(block) => {
                return last_newline_in(block).map(|i| end - NEWLINE_BLOCK + i);
            }
            None => return last_newline_in(blocks.remainder()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::vec::Vec;

    /// [`same_bytes`] is `==`: texts of every length up to 40, the same or one
    /// byte changed anywhere, or one byte shorter.
    #[test]
    fn same_bytes_is_equality() {
        let mut compared = 0;
        for len in 0..=40usize {
            let a: Vec<u8> = (0..len).map(|i| b'a' + (i % 26) as u8).collect();
            assert!(same_bytes(&a, &a.clone()), "{len}");
            for at in 0..len {
                for flip in [1u8, 0x80, 0x20] {
                    let mut b = a.clone();
                    if let Some(byte) = b.get_mut(at) {
                        *byte ^= flip;
                    }
                    assert_eq!(same_bytes(&a, &b), a == b, "{len} at {at}");
                    compared += 1;
                }
            }
            let shorter = a.get(..len.saturating_sub(1)).unwrap_or_default();
            assert_eq!(same_bytes(&a, shorter), len == 0, "{len}");
        }
        assert_eq!(compared, 3 * (0..=40).sum::<usize>());
    }

    /// The searches for the end of a run find the first byte that ends it, or the
    /// end of the input: wherever they start, however the text lies in memory
    /// against the 64-byte blocks they check, and at whatever distance the byte
    /// stands (in the first words, the words up to a block, the blocks, or the
    /// word-by-word tail).
    #[test]
    fn a_run_ends_at_its_first_ending_byte_wherever_it_lies_in_memory() {
        let enders: [u8; 6] = [b'"', b'\\', 0x01, 0x1F, 0xC3, 0xFF];
        let buffer = alloc::vec![b'='; 1200];
        for shift in 0..64 {
            // Past the first block, the blocks are checked four at a time: ending
            // bytes in each of the four, in the blocks after, and at the end.
            let far = (160..1100).step_by(41).chain([1199 - shift]);
            for len in (0..160).chain(far) {
                for ender in enders.iter().copied().map(Some).chain([None]) {
                    let mut bytes = buffer.clone();
                    let text = &mut bytes[shift..];
                    if let (Some(b), Some(slot)) = (ender, text.get_mut(len)) {
                        *slot = b;
                    }
                    let text = &bytes[shift..];
                    for from in [0, 1, 5, 8, 13].into_iter().filter(|&f| f <= len) {
                        let first = |special: fn(u8) -> bool| {
                            let rest = &text[from..];
                            from + rest.iter().position(|&b| special(b)).unwrap_or(rest.len())
                        };
                        let what = alloc::format!("shift {shift}, {len}, {ender:?}, from {from}");
                        let high = |b: u8| is_special(b) || b >= 0x80;
                        assert_eq!(find_ascii_run_end(text, from), first(high), "{what}");
                        assert_eq!(find_special(text, from), first(is_special), "{what}");
                    }
                }
            }
        }
    }

    /// Passes over `bytes` as a string's text is passed over: ASCII bytes one by
    /// one, multi-byte characters with `characters_end`.
    fn all_characters_ok(bytes: &[u8]) -> bool {
        let mut i = 0;
        while let Some(&b) = bytes.get(i) {
            if b < 0x80 {
                i += 1;
                continue;
            }
            match characters_end(bytes, i) {
                Ok(end) if end > i => i = end,
                _ => return false,
            }
        }
        true
    }

    /// Every lead byte against every second byte, and the third and fourth bytes
    /// from each class that matters (ASCII, the ends of the ranges a continuation
    /// byte may have to be in, and bytes that are no continuation): the same verdict
    /// as the standard library's UTF-8 check, with the sequence ending the text or
    /// followed by more.
    #[test]
    fn multi_byte_characters_are_checked_as_the_standard_library_checks_them() {
        let others = [0x41, 0x80, 0x8F, 0x90, 0x9F, 0xA0, 0xBF, 0xC0, 0xF5];
        for lead in 0x80..=0xFFu8 {
            for second in 0..=0xFFu8 {
                for third in others {
                    for fourth in others {
                        let bytes = [lead, second, third, fourth, b'a'];
                        for len in 1..=bytes.len() {
                            let bytes = &bytes[..len];
                            assert_eq!(
                                all_characters_ok(bytes),
                                core::str::from_utf8(bytes).is_ok(),
                                "{bytes:02X?}"
                            );
                        }
                    }
                }
            }
        }
    }

    /// The one-compare form of the byte test flags exactly the bytes a run of
    /// ASCII string text ends at.
    #[test]
    fn the_bytes_that_end_a_run_of_ascii_are_the_specials_and_the_high_ones() {
        for b in 0..=255u8 {
            let plain = b == b'"' || b == b'\\' || !(0x20..0x80).contains(&b);
            assert_eq!(is_special_or_high(b), plain, "{b:#04x}");
            assert_eq!(
                is_special(b),
                b == b'"' || b == b'\\' || b < 0x20,
                "{b:#04x}"
            );
        }
    }

    #[test]
    fn the_lowest_byte_a_word_flags_is_the_first_that_ends_a_run() {
        // Every byte value at every position, over backgrounds of plain text, of
        // bytes that are flagged falsely above a match, and of random words.
        let mut seed = 0x9E37_79B9_7F4A_7C15u64;
        let mut backgrounds = alloc::vec![ONES * u64::from(b'a'), 0, ONES * 0x21, ONES * 0xA0];
        for _ in 0..64 {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            backgrounds.push(seed);
        }
        for background in backgrounds {
            for at in 0..8 {
                for b in 0..=255u8 {
                    let mut bytes = background.to_le_bytes();
                    bytes[at] = b;
                    let word = u64::from_le_bytes(bytes);
                    let first = bytes.iter().position(|&b| is_special_or_high(b));
                    let flagged = special_or_high_bytes(word);
                    let lowest = (flagged != 0).then(|| (flagged.trailing_zeros() / 8) as usize);
                    assert_eq!(lowest, first, "{bytes:?}");
                    let first = bytes.iter().position(|&b| is_special(b));
                    let flagged = special_bytes(word);
                    let lowest = (flagged != 0).then(|| (flagged.trailing_zeros() / 8) as usize);
                    assert_eq!(lowest, first, "{bytes:?}");
                }
            }
        }
    }

    #[test]
    fn block_masks_flag_exactly_the_special_bytes() {
        for b in 0..=255u8 {
            for k in 0..Specials::BLOCK {
                // Special fillers below and above `b` check that nothing carries
                // between bytes.
                for filler in [b'a', b'"', b'\\', 0x1F, 0xA2, 0xFF] {
                    let mut bytes = [filler; Specials::BLOCK];
                    bytes[k] = b;
                    let expected = bytes
                        .iter()
                        .enumerate()
                        .filter(|&(_, &x)| is_special(x))
                        .fold(0u64, |mask, (i, _)| mask | 1 << i);
                    assert_eq!(Specials::block(&bytes, 0), expected, "{bytes:?}");
                }
            }
        }
    }

    #[test]
    fn specials_walk_every_special_byte_in_order() {
        let mut state = 0x2545_F491_4F6C_DD1Du64;
        let bytes: Vec<u8> = (0..1000)
            .map(|i| {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                match state % 8 {
                    0 => b"\"\\\x01\x1f\x7f\xa2\xdc "[(state >> 8) as usize % 8],
                    _ => b'a' + (i % 26) as u8,
                }
            })
            .collect();
        for start in [0, 1, 63, 64, 65, 500, 999, 1000] {
            let mut specials = Specials::at(&bytes, start);
            let mut from = start;
            loop {
                let next = specials.next(&bytes, from);
                assert_eq!(next, find_special(&bytes, from), "from {from}");
                if next >= bytes.len() {
                    break;
                }
                // An escape goes on two to six bytes past its backslash.
                from = (next + 2 + next % 5).min(bytes.len());
            }
        }
    }
}
