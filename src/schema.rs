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

use alloc::boxed::Box;
use alloc::string::String;
use alloc::vec::Vec;
use core::cmp::Ordering;
use core::fmt::{self, Write};

use crate::json::{Number, Object, Reader, Str, Value};

/// The deepest level of nesting the validator descends to; an input that the schema
/// makes it descend further is rejected with an error at that level.
pub const MAX_DEPTH: usize = 128;

/// Why an input does not match a schema: the path of the offending value and a message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SchemaError {
    path: String,
    message: String,
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
    let mut v = Validator {
        path: Stack::new(),
        frames: Stack::new(),
    };
    v.visit(schema, instance)?;
    // Depth first, children in order: the explicit form of the obvious recursion.
    while let Some(frame) = v.frames.last_mut() {
        match frame.next_child() {
            Some(Child::Check(step, schema, instance)) => {
                v.path.push(step);
                let depth = v.frames.len();
                v.visit(schema, instance)?;
                if v.frames.len() == depth {
                    // A value without children to check: back to its parent.
                    v.path.pop();
                }
            }
            Some(Child::Unexpected(name)) => return Err(v.fail_member("Unexpected", name)),
            None => {
                v.frames.pop();
                v.path.pop();
            }
        }
    }
    Ok(())
}

/// One step of a path: a member name or an array index.
enum Step<'a> {
    Member(&'a Str),
    Element(usize),
}

struct Validator<'a> {
    /// Where the value being checked sits in the input.
    path: Stack<Step<'a>>,
    /// The arrays and objects whose children are being checked, outermost first; the
    /// innermost one is the value at `path`. At most [`MAX_DEPTH`] long.
    frames: Stack<Frame<'a>>,
}

/// How many levels of [`Validator`]'s stacks are kept in place: inputs nested no
/// deeper than this are checked without allocating.
const INLINE_LEVELS: usize = 8;

/// A stack whose first [`INLINE_LEVELS`] entries live in place, deeper ones in a
/// `Vec`.
struct Stack<T> {
    /// The first entries; the slots at `len` and above are `None`.
    inline: [Option<T>; INLINE_LEVELS],
    len: usize,
    deeper: Vec<T>,
}

impl<T> Stack<T> {
    fn new() -> Stack<T> {
        Stack {
            inline: core::array::from_fn(|_| None),
            len: 0,
            deeper: Vec::new(),
        }
    }

    fn len(&self) -> usize {
        self.len
    }

    fn is_empty(&self) -> bool {
        self.len == 0
    }

    fn push(&mut self, entry: T) {
        match self.inline.get_mut(self.len) {
            Some(slot) => *slot = Some(entry),
            None => self.deeper.push(entry),
        }
        self.len += 1;
    }

    /// Removes the last entry; nothing when empty.
    fn pop(&mut self) {
        let Some(last) = self.len.checked_sub(1) else {
            return;
        };
        match self.inline.get_mut(last) {
            Some(slot) => *slot = None,
            None => drop(self.deeper.pop()),
        }
        self.len = last;
    }

    fn last_mut(&mut self) -> Option<&mut T> {
        let last = self.len.checked_sub(1)?;
        match self.inline.get_mut(last) {
            Some(slot) => slot.as_mut(),
            None => self.deeper.last_mut(),
        }
    }

    /// The entries, first to last.
    fn iter(&self) -> impl Iterator<Item = &T> {
        self.inline.iter().flatten().chain(&self.deeper)
    }
}

/// The children of one array or object still to check, with the schemas that apply.
enum Frame<'a> {
    Elements {
        elements: core::iter::Enumerate<core::slice::Iter<'a, Value>>,
        by_position: &'a [Value],
        rest: Option<&'a Value>,
    },
    Members {
        members: core::slice::Iter<'a, (Str, Value)>,
        properties: Option<&'a Object>,
        additional: Option<&'a Value>,
    },
}

/// What to do with the next child of a [`Frame`].
enum Child<'a> {
    /// Check this value against this schema.
    Check(Step<'a>, &'a Value, &'a Value),
    /// This member is not allowed (`additionalProperties: false`).
    Unexpected(&'a Str),
}

impl<'a> Frame<'a> {
    /// The next child a schema applies to; `None` when all are checked.
    fn next_child(&mut self) -> Option<Child<'a>> {
        match self {
            Frame::Elements {
                elements,
                by_position,
                rest,
            } => elements.find_map(|(index, element)| {
                let schema = by_position.get(index).or(*rest)?;
                Some(Child::Check(Step::Element(index), schema, element))
            }),
            Frame::Members {
                members,
                properties,
                additional,
            } => members.find_map(|(name, value)| {
                match (properties.and_then(|p| p.get(name)), *additional) {
                    (Some(schema), _) => Some(Child::Check(Step::Member(name), schema, value)),
                    (None, Some(Value::Bool(false))) => Some(Child::Unexpected(name)),
                    (None, Some(schema)) => Some(Child::Check(Step::Member(name), schema, value)),
                    (None, None) => None,
                }
            }),
        }
    }
}

/// The keywords of one schema that the validator applies, gathered in one pass over
/// its members; the last of a repeated name counts, as [`Object::get`] has it.
#[derive(Default)]
struct Keywords<'a> {
    type_names: Option<&'a Value>,
    allowed: Option<&'a Value>,
    constant: Option<&'a Value>,
    minimum: Option<&'a Value>,
    maximum: Option<&'a Value>,
    exclusive_minimum: Option<&'a Value>,
    exclusive_maximum: Option<&'a Value>,
    min_length: Option<&'a Value>,
    max_length: Option<&'a Value>,
    min_items: Option<&'a Value>,
    max_items: Option<&'a Value>,
    items: Option<&'a Value>,
    prefix_items: Option<&'a Value>,
    additional_items: Option<&'a Value>,
    properties: Option<&'a Value>,
    required: Option<&'a Value>,
    additional_properties: Option<&'a Value>,
    pattern_properties: Option<&'a Value>,
}

impl<'a> Keywords<'a> {
    #[inline(always)]
    fn of(schema: &'a Object) -> Keywords<'a> {
        let mut k = Keywords::default();
        for (name, value) in schema.iter() {
            let slot = match name.as_bytes() {
                b"type" => &mut k.type_names,
                b"enum" => &mut k.allowed,
                b"const" => &mut k.constant,
                b"minimum" => &mut k.minimum,
                b"maximum" => &mut k.maximum,
                b"exclusiveMinimum" => &mut k.exclusive_minimum,
                b"exclusiveMaximum" => &mut k.exclusive_maximum,
                b"minLength" => &mut k.min_length,
                b"maxLength" => &mut k.max_length,
                b"minItems" => &mut k.min_items,
                b"maxItems" => &mut k.max_items,
                b"items" => &mut k.items,
                b"prefixItems" => &mut k.prefix_items,
                b"additionalItems" => &mut k.additional_items,
                b"properties" => &mut k.properties,
                b"required" => &mut k.required,
                b"additionalProperties" => &mut k.additional_properties,
                b"patternProperties" => &mut k.pattern_properties,
                _ => continue,
            };
            *slot = Some(value);
        }
        k
    }

    /// The entries of `type` when it constrains the type: a name, or a non-empty
    /// array of names that are all type names. Empty otherwise (the keyword is
    /// absent, or malformed and so ignored).
    fn type_names(&self) -> &'a [Value] {
        let names: &[Value] = match self.type_names {
            Some(name @ Value::String(_)) => core::slice::from_ref(name),
            Some(Value::Array(names)) => names,
            _ => return &[],
        };
        // A name that is not a type makes the whole keyword malformed: ignored.
        if names.iter().all(|name| JsonType::named_by(name).is_some()) {
            names
        } else {
            &[]
        }
    }

    /// The bounds on a number, in the order they are checked.
    fn bounds(&self) -> [(Option<&'a Number>, Bound); 4] {
        let number = |keyword: Option<&'a Value>| keyword.and_then(Value::as_number);
        let flag = |keyword: Option<&'a Value>| keyword.and_then(Value::as_bool).unwrap_or(false);
        // Draft 4 writes exclusivity as a boolean beside `minimum`/`maximum`.
        let lower = if flag(self.exclusive_minimum) {
            Bound::Above
        } else {
            Bound::AtLeast
        };
        let upper = if flag(self.exclusive_maximum) {
            Bound::Below
        } else {
            Bound::AtMost
        };
        [
            (number(self.minimum), lower),
            (number(self.exclusive_minimum), Bound::Above),
            (number(self.maximum), upper),
            (number(self.exclusive_maximum), Bound::Below),
        ]
    }

    /// The limits of a `min…`/`max…` pair.
    fn limits(min: Option<&Value>, max: Option<&Value>) -> (Option<u64>, Option<u64>) {
        (min.and_then(Value::as_u64), max.and_then(Value::as_u64))
    }

    /// The schemas of an array's elements: by position, then for the rest.
    fn element_schemas(&self) -> (&'a [Value], Option<&'a Value>) {
        match (self.prefix_items, self.items) {
            (Some(Value::Array(prefix)), rest) => (prefix, rest),
            (_, Some(Value::Array(tuple))) => (tuple, self.additional_items),
            (_, rest) => (&[], rest),
        }
    }

    /// The names an object must have.
    fn required(&self) -> impl Iterator<Item = &'a Str> {
        let names = match self.required {
            Some(Value::Array(names)) => names.as_slice(),
            _ => &[],
        };
        names.iter().filter_map(|name| match name {
            Value::String(name) => Some(name),
            _ => None,
        })
    }

    /// The schemas of an object's members: by name, and for the other names.
    fn member_schemas(&self) -> (Option<&'a Object>, Option<&'a Value>) {
        let properties = self.properties.and_then(Value::as_object);
        let additional = match self.pattern_properties {
            Some(Value::Object(patterns)) if !patterns.is_empty() => None,
            _ => self.additional_properties,
        };
        (properties, additional)
    }
}

impl<'a> Validator<'a> {
    /// Checks the keywords of `schema` that apply to `instance` itself, and, when its
    /// elements or members have schemas to check, pushes a [`Frame`] for them.
    fn visit(&mut self, schema: &'a Value, instance: &'a Value) -> Result<(), SchemaError> {
        let keywords = match schema {
            Value::Object(keywords) => Keywords::of(keywords),
            Value::Bool(false) => return Err(self.fail(format_args!("Value not allowed"))),
            _ => return Ok(()),
        };
        if self.path.len() >= MAX_DEPTH {
            return Err(self.fail(format_args!(
                "Input nested more than {MAX_DEPTH} levels deep"
            )));
        }
        self.check_type(&keywords, instance)?;
        self.check_enum(&keywords, instance)?;
        self.check_const(&keywords, instance)?;
        match instance {
            Value::Number(n) => self.check_bounds(&keywords, n),
            Value::String(s) => self.check_length(&keywords, s),
            Value::Array(elements) => self.check_array(&keywords, elements),
            Value::Object(members) => self.check_object(&keywords, members),
            Value::Null | Value::Bool(_) => Ok(()),
        }
    }

    fn check_type(&self, keywords: &Keywords<'_>, instance: &Value) -> Result<(), SchemaError> {
        let names = keywords.type_names();
        let accepts = |name| JsonType::named_by(name).is_some_and(|t| t.accepts(instance));
        if names.is_empty() || names.iter().any(accepts) {
            return Ok(());
        }
        let types: Vec<JsonType> = names.iter().filter_map(JsonType::named_by).collect();
        let expected = Listed {
            items: &types,
            last_separator: " or ",
            limit: types.len(),
        };
        match instance {
            // A number refused by `integer`: show which number.
            Value::Number(n) if types.iter().any(|t| matches!(t, JsonType::Integer)) => Err(self
                .fail(format_args!(
                    "Expected {expected}, found {}",
                    PreviewNumber(n)
                ))),
            _ => Err(self.fail(format_args!(
                "Expected {expected}, found {}",
                instance.type_name()
            ))),
        }
    }

    fn check_enum(&self, keywords: &Keywords<'_>, instance: &Value) -> Result<(), SchemaError> {
        let Some(Value::Array(allowed)) = keywords.allowed else {
            return Ok(());
        };
        if allowed.iter().any(|a| json_equal(a, instance)) {
            return Ok(());
        }
        let previews: Vec<Preview<'_>> = allowed.iter().map(Preview).collect();
        let listed = Listed {
            items: &previews,
            last_separator: " or ",
            limit: 10,
        };
        Err(self.fail(format_args!(
            "Expected one of {listed}, found {}",
            Preview(instance)
        )))
    }

    fn check_const(&self, keywords: &Keywords<'_>, instance: &Value) -> Result<(), SchemaError> {
        match keywords.constant {
            Some(expected) if !json_equal(expected, instance) => Err(self.fail(format_args!(
                "Expected {}, found {}",
                Preview(expected),
                Preview(instance)
            ))),
            _ => Ok(()),
        }
    }

    fn check_bounds(&self, keywords: &Keywords<'a>, n: &'a Number) -> Result<(), SchemaError> {
        for (limit, bound) in keywords.bounds() {
            let Some(limit) = limit else { continue };
            if !bound.holds(compare_numbers(n, limit)) {
                return Err(self.fail(format_args!(
                    "Expected a number {} {}, found {}",
                    bound.symbol(),
                    PreviewNumber(limit),
                    PreviewNumber(n)
                )));
            }
        }
        Ok(())
    }

    fn check_length(&self, keywords: &Keywords<'_>, s: &Str) -> Result<(), SchemaError> {
        if keywords.min_length.is_none() && keywords.max_length.is_none() {
            return Ok(());
        }
        let limits = Keywords::limits(keywords.min_length, keywords.max_length);
        self.check_count(limits, "character", characters(s))
    }

    /// Checks a count against the values of a pair of `min…`/`max…` keywords.
    fn check_count(
        &self,
        (min, max): (Option<u64>, Option<u64>),
        unit: &str,
        count: usize,
    ) -> Result<(), SchemaError> {
        let count = count as u64;
        let plural = |n: u64| if n == 1 { "" } else { "s" };
        if let Some(min) = min.filter(|&min| count < min) {
            return Err(self.fail(format_args!(
                "Expected at least {min} {unit}{}, found {count}",
                plural(min)
            )));
        }
        if let Some(max) = max.filter(|&max| count > max) {
            return Err(self.fail(format_args!(
                "Expected at most {max} {unit}{}, found {count}",
                plural(max)
            )));
        }
        Ok(())
    }

    fn check_array(
        &mut self,
        keywords: &Keywords<'a>,
        elements: &'a [Value],
    ) -> Result<(), SchemaError> {
        let limits = Keywords::limits(keywords.min_items, keywords.max_items);
        self.check_count(limits, "item", elements.len())?;
        let (by_position, rest) = keywords.element_schemas();
        if !elements.is_empty() && (!by_position.is_empty() || rest.is_some()) {
            let elements = elements.iter().enumerate();
            self.frames.push(Frame::Elements {
                elements,
                by_position,
                rest,
            });
        }
        Ok(())
    }

    fn check_object(
        &mut self,
        keywords: &Keywords<'a>,
        members: &'a Object,
    ) -> Result<(), SchemaError> {
        if let Some(name) = keywords
            .required()
            .find(|&name| !members.contains_key(name))
        {
            return Err(self.fail_member("Missing required", name));
        }
        let (properties, additional) = keywords.member_schemas();
        if !members.is_empty() && (properties.is_some() || additional.is_some()) {
            let members = members.iter();
            self.frames.push(Frame::Members {
                members,
                properties,
                additional,
            });
        }
        Ok(())
    }
    /// An error about the member `name` of the object being checked: a parameter at
    /// the root, a property deeper.
    fn fail_member(&self, what: &str, name: &str) -> SchemaError {
        let kind = if self.path.is_empty() {
            "parameter"
        } else {
            "property"
        };
        self.fail(format_args!("{what} {kind} '{}'", Truncated(name)))
    }

    /// An error at the current path: `description`, followed by ` at <path>` below
    /// the root.
    fn fail(&self, description: fmt::Arguments<'_>) -> SchemaError {
        let mut path = String::from("$");
        for step in self.path.iter() {
            let _ = match step {
                Step::Member(name) if is_identifier(name) => write!(path, ".{}", name.as_str()),
                Step::Member(name) => write!(path, "[{}]", Quoted(name, usize::MAX)),
                Step::Element(index) => write!(path, "[{index}]"),
            };
        }
        let mut message = String::new();
        let _ = message.write_fmt(description);
        if !self.path.is_empty() {
            message.push_str(" at ");
            message.push_str(&path);
        }
        SchemaError { path, message }
    }
}

/// How a number must compare with a limit.
#[derive(Clone, Copy, Debug)]
enum Bound {
    AtLeast,
    Above,
    AtMost,
    Below,
}

impl Bound {
    /// Whether `number.cmp(limit)` satisfies the bound.
    fn holds(self, ordering: Ordering) -> bool {
        match self {
            Bound::AtLeast => ordering.is_ge(),
            Bound::Above => ordering.is_gt(),
            Bound::AtMost => ordering.is_le(),
            Bound::Below => ordering.is_lt(),
        }
    }

    fn symbol(self) -> &'static str {
        match self {
            Bound::AtLeast => ">=",
            Bound::Above => ">",
            Bound::AtMost => "<=",
            Bound::Below => "<",
        }
    }
}

/// A string's length in Unicode scalar values: the bytes that do not continue a
/// UTF-8 sequence, counted from the bytes, as the text needs no second check.
fn characters(s: &Str) -> usize {
    s.as_bytes().iter().filter(|&&b| b & 0xC0 != 0x80).count()
}

fn is_identifier(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// The JSON Schema type names.
#[derive(Clone, Copy, Debug)]
enum JsonType {
    Null,
    Boolean,
    Object,
    Array,
    Number,
    Integer,
    String,
}

impl JsonType {
    /// The type a `type` keyword's entry names; `None` for anything else.
    fn named_by(name: &Value) -> Option<JsonType> {
        let Value::String(name) = name else {
            return None;
        };
        Some(match name.as_bytes() {
            b"null" => JsonType::Null,
            b"boolean" => JsonType::Boolean,
            b"object" => JsonType::Object,
            b"array" => JsonType::Array,
            b"number" => JsonType::Number,
            b"integer" => JsonType::Integer,
            b"string" => JsonType::String,
            _ => return None,
        })
    }

    fn name(self) -> &'static str {
        match self {
            JsonType::Null => "null",
            JsonType::Boolean => "boolean",
            JsonType::Object => "object",
            JsonType::Array => "array",
            JsonType::Number => "number",
            JsonType::Integer => "integer",
            JsonType::String => "string",
        }
    }

    /// The kinds of value the type accepts whatever they hold: none for `integer`,
    /// which looks into a number.
    fn kinds(self) -> Kinds {
        match self {
            JsonType::Null => NULL,
            JsonType::Boolean => BOOLEAN,
            JsonType::Object => OBJECT,
            JsonType::Array => ARRAY,
            JsonType::Number => NUMBER,
            JsonType::Integer => 0,
            JsonType::String => STRING,
        }
    }

    fn accepts(self, value: &Value) -> bool {
        match (self, value) {
            (JsonType::Integer, Value::Number(n)) => Decimal::of(n).is_integral(),
            (JsonType::Null, Value::Null)
            | (JsonType::Boolean, Value::Bool(_))
            | (JsonType::Object, Value::Object(_))
            | (JsonType::Array, Value::Array(_))
            | (JsonType::Number, Value::Number(_))
            | (JsonType::String, Value::String(_)) => true,
            _ => false,
        }
    }
}

impl fmt::Display for JsonType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

// ---------------------------------------------------------------------------
// A schema prepared for checking many inputs.
// ---------------------------------------------------------------------------

/// A schema read once, for checking many inputs against it: what an endpoint keeps
/// for each tool's `inputSchema`.
///
/// [`validate`](PreparedSchema::validate) gives exactly what [`validate`] gives.
/// The keywords of every schema in it are read when it is prepared, so an input is
/// checked without looking any keyword up; an input it turns down is checked again
/// by [`validate`], which finds and describes the first error. A value of a kind
/// that a schema accepts whatever it holds (a string where `{"type": "string"}`
/// asks nothing more, any member where `additionalProperties` is absent) is passed
/// at once, and a member is matched to its property by the length of its name
/// before its text is compared.
///
/// ```
/// use dhara_protocol::json::{Object, Value};
/// use dhara_protocol::schema::{PreparedSchema, validate};
///
/// let schema = Value::Object(Object::from_iter([("required", Value::from(vec!["url"]))]));
/// let prepared = PreparedSchema::new(schema.clone());
/// let input = Value::Object(Object::from_iter([("url", Value::from("https://a.b"))]));
/// assert_eq!(prepared.validate(&input), Ok(()));
/// let empty = Value::Object(Object::new());
/// assert_eq!(prepared.validate(&empty), validate(&schema, &empty));
/// ```
#[derive(Clone, Debug)]
pub struct PreparedSchema {
    schema: Value,
    /// The schema, read; `None` when it nests deeper than [`PREPARED_DEPTH`], and
    /// every input is left to [`validate`].
    root: Option<Node>,
    /// The keywords of each schema object in it that a kind alone does not settle,
    /// read.
    rules: Vec<Rules>,
}

/// How deeply a prepared schema may nest its schemas; a deeper one is checked by
/// [`validate`] alone.
const PREPARED_DEPTH: usize = 32;

/// A set of the kinds of JSON value that `type` tells apart, a bit each.
type Kinds = u8;

const NULL: Kinds = 1;
const BOOLEAN: Kinds = 1 << 1;
const NUMBER: Kinds = 1 << 2;
const STRING: Kinds = 1 << 3;
const ARRAY: Kinds = 1 << 4;
const OBJECT: Kinds = 1 << 5;
const EVERY_KIND: Kinds = NULL | BOOLEAN | NUMBER | STRING | ARRAY | OBJECT;

/// The kind of `value`, as its bit of [`Kinds`].
#[inline(always)]
fn kind_of(value: &Value) -> Kinds {
    match value {
        Value::Null => NULL,
        Value::Bool(_) => BOOLEAN,
        Value::Number(_) => NUMBER,
        Value::String(_) => STRING,
        Value::Array(_) => ARRAY,
        Value::Object(_) => OBJECT,
    }
}

/// One schema, read: the kinds of value it accepts whatever they hold, and the
/// keywords that decide for a value of any other kind.
#[derive(Clone, Copy, Debug)]
struct Node {
    /// The kinds of value that fit without a further look.
    settled: Kinds,
    /// The keywords that decide for the other values, by index in
    /// [`PreparedSchema::rules`]; none (an index past its end, [`Node::NO_RULES`])
    /// when no other value fits.
    rules: u32,
}

impl Node {
    /// `true`, `{}`, and every value that is neither an object nor `false`.
    const ANYTHING: Node = Node {
        settled: EVERY_KIND,
        rules: Node::NO_RULES,
    };
    /// `false`.
    const NOTHING: Node = Node {
        settled: 0,
        rules: Node::NO_RULES,
    };
    /// The index of no rules: there are never this many.
    const NO_RULES: u32 = u32::MAX;
}

/// What the keywords of one schema object ask, as [`Validator::visit`] applies them.
#[derive(Clone, Debug)]
struct Rules {
    /// The kinds of value `type` accepts; every kind when it names none.
    kinds: Kinds,
    /// Whether `type` also accepts a number with an integral value (it names
    /// `integer` and not `number`).
    integers: bool,
    allowed: Option<Vec<Value>>,
    constant: Option<Value>,
    bounds: Vec<(Number, Bound)>,
    length: (Option<u64>, Option<u64>),
    item_count: (Option<u64>, Option<u64>),
    by_position: Vec<Node>,
    /// The schema of the elements after those `by_position` names.
    rest: Node,
    required: Vec<Str>,
    /// The schemas of members by name: one for each name, the last the schema
    /// gives it, where the name first appears.
    properties: Vec<Property>,
    /// The lengths of the names in `properties`, as [`length_bit`]s: a member whose
    /// length is not among them is known to have no property without a look.
    name_lengths: u64,
    /// When every required name has a schema among the first 64 `properties`: bit
    /// `i` for each `properties[i]` a required name finds. The members are then
    /// known to include the required ones from the properties they found, in the
    /// same pass that checks them.
    required_properties: Option<u64>,
    /// The schema of the other members.
    additional: Node,
}

/// The schema of the members of one name.
#[derive(Clone, Debug)]
struct Property {
    name: Box<[u8]>,
    node: Node,
    /// Its bit in [`Rules::required_properties`]: `1 << i` for `properties[i]`,
    /// none from the 64th on.
    bit: u64,
}

impl Rules {
    /// The schema of the members named `name`.
    #[inline(always)]
    fn property(&self, name: &Str) -> Option<&Property> {
        if self.name_lengths & length_bit(name.len()) == 0 {
            return None;
        }
        let name = name.as_bytes();
        self.properties
            .iter()
            .find(|property| same_name(&property.name, name))
    }

    /// The kinds of value these rules accept whatever they hold: those `type`
    /// accepts that no other keyword looks into.
    fn settled(&self) -> Kinds {
        if self.allowed.is_some() || self.constant.is_some() {
            return 0;
        }
        let anything = |node: &Node| node.settled == EVERY_KIND;
        let mut settled = NULL | BOOLEAN;
        if self.bounds.is_empty() {
            settled |= NUMBER;
        }
        if self.length == (None, None) {
            settled |= STRING;
        }
        if self.item_count == (None, None)
            && self.by_position.iter().all(anything)
            && anything(&self.rest)
        {
            settled |= ARRAY;
        }
        if self.required.is_empty()
            && self.properties.iter().all(|p| anything(&p.node))
            && anything(&self.additional)
        {
            settled |= OBJECT;
        }
        settled & self.kinds
    }
}

/// A name's length as a bit of a set of lengths, the lengths from 63 on sharing
/// the last bit.
#[inline(always)]
fn length_bit(len: usize) -> u64 {
    1 << len.min(63)
}

/// Whether two names are the same bytes. Names of up to 16 bytes are compared
/// without a call: the first, middle and last byte up to 3 bytes, the first and
/// last four up to 7, and as [`Reader::same_bytes`] has it from 8.
#[inline(always)]
fn same_name(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    match a.len() {
        0 => true,
        1..=3 => {
            let middle = a.len() / 2;
            a.first() == b.first() && a.get(middle) == b.get(middle) && a.last() == b.last()
        }
        4..=7 => {
            a.first_chunk::<4>() == b.first_chunk::<4>()
                && a.last_chunk::<4>() == b.last_chunk::<4>()
        }
        _ => Reader::same_bytes(a, b),
    }
}

impl PreparedSchema {
    /// Reads `schema` for checking inputs against it.
    pub fn new(schema: Value) -> PreparedSchema {
        let mut prepared = PreparedSchema {
            schema: Value::Null,
            root: None,
            rules: Vec::new(),
        };
        prepared.root = prepared.read(&schema, 0);
        prepared.schema = schema;
        prepared
    }

    /// The schema it was prepared from.
    pub fn schema(&self) -> &Value {
        &self.schema
    }

    /// Checks `instance` against the schema: exactly what [`validate`] gives.
    pub fn validate(&self, instance: &Value) -> Result<(), SchemaError> {
        match self.root {
            Some(root) if self.fits(root, instance) => Ok(()),
            _ => validate(&self.schema, instance),
        }
    }

    /// Reads the schema `schema`, nested `depth` schemas deep; `None` past
    /// [`PREPARED_DEPTH`].
    fn read(&mut self, schema: &Value, depth: usize) -> Option<Node> {
        let keywords = match schema {
            Value::Object(keywords) => Keywords::of(keywords),
            Value::Bool(false) => return Some(Node::NOTHING),
            _ => return Some(Node::ANYTHING),
        };
        if depth >= PREPARED_DEPTH {
            return None;
        }
        let types = keywords.type_names();
        let (by_position, rest) = keywords.element_schemas();
        let (properties, additional) = keywords.member_schemas();
        let mut rules = Rules {
            kinds: match types {
                [] => EVERY_KIND,
                _ => types
                    .iter()
                    .filter_map(JsonType::named_by)
                    .fold(0, |kinds, t| kinds | t.kinds()),
            },
            integers: types
                .iter()
                .any(|name| matches!(JsonType::named_by(name), Some(JsonType::Integer))),
            allowed: match keywords.allowed {
                Some(Value::Array(allowed)) => Some(allowed.clone()),
                _ => None,
            },
            constant: keywords.constant.cloned(),
            bounds: keywords
                .bounds()
                .into_iter()
                .filter_map(|(limit, bound)| Some((limit?.clone(), bound)))
                .collect(),
            length: Keywords::limits(keywords.min_length, keywords.max_length),
            item_count: Keywords::limits(keywords.min_items, keywords.max_items),
            by_position: Vec::new(),
            rest: Node::ANYTHING,
            required: keywords.required().cloned().collect(),
            properties: Vec::new(),
            name_lengths: 0,
            required_properties: None,
            additional: Node::ANYTHING,
        };
        for schema in by_position {
            rules.by_position.push(self.read(schema, depth + 1)?);
        }
        if let Some(schema) = rest {
            rules.rest = self.read(schema, depth + 1)?;
        }
        for (name, schema) in properties.map(Object::iter).into_iter().flatten() {
            let node = self.read(schema, depth + 1)?;
            let name = name.as_bytes();
            match rules
                .properties
                .iter_mut()
                .find(|p| same_name(&p.name, name))
            {
                Some(property) => property.node = node,
                None => {
                    rules.name_lengths |= length_bit(name.len());
                    rules.properties.push(Property {
                        name: name.into(),
                        node,
                        bit: 1u64.checked_shl(rules.properties.len() as u32).unwrap_or(0),
                    });
                }
            }
        }
        if let Some(schema) = additional {
            rules.additional = self.read(schema, depth + 1)?;
        }
        rules.required_properties = rules.required.iter().try_fold(0, |mask, name| {
            let name = name.as_bytes();
            let bit = rules
                .properties
                .iter()
                .find(|p| same_name(&p.name, name))?
                .bit;
            (bit != 0).then_some(mask | bit)
        });
        let settled = rules.settled();
        if settled == EVERY_KIND {
            return Some(Node::ANYTHING);
        }
        let at = u32::try_from(self.rules.len())
            .ok()
            .filter(|&at| at != Node::NO_RULES)?;
        self.rules.push(rules);
        Some(Node { settled, rules: at })
    }

    /// Whether `instance` fits `node`: at once for a kind the node settles, by its
    /// rules otherwise.
    #[inline(always)]
    fn fits(&self, node: Node, instance: &Value) -> bool {
        // Anything (`additionalProperties` absent, for one) before the kind is known.
        node.settled == EVERY_KIND
            || node.settled & kind_of(instance) != 0
            || self.fits_rules(node.rules, instance)
    }

    /// Whether `instance` fits the rules at `at`, as [`Validator::visit`] and the
    /// checks of its children decide. Recurses (through [`fits`](Self::fits)) once
    /// per schema level, at most [`PREPARED_DEPTH`].
    fn fits_rules(&self, at: u32, instance: &Value) -> bool {
        let Some(rules) = self.rules.get(at as usize) else {
            return false;
        };
        let typed = rules.kinds & kind_of(instance) != 0
            || rules.integers
                && matches!(instance, Value::Number(n) if Decimal::of(n).is_integral());
        let allowed = rules.allowed.as_ref();
        if !typed
            || allowed.is_some_and(|allowed| !allowed.iter().any(|a| json_equal(a, instance)))
            || rules
                .constant
                .as_ref()
                .is_some_and(|c| !json_equal(c, instance))
        {
            return false;
        }
        let within = |(min, max): (Option<u64>, Option<u64>), count: usize| {
            let count = count as u64;
            min.is_none_or(|min| count >= min) && max.is_none_or(|max| count <= max)
        };
        match instance {
            Value::Number(n) => rules
                .bounds
                .iter()
                .all(|(limit, bound)| bound.holds(compare_numbers(n, limit))),
            Value::String(s) => rules.length == (None, None) || within(rules.length, characters(s)),
            Value::Array(elements) => {
                within(rules.item_count, elements.len())
                    && elements.iter().enumerate().all(|(index, element)| {
                        let node = rules.by_position.get(index).unwrap_or(&rules.rest);
                        self.fits(*node, element)
                    })
            }
            Value::Object(members) => {
                // The properties the members found, as far as the required ones go.
                let mut found = 0u64;
                let members_fit = members.iter().all(|(name, value)| {
                    let node = match rules.property(name) {
                        Some(property) => {
                            found |= property.bit;
                            property.node
                        }
                        None => rules.additional,
                    };
                    self.fits(node, value)
                });
                members_fit
                    && match rules.required_properties {
                        Some(required) => found & required == required,
                        None => rules.required.iter().all(|name| members.contains_key(name)),
                    }
            }
            Value::Null | Value::Bool(_) => true,
        }
    }
}

// ---------------------------------------------------------------------------
// Equality for `enum` and `const`.
// ---------------------------------------------------------------------------

/// JSON equality: numbers by value, objects as unordered maps (the last member of a
/// repeated name counts), arrays element by element. Uses a work list, not recursion.
fn json_equal(a: &Value, b: &Value) -> bool {
    let mut pending = alloc::vec![(a, b)];
    while let Some(pair) = pending.pop() {
        match pair {
            (Value::Null, Value::Null) => {}
            (Value::Bool(x), Value::Bool(y)) if x == y => {}
            (Value::Number(x), Value::Number(y)) if compare_numbers(x, y).is_eq() => {}
            (Value::String(x), Value::String(y)) if x == y => {}
            (Value::Array(x), Value::Array(y)) if x.len() == y.len() => {
                pending.extend(x.iter().zip(y.iter()));
            }
            (Value::Object(x), Value::Object(y)) => {
                let (x, y) = (effective_members(x), effective_members(y));
                if x.len() != y.len() || x.iter().zip(&y).any(|((m, _), (n, _))| m != n) {
                    return false;
                }
                pending.extend(x.into_iter().zip(y).map(|((_, u), (_, v))| (u, v)));
            }
            _ => return false,
        }
    }
    true
}

/// The members of an object sorted by name, keeping only the last of a repeated name.
fn effective_members(object: &Object) -> Vec<(&str, &Value)> {
    let mut members: Vec<(&str, &Value)> = object.iter().map(|(k, v)| (k.as_str(), v)).collect();
    // Stable: members of one name stay in input order, so the last one is the one that
    // counts.
    members.sort_by(|a, b| a.0.cmp(b.0));
    let mut effective: Vec<(&str, &Value)> = Vec::with_capacity(members.len());
    for member in members {
        match effective.last_mut() {
            Some(last) if last.0 == member.0 => *last = member,
            _ => effective.push(member),
        }
    }
    effective
}

// ---------------------------------------------------------------------------
// Exact comparison of JSON numbers by decimal value.
// ---------------------------------------------------------------------------

/// Exponents are read up to this magnitude; beyond it, numbers whose exponents differ
/// compare as if they were equal in exponent.
const EXPONENT_CAP: i128 = 1_000_000_000_000_000_000_000_000_000;

/// A number as `±0.d₁d₂…dₖ × 10^scale`, with the significant digits `head ++ tail`
/// (no leading or trailing zeros). No digits means zero.
struct Decimal<'a> {
    negative: bool,
    head: &'a [u8],
    tail: &'a [u8],
    scale: i128,
}

impl<'a> Decimal<'a> {
    fn of(n: &'a Number) -> Decimal<'a> {
        let text = n.text_bytes();
        let (negative, text) = match text.split_first() {
            Some((b'-', rest)) => (true, rest),
            _ => (false, text),
        };
        let (mantissa, exponent) = text.split_at(
            text.iter()
                .position(|b| matches!(b, b'e' | b'E'))
                .unwrap_or(text.len()),
        );
        let (int, frac) = mantissa.split_at(
            mantissa
                .iter()
                .position(|&b| b == b'.')
                .unwrap_or(mantissa.len()),
        );
        let frac = frac.get(1..).unwrap_or_default();
        let exponent = exponent.get(1..).unwrap_or_default();
        let (exponent_negative, exponent_digits) = match exponent.split_first() {
            Some((b'-', rest)) => (true, rest),
            Some((b'+', rest)) => (false, rest),
            _ => (false, exponent),
        };
        let mut exp: i128 = 0;
        for d in exponent_digits.iter().filter(|d| d.is_ascii_digit()) {
            exp = (exp * 10 + i128::from(d - b'0')).min(EXPONENT_CAP);
        }
        if exponent_negative {
            exp = -exp;
        }
        let mut d = Decimal {
            negative,
            head: int,
            tail: frac,
            scale: int.len() as i128 + exp,
        };
        d.strip_zeros();
        d
    }

    fn strip_zeros(&mut self) {
        while let Some((b'0', rest)) = self.head.split_first() {
            self.head = rest;
            self.scale -= 1;
        }
        if self.head.is_empty() {
            while let Some((b'0', rest)) = self.tail.split_first() {
                self.tail = rest;
                self.scale -= 1;
            }
        }
        while let Some((b'0', rest)) = self.tail.split_last() {
            self.tail = rest;
        }
        if self.tail.is_empty() {
            while let Some((b'0', rest)) = self.head.split_last() {
                self.head = rest;
            }
        }
    }

    fn is_zero(&self) -> bool {
        self.head.is_empty() && self.tail.is_empty()
    }

    fn is_integral(&self) -> bool {
        self.is_zero() || (self.head.len() + self.tail.len()) as i128 <= self.scale
    }

    fn signum(&self) -> i8 {
        match (self.is_zero(), self.negative) {
            (true, _) => 0,
            (false, true) => -1,
            (false, false) => 1,
        }
    }

    fn digits(&self) -> impl Iterator<Item = &u8> {
        self.head.iter().chain(self.tail.iter())
    }
}

/// Compares two JSON numbers by their exact decimal value (`1 == 1.0 == 10e-1`).
fn compare_numbers(a: &Number, b: &Number) -> Ordering {
    let (a, b) = (Decimal::of(a), Decimal::of(b));
    let by_sign = a.signum().cmp(&b.signum());
    if by_sign.is_ne() || a.is_zero() {
        return by_sign;
    }
    let magnitude = a
        .scale
        .cmp(&b.scale)
        .then_with(|| a.digits().cmp(b.digits()));
    if a.negative {
        magnitude.reverse()
    } else {
        magnitude
    }
}

// ---------------------------------------------------------------------------
// Bounded previews of values for messages.
// ---------------------------------------------------------------------------

/// Longest text of a string, a name or a number shown in a message, in characters.
const PREVIEW_CHARS: usize = 40;

/// A short form of a value: scalars as JSON (long strings and numbers cut with `…`),
/// arrays and objects by their size.
struct Preview<'a>(&'a Value);

impl fmt::Display for Preview<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Value::Null => f.write_str("null"),
            Value::Bool(b) => write!(f, "{b}"),
            Value::Number(n) => write!(f, "{}", PreviewNumber(n)),
            Value::String(s) => write!(f, "{}", Quoted(s, PREVIEW_CHARS)),
            Value::Array(a) => write!(
                f,
                "an array of {} item{}",
                a.len(),
                if a.len() == 1 { "" } else { "s" }
            ),
            Value::Object(o) => write!(
                f,
                "an object with {} member{}",
                o.len(),
                if o.len() == 1 { "" } else { "s" }
            ),
        }
    }
}

struct PreviewNumber<'a>(&'a Number);

impl fmt::Display for PreviewNumber<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", Truncated(self.0.as_str()))
    }
}

/// Text cut to [`PREVIEW_CHARS`] characters, with `…` when cut.
struct Truncated<'a>(&'a str);

impl fmt::Display for Truncated<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0.char_indices().nth(PREVIEW_CHARS) {
            Some((end, _)) => write!(f, "{}…", self.0.get(..end).unwrap_or_default()),
            None => f.write_str(self.0),
        }
    }
}

/// A string as a JSON string literal, cut after `limit` characters (with `…` inside
/// the quotes when cut).
struct Quoted<'a>(&'a str, usize);

impl fmt::Display for Quoted<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_char('"')?;
        for (count, c) in self.0.chars().enumerate() {
            if count == self.1 {
                f.write_char('…')?;
                break;
            }
            match c {
                '"' => f.write_str("\\\"")?,
                '\\' => f.write_str("\\\\")?,
                '\n' => f.write_str("\\n")?,
                '\r' => f.write_str("\\r")?,
                '\t' => f.write_str("\\t")?,
                c if u32::from(c) < 0x20 => write!(f, "\\u{:04x}", u32::from(c))?,
                c => f.write_char(c)?,
            }
        }
        f.write_char('"')
    }
}

/// A list such as `a, b or c`, showing at most `limit` items and then `…`.
struct Listed<'a, T> {
    items: &'a [T],
    last_separator: &'a str,
    limit: usize,
}

impl<T: fmt::Display> fmt::Display for Listed<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let shown = self.items.len().min(self.limit);
        for (i, item) in self.items.iter().take(shown).enumerate() {
            if i > 0 {
                let last = i + 1 == self.items.len();
                f.write_str(if last { self.last_separator } else { ", " })?;
            }
            write!(f, "{item}")?;
        }
        if shown < self.items.len() {
            write!(f, ", … ({} in all)", self.items.len())?;
        }
        Ok(())
    }
}

/// The keywords [`validate`] checks.
const CHECKED: &[&str] = &[
    "type",
    "enum",
    "const",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "minLength",
    "maxLength",
    "minItems",
    "maxItems",
    "items",
    "prefixItems",
    "additionalItems",
    "properties",
    "required",
    "additionalProperties",
];

/// Keywords that say something about a value without constraining it: never reported
/// as unchecked.
const ANNOTATIONS: &[&str] = &[
    "$schema",
    "$id",
    "$comment",
    "$anchor",
    "title",
    "description",
    "default",
    "examples",
    "deprecated",
    "readOnly",
    "writeOnly",
    "format",
    "$defs",
    "definitions",
];

/// The keywords in `schema` that constrain a value but that [`validate`] does not
/// check, each named once, in the order first met (depth first). A tool whose schema
/// uses them is still callable; its input is just checked less than its author meant.
///
/// ```
/// use dhara_protocol::json;
/// use dhara_protocol::schema::unchecked_keywords;
///
/// let schema = json::parse(br#"{"type":"object","properties":{"url":{"type":"string","pattern":"^https://"}},"not":{"required":["x"]}}"#).unwrap();
/// assert_eq!(unchecked_keywords(&schema), ["not", "pattern"]);
/// ```
pub fn unchecked_keywords(schema: &Value) -> Vec<String> {
    let mut found: Vec<String> = Vec::new();
    // An explicit work list, as in `validate`, so no schema can overflow the stack;
    // past `MAX_DEPTH` the rest is not looked at.
    let mut work: Vec<(&Value, usize)> = Vec::from([(schema, 0)]);
    let mut later: Vec<(&Value, usize)> = Vec::new();
    while let Some((schema, depth)) = work.pop() {
        let Value::Object(object) = schema else {
            continue;
        };
        if depth >= MAX_DEPTH {
            continue;
        }
        for (name, value) in object.iter() {
            let name = name.as_str();
            let children: &[&Value] = match (name, value) {
                ("properties" | "$defs" | "definitions", Value::Object(members)) => {
                    later.extend(members.iter().map(|(_, v)| (v, depth + 1)));
                    &[]
                }
                ("items" | "prefixItems", Value::Array(schemas)) => {
                    later.extend(schemas.iter().map(|v| (v, depth + 1)));
                    &[]
                }
                ("items" | "additionalItems" | "additionalProperties", child) => &[child],
                _ => &[],
            };
            later.extend(children.iter().map(|&v| (v, depth + 1)));
            let known = CHECKED.contains(&name) || ANNOTATIONS.contains(&name);
            if !known && !found.iter().any(|f| f == name) {
                found.push(String::from(name));
            }
        }
        // Children in schema order: pushed reversed onto the work list.
        work.extend(later.drain(..).rev());
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json;

    /// Valid inputs are accepted by the prepared schema itself, with no second look:
    /// by kind alone, by the rules, through properties of names of every length, the
    /// last of a repeated property name, repeated members and integral numbers.
    #[test]
    fn valid_inputs_fit_a_prepared_schema() {
        let long = "n".repeat(64);
        let long_schema = alloc::format!(
            r#"{{"properties":{{"{long}":{{"type":"integer"}},"{long}m":{{"type":"string"}}}},"required":["{long}"],"additionalProperties":false}}"#
        );
        let long_input = alloc::format!(r#"{{"{long}":1e2,"{long}m":"x"}}"#);
        // Members whose names have a property's length and other text.
        let near_schema = alloc::format!(
            r#"{{"properties":{{"abc":{{"type":"string"}},"pattern":{{"type":"string"}},"0123456789abcdef":{{"type":"string"}},"{long}":{{"type":"string"}}}},"additionalProperties":{{"type":"integer"}}}}"#
        );
        let near = &long[1..];
        let near_input =
            alloc::format!(r#"{{"axc":1,"patterm":2,"0123456789abcdeg":3,"{near}m":4,"abc":"x"}}"#);
        let cases: [(&str, &str); 11] = [
            (
                r#"{"properties":{"a":{"type":"string"},"b":{"type":"integer"},"abc":{"type":"boolean"},"axc":{"type":"null"},"past":{"type":"number"},"pattern":{"type":"array"},"directory":{"type":"object"},"0123456789abcdef0":{"enum":[1]}},"required":["a","axc","pattern"],"additionalProperties":false}"#,
                r#"{"a":"x","b":-0,"abc":true,"axc":null,"past":2.5,"pattern":[],"directory":{},"0123456789abcdef0":1.0}"#,
            ),
            (
                r#"{"properties":{"a":{"type":"string"},"a":{"type":"integer"}},"required":["a"]}"#,
                r#"{"a":1,"a":20e-1,"b":"other"}"#,
            ),
            (
                r#"{"type":["integer","string"],"items":false,"properties":{"x":false}}"#,
                r#"12345678901234567890e3"#,
            ),
            (
                r#"{"type":"array","items":{"type":"object","properties":{"p":{"type":"array","items":{"type":"integer","minimum":-1}}}}}"#,
                r#"[{"p":[1,-1,0.0]},{"q":"x"},{}]"#,
            ),
            (&long_schema, &long_input),
            (&near_schema, &near_input),
            (
                r#"{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}"#,
                r#"{"path":"src/lib.rs","limit":3,"recursive":true}"#,
            ),
            (
                r#"{"type":"object","additionalProperties":false,"properties":{"n":{"type":"integer","minimum":1,"maximum":10}}}"#,
                r#"{"n":10.0}"#,
            ),
            (
                r#"{"type":["array","null"],"items":{"enum":["a",1,{"b":[2]}]},"minItems":1}"#,
                r#"["a",1.0,{"b":[2e0]}]"#,
            ),
            (
                r#"{"prefixItems":[{"const":"x"}],"items":{"type":"string","maxLength":2}}"#,
                r#"["x","é!"]"#,
            ),
            (
                r#"{"properties":{"a":true,"b":{}},"additionalProperties":{"type":"null"}}"#,
                r#"{"a":1,"b":[],"c":null}"#,
            ),
        ];
        for (schema, input) in cases {
            let (schema, input) = (
                json::parse(schema.as_bytes()),
                json::parse(input.as_bytes()),
            );
            let (Ok(schema), Ok(input)) = (schema, input) else {
                panic!("the cases are JSON");
            };
            let prepared = PreparedSchema::new(schema.clone());
            assert_eq!(validate(&schema, &input), Ok(()));
            let root = prepared.root.expect("a shallow schema is read whole");
            assert!(prepared.fits(root, &input), "{schema}");
        }
    }

    /// Required names are checked against the members whether or not they have a
    /// schema among the properties, and past the 64th property.
    #[test]
    fn required_members_are_found_with_or_without_a_property_schema() {
        let many: alloc::string::String = (0..70)
            .map(|i| alloc::format!(r#""p{i}":{{"type":"integer"}},"#))
            .collect();
        let plain = |s: &str| alloc::string::String::from(s);
        let schemas = [
            plain(r#"{"properties":{"a":{},"b":{}},"required":["b"]}"#),
            plain(r#"{"properties":{"a":{},"a":{"type":"string"}},"required":["a","a"]}"#),
            plain(r#"{"properties":{"a":{}},"required":["a","c"]}"#),
            plain(r#"{"required":["c"],"additionalProperties":false}"#),
            alloc::format!(r#"{{"properties":{{{many}"last":{{}}}},"required":["p3","last"]}}"#),
            alloc::format!(r#"{{"properties":{{{many}"last":{{}}}},"required":["p69"]}}"#),
        ];
        let inputs = [
            "{}",
            r#"{"a":1}"#,
            r#"{"a":"x"}"#,
            r#"{"b":1}"#,
            r#"{"a":1,"b":2,"c":3}"#,
            r#"{"c":3}"#,
            r#"{"p3":1,"last":null}"#,
            r#"{"last":null,"p3":1.5}"#,
            r#"{"p69":1}"#,
            r#"{"p3":1}"#,
        ];
        for schema in &schemas {
            let Ok(schema) = json::parse(schema.as_bytes()) else {
                panic!("the schema is JSON: {schema}");
            };
            let prepared = PreparedSchema::new(schema.clone());
            for input in inputs {
                let Ok(input) = json::parse(input.as_bytes()) else {
                    panic!("the input is JSON");
                };
                assert_eq!(
                    prepared.validate(&input),
                    validate(&schema, &input),
                    "{schema} {input}"
                );
            }
        }
    }

    /// A schema nested too deeply to prepare is left to `validate`.
    #[test]
    fn deep_schemas_are_left_to_validate() {
        let mut schema = Value::Object(Object::from_iter([("type", Value::from("string"))]));
        let mut input = Value::from("x");
        for _ in 0..PREPARED_DEPTH + 1 {
            schema = Value::Object(Object::from_iter([("items", schema)]));
            input = Value::Array(alloc::vec![input]);
        }
        let prepared = PreparedSchema::new(schema.clone());
        assert!(prepared.root.is_none());
        assert_eq!(prepared.validate(&input), Ok(()));
        let wrong = Value::Array(alloc::vec![Value::from(1)]);
        assert_eq!(prepared.validate(&wrong), validate(&schema, &wrong));
    }
}
