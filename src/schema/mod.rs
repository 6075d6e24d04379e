//! Validation of tool input against a tool's declared `inputSchema` (a JSON Schema subset).
//!
//! The Extension endpoint uses [`validate`] to answer a bad `tools/execute` with
//! -32602, and the Core can use it to refuse a bad call before it crosses the pipe.
//!
//! ```
//! use dhara_protocol::json::{Object, Value};
//! use dhara_protocol::schema::validate;
//!
//! // {"type": "object", "properties": {"url": {"type": "string"}}, "required": ["url"]}
//! let url = Value::Object(Object::from_iter([("type", Value::from("string"))]));
//! let schema = Value::Object(Object::from_iter([
//!     ("type", Value::from("object")),
//!     ("properties", Value::Object(Object::from_iter([("url", url)]))),
//!     ("required", Value::from(vec!["url"])),
//! ]));
//!
//! let err = validate(&schema, &Value::Object(Object::new())).unwrap_err();
//! assert_eq!(err.message(), "Missing required parameter 'url'");
//! assert_eq!(err.path(), "$");
//!
//! let input = Value::Object(Object::from_iter([("url", Value::from(7))]));
//! let err = validate(&schema, &input).unwrap_err();
//! assert_eq!(err.path(), "$.url");
//! assert_eq!(err.message(), "Expected string, found number at $.url");
//! ```
//!
//! # Keywords
//!
//! | keyword | applies to | meaning |
//! |---|---|---|
//! | `type` | any | a type name or an array of them (a union); `integer` accepts any number with an integral value, such as `1.0` or `1e2` |
//! | `enum`, `const` | any | equality: numbers by value (`1 == 1.0`), objects as unordered maps (last duplicate wins), arrays element by element |
//! | `minimum`, `maximum`, `exclusiveMinimum`, `exclusiveMaximum` | numbers | compared exactly, by decimal value, whatever their size; a boolean `exclusiveMinimum`/`exclusiveMaximum` (draft 4) makes `minimum`/`maximum` exclusive |
//! | `minLength`, `maxLength` | strings | counted in Unicode scalar values |
//! | `items`, `prefixItems`, `additionalItems`, `minItems`, `maxItems` | arrays | `items` as a schema applies to every element; `items` as an array (or `prefixItems`) applies by position, and `additionalItems` (or `items` beside `prefixItems`) to the rest |
//! | `properties`, `required`, `additionalProperties` | objects | `additionalProperties` is a boolean or a schema for the members `properties` does not name; it is not applied when `patternProperties` is present, since patterns are not evaluated |
//!
//! A schema `true` or `{}` accepts everything and `false` rejects everything. Every
//! other keyword (`$ref`, `pattern`, `format`, `allOf`, ...) is ignored, and so is a
//! keyword whose value has the wrong shape (a `type` naming an unknown type, a
//! `required` that is not an array, a schema that is neither an object nor a
//! boolean): a tool with a sloppy schema stays callable.
//!
//! Every member of an input object is checked, including earlier duplicates of a name
//! that a lookup would shadow.
//!
//! # Errors
//!
//! Validation stops at the first error, found in a fixed order: at each value `type`,
//! `enum`, `const`, then the bounds for its type, then for an array its elements in
//! order, and for an object its `required` members in the order the schema lists them,
//! then its members in input order. The same schema and input always give the same
//! error.
//!
//! [`SchemaError::path`] names the offending value: `$` for the input itself, then
//! `.name` for a member whose name is an identifier (`[A-Za-z_][A-Za-z0-9_]*`),
//! `["any name"]` (a JSON string) for other names, and `[2]` for an array element:
//! `$.items[2].name`. For a missing or an unexpected member the path names the object
//! that holds it. [`SchemaError::message`] is a sentence a person or an LLM can act
//! on; at the root it names the parameter (`Missing required parameter 'url'`), and
//! deeper it ends with `at` and the path (`Missing required property 'host' at
//! $.server`). Values quoted in messages are cut at 40 characters, and an `enum`
//! lists at most 10 of its values, so a message stays short whatever the input.
//!
//! # Depth
//!
//! The validator walks the input depth first with an explicit stack of the arrays and
//! objects it is inside, not by recursion, so it uses the same native stack whatever
//! the nesting. It descends only where the schema has a schema for the children, so
//! its depth is bounded by the schema's own nesting, and it stops with an error at
//! [`MAX_DEPTH`] levels. Equality for `enum` and `const` also uses a work list. No
//! input or schema, however deep, can overflow the stack.
//!
//! Numbers are compared by their exact decimal text; exponents beyond ±10^30 are
//! taken as ±10^30. The time taken is at most proportional to the size of the input
//! times the size of the schema (and a logarithm, for objects compared by `enum` or
//! `const`).

mod equality;
mod keywords;
mod messages;
mod numbers;
mod pattern;
mod prepared;
mod refs;
mod unchecked;
mod validator;

use alloc::string::String;
use core::fmt;

use crate::json::Value;

pub use prepared::PreparedSchema;
pub use unchecked::unchecked_keywords;

/// The deepest level of nesting the validator descends to; an input that the schema
/// makes it descend further is rejected with an error at that level.
pub const MAX_DEPTH: usize = 128;

/// How many schemas the validator applies inside one another at most, counting
/// both those for nested values and those applied to one value in place (`$ref`,
/// `allOf`, …); a schema that nests deeper, such as a `$ref` cycle that never
/// reaches into the input, is an error at that point.
pub const MAX_SCHEMAS: usize = 8 * MAX_DEPTH;

/// Why an input does not match a schema: the path of the offending value and a message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SchemaError {
    path: String,
    message: String,
    /// How many steps `path` has.
    depth: usize,
    /// When `type` refused the value at `path`: the types it asked for, a bit each
    /// (by `JsonType`); zero otherwise. How `anyOf` and `oneOf` explain a miss.
    expected_types: u8,
}

impl SchemaError {
    /// The path of the offending value, such as `$.items[2].name`, or `$` for the
    /// input itself (see the [module docs](self) for the notation).
    pub fn path(&self) -> &str {
        &self.path
    }

    /// A sentence saying what is wrong, such as `Missing required parameter 'url'`.
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for SchemaError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

#[cfg(feature = "std")]
impl std::error::Error for SchemaError {}

/// Checks `instance` against `schema`; the first error, if any (see the
/// [module docs](self) for the keywords and the order).
pub fn validate(schema: &Value, instance: &Value) -> Result<(), SchemaError> {
    validator::validate(schema, instance)
}
