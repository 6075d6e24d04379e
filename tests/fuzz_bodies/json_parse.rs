//! `json_parse`: any bytes through the JSON parser.
//!
//! No input panics. The pull reader accepts exactly the texts `parse` accepts, and
//! the strict option accepts a subset of them. An accepted text written back is
//! compact, one line, and stable: parsing and writing it again gives the same value
//! and the same bytes.

use dhara_protocol::json::{self, ParseOptions, Reader};

pub fn run(data: &[u8]) {
    let parsed = json::parse(data);

    // One grammar: skipping a value accepts exactly what parsing accepts.
    let mut reader = Reader::new(data, &ParseOptions::DEFAULT);
    let skipped = reader.skip_value().and_then(|_| reader.finish());
    assert_eq!(
        parsed.is_ok(),
        skipped.is_ok(),
        "parse and skip_value disagree: {parsed:?} / {skipped:?}"
    );

    // Strict surrogates only ever reject more; what they accept reads the same.
    let strict = ParseOptions {
        strict_surrogates: true,
        ..ParseOptions::DEFAULT
    };
    if let Ok(value) = json::parse_with(data, &strict) {
        assert_eq!(Some(&value), parsed.as_ref().ok());
    }

    let Ok(value) = parsed else { return };
    let written = json::to_vec(&value);
    assert!(
        !written.iter().any(|&b| b < 0x20),
        "written JSON holds a raw control character: {written:?}"
    );
    let again = json::parse(&written).expect("the writer's output parses");
    assert_eq!(again, value, "parse(write(v)) != v");
    assert_eq!(json::to_vec(&again), written, "writing is not idempotent");
}
