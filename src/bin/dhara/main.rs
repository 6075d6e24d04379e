//! The `dhara` command.
fn main() {}
