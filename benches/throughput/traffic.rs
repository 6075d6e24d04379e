//! The benchmark traffic: protocol lines generated in-process, the same on every run.
//!
//! Every shape is a buffer of compact JSON lines, each ending in `\n`, built from a
//! fixed-seed xorshift so any machine generates the very same bytes. This file uses
//! only `std`, so a comparison harness outside the crate can include it with
//! `#[path = ".../benches/throughput/traffic.rs"] mod traffic;` and time other JSON
//! libraries on identical input.

use std::ops::Range;

/// One shape of traffic: its bytes and where each line is (without its `\n`).
pub struct Traffic {
    /// The shape's name, as printed in the table.
    pub name: &'static str,
    /// The whole stream, lines ending in `\n`.
    pub bytes: Vec<u8>,
    /// Each line's content range in `bytes`.
    pub lines: Vec<Range<usize>>,
}

impl Traffic {
    /// Each line's bytes, without its `\n`.
    pub fn lines(&self) -> impl Iterator<Item = &[u8]> {
        self.lines.iter().map(|r| &self.bytes[r.clone()])
    }
}

/// The shapes, in the order they are printed.
pub const SHAPES: &[&str] = &[
    "small_requests",
    "progress",
    "text_results",
    "escaped_text",
    "image_results",
    "init_results",
    "mixed",
];

/// Generates the shape `name` (one of [`SHAPES`]), about `target_bytes` long.
pub fn generate(name: &'static str, target_bytes: usize) -> Traffic {
    match name {
        "small_requests" => shape(name, 0x1, target_bytes, small_request),
        "progress" => shape(name, 0x2, target_bytes, progress),
        "text_results" => shape(name, 0x3, target_bytes, |rng, id, out| {
            let len = 4 * 1024 + rng.below(60 * 1024);
            text_result(rng, id, len, out)
        }),
        "escaped_text" => shape(name, 0x7, target_bytes, |rng, id, out| {
            let len = 2 * 1024 + rng.below(56 * 1024);
            let text = escaped_text(rng, len);
            result_with_text(rng, id, &text, out)
        }),
        "image_results" => shape(name, 0x4, target_bytes, |rng, id, out| {
            let len = 256 * 1024 + rng.below(1792 * 1024);
            image_result(rng, id, len, out)
        }),
        "init_results" => shape(name, 0x5, target_bytes, init_result),
        "mixed" => shape(name, 0x6, target_bytes, session),
        _ => panic!("no traffic shape is called {name}"),
    }
}

/// Calls `line` until the stream holds `target_bytes`; `line` appends one or more
/// whole lines (each with its `\n`) and gets a fresh request id each time.
fn shape(
    name: &'static str,
    seed: u64,
    target_bytes: usize,
    mut line: impl FnMut(&mut XorShift, u64, &mut Vec<u8>),
) -> Traffic {
    let mut rng = XorShift::new(seed);
    let mut bytes = Vec::with_capacity(target_bytes + (4 << 20));
    let mut id = 0;
    while bytes.len() < target_bytes {
        id += 1;
        line(&mut rng, id, &mut bytes);
    }
    let mut lines = Vec::new();
    let mut start = 0;
    for (i, &b) in bytes.iter().enumerate() {
        if b == b'\n' {
            lines.push(start..i);
            start = i + 1;
        }
    }
    Traffic { name, bytes, lines }
}

/// A tiny deterministic generator (xorshift64).
pub struct XorShift(u64);

impl XorShift {
    /// A generator; different seeds give different streams.
    pub fn new(seed: u64) -> XorShift {
        XorShift(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    /// The next 64 random bits.
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    /// A number in `0..n` (`n > 0`).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    /// `true` once in `n` times.
    pub fn one_in(&mut self, n: usize) -> bool {
        self.below(n) == 0
    }

    /// One of `items`.
    pub fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len())]
    }
}

/// The tools every generated request calls (and the `init_results` describe).
pub const TOOL_NAMES: &[&str] = &[
    "read_file",
    "search",
    "list_dir",
    "run_tests",
    "fetch_url",
    "édition",
];

const WORDS: &[&str] = &[
    "src", "lib", "frame", "tests", "main", "mod", "naïve", "a b", "json", "rpc", "über", "日本",
    "docs", "bench",
];

/// The `id` member's text: mostly integers, sometimes a string.
fn push_id(rng: &mut XorShift, id: u64, out: &mut Vec<u8>) {
    if rng.one_in(4) {
        out.extend_from_slice(format!("\"req-{id:x}\"").as_bytes());
    } else {
        out.extend_from_slice(id.to_string().as_bytes());
    }
}

/// A `tools/execute` request of about 170 bytes.
fn small_request(rng: &mut XorShift, id: u64, out: &mut Vec<u8>) {
    out.extend_from_slice(br#"{"jsonrpc":"2.0","id":"#);
    push_id(rng, id, out);
    out.extend_from_slice(br#","method":"tools/execute","params":{"toolName":"#);
    push_json_string(out, rng.pick(TOOL_NAMES));
    out.extend_from_slice(br#","input":{"path":"#);
    let path = format!("{}/{}.rs", rng.pick(WORDS), rng.pick(WORDS));
    push_json_string(out, &path);
    out.extend_from_slice(br#","pattern":"#);
    let pattern = match rng.below(4) {
        0 => "fn \"main\"\\s+{",
        1 => "TODO:\tfix",
        2 => "café|naïve",
        _ => "impl Display",
    };
    push_json_string(out, pattern);
    out.extend_from_slice(
        format!(r#","limit":{},"recursive":true}}}}}}"#, rng.below(10_000)).as_bytes(),
    );
    out.push(b'\n');
}

/// A `progress` notification of about 80 bytes.
fn progress(rng: &mut XorShift, id: u64, out: &mut Vec<u8>) {
    out.extend_from_slice(br#"{"jsonrpc":"2.0","method":"progress","params":{"message":"#);
    let message = format!(
        "{} {}… {}%",
        rng.pick(&["Reading", "Indexing", "Parsing"]),
        rng.pick(WORDS),
        rng.below(101)
    );
    push_json_string(out, &message);
    if rng.one_in(2) {
        out.extend_from_slice(b",\"id\":");
        out.extend_from_slice((id % 1000).to_string().as_bytes());
    }
    out.extend_from_slice(b"}}\n");
}

/// A `tools/execute` response whose text content is `len` bytes of source-like text.
fn text_result(rng: &mut XorShift, id: u64, len: usize, out: &mut Vec<u8>) {
    let text = source_text(rng, len);
    result_with_text(rng, id, &text, out)
}

/// A `tools/execute` response with one text content item.
fn result_with_text(rng: &mut XorShift, id: u64, text: &str, out: &mut Vec<u8>) {
    out.extend_from_slice(br#"{"jsonrpc":"2.0","id":"#);
    push_id(rng, id, out);
    out.extend_from_slice(br#","result":{"content":[{"type":"text","text":"#);
    push_json_string(out, text);
    out.extend_from_slice(b"}],\"isError\":false}}\n");
}

/// A `tools/execute` response carrying `len` bytes of image data, base64-encoded.
fn image_result(rng: &mut XorShift, id: u64, len: usize, out: &mut Vec<u8>) {
    out.extend_from_slice(br#"{"jsonrpc":"2.0","id":"#);
    push_id(rng, id, out);
    out.extend_from_slice(
        br#","result":{"content":[{"type":"image","mimeType":"image/png","data":""#,
    );
    push_base64(rng, len, out);
    out.extend_from_slice(b"\"}],\"isError\":false}}\n");
}

/// The response to `initialize`: 20 to 50 tools with nested input schemas.
fn init_result(rng: &mut XorShift, id: u64, out: &mut Vec<u8>) {
    out.extend_from_slice(br#"{"jsonrpc":"2.0","id":"#);
    push_id(rng, id, out);
    out.extend_from_slice(br#","result":{"name":"workspace-tools","version":"1.4.0","tools":["#);
    let tools = 20 + rng.below(31);
    for i in 0..tools {
        if i > 0 {
            out.push(b',');
        }
        tool(rng, i, out);
    }
    out.extend_from_slice(b"]}}\n");
}

/// One tool description.
fn tool(rng: &mut XorShift, i: usize, out: &mut Vec<u8>) {
    out.extend_from_slice(br#"{"name":"#);
    push_json_string(out, &format!("{}_{i}", rng.pick(TOOL_NAMES)));
    out.extend_from_slice(br#","description":"#);
    let description = format!(
        "{} the {} under a path; returns \"matches\" as text.\nLimits:\t{} entries — see docs/{}.md",
        rng.pick(&["Reads", "Searches", "Lists", "Fetches"]),
        rng.pick(WORDS),
        rng.below(5000),
        rng.pick(WORDS)
    );
    push_json_string(out, &description);
    out.extend_from_slice(br#","inputSchema":{"type":"object","properties":{"#);
    let properties = 2 + rng.below(6);
    for p in 0..properties {
        if p > 0 {
            out.push(b',');
        }
        push_json_string(out, &format!("{}{p}", rng.pick(WORDS)));
        out.push(b':');
        property(rng, 2, out);
    }
    out.extend_from_slice(br#"},"required":["#);
    push_json_string(out, &format!("{}0", rng.pick(WORDS)));
    out.extend_from_slice(br#"],"additionalProperties":false}}"#);
}

/// A property schema, nesting objects and arrays up to `depth` more levels.
fn property(rng: &mut XorShift, depth: usize, out: &mut Vec<u8>) {
    const NUMBERS: &[&str] = &[
        "1.5e3",
        "-0",
        "12345678901234567890",
        "0.25",
        "-1E-7",
        "42",
        "65535",
        "3.141592653589793",
    ];
    match if depth == 0 {
        rng.below(3)
    } else {
        rng.below(5)
    } {
        0 => {
            out.extend_from_slice(br#"{"type":"string","description":"#);
            push_json_string(
                out,
                &format!(
                    "The {} to use, e.g. \"{}/{}\"",
                    rng.pick(WORDS),
                    rng.pick(WORDS),
                    rng.pick(WORDS)
                ),
            );
            out.extend_from_slice(br#","minLength":1,"maxLength":4096}"#);
        }
        1 => {
            out.extend_from_slice(format!(
                r#"{{"type":"number","minimum":{},"maximum":{},"default":{},"multipleOf":0.5}}"#,
                rng.pick(NUMBERS), rng.pick(NUMBERS), rng.pick(NUMBERS)
            ).as_bytes());
        }
        2 => out.extend_from_slice(br#"{"type":"boolean","default":false}"#),
        3 => {
            out.extend_from_slice(br#"{"type":"array","items":"#);
            property(rng, depth - 1, out);
            out.extend_from_slice(format!(r#","maxItems":{}}}"#, rng.pick(NUMBERS)).as_bytes());
        }
        _ => {
            out.extend_from_slice(br#"{"type":"object","properties":{"#);
            for p in 0..1 + rng.below(3) {
                if p > 0 {
                    out.push(b',');
                }
                push_json_string(out, &format!("{}{p}", rng.pick(WORDS)));
                out.push(b':');
                property(rng, depth - 1, out);
            }
            out.extend_from_slice(br#"},"enum":[null,true,"a\u00e9",-0,1.5e3]}"#);
        }
    }
}

/// Appends a whole session, as the Core and the extension would exchange it: the
/// handshake, calls with progress and results of every size, and `shutdown`.
fn session(rng: &mut XorShift, session: u64, out: &mut Vec<u8>) {
    out.extend_from_slice(br#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"version":"1.0","cwd":"/home/user/project"}}"#);
    out.push(b'\n');
    init_result(rng, 1, out);
    let calls = 50 + rng.below(150);
    for call in 0..calls as u64 {
        let id = session * 1000 + call + 2;
        small_request(rng, id, out);
        for _ in 0..rng.below(4) {
            progress(rng, id, out);
        }
        match rng.below(100) {
            0 => image_result(rng, id, 256 * 1024, out),
            1..=10 => {
                let len = 4 * 1024 + rng.below(60 * 1024);
                text_result(rng, id, len, out)
            }
            _ => {
                let len = 100 + rng.below(4000);
                text_result(rng, id, len, out)
            }
        }
    }
    out.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"method\":\"shutdown\"}\n");
}

/// Source-like text: code with indentation, quotes, backslashes, CRLF line ends,
/// ANSI colour codes and non-ASCII characters.
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
        "\u{1b}[31merror\u{1b}[0m",
        "assert_eq!(left, right);",
        "println!(\"{}\", x);",
    ];
    let mut text = String::with_capacity(len + 64);
    let mut depth = 0usize;
    while text.len() < len {
        match rng.below(12) {
            0 => {
                text.push_str(if rng.one_in(8) { "\r\n" } else { "\n" });
                for _ in 0..depth {
                    text.push_str(if rng.one_in(2) { "\t" } else { "    " });
                }
                depth = (depth + rng.below(3)).saturating_sub(1).min(6);
            }
            1 | 2 => text.push(' '),
            _ => text.push_str(rng.pick(TOKENS)),
        }
    }
    text
}

/// Escape-dense text, as a tool returns a source listing or a diff: tab-indented
/// lines of code with string literals, escape sequences and Windows paths, so that,
/// written as JSON, a `\"`, `\\`, `\n` or `\t` comes about every dozen bytes, and
/// 2-3% of the characters are non-ASCII (2-, 3- and 4-byte UTF-8, none of them
/// written as `\u` escapes).
fn escaped_text(rng: &mut XorShift, len: usize) -> String {
    const CODE: &[&str] = &[
        "let",
        "value",
        "=",
        "match",
        "buf",
        "if",
        "Some(x)",
        "=>",
        "return",
        "ok;",
        "index",
        "self.len()",
        "Vec::new()",
        "config",
        "let mut out",
        "as usize",
        "&mut self",
        "Result<(), Error>",
        "0x7f",
        "+ 1",
        "==",
        "&&",
        "parse_header",
        "line.trim_end()",
        "for",
        "in",
        "while",
        "count",
        "offset",
        "bytes",
        "String::new()",
        "Ok(())",
        "mut",
        "len",
        "*",
        "<",
        ">=",
        "iter().map(|b| b + 1)",
        "\"name\"",
        "\"\\n\"",
        "'\\t'",
        "\"a\\\"b\"",
        "\"C:\\Users\\dev\"",
        "println!(\"{x}\");",
        "r\"\\d+\"",
        "s.split('\\\\')",
        "// \"why\"",
        "{",
        "}",
        "(",
        ");",
    ];
    const NON_ASCII: &[&str] = &[
        "é", "ü", "ñ", "ß", "ç", "ø", "ł", "я", "—", "€", "“", "”", "中", "文", "≤", "∑", "🦀",
        "🚀", "𝔸", "🎉",
    ];
    let mut text = String::with_capacity(len + 128);
    let diff = rng.one_in(2);
    while text.len() < len {
        if diff {
            if rng.one_in(12) {
                let at = rng.below(900);
                text.push_str(&format!("@@ -{at},7 +{at},8 @@ fn main()\n"));
            }
            text.push_str(rng.pick(&["+", "-", " ", " "]));
        }
        for _ in 0..rng.below(3) {
            text.push('\t');
        }
        for _ in 0..4 + rng.below(7) {
            if rng.one_in(2) {
                text.push(' ');
            }
            text.push_str(rng.pick(CODE));
            if rng.one_in(5) {
                text.push_str(rng.pick(NON_ASCII));
            }
        }
        text.push('\n');
    }
    text
}

/// Appends `text` as a JSON string: `"`, `\` and controls escaped, some non-ASCII
/// characters written as `\u` escapes (astral ones as surrogate pairs), the rest raw.
pub fn push_json_string(out: &mut Vec<u8>, text: &str) {
    out.push(b'"');
    for c in text.chars() {
        match c {
            '"' => out.extend_from_slice(b"\\\""),
            '\\' => out.extend_from_slice(b"\\\\"),
            '\n' => out.extend_from_slice(b"\\n"),
            '\r' => out.extend_from_slice(b"\\r"),
            '\t' => out.extend_from_slice(b"\\t"),
            'Ω' | '→' | '\u{1F600}' => {
                let mut units = [0; 2];
                for unit in c.encode_utf16(&mut units) {
                    out.extend_from_slice(format!("\\u{unit:04x}").as_bytes());
                }
            }
            c if (c as u32) < 0x20 => {
                out.extend_from_slice(format!("\\u{:04x}", c as u32).as_bytes())
            }
            c => out.extend_from_slice(c.encode_utf8(&mut [0; 4]).as_bytes()),
        }
    }
    out.push(b'"');
}

/// Appends the base64 text of `len` random bytes.
fn push_base64(rng: &mut XorShift, len: usize, out: &mut Vec<u8>) {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    out.reserve(len.div_ceil(3) * 4);
    let groups = len / 3;
    for _ in 0..groups {
        let bits = rng.next();
        for shift in [18, 12, 6, 0] {
            out.push(ALPHABET[(bits >> shift & 63) as usize]);
        }
    }
    match len % 3 {
        1 => out.extend_from_slice(b"QQ=="),
        2 => out.extend_from_slice(b"QUE="),
        _ => {}
    }
}
