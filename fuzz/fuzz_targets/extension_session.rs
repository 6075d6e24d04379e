#![no_main]

#[path = "../../tests/fuzz_bodies/extension_session.rs"]
mod body;
#[path = "../../tests/fuzz_bodies/source.rs"]
mod source;

libfuzzer_sys::fuzz_target!(|data: &[u8]| body::run(data));
