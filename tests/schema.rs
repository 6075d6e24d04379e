//! The `schema` module: the input validator keyword by keyword, its properties,
//! prepared schemas and the official JSON-Schema-Test-Suite.

#[path = "schema/combinators.rs"]
mod combinators;
#[path = "schema/fast_path.rs"]
mod fast_path;
#[path = "schema/keywords.rs"]
mod keywords;
#[path = "schema/properties.rs"]
mod properties;
#[path = "schema/suite.rs"]
mod suite;
