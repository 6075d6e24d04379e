//! Property tests for the line decoder: however a stream is cut into chunks,
//! and whenever the frames are taken out, the decoder hands out the same frames,
//! and they are the frames a plain whole-stream reading of the framing rules gives.

use dhara_protocol::frame::{Frame, KEPT_PREFIX_BYTES, LineDecoder};
use proptest::prelude::*;

/// A frame with its bytes copied out of the decoder.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Owned {
    Line(Vec<u8>),
    TooLong(Vec<u8>, u64),
    Truncated(Vec<u8>, u64),
}

fn own(frame: Frame<'_>) -> Owned {
    match frame {
        Frame::Line(line) => Owned::Line(line.to_vec()),
        Frame::TooLong { prefix, len } => Owned::TooLong(prefix.to_vec(), len),
        Frame::Truncated { prefix, len } => Owned::Truncated(prefix.to_vec(), len),
        other => panic!("unexpected frame {other:?}"),
    }
}

fn drain(decoder: &mut LineDecoder, frames: &mut Vec<Owned>) {
    while let Some(frame) = decoder.next_frame() {
        frames.push(own(frame));
    }
}

fn is_blank(bytes: &[u8]) -> bool {
    bytes.iter().all(|b| matches!(b, b' ' | b'\t' | b'\r'))
}

/// The framing rules applied to the whole stream at once, written as plainly as
/// possible: strip a leading byte-order mark, split at `\n`, then look at each piece.
fn reference(stream: &[u8], max: usize) -> Vec<Owned> {
    let kept = KEPT_PREFIX_BYTES.min(max);
    let stream = stream.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(stream);
    let mut pieces: Vec<&[u8]> = stream.split(|&b| b == b'\n').collect();
    let unfinished = pieces.pop().unwrap_or_default();
    let mut frames = Vec::new();
    for piece in pieces {
        let line = piece.strip_suffix(b"\r").unwrap_or(piece);
        if line.len() > max {
            frames.push(Owned::TooLong(line[..kept].to_vec(), line.len() as u64));
        } else if !is_blank(line) {
            frames.push(Owned::Line(line.to_vec()));
        }
    }
    // An unfinished line ending in `\r` may still get its `\n`: that `\r` does
    // not count against the limit yet.
    let content = unfinished.strip_suffix(b"\r").unwrap_or(unfinished);
    let len = unfinished.len() as u64;
    if content.len() > max {
        frames.push(Owned::Truncated(unfinished[..kept].to_vec(), len));
    } else if !is_blank(unfinished) {
        frames.push(Owned::Truncated(unfinished.to_vec(), len));
    }
    frames
}

/// Pushes `stream` in chunks of the given sizes (cycled), taking frames out
/// after a push when the matching `drain_after` flag is set, and checks the
/// bounds on memory and on the bytes searched along the way.
fn decode_chunked(stream: &[u8], max: usize, sizes: &[usize], drain_after: &[bool]) -> Vec<Owned> {
    let mut decoder = LineDecoder::with_max_line_bytes(max);
    let mut frames = Vec::new();
    let mut rest = stream;
    let mut fed = 0u64;
    let mut always_drained = true;
    let mut i = 0;
    while !rest.is_empty() {
        let size = sizes[i % sizes.len()].clamp(1, rest.len());
        let (chunk, after) = rest.split_at(size);
        let before = decoder.buffered();
        decoder.push(chunk);
        fed += chunk.len() as u64;
        // A push stores at most the chunk, plus the first bytes of the
        // stream if they had looked like the start of a byte-order mark.
        assert!(decoder.buffered() <= before + chunk.len() + 2);
        if drain_after[i % drain_after.len()] {
            drain(&mut decoder, &mut frames);
        } else {
            always_drained = false;
        }
        if always_drained {
            // Only the unfinished line is left (at most max + 1 bytes, or two
            // bytes that may start a byte-order mark), and what was handed out
            // is released once it makes up half of the buffer.
            let bound = max
                .saturating_add(2)
                .saturating_mul(2)
                .saturating_add(chunk.len());
            assert!(
                decoder.buffered() <= bound,
                "buffered {} with max {max} and a chunk of {}",
                decoder.buffered(),
                chunk.len()
            );
            assert!(
                decoder.scanned_bytes() <= fed,
                "{} > {fed}",
                decoder.scanned_bytes()
            );
        } else {
            assert!(
                decoder.scanned_bytes() <= 2 * fed,
                "{} > 2 * {fed}",
                decoder.scanned_bytes()
            );
        }
        rest = after;
        i += 1;
    }
    drain(&mut decoder, &mut frames);
    decoder.end();
    decoder.end();
    drain(&mut decoder, &mut frames);
    assert_eq!(decoder.next_frame(), None);
    frames
}

fn decode_one_shot(stream: &[u8], max: usize) -> Vec<Owned> {
    decode_chunked(stream, max, &[usize::MAX], &[true])
}

/// One piece of a generated stream.
fn piece() -> impl Strategy<Value = Vec<u8>> {
    // Bytes that matter to framing, plus a little ordinary text.
    let byte = prop::sample::select(vec![
        b'{', b'}', b'"', b'a', b'1', b' ', b'\t', b'\r', b'\n', 0xEF, 0xBB, 0xBF, 0xC3, 0xA9,
    ]);
    prop_oneof![
        // A short line with an LF or CRLF ending.
        (prop::collection::vec(byte.clone(), 0..20), any::<bool>()).prop_map(|(mut line, crlf)| {
            line.retain(|&b| b != b'\n');
            line.extend_from_slice(if crlf { b"\r\n" } else { b"\n" });
            line
        }),
        // Raw bytes, newlines and all.
        prop::collection::vec(byte, 0..12),
        // A blank line.
        prop::sample::select(vec![&b"\n"[..], b"\r\n", b" \t \n", b"\r\r\n", b"  "])
            .prop_map(|b| b.to_vec()),
        // A long line, around the small limits used below.
        (0usize..80, any::<bool>()).prop_map(|(len, crlf)| {
            let mut line: Vec<u8> = (0..len).map(|i| b'a' + (i % 26) as u8).collect();
            line.extend_from_slice(if crlf { b"\r\n" } else { b"\n" });
            line
        }),
    ]
}

fn stream() -> impl Strategy<Value = Vec<u8>> {
    (
        prop::sample::select(vec![
            &b""[..],
            b"\xEF\xBB\xBF",
            b"\xEF\xBB",
            b"\xEF",
            b"\xEF\xBB\xBF\xEF\xBB\xBF",
        ]),
        prop::collection::vec(piece(), 0..24),
        any::<bool>(),
    )
        .prop_map(|(start, pieces, cut_last_newline)| {
            let mut stream = start.to_vec();
            for piece in pieces {
                stream.extend_from_slice(&piece);
            }
            if cut_last_newline && stream.last() == Some(&b'\n') {
                stream.pop();
            }
            stream
        })
}

fn limit() -> impl Strategy<Value = usize> {
    prop_oneof![Just(0usize), 1usize..40, Just(usize::MAX), Just(5000)]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn one_shot_decoding_follows_the_rules(stream in stream(), max in limit()) {
        prop_assert_eq!(decode_one_shot(&stream, max), reference(&stream, max));
    }

    #[test]
    fn any_chunking_gives_the_same_frames(
        stream in stream(),
        max in limit(),
        sizes in prop::collection::vec(1usize..20, 1..8),
        drain_after in prop::collection::vec(any::<bool>(), 1..8),
    ) {
        let expected = decode_one_shot(&stream, max);
        prop_assert_eq!(&decode_chunked(&stream, max, &sizes, &drain_after), &expected);
        prop_assert_eq!(&decode_chunked(&stream, max, &[1], &[true]), &expected);
        prop_assert_eq!(&decode_chunked(&stream, max, &[1], &[false]), &expected);
    }

    #[test]
    fn no_panic_on_arbitrary_bytes(
        stream in prop::collection::vec(any::<u8>(), 0..300),
        max in limit(),
        sizes in prop::collection::vec(1usize..64, 1..4),
    ) {
        prop_assert_eq!(decode_chunked(&stream, max, &sizes, &[true, false]), reference(&stream, max));
    }
}

/// A long line whose prefix is kept must keep exactly the first
/// KEPT_PREFIX_BYTES, wherever the chunk boundaries fall.
#[test]
fn kept_prefix_is_the_same_for_every_chunking() {
    let mut stream = Vec::new();
    for i in 0..10_000u32 {
        stream.push(b'a' + (i % 26) as u8);
    }
    stream.extend_from_slice(b"\r\n{}\n");
    let expected = reference(&stream, 5000);
    assert_eq!(
        expected[0],
        Owned::TooLong(stream[..KEPT_PREFIX_BYTES].to_vec(), 10_000)
    );
    for size in [1, 7, 4095, 4096, 4097, 5000, 5001, 5002, 9999, 10_001] {
        assert_eq!(
            decode_chunked(&stream, 5000, &[size], &[true]),
            expected,
            "chunks of {size}"
        );
        assert_eq!(
            decode_chunked(&stream, 5000, &[size], &[false]),
            expected,
            "chunks of {size}"
        );
    }
}

/// A stream of long lines (up to several KiB, a few of them blank or over the
/// limits used below) that outgrow the decoder's buffer as they arrive.
fn long_lines() -> impl Strategy<Value = Vec<u8>> {
    let line = (0usize..6000, any::<bool>(), 0u8..4).prop_map(|(len, crlf, kind)| {
        let mut line: Vec<u8> = match kind {
            0 => vec![b' '; len],
            _ => (0..len).map(|i| b'a' + (i % 26) as u8).collect(),
        };
        line.extend_from_slice(if crlf { b"\r\n" } else { b"\n" });
        line
    });
    (prop::collection::vec(line, 0..8), any::<bool>()).prop_map(|(lines, cut_last_newline)| {
        let mut stream = lines.concat();
        if cut_last_newline {
            stream.pop();
        }
        stream
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn long_lines_in_any_chunking_give_the_same_frames(
        stream in long_lines(),
        max in prop_oneof![Just(usize::MAX), Just(5000), 1000usize..8000],
        sizes in prop::collection::vec(1usize..3000, 1..6),
        drain_after in prop::collection::vec(any::<bool>(), 1..6),
    ) {
        prop_assert_eq!(decode_chunked(&stream, max, &sizes, &drain_after), reference(&stream, max));
    }
}
