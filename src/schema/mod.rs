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
//! | `type` | any | a type name or an array of them (a union, such as `["string", "null"]`); `integer` accepts any number with an integral value, such as `1.0` or `1e2` |
//! | `enum`, `const` | any | equality: numbers by value (`1 == 1.0`), objects as unordered maps (last duplicate wins), arrays element by element |
//! | `minimum`, `maximum`, `exclusiveMinimum`, `exclusiveMaximum`, `multipleOf` | numbers | exact, by decimal value, whatever their size (`0.3` is a multiple of `0.1`); a boolean `exclusiveMinimum`/`exclusiveMaximum` (draft 4) makes `minimum`/`maximum` exclusive |
//! | `minLength`, `maxLength` | strings | counted in Unicode scalar values |
//! | `pattern` | strings | a regular expression of the subset below, found anywhere in the string |
//! | `items`, `prefixItems`, `additionalItems`, `minItems`, `maxItems` | arrays | `items` as a schema applies to every element; `items` as an array (or `prefixItems`) applies by position, and `additionalItems` (or `items` beside `prefixItems`) to the rest |
//! | `uniqueItems` | arrays | no two elements equal, as `enum` compares them |
//! | `contains`, `minContains`, `maxContains` | arrays | how many elements match (at least 1 unless `minContains` says) |
//! | `properties`, `patternProperties`, `additionalProperties` | objects | a member is checked against its property's schema and every pattern's it matches; `additionalProperties` (a boolean or a schema) against the members that none names |
//! | `required`, `minProperties`, `maxProperties` | objects | members present, and how many |
//! | `propertyNames` | objects | a schema every member's name matches, as a string |
//! | `dependentRequired`, `dependentSchemas`, `dependencies` | objects | names or a schema required when a member is present (`dependencies` is draft 7's form of both) |
//! | `$ref` | any | the schema a local reference names, applied in place (see References) |
//! | `allOf`, `anyOf`, `oneOf`, `not` | any | all, at least one, exactly one, none of the schemas |
//! | `if`, `then`, `else` | any | `then` applies when `if` matches, `else` when it does not |
//!
//! Counts (`minLength`, `maxItems`, …) may be written as integral decimals (`2.0`).
//! A schema `true` or `{}` accepts everything and `false` rejects everything.
//! Annotations (`$schema`, `$id`, `$defs`, `definitions`, `title`, `description`,
//! `default`, `examples`, `format`, `deprecated`, `readOnly`, `writeOnly`,
//! `$comment`, `$anchor`, the `content…` keywords) constrain nothing; `format` is
//! one of them, as draft 2020-12 has it. Any other keyword
//! (`unevaluatedProperties`, `unevaluatedItems`, `$dynamicRef`, …) is not checked, and
//! [`unchecked_keywords`] lists it: it is never a reason to reject a tool or its
//! input. So is a keyword whose value has the wrong shape (a `type` naming an
//! unknown type, a `required` that is not an array, an empty `anyOf`, a schema
//! that is neither an object nor a boolean), which is ignored: a tool with a
//! sloppy schema stays callable.
//!
//! Every member of an input object is checked, including earlier duplicates of a name
//! that a lookup would shadow.
//!
//! ## References
//!
//! A `$ref` is followed when it is a JSON pointer into the same document: `#`,
//! `#/$defs/name`, `#/definitions/name`, `#/properties/a/items`, with `~0` for `~`,
//! `~1` for `/` and percent-escapes (`%25`), alone or after the root's own `$id`.
//! Any other reference (another document, an anchor `#name`, a pointer to nothing
//! or to a value that is not a schema) is not followed, nor is any in a document
//! that embeds a resource with its own `$id` (its fragments would be relative to
//! that resource): the `$ref` is then unchecked, and the keywords beside it still
//! apply. As in draft 2020-12, a `$ref` applies beside its siblings, but for a
//! schema whose `$schema` names draft 4, 6 or 7, where it stands for its whole
//! schema and its siblings are ignored.
//!
//! ## Patterns
//!
//! `pattern` and `patternProperties` take ECMA-262 regular expressions of this
//! subset: literals; `.` (any character but a line terminator); `^` and `$` (of
//! the whole string); `\b` and `\B`; classes `[...]` and `[^...]` with ranges;
//! `\d \D \w \W \s \S`; escapes `\t \n \v \f \r \0 \xHH \uHHHH \u{H…} \cX`
//! and of punctuation; groups `(...)`, `(?:...)` and `(?<name>...)`; `|`; and the
//! quantifiers `* + ? {n} {n,} {n,m}` (counts up to 1,000), greedy or lazy. As with
//! the `u` flag, `\d`, `\w` and `\b` are ASCII and strings are matched by Unicode
//! scalar values. A pattern is compiled to at most 2,048 instructions and run as a
//! Pike VM (a Thompson NFA simulated on every state at once): no backtracking,
//! time linear in the string, memory bounded by the pattern. A pattern outside the
//! subset (backreferences, lookahead and lookbehind, `\p{…}`, a larger program)
//! is not checked, and [`unchecked_keywords`] reports it; a `patternProperties`
//! with such a pattern also leaves `additionalProperties` unapplied, since no one
//! knows which members it names.
//!
//! ## Conformance
//!
//! Against the official JSON-Schema-Test-Suite (`tests/schema/suite.rs`, the table
//! per keyword in `docs/schema.md`), every group of tests whose schema uses only
//! keywords checked here passes: 249 groups of draft 2020-12 and 231 of draft 7,
//! none failing. The 134 and 26 others are skipped, never counted as passes: they
//! use `unevaluatedProperties`, `unevaluatedItems`, `$dynamicRef`, `\p{…}` patterns, remote references or embedded resources.
//!
//! # Errors
//!
//! Validation stops at the first error, found in a fixed order. At each value: `type`,
//! `enum`, `const`, then the assertions for its type (the bounds and `multipleOf`;
//! the lengths and `pattern`; the item counts and `uniqueItems`; `required`, the
//! dependent names, the member counts and `propertyNames`), then the schemas applied in place, in
//! the order `$ref`, `allOf`, `anyOf`, `oneOf`, `not`, `if`, `dependentSchemas`,
//! then `contains`, then for an array its elements in order, and for an object its
//! members in input order. The same schema and input always give the same error.
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
//! An `anyOf` or `oneOf` that no entry matches is explained by the one entry whose
//! type the value has, with that entry's own error (`{"anyOf": [{"type": "integer",
//! "minimum": 1}, {"type": "null"}]}` on `0` says `Expected a number >= 1, found
//! 0`); by the types of all the entries when the value has none of them (`Expected
//! integer or null, found string`); and otherwise as `Value does not match any of
//! the allowed schemas (anyOf)`.
//!
//! # Depth and work
//!
//! The validator walks the input depth first with explicit stacks, not by
//! recursion: one of the schemas being applied, each waiting for the answers it
//! needs, and one of the path to the value. It uses the same native stack whatever
//! the nesting. It descends only where the schema has a schema for the children, and
//! it stops with an error at [`MAX_DEPTH`] levels of input, and at [`MAX_SCHEMAS`]
//! schemas applied inside one another (as a `$ref` cycle that never reaches into
//! the input does). Equality for `enum`, `const` and `uniqueItems` also uses a work
//! list. No input or schema, however deep, can overflow the stack; pattern parsing
//! recurses, at most 32 groups deep, and `propertyNames` checks each name by a
//! validation of its own, one level deep (a name, a string, has no names).
//!
//! Numbers are compared by their exact decimal text; exponents beyond ±10^30 are
//! taken as ±10^30. Without references, the time taken is at most proportional to
//! the size of the input times the size of the schema (and a logarithm, for objects
//! compared by `enum` or `const` and arrays checked by `uniqueItems`; and the size
//! of a pattern, for strings matched by it). References are followed at most 1,024
//! times plus 64 for each value of the input; a schema that needs more (references
//! that each lead to several, for one) is an error, `Schema too costly to check`.
//! The limits are errors that stop the whole validation, even inside `not` or
//! `anyOf`, so that they never turn into a match.

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
