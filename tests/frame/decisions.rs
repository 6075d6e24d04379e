//! The framing decisions, one by one, and the decoder's bounds on work and memory.

use dhara_protocol::frame::{
    DEFAULT_MAX_LINE_BYTES, Frame, KEPT_PREFIX_BYTES, LineDecoder, write_line,
};

/// Pushes `chunks`, ends the stream and collects every frame, as `(kind, bytes, len)`.
fn frames_of(decoder: &mut LineDecoder, chunks: &[&[u8]]) -> Vec<(&'static str, Vec<u8>, u64)> {
    let mut frames = Vec::new();
    for chunk in chunks {
        decoder.push(chunk);
        collect(decoder, &mut frames);
    }
    decoder.end();
    collect(decoder, &mut frames);
    frames
}

fn collect(decoder: &mut LineDecoder, frames: &mut Vec<(&'static str, Vec<u8>, u64)>) {
    while let Some(frame) = decoder.next_frame() {
        frames.push(match frame {
            Frame::Line(line) => ("line", line.to_vec(), line.len() as u64),
            Frame::TooLong { prefix, len } => ("too long", prefix.to_vec(), len),
            Frame::Truncated { prefix, len } => ("truncated", prefix.to_vec(), len),
            other => panic!("unexpected frame {other:?}"),
        });
    }
}

fn lines_of(chunks: &[&[u8]]) -> Vec<(&'static str, Vec<u8>, u64)> {
    frames_of(&mut LineDecoder::new(), chunks)
}

fn line(bytes: &[u8]) -> (&'static str, Vec<u8>, u64) {
    ("line", bytes.to_vec(), bytes.len() as u64)
}

#[test]
fn defaults() {
    let decoder = LineDecoder::new();
    assert_eq!(decoder.max_line_bytes(), DEFAULT_MAX_LINE_BYTES);
    assert_eq!(DEFAULT_MAX_LINE_BYTES, 64 * 1024 * 1024);
    assert_eq!(
        LineDecoder::default().max_line_bytes(),
        DEFAULT_MAX_LINE_BYTES
    );
    assert_eq!(LineDecoder::with_max_line_bytes(10).max_line_bytes(), 10);
    assert_eq!(decoder.buffered(), 0);
}

#[test]
fn lf_and_crlf_endings() {
    assert_eq!(
        lines_of(&[b"{\"a\":1}\n{\"b\":2}\r\n[3]\n"]),
        [line(b"{\"a\":1}"), line(b"{\"b\":2}"), line(b"[3]")]
    );
}

#[test]
fn only_one_cr_before_the_newline_is_part_of_the_ending() {
    assert_eq!(lines_of(&[b"[1]\r\r\n"]), [line(b"[1]\r")]);
    assert_eq!(lines_of(&[b"[1]\r[2]\n"]), [line(b"[1]\r[2]")]);
}

#[test]
fn a_crlf_split_between_chunks() {
    assert_eq!(
        lines_of(&[b"[1]\r", b"\n[2]\r", b"\n"]),
        [line(b"[1]"), line(b"[2]")]
    );
}

#[test]
fn blank_lines_are_skipped() {
    assert_eq!(
        lines_of(&[b"\n\r\n \t \n\r\r\n[1]\n\n  \n[2]\n \t\r\n"]),
        [line(b"[1]"), line(b"[2]")]
    );
}

#[test]
fn whitespace_around_a_message_is_kept() {
    assert_eq!(lines_of(&[b"  {} \t\r\n"]), [line(b"  {} \t")]);
}

#[test]
fn a_byte_order_mark_at_the_start_is_skipped() {
    assert_eq!(lines_of(&[b"\xEF\xBB\xBF{}\n"]), [line(b"{}")]);
    assert_eq!(lines_of(&[b"\xEF\xBB\xBF\r\n{}\n"]), [line(b"{}")]);
}

#[test]
fn a_byte_order_mark_split_over_chunks_is_skipped() {
    assert_eq!(
        lines_of(&[b"\xEF", b"\xBB", b"\xBF", b"{}\n"]),
        [line(b"{}")]
    );
    assert_eq!(lines_of(&[b"\xEF\xBB", b"\xBF{}", b"\n"]), [line(b"{}")]);
    assert_eq!(
        lines_of(&[b"", b"\xEF", b"", b"\xBB\xBF{}\n"]),
        [line(b"{}")]
    );
}

#[test]
fn only_the_first_byte_order_mark_is_skipped() {
    assert_eq!(
        lines_of(&[b"\xEF\xBB\xBF\xEF\xBB\xBF{}\n"]),
        [line(b"\xEF\xBB\xBF{}")]
    );
    assert_eq!(
        lines_of(&[b"{}\n\xEF\xBB\xBF[]\n"]),
        [line(b"{}"), line(b"\xEF\xBB\xBF[]")]
    );
}

#[test]
fn bytes_that_only_start_like_a_byte_order_mark_are_data() {
    assert_eq!(lines_of(&[b"\xEF\xBB{}\n"]), [line(b"\xEF\xBB{}")]);
    assert_eq!(lines_of(&[b"\xEF", b"\xBB", b"\n"]), [line(b"\xEF\xBB")]);
    assert_eq!(lines_of(&[b"\xEF", b"{}\n"]), [line(b"\xEF{}")]);
    // The stream ends inside what looked like a byte-order mark.
    assert_eq!(
        lines_of(&[b"\xEF\xBB"]),
        [("truncated", b"\xEF\xBB".to_vec(), 2)]
    );
    // A whole byte-order mark and nothing else is an empty stream.
    assert_eq!(lines_of(&[b"\xEF\xBB\xBF"]), []);
}

#[test]
fn a_line_exactly_at_the_limit_is_accepted() {
    let mut decoder = LineDecoder::with_max_line_bytes(5);
    assert_eq!(frames_of(&mut decoder, &[b"12345\n"]), [line(b"12345")]);
    // The `\r` of a `\r\n` ending does not count against the limit.
    let mut decoder = LineDecoder::with_max_line_bytes(5);
    assert_eq!(frames_of(&mut decoder, &[b"12345\r\n"]), [line(b"12345")]);
    let mut decoder = LineDecoder::with_max_line_bytes(5);
    assert_eq!(
        frames_of(&mut decoder, &[b"123", b"45\r", b"\n"]),
        [line(b"12345")]
    );
}

#[test]
fn a_line_one_byte_over_the_limit_is_too_long() {
    let mut decoder = LineDecoder::with_max_line_bytes(5);
    assert_eq!(
        frames_of(&mut decoder, &[b"123456\n"]),
        [("too long", b"12345".to_vec(), 6)]
    );
    // A `\r` that turns out not to start the ending counts.
    let mut decoder = LineDecoder::with_max_line_bytes(5);
    assert_eq!(
        frames_of(&mut decoder, &[b"12345\r", b"6\r\n"]),
        [("too long", b"12345".to_vec(), 7)]
    );
}

#[test]
fn after_a_line_too_long_the_stream_is_in_sync() {
    let mut decoder = LineDecoder::with_max_line_bytes(8);
    assert_eq!(
        frames_of(
            &mut decoder,
            &[
                b"[1]\n[\"a long line\"]\r\n[2]\n",
                b"[\"another long",
                b" line\"]\n[3]\n"
            ]
        ),
        [
            line(b"[1]"),
            ("too long", b"[\"a long".to_vec(), 15),
            line(b"[2]"),
            ("too long", b"[\"anothe".to_vec(), 21),
            line(b"[3]"),
        ]
    );
}

#[test]
fn a_line_too_long_keeps_its_first_bytes_to_find_the_id() {
    let mut message = b"{\"jsonrpc\":\"2.0\",\"id\":42,\"result\":{\"text\":\"".to_vec();
    message.resize(100_000, b'x');
    message.extend_from_slice(b"\"}}");
    let total = message.len() as u64;
    message.extend_from_slice(b"\n{\"jsonrpc\":\"2.0\",\"id\":43,\"result\":{}}\n");

    for chunk in [1, 1000, 4096, 65536, message.len()] {
        let mut decoder = LineDecoder::with_max_line_bytes(50_000);
        let chunks: Vec<&[u8]> = message.chunks(chunk).collect();
        let frames = frames_of(&mut decoder, &chunks);
        assert_eq!(frames.len(), 2, "chunks of {chunk}");
        assert_eq!(frames[0].0, "too long");
        assert_eq!(frames[0].1, &message[..KEPT_PREFIX_BYTES]);
        assert!(frames[0].1.starts_with(b"{\"jsonrpc\":\"2.0\",\"id\":42,"));
        assert_eq!(frames[0].2, total);
        assert_eq!(
            frames[1],
            line(b"{\"jsonrpc\":\"2.0\",\"id\":43,\"result\":{}}")
        );
    }
}

#[test]
fn the_kept_prefix_never_exceeds_the_limit() {
    let mut decoder = LineDecoder::with_max_line_bytes(3);
    assert_eq!(
        frames_of(&mut decoder, &[b"abcdef\n"]),
        [("too long", b"abc".to_vec(), 6)]
    );
    let mut decoder = LineDecoder::with_max_line_bytes(0);
    assert_eq!(
        frames_of(&mut decoder, &[b"a\n\nb"]),
        [("too long", vec![], 1), ("truncated", vec![], 1)]
    );
}

#[test]
fn a_stream_cut_in_the_middle_of_a_line_is_truncated() {
    assert_eq!(
        lines_of(&[b"[1]\n{\"jsonrpc\":", b"\"2.0\""]),
        [
            line(b"[1]"),
            ("truncated", b"{\"jsonrpc\":\"2.0\"".to_vec(), 16)
        ]
    );
    assert_eq!(
        lines_of(&[b"[1]\n[2]\r"]),
        [line(b"[1]"), ("truncated", b"[2]\r".to_vec(), 4)]
    );
}

#[test]
fn a_cut_line_over_the_limit_keeps_its_prefix() {
    let mut decoder = LineDecoder::with_max_line_bytes(4);
    assert_eq!(
        frames_of(&mut decoder, &[b"[1]\n[2,3,", b"4,5,6"]),
        [line(b"[1]"), ("truncated", b"[2,3".to_vec(), 10)]
    );
}

#[test]
fn trailing_whitespace_at_the_end_is_not_a_truncated_line() {
    assert_eq!(lines_of(&[b"[1]\n  \t"]), [line(b"[1]")]);
    assert_eq!(lines_of(&[b"[1]\n\r"]), [line(b"[1]")]);
    assert_eq!(lines_of(&[]), []);
}

#[test]
fn nothing_comes_out_before_the_end_for_an_unfinished_line() {
    let mut decoder = LineDecoder::new();
    decoder.push(b"[1]\n[2");
    assert_eq!(decoder.next_frame(), Some(Frame::Line(b"[1]")));
    assert_eq!(decoder.next_frame(), None);
    assert_eq!(decoder.next_frame(), None);
    decoder.push(b"]\n");
    assert_eq!(decoder.next_frame(), Some(Frame::Line(b"[2]")));
    assert_eq!(decoder.next_frame(), None);
}

#[test]
fn end_is_idempotent_and_later_bytes_are_ignored() {
    let mut decoder = LineDecoder::new();
    decoder.push(b"[1]\n[2");
    decoder.end();
    decoder.end();
    decoder.push(b"]\n[3]\n");
    assert_eq!(decoder.next_frame(), Some(Frame::Line(b"[1]")));
    assert_eq!(
        decoder.next_frame(),
        Some(Frame::Truncated {
            prefix: b"[2",
            len: 2
        })
    );
    assert_eq!(decoder.next_frame(), None);
    decoder.end();
    assert_eq!(decoder.next_frame(), None);
}

#[test]
fn frames_come_out_in_stream_order_when_taken_out_late() {
    // Nothing is taken out until the end: oversized lines are still reported
    // in their place, and their middles are not kept.
    let mut decoder = LineDecoder::with_max_line_bytes(6);
    decoder.push(b"[1]\n[\"abc");
    decoder.push(b"defgh\"]\n[2]\n[\"ijklmn");
    let buffered = decoder.buffered();
    decoder.push(b"opqrstuvwxyz");
    assert_eq!(
        decoder.buffered(),
        buffered,
        "the middle of a long line is dropped"
    );
    decoder.push(b"\"]\n[3]");
    decoder.end();
    let mut frames = Vec::new();
    collect(&mut decoder, &mut frames);
    assert_eq!(
        frames,
        [
            line(b"[1]"),
            ("too long", b"[\"abcd".to_vec(), 12),
            line(b"[2]"),
            ("too long", b"[\"ijkl".to_vec(), 22),
            ("truncated", b"[3]".to_vec(), 3),
        ]
    );
}

#[test]
fn frame_descriptions() {
    assert_eq!(Frame::Line(b"[1]").to_string(), "a line of 3 bytes");
    assert_eq!(
        Frame::TooLong {
            prefix: b"",
            len: 70_000_000
        }
        .to_string(),
        "a line of 70000000 bytes, longer than the line limit"
    );
    assert_eq!(
        Frame::Truncated {
            prefix: b"[",
            len: 1
        }
        .to_string(),
        "the stream ended in the middle of a line (1 bytes)"
    );
}

#[test]
fn write_line_appends_the_message_and_a_newline() {
    let mut out = b"[0]\n".to_vec();
    write_line(&mut out, |buf| {
        buf.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"method\":\"ping\"}")
    });
    write_line(&mut out, |buf| buf.push(b'1'));
    assert_eq!(out, b"[0]\n{\"jsonrpc\":\"2.0\",\"method\":\"ping\"}\n1\n");

    let mut decoder = LineDecoder::new();
    decoder.push(&out);
    assert_eq!(decoder.next_frame(), Some(Frame::Line(b"[0]")));
    assert_eq!(
        decoder.next_frame(),
        Some(Frame::Line(b"{\"jsonrpc\":\"2.0\",\"method\":\"ping\"}"))
    );
    assert_eq!(decoder.next_frame(), Some(Frame::Line(b"1")));
    assert_eq!(decoder.next_frame(), None);
}

/// A multi-megabyte line fed one byte at a time: every byte is searched for
/// `\n` once, not once per push.
#[test]
fn a_long_line_fed_one_byte_at_a_time_is_searched_once() {
    const LEN: usize = 4 * 1024 * 1024;
    let mut decoder = LineDecoder::new();
    let mut fed = 0u64;
    for i in 0..LEN {
        decoder.push(&[b'a' + (i % 26) as u8]);
        fed += 1;
        assert_eq!(decoder.next_frame(), None);
    }
    decoder.push(b"\n");
    fed += 1;
    match decoder.next_frame() {
        Some(Frame::Line(line)) => assert_eq!(line.len(), LEN),
        other => panic!("expected the long line, got {other:?}"),
    }
    assert_eq!(decoder.next_frame(), None);
    assert!(
        decoder.scanned_bytes() <= fed,
        "{} bytes searched, {fed} fed",
        decoder.scanned_bytes()
    );
    assert!(decoder.scanned_bytes() >= fed - 1, "the line was searched");
}

/// Many small lines in one big buffer, taken out one by one: each frame only
/// searches its own line.
#[test]
fn many_small_lines_from_one_big_push_are_linear() {
    let mut stream = Vec::new();
    for i in 0..200_000u32 {
        write_line(&mut stream, |out| {
            out.extend_from_slice(format!("[{i}]").as_bytes())
        });
    }
    let mut decoder = LineDecoder::new();
    decoder.push(&stream);
    let mut count = 0u32;
    while let Some(frame) = decoder.next_frame() {
        assert_eq!(frame, Frame::Line(format!("[{count}]").as_bytes()));
        count += 1;
        // Lazily: only the line handed out was searched (and, by the push,
        // the stream's last byte, its final `\n`).
        if count == 1 {
            assert_eq!(decoder.scanned_bytes(), 4 + 1);
        }
    }
    assert_eq!(count, 200_000);
    assert!(decoder.scanned_bytes() <= stream.len() as u64);
    // The next push releases what was handed out.
    decoder.push(b"[");
    assert_eq!(decoder.buffered(), 1);
}

/// The same stream in 1-byte chunks and in 3-byte chunks searches each byte
/// at most once, while every line is handed out as soon as it is complete.
#[test]
fn small_lines_fed_in_tiny_chunks_are_linear() {
    let mut stream = Vec::new();
    for i in 0..20_000u32 {
        write_line(&mut stream, |out| {
            out.extend_from_slice(format!("{{\"id\":{i}}}").as_bytes())
        });
    }
    for size in [1, 3, 1000] {
        let mut decoder = LineDecoder::new();
        let mut count = 0;
        for chunk in stream.chunks(size) {
            decoder.push(chunk);
            while decoder.next_frame().is_some() {
                count += 1;
            }
            assert!(decoder.buffered() <= 2 * 16 + size);
        }
        assert_eq!(count, 20_000);
        assert!(decoder.scanned_bytes() <= stream.len() as u64);
    }
}

/// Feeds one line of `total` bytes in 64 KiB chunks to a decoder limited to
/// 1 MiB, checking the buffer stays within a small multiple of the limit.
fn feed_a_huge_line(total: u64) {
    const LIMIT: usize = 1024 * 1024;
    const CHUNK: usize = 64 * 1024;
    let mut chunk = vec![b'x'; CHUNK];
    chunk[..6].copy_from_slice(b"{\"id\":");
    let mut decoder = LineDecoder::with_max_line_bytes(LIMIT);
    decoder.push(&chunk);
    chunk[..6].copy_from_slice(b"xxxxxx");
    let mut fed = CHUNK as u64;
    let mut most = 0;
    while fed < total {
        decoder.push(&chunk);
        fed += CHUNK as u64;
        most = most.max(decoder.buffered());
        assert_eq!(decoder.next_frame(), None);
    }
    decoder.push(b"\r\n{}\n");
    assert!(
        most <= LIMIT + CHUNK,
        "buffered {most} bytes for a {LIMIT}-byte limit"
    );
    match decoder.next_frame() {
        Some(Frame::TooLong { prefix, len }) => {
            assert_eq!(len, total);
            assert_eq!(prefix.len(), KEPT_PREFIX_BYTES);
            assert!(prefix.starts_with(b"{\"id\":xxx"));
        }
        other => panic!("expected a line too long, got {other:?}"),
    }
    assert_eq!(decoder.next_frame(), Some(Frame::Line(b"{}")));
    assert_eq!(decoder.next_frame(), None);
    assert!(decoder.scanned_bytes() <= fed + 5);
}

#[test]
fn a_huge_line_in_chunks_keeps_memory_bounded() {
    feed_a_huge_line(64 * 1024 * 1024);
}

/// The full-size version: a 1 GiB line (`cargo test -- --ignored`).
#[test]
#[ignore = "feeds 1 GiB; run with --ignored"]
fn a_one_gib_line_in_chunks_keeps_memory_bounded() {
    feed_a_huge_line(1024 * 1024 * 1024);
}
