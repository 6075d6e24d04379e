//! `json_parse`: any bytes through the JSON parser.
//!
//! No input panics. The pull reader's `skip_value` accepts exactly the texts `parse`
//! accepts and gives the same error for the rest, and the strict option accepts a
//! subset of them. An accepted text written back is
//! compact, one line, and stable: parsing and writing it again gives the same value
//! and the same bytes.

use dhara_protocol::json::{self, ParseOptions, Reader};

pub fn run(data: &[u8]) {
    let parsed = json::parse(data);

    // One grammar: skipping a value (its own fast loop) accepts exactly what parsing
    // accepts, and turns the rest down with the very same error.
    let strict = ParseOptions {
        strict_surrogates: true,
        ..ParseOptions::DEFAULT
    };
    let parsed_strict = json::parse_with(data, &strict);
    for (options, parsed) in [(ParseOptions::DEFAULT, &parsed), (strict, &parsed_strict)] {
        let mut reader = Reader::new(data, &options);
        let skipped = reader.skip_value().and_then(|_| reader.finish());
        assert_eq!(
            parsed.as_ref().err(),
            skipped.as_ref().err(),
            "parse and skip_value disagree under {options:?}"
        );
    }

    // Strict surrogates only ever reject more; what they accept reads the same.
    if let Ok(value) = &parsed_strict {
        assert_eq!(Some(value), parsed.as_ref().ok());
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
