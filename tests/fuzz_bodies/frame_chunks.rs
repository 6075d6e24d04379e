//! `frame_chunks`: the line decoder under arbitrary chunking.
//!
//! The same stream fed in one piece, and in random chunks with frames taken out
//! between them, gives the same frames, and those are the frames a plain reading
//! of the framing rules gives (split at `\n`, drop a `\r` before it, skip blank
//! lines and a leading byte-order mark, bound each line). While frames are taken
//! out as they come, the decoder's buffer stays within a small multiple of the
//! line limit plus the chunk just pushed.

use dhara_protocol::frame::{DEFAULT_MAX_LINE_BYTES, Frame, KEPT_PREFIX_BYTES, LineDecoder};

use crate::source::{Chunks, Source};

/// A frame with its bytes owned, to compare runs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Owned {
    Line(Vec<u8>),
    TooLong { prefix: Vec<u8>, len: u64 },
    Truncated { prefix: Vec<u8>, len: u64 },
}

fn own(frame: Frame<'_>) -> Owned {
    match frame {
        Frame::Line(line) => Owned::Line(line.to_vec()),
        Frame::TooLong { prefix, len } => Owned::TooLong {
            prefix: prefix.to_vec(),
            len,
        },
        Frame::Truncated { prefix, len } => Owned::Truncated {
            prefix: prefix.to_vec(),
            len,
        },
        other => panic!("a frame kind this target does not know: {other:?}"),
    }
}

pub fn run(data: &[u8]) {
    let mut source = Source::new(data);
    // Six bytes of settings, then the stream.
    let kind = source.byte();
    let limit = usize::from(source.u16());
    let max = match kind % 4 {
        0 => DEFAULT_MAX_LINE_BYTES,
        1 => limit % 8,
        _ => limit % 300,
    };
    let max_chunk = 1 + source.below(64);
    let seed = u64::from(source.u16());
    let stream = source.rest();

    let expected = reference(stream, max);

    let mut whole = LineDecoder::with_max_line_bytes(max);
    whole.push(stream);
    whole.end();
    let one_shot = drain(&mut whole);
    assert_eq!(
        one_shot, expected,
        "one-shot decoding breaks the framing rules"
    );

    let mut chunks = Chunks::new(seed);
    let mut decoder = LineDecoder::with_max_line_bytes(max);
    let mut frames = Vec::new();
    for chunk in chunks.split(stream, max_chunk) {
        decoder.push(chunk);
        if chunks.next() % 4 != 0 {
            // Taking frames out as they come keeps the buffer bounded.
            let bound = 2 * (max.min(1 << 20) + 1 + KEPT_PREFIX_BYTES) + chunk.len();
            if max < 1 << 20 {
                assert!(
                    decoder.buffered() <= bound,
                    "{} bytes buffered, bound {bound}",
                    decoder.buffered()
                );
            }
            frames.extend(drain(&mut decoder));
        }
    }
    decoder.end();
    frames.extend(drain(&mut decoder));
    assert_eq!(frames, expected, "chunked decoding differs from one-shot");
}

fn drain(decoder: &mut LineDecoder) -> Vec<Owned> {
    let mut frames = Vec::new();
    while let Some(frame) = decoder.next_frame() {
        frames.push(own(frame));
    }
    frames
}

/// The framing rules, read plainly over the whole stream at once.
fn reference(stream: &[u8], max: usize) -> Vec<Owned> {
    let stream = stream.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(stream);
    let kept = KEPT_PREFIX_BYTES.min(max);
    let blank = |line: &[u8]| line.iter().all(|&b| matches!(b, b' ' | b'\t' | b'\r'));
    let mut frames = Vec::new();
    let mut lines: Vec<&[u8]> = stream.split(|&b| b == b'\n').collect();
    // After the last `\n`: the unfinished line (empty when the stream ends with one).
    let unfinished = lines.pop().unwrap_or_default();
    for line in lines {
        let content = line.strip_suffix(b"\r").unwrap_or(line);
        if content.len() > max {
            frames.push(Owned::TooLong {
                prefix: content[..kept].to_vec(),
                len: content.len() as u64,
            });
        } else if !blank(content) {
            frames.push(Owned::Line(content.to_vec()));
        }
    }
    let len = unfinished.len() as u64;
    if unfinished.len() > max + 1 || (unfinished.len() == max + 1 && !unfinished.ends_with(b"\r")) {
        frames.push(Owned::Truncated {
            prefix: unfinished[..kept].to_vec(),
            len,
        });
    } else if !blank(unfinished) {
        frames.push(Owned::Truncated {
            prefix: unfinished.to_vec(),
            len,
        });
    }
    frames
}
