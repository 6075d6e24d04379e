//! The keywords of one schema object, read in one pass, and the vocabulary they
//! share: JSON types, numeric bounds, counts.

use core::cmp::Ordering;
use core::fmt;

use super::numbers::Decimal;
use crate::json::{Number, Object, Str, Value};

/// The keywords of one schema that the validator applies, gathered in one pass over
/// its members; the last of a repeated name counts, as [`Object::get`] has it.
#[derive(Default)]
pub(super) struct Keywords<'a> {
    pub(super) type_names: Option<&'a Value>,
    pub(super) allowed: Option<&'a Value>,
    pub(super) constant: Option<&'a Value>,
    pub(super) minimum: Option<&'a Value>,
    pub(super) maximum: Option<&'a Value>,
    pub(super) exclusive_minimum: Option<&'a Value>,
    pub(super) exclusive_maximum: Option<&'a Value>,
    pub(super) min_length: Option<&'a Value>,
    pub(super) max_length: Option<&'a Value>,
    pub(super) min_items: Option<&'a Value>,
    pub(super) max_items: Option<&'a Value>,
    pub(super) items: Option<&'a Value>,
    pub(super) prefix_items: Option<&'a Value>,
    pub(super) additional_items: Option<&'a Value>,
    pub(super) properties: Option<&'a Value>,
    pub(super) required: Option<&'a Value>,
    pub(super) additional_properties: Option<&'a Value>,
    pub(super) pattern_properties: Option<&'a Value>,
    // Beyond the plain keywords: the prepared path leaves these to `validate`.
    pub(super) reference: Option<&'a Value>,
    pub(super) all_of: Option<&'a Value>,
    pub(super) any_of: Option<&'a Value>,
    pub(super) one_of: Option<&'a Value>,
    pub(super) not: Option<&'a Value>,
    pub(super) when: Option<&'a Value>,
    pub(super) then: Option<&'a Value>,
    pub(super) otherwise: Option<&'a Value>,
    pub(super) dependent_required: Option<&'a Value>,
    pub(super) dependent_schemas: Option<&'a Value>,
    pub(super) dependencies: Option<&'a Value>,
    pub(super) min_properties: Option<&'a Value>,
    pub(super) max_properties: Option<&'a Value>,
    pub(super) unique_items: Option<&'a Value>,
    pub(super) multiple_of: Option<&'a Value>,
    pub(super) contains: Option<&'a Value>,
    pub(super) min_contains: Option<&'a Value>,
    pub(super) max_contains: Option<&'a Value>,
    pub(super) pattern: Option<&'a Value>,
    pub(super) property_names: Option<&'a Value>,
}

impl<'a> Keywords<'a> {
    #[inline(always)]
    pub(super) fn of(schema: &'a Object) -> Keywords<'a> {
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
                b"$ref" => &mut k.reference,
                b"allOf" => &mut k.all_of,
                b"anyOf" => &mut k.any_of,
                b"oneOf" => &mut k.one_of,
                b"not" => &mut k.not,
                b"if" => &mut k.when,
                b"then" => &mut k.then,
                b"else" => &mut k.otherwise,
                b"dependentRequired" => &mut k.dependent_required,
                b"dependentSchemas" => &mut k.dependent_schemas,
                b"dependencies" => &mut k.dependencies,
                b"minProperties" => &mut k.min_properties,
                b"maxProperties" => &mut k.max_properties,
                b"uniqueItems" => &mut k.unique_items,
                b"multipleOf" => &mut k.multiple_of,
                b"contains" => &mut k.contains,
                b"minContains" => &mut k.min_contains,
                b"maxContains" => &mut k.max_contains,
                b"pattern" => &mut k.pattern,
                b"propertyNames" => &mut k.property_names,
                _ => continue,
            };
            *slot = Some(value);
        }
        k
    }

    /// The entries of `type` when it constrains the type: a name, or a non-empty
    /// array of names that are all type names. Empty otherwise (the keyword is
    /// absent, or malformed and so ignored).
    pub(super) fn type_names(&self) -> &'a [Value] {
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
    pub(super) fn bounds(&self) -> [(Option<&'a Number>, Bound); 4] {
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
    pub(super) fn limits(min: Option<&Value>, max: Option<&Value>) -> (Option<u64>, Option<u64>) {
        (min.and_then(count), max.and_then(count))
    }

    /// Whether the schema uses only the keywords [`PreparedSchema`] reads: none of
    /// the references, combinators and rarer assertions.
    ///
    /// [`PreparedSchema`]: super::PreparedSchema
    pub(super) fn is_plain(&self) -> bool {
        [
            self.reference,
            self.all_of,
            self.any_of,
            self.one_of,
            self.not,
            self.when,
            self.dependent_required,
            self.dependent_schemas,
            self.dependencies,
            self.min_properties,
            self.max_properties,
            self.unique_items,
            self.multiple_of,
            self.contains,
            self.pattern,
            self.property_names,
        ]
        .iter()
        .all(Option::is_none)
            && self
                .pattern_properties
                .and_then(Value::as_object)
                .is_none_or(Object::is_empty)
    }

    /// The schemas of an array's elements: by position, then for the rest.
    pub(super) fn element_schemas(&self) -> (&'a [Value], Option<&'a Value>) {
        match (self.prefix_items, self.items) {
            (Some(Value::Array(prefix)), rest) => (prefix, rest),
            (_, Some(Value::Array(tuple))) => (tuple, self.additional_items),
            (_, rest) => (&[], rest),
        }
    }

    /// The names an object must have.
    pub(super) fn required(&self) -> impl Iterator<Item = &'a Str> {
        let names = match self.required {
            Some(Value::Array(names)) => names.as_slice(),
            _ => &[],
        };
        names.iter().filter_map(|name| match name {
            Value::String(name) => Some(name),
            _ => None,
        })
    }

    /// The schemas of an object's members: by name, and for the other names, when
    /// no pattern names any (no `patternProperties`, as in a plain schema).
    pub(super) fn member_schemas(&self) -> (Option<&'a Object>, Option<&'a Value>) {
        let properties = self.properties.and_then(Value::as_object);
        (properties, self.additional_properties)
    }
}

/// How a number must compare with a limit.
#[derive(Clone, Copy, Debug)]
pub(super) enum Bound {
    AtLeast,
    Above,
    AtMost,
    Below,
}

impl Bound {
    /// Whether `number.cmp(limit)` satisfies the bound.
    pub(super) fn holds(self, ordering: Ordering) -> bool {
        match self {
            Bound::AtLeast => ordering.is_ge(),
            Bound::Above => ordering.is_gt(),
            Bound::AtMost => ordering.is_le(),
            Bound::Below => ordering.is_lt(),
        }
    }

    pub(super) fn symbol(self) -> &'static str {
        match self {
            Bound::AtLeast => ">=",
            Bound::Above => ">",
            Bound::AtMost => "<=",
            Bound::Below => "<",
        }
    }
}

/// A count a `min…`/`max…` keyword gives: a non-negative integral number (`2` or
/// `2.0`) that fits in a `u64`; `None` for anything else, and the keyword is ignored.
pub(super) fn count(value: &Value) -> Option<u64> {
    let n = value.as_number()?;
    n.as_u64().or_else(|| {
        let d = Decimal::of(n);
        if !d.is_integral() || d.signum() < 0 || d.scale > 20 {
            return None;
        }
        // An integral value of at most 20 digits: its digits, then zeros to its scale.
        let digits = d.digits().copied().chain(core::iter::repeat(b'0'));
        let mut total: u64 = 0;
        for digit in digits.take(d.scale.max(0) as usize) {
            total = total
                .checked_mul(10)?
                .checked_add(u64::from(digit - b'0'))?;
        }
        Some(total)
    })
}

/// A string's length in Unicode scalar values: the bytes that do not continue a
/// UTF-8 sequence, counted from the bytes, as the text needs no second check.
pub(super) fn characters(s: &Str) -> usize {
    s.as_bytes().iter().filter(|&&b| b & 0xC0 != 0x80).count()
}

pub(super) fn is_identifier(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// The JSON Schema type names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum JsonType {
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
    pub(super) fn named_by(name: &Value) -> Option<JsonType> {
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

    pub(super) fn name(self) -> &'static str {
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

    pub(super) fn accepts(self, value: &Value) -> bool {
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

/// The schemas a keyword of a checked schema holds, for walks over a whole schema:
/// the values of `properties`, `patternProperties`, `$defs`, `definitions`,
/// `dependentSchemas` and the schema entries of `dependencies`; the entries of
/// `items`, `prefixItems`, `allOf`, `anyOf` and `oneOf` arrays; and the value of
/// `items`, `additionalItems`, `additionalProperties`, `propertyNames`, `not`,
/// `if`, `then`, `else` and `contains`. Nothing for other keywords.
pub(super) fn subschemas<'a>(name: &str, value: &'a Value) -> impl Iterator<Item = &'a Value> {
    let (members, elements, single): (Option<&'a Object>, &'a [Value], Option<&'a Value>) =
        match (name, value) {
            (
                "properties" | "patternProperties" | "$defs" | "definitions" | "dependentSchemas"
                | "dependencies",
                Value::Object(members),
            ) => (Some(members), &[], None),
            ("items" | "prefixItems" | "allOf" | "anyOf" | "oneOf", Value::Array(schemas)) => {
                (None, schemas, None)
            }
            (
                "items"
                | "additionalItems"
                | "additionalProperties"
                | "propertyNames"
                | "not"
                | "if"
                | "then"
                | "else"
                | "contains",
                schema,
            ) => (None, &[], Some(schema)),
            _ => (None, &[], None),
        };
    let from_members = members
        .into_iter()
        .flat_map(Object::iter)
        .map(|(_, v)| v)
        // `dependencies` lists names (an array) or gives a schema.
        .filter(|v| v.as_array().is_none());
    from_members.chain(elements).chain(single)
}
