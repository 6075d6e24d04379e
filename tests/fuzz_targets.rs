//! The fuzz targets, run as property tests on stable.
//!
//! Each target's body lives in `tests/fuzz_bodies/` and is shared, unchanged, with
//! the cargo-fuzz crate in `fuzz/` (whose targets include the same files). Here
//! the bodies get random bytes and mutated seeds from `fuzz/seeds/<target>/`, so a
//! plain `cargo test` runs every invariant the fuzzers check.

// Helpers are `pub` to be shared by this binary's modules, not exported.
#![allow(unreachable_pub)]

use std::path::Path;

use proptest::collection::vec;
use proptest::prelude::*;

#[path = "fuzz_bodies/core_session.rs"]
mod core_session;
#[path = "fuzz_bodies/extension_session.rs"]
mod extension_session;
#[path = "fuzz_bodies/frame_chunks.rs"]
mod frame_chunks;
#[path = "fuzz_bodies/json_parse.rs"]
mod json_parse;
#[path = "fuzz_bodies/json_roundtrip.rs"]
mod json_roundtrip;
#[path = "fuzz_bodies/rpc_decode.rs"]
mod rpc_decode;
#[path = "fuzz_bodies/source.rs"]
mod source;

/// The committed seeds of one target (none if the directory is absent).
fn seeds(target: &str) -> Vec<Vec<u8>> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fuzz/seeds")
        .join(target);
    let Ok(entries) = std::fs::read_dir(&dir) else {
        println!("no seeds in {}: random bytes only", dir.display());
        return Vec::new();
    };
    let mut paths: Vec<_> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
    paths.sort();
    paths
        .iter()
        .filter_map(|path| std::fs::read(path).ok())
        .collect()
}

/// One edit of a seed, as a fuzzer's mutator would make it.
#[derive(Clone, Debug)]
enum Edit {
    Flip { at: usize, bit: u8 },
    Insert { at: usize, byte: u8 },
    Remove { at: usize },
    Cut { at: usize },
}

fn edit() -> impl Strategy<Value = Edit> {
    prop_oneof![
        (any::<usize>(), 0u8..8).prop_map(|(at, bit)| Edit::Flip { at, bit }),
        (any::<usize>(), any::<u8>()).prop_map(|(at, byte)| Edit::Insert { at, byte }),
        any::<usize>().prop_map(|at| Edit::Remove { at }),
        any::<usize>().prop_map(|at| Edit::Cut { at }),
    ]
}

fn apply(mut bytes: Vec<u8>, edits: &[Edit]) -> Vec<u8> {
    for edit in edits {
        let len = bytes.len();
        match *edit {
            Edit::Flip { at, bit } if len > 0 => bytes[at % len] ^= 1 << bit,
            Edit::Insert { at, byte } => bytes.insert(at % (len + 1), byte),
            Edit::Remove { at } if len > 0 => {
                bytes.remove(at % len);
            }
            Edit::Cut { at } => bytes.truncate(at % (len + 1)),
            _ => {}
        }
    }
    bytes
}

/// Random bytes, or a seed of `target` with a few random edits.
fn input(target: &str) -> BoxedStrategy<Vec<u8>> {
    let seeds = seeds(target);
    let random = vec(any::<u8>(), 0..512);
    if seeds.is_empty() {
        return random.boxed();
    }
    let count = seeds.len();
    let mutated =
        (0..count, vec(edit(), 0..6)).prop_map(move |(i, edits)| apply(seeds[i].clone(), &edits));
    prop_oneof![1 => random, 3 => mutated].boxed()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn json_parse(data in input("json_parse")) {
        json_parse::run(&data);
    }

    #[test]
    fn json_roundtrip(data in input("json_roundtrip")) {
        json_roundtrip::run(&data);
    }

    #[test]
    fn frame_chunks(data in input("frame_chunks")) {
        frame_chunks::run(&data);
    }

    #[test]
    fn rpc_decode(data in input("rpc_decode")) {
        rpc_decode::run(&data);
    }

    #[test]
    fn core_session(data in input("core_session")) {
        core_session::run(&data);
    }

    #[test]
    fn extension_session(data in input("extension_session")) {
        extension_session::run(&data);
    }
}
