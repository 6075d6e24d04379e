//! Throughput of the JSON and framing layers against a plain byte scan.
fn main() {}
