//! [`PreparedSchema`]: a schema read once, for checking many inputs against it.
//!
//! This is the hot path of both endpoints. It covers the keywords most tool schemas
//! use (those of [`Keywords::is_plain`]); a schema with any other checked keyword is
//! left whole to [`validate`], which gives the answer anyway.

use alloc::boxed::Box;
use alloc::vec::Vec;

use super::equality::json_equal;
use super::keywords::{Bound, JsonType, Keywords, characters};
use super::numbers::{Decimal, compare_numbers};
use super::{SchemaError, validate};
use crate::json::{Number, Object, Str, Value};

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
/// The schemas read are those of the plain keywords (`type`, `enum`, `const`, the
/// bounds and lengths, `items` and its kin, `properties`, `required`,
/// `additionalProperties`); a schema that uses any other checked keyword anywhere
/// (`$ref`, `anyOf`, `pattern`, …) is left whole to [`validate`].
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

/// The kinds of value the type accepts whatever they hold: none for `integer`,
/// which looks into a number.
fn type_kinds(t: JsonType) -> Kinds {
    match t {
        JsonType::Null => NULL,
        JsonType::Boolean => BOOLEAN,
        JsonType::Object => OBJECT,
        JsonType::Array => ARRAY,
        JsonType::Number => NUMBER,
        JsonType::Integer => 0,
        JsonType::String => STRING,
    }
}

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

/// What the keywords of one schema object ask, as `validate` applies them.
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
/// last four up to 7, and as slices from 8.
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
        _ => a == b,
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
        // Beyond the plain keywords (references, combinators, …), `validate` decides.
        if depth >= PREPARED_DEPTH || !keywords.is_plain() {
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
                    .fold(0, |kinds, t| kinds | type_kinds(t)),
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

    /// Whether `instance` fits the rules at `at`, as `validate` and the
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
