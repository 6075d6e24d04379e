//! Throughput of the JSON and framing layers against a plain byte scan.
//!
//! Run with `cargo bench --bench throughput`. Two workloads, generated the same
//! way on every run (a fixed-seed xorshift, no dependencies):
//!
//! - one large tool result: a single ~8 MiB line whose text is source-like code,
//!   with the escapes such text needs (`\n`, `\t`, `\"`, `\\`, `\u`) and
//!   non-ASCII characters;
//! - a stream of small `tools/execute` requests, one per line, of the same total size.
//!
//! Each is timed (median of several runs, after a warm-up) for
//!
//! - the floor: reading every byte once, a word at a time (XOR-folding `u64`s),
//! - `frame::LineDecoder`, fed in 64 KiB chunks as a pipe would deliver them,
//! - `json::parse` of the whole buffer (for the single large line),
//! - both together: each line framed, then parsed,
//!
//! and printed as a markdown table of MB/s and the ratio to the floor.

use std::hint::black_box;
use std::time::{Duration, Instant};

use dhara_protocol::frame::{Frame, LineDecoder, write_line};
use dhara_protocol::json;

/// Size of the large tool result's text, and of the stream of small requests.
const TARGET_BYTES: usize = 8 * 1024 * 1024;
/// The read size a runtime would typically use on a pipe.
const CHUNK_BYTES: usize = 64 * 1024;
const WARM_UP_RUNS: usize = 2;
const TIMED_RUNS: usize = 11;

/// A tiny deterministic generator (xorshift64).
struct XorShift(u64);

impl XorShift {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[(self.next() % items.len() as u64) as usize]
    }
}

/// Source-like text: identifiers, keywords, punctuation, strings, indentation.
fn source_text(rng: &mut XorShift, len: usize) -> String {
    const TOKENS: &[&str] = &[
        "fn",
        "let",
        "mut",
        "match",
        "impl",
        "return",
        "self",
        "value",
        "buffer",
        "index",
        "parse_line",
        "Option<usize>",
        "Vec<u8>",
        "=>",
        "->",
        "(",
        ")",
        "{",
        "}",
        ";",
        ",",
        "&",
        "==",
        "+=",
        "0",
        "42",
        "0xFF",
        "\"quoted\"",
        "'c'",
        "\\",
        "\\n",
        "// a comment",
        "café",
        "naïve",
        "→",
        "日本語",
        "Ω",
        "\u{1F600}",
        "\u{1b}[0m",
    ];
    let mut text = String::with_capacity(len + 64);
    let mut depth = 0usize;
    while text.len() < len {
        match rng.next() % 10 {
            0 => {
                text.push('\n');
                for _ in 0..depth {
                    text.push('\t');
                }
                depth = (depth + (rng.next() % 3) as usize).saturating_sub(1).min(6);
            }
            1 | 2 => text.push(' '),
            _ => text.push_str(rng.pick(TOKENS)),
        }
    }
    text
}

/// Appends `text` as a JSON string, escaping what must be, and writing some
/// non-ASCII characters as `\u` escapes the way some writers do.
fn push_json_string(out: &mut Vec<u8>, text: &str) {
    out.push(b'"');
    for c in text.chars() {
        match c {
            '"' => out.extend_from_slice(b"\\\""),
            '\\' => out.extend_from_slice(b"\\\\"),
            '\n' => out.extend_from_slice(b"\\n"),
            '\t' => out.extend_from_slice(b"\\t"),
            'Ω' | '→' => out.extend_from_slice(format!("\\u{:04x}", c as u32).as_bytes()),
            c if (c as u32) < 0x20 => {
                out.extend_from_slice(format!("\\u{:04x}", c as u32).as_bytes())
            }
            c => {
                let mut buf = [0; 4];
                out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
            }
        }
    }
    out.push(b'"');
}

/// One line: the response to a `tools/execute` call with a large text result.
fn large_tool_result() -> Vec<u8> {
    let mut rng = XorShift(0x9E37_79B9_7F4A_7C15);
    let text = source_text(&mut rng, TARGET_BYTES);
    let mut out = Vec::with_capacity(TARGET_BYTES * 2);
    write_line(&mut out, |out| {
        out.extend_from_slice(
            br#"{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"#,
        );
        push_json_string(out, &text);
        out.extend_from_slice(br#"}],"isError":false}}"#);
    });
    out
}

/// Many lines: small `tools/execute` requests.
fn small_requests() -> Vec<u8> {
    const NAMES: &[&str] = &["read_file", "search", "list_dir", "run_tests", "édition"];
    const WORDS: &[&str] = &[
        "src", "lib", "frame", "tests", "main", "mod", "naïve", "a b",
    ];
    let mut rng = XorShift(0xD1B5_4A32_D192_ED03);
    let mut out = Vec::with_capacity(TARGET_BYTES + 512);
    let mut id = 0u64;
    while out.len() < TARGET_BYTES {
        id += 1;
        let name = rng.pick(NAMES);
        let path = format!("{}/{}.rs", rng.pick(WORDS), rng.pick(WORDS));
        let limit = rng.next() % 10_000;
        write_line(&mut out, |out| {
            out.extend_from_slice(
                format!(
                    r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/execute","params":{{"name":"{name}","arguments":{{"path":"{path}","limit":{limit},"recursive":true}}}}}}"#
                )
                .as_bytes(),
            );
        });
    }
    out
}

/// The floor: every byte read once, a word at a time.
fn byte_scan(bytes: &[u8]) -> u64 {
    let mut words = bytes.chunks_exact(8);
    let mut fold = 0u64;
    for word in &mut words {
        let mut w = [0; 8];
        w.copy_from_slice(word);
        fold ^= u64::from_le_bytes(w);
    }
    for &b in words.remainder() {
        fold ^= u64::from(b);
    }
    fold
}

/// Parses the buffer as one JSON text (the large tool result is one value
/// plus its `\n`, which is JSON whitespace).
fn parse_whole(bytes: &[u8]) -> u64 {
    match json::parse(bytes) {
        Ok(value) => u64::from(value.is_null()),
        Err(error) => panic!("the generated JSON does not parse: {error}"),
    }
}

/// Frames the stream as [`frame_lines`] does and parses every line.
fn frame_and_parse(bytes: &[u8]) -> u64 {
    let mut decoder = LineDecoder::new();
    let mut total = 0u64;
    for chunk in bytes.chunks(CHUNK_BYTES) {
        decoder.push(chunk);
        while let Some(frame) = decoder.next_frame() {
            if let Frame::Line(line) = frame {
                total += parse_whole(line) + 1;
            }
        }
    }
    total
}

/// Frames the stream as a runtime would: 64 KiB reads, each drained at once.
fn frame_lines(bytes: &[u8]) -> u64 {
    let mut decoder = LineDecoder::new();
    let mut total = 0u64;
    for chunk in bytes.chunks(CHUNK_BYTES) {
        decoder.push(chunk);
        while let Some(frame) = decoder.next_frame() {
            if let Frame::Line(line) = frame {
                total += line.len() as u64;
            }
        }
    }
    decoder.end();
    assert_eq!(decoder.next_frame(), None, "the stream ends with a newline");
    total
}

/// One way of going through a workload's bytes.
type Pass = fn(&[u8]) -> u64;

/// The median time of `TIMED_RUNS` runs of `f`, after `WARM_UP_RUNS`.
fn median_time(bytes: &[u8], f: Pass) -> Duration {
    for _ in 0..WARM_UP_RUNS {
        black_box(f(black_box(bytes)));
    }
    let mut times: Vec<Duration> = (0..TIMED_RUNS)
        .map(|_| {
            let started = Instant::now();
            black_box(f(black_box(bytes)));
            started.elapsed()
        })
        .collect();
    times.sort();
    times[TIMED_RUNS / 2]
}

fn megabytes_per_second(bytes: usize, time: Duration) -> f64 {
    bytes as f64 / 1e6 / time.as_secs_f64()
}

/// Generated bytes and the passes timed over them.
struct Workload {
    name: &'static str,
    bytes: Vec<u8>,
    passes: &'static [(&'static str, Pass)],
}

fn main() {
    const FRAME: (&str, Pass) = ("frame::LineDecoder, 64 KiB chunks", frame_lines);
    const PARSE: (&str, Pass) = ("json::parse, whole buffer", parse_whole);
    const BOTH: (&str, Pass) = ("LineDecoder + json::parse per line", frame_and_parse);
    let workloads = [
        Workload {
            name: "large tool result (1 line)",
            bytes: large_tool_result(),
            passes: &[FRAME, PARSE, BOTH],
        },
        // Many lines are not one JSON text: no whole-buffer parse.
        Workload {
            name: "small tools/execute requests",
            bytes: small_requests(),
            passes: &[FRAME, BOTH],
        },
    ];

    println!("| workload | bytes | what | MB/s | × floor |");
    println!("|---|---:|---|---:|---:|");
    for Workload {
        name: workload,
        bytes,
        passes,
    } in &workloads
    {
        let floor = median_time(bytes, byte_scan);
        let floor_rate = megabytes_per_second(bytes.len(), floor);
        println!(
            "| {workload} | {} | byte scan (floor) | {floor_rate:.0} | 1.000 |",
            bytes.len()
        );
        for (what, pass) in passes.iter() {
            let rate = megabytes_per_second(bytes.len(), median_time(bytes, *pass));
            println!(
                "| {workload} | {} | {what} | {rate:.0} | {:.3} |",
                bytes.len(),
                rate / floor_rate
            );
        }
    }
}
