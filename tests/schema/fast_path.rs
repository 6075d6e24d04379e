//! A prepared schema answers as `validate` does on the inputs tools usually get:
//! schemas of the common shapes (objects of a few properties, scalar types,
//! required names, bounds, `enum` and `const`, nested objects and arrays) with
//! inputs made to fit them, most of them whole and some of them with one thing
//! wrong, so that both the prepared schema's own check and its hand-over to
//! `validate` are taken.

use dhara_protocol::json::{Number, Object, Value};
use dhara_protocol::schema::{PreparedSchema, validate};
use proptest::prelude::*;
use proptest::strategy::BoxedStrategy;

/// Member names of many lengths (1 to 3, 4 to 7, 8 to 16, 17 and up, 63 and more),
/// several of a length, so that lookups meet names of the same length that differ
/// in their first, middle or last bytes.
fn member_names() -> Vec<String> {
    let mut names: Vec<String> = [
        "a",
        "b",
        "ab",
        "ba",
        "abc",
        "axc",
        "path",
        "past",
        "pattern",
        "patterm",
        "limit",
        "recursive",
        "directory",
        "0123456789abcdef",
        "0123456789abcdeg",
        "0123456789abcdef0",
        "a b",
        "é",
    ]
    .map(String::from)
    .to_vec();
    names.push("n".repeat(63));
    names.push("n".repeat(64));
    names.push(format!("{}m", "n".repeat(63)));
    names
}

fn name() -> impl Strategy<Value = String> {
    prop::sample::select(member_names())
}

/// Numbers near each other and near the bounds below, in several spellings of one
/// value.
const NUMBERS: &[&str] = &[
    "0",
    "-0",
    "1",
    "1.0",
    "1e0",
    "-1",
    "2.5",
    "25e-1",
    "10",
    "10.0",
    "1e1",
    "9.999",
    "10.000001",
    "-2.5",
    "12345678901234567890",
];

fn number() -> impl Strategy<Value = Value> {
    prop::sample::select(NUMBERS)
        .prop_map(|text| Value::Number(Number::from_text(text).expect("a JSON number")))
}

fn string() -> impl Strategy<Value = Value> {
    prop::sample::select(&["", "x", "ab", "é", "日本", "abc", "path", "a\u{1F600}"][..])
        .prop_map(Value::from)
}

fn scalar() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        number(),
        string(),
    ]
}

/// Any value: scalars, and arrays and objects of them a level or two deep.
fn value() -> BoxedStrategy<Value> {
    scalar()
        .prop_recursive(2, 12, 4, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
                prop::collection::vec((name(), inner), 0..4)
                    .prop_map(|m| Value::Object(Object::from_iter(m))),
            ]
        })
        .boxed()
}

fn object<'a>(members: impl IntoIterator<Item = (&'a str, Value)>) -> Value {
    Value::Object(Object::from_iter(members))
}

/// The `type` keyword: one name, a union, or a name that is no type.
fn type_keyword() -> impl Strategy<Value = Value> {
    let one = prop::sample::select(
        &[
            "null", "boolean", "object", "array", "number", "integer", "string",
        ][..],
    );
    prop_oneof![
        4 => one.clone().prop_map(Value::from),
        1 => prop::collection::vec(one.prop_map(Value::from), 1..3).prop_map(Value::Array),
        1 => Just(Value::from("strng")),
    ]
}

/// A schema for a scalar: a type, bounds, lengths, `enum`, `const`, or nothing.
fn scalar_schema() -> impl Strategy<Value = Value> {
    let bound =
        prop::sample::select(&["minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"][..]);
    let limit = prop::sample::select(&[0u64, 1, 2, 3][..]).prop_map(Value::from);
    prop_oneof![
        1 => any::<bool>().prop_map(Value::Bool),
        1 => Just(object([])),
        6 => type_keyword().prop_map(|t| object([("type", t)])),
        2 => (
            prop::sample::select(&["number", "integer"][..]),
            prop::collection::vec((bound, number()), 1..3),
            prop::option::of(any::<bool>()),
        )
            .prop_map(|(t, bounds, exclusive)| {
                let mut members = vec![("type", Value::from(t))];
                members.extend(bounds);
                members.extend(exclusive.map(|e| ("exclusiveMaximum", Value::Bool(e))));
                object(members)
            }),
        2 => (prop::option::of(limit.clone()), prop::option::of(limit)).prop_map(|(min, max)| {
            let mut members = vec![("type", Value::from("string"))];
            members.extend(min.map(|min| ("minLength", min)));
            members.extend(max.map(|max| ("maxLength", max)));
            object(members)
        }),
        1 => prop::collection::vec(scalar(), 1..4).prop_map(|e| object([("enum", Value::Array(e))])),
        1 => scalar().prop_map(|c| object([("const", c)])),
    ]
}

/// Schemas of the common shapes, nested up to three levels: objects with
/// properties (a name may come twice), required names and `additionalProperties`
/// absent, `false` or a schema; arrays by `items`, by position, with counts.
fn schema() -> impl Strategy<Value = Value> {
    scalar_schema().prop_recursive(3, 24, 4, |inner| {
        let typed = |t: &'static str| prop::option::weighted(0.7, Just(("type", Value::from(t))));
        prop_oneof![
            3 => (
                typed("object"),
                prop::collection::vec((name(), inner.clone()), 0..5),
                prop::collection::vec((any::<prop::sample::Index>(), prop::option::weighted(0.2, name())), 0..3),
                prop_oneof![
                    2 => Just(None),
                    1 => Just(Some(Value::Bool(false))),
                    1 => inner.clone().prop_map(Some),
                ],
            )
                .prop_map(|(t, properties, required, additional)| {
                    // Mostly names that have a property, sometimes others.
                    let required: Vec<Value> = required
                        .into_iter()
                        .filter_map(|(at, other)| {
                            let named = (!properties.is_empty())
                                .then(|| properties[at.index(properties.len())].0.clone());
                            other.or(named).map(Value::from)
                        })
                        .collect();
                    let properties = Value::Object(Object::from_iter(properties));
                    let mut members = vec![("properties", properties)];
                    members.extend(t);
                    if !required.is_empty() {
                        members.push(("required", Value::Array(required)));
                    }
                    members.extend(additional.map(|a| ("additionalProperties", a)));
                    object(members)
                }),
            1 => (
                typed("array"),
                prop_oneof![
                    inner.clone().prop_map(|s| ("items", s)),
                    prop::collection::vec(inner.clone(), 1..3)
                        .prop_map(|s| ("prefixItems", Value::Array(s))),
                ],
                prop::option::of(prop::sample::select(&[0u64, 1, 2][..])),
                prop::option::of(prop::sample::select(&[1u64, 2, 3][..])),
            )
                .prop_map(|(t, items, min, max)| {
                    let mut members = vec![items];
                    members.extend(t);
                    members.extend(min.map(|min| ("minItems", Value::from(min))));
                    members.extend(max.map(|max| ("maxItems", Value::from(max))));
                    object(members)
                }),
        ]
    })
}

/// An input made to fit `schema` (it mostly does; bounds, `required` and types
/// picked from a choice are missed now and then), or, one time in twenty, any
/// value.
fn input_for(schema: &Value) -> BoxedStrategy<Value> {
    let Value::Object(keywords) = schema else {
        return value();
    };
    let mut fitting: Vec<BoxedStrategy<Value>> = Vec::new();
    if let Some(Value::Array(allowed)) = keywords.get("enum") {
        fitting.push(prop::sample::select(allowed.clone()).boxed());
    }
    if let Some(constant) = keywords.get("const") {
        fitting.push(Just(constant.clone()).boxed());
    }
    let properties = keywords.get("properties").and_then(Value::as_object);
    if properties.is_some() || keywords.get("required").is_some() {
        fitting.push(members_for(keywords));
    }
    if let Some(items) = keywords.get("items") {
        let element = input_for(items);
        fitting.push(
            prop::collection::vec(element, 0..4)
                .prop_map(Value::Array)
                .boxed(),
        );
    }
    if let Some(Value::Array(by_position)) = keywords.get("prefixItems") {
        let elements: Vec<BoxedStrategy<Value>> = by_position.iter().map(input_for).collect();
        fitting.push(elements.prop_map(Value::Array).boxed());
    }
    let names: Vec<&Value> = match keywords.get("type") {
        Some(Value::Array(names)) => names.iter().collect(),
        Some(name) => vec![name],
        None => Vec::new(),
    };
    for name in names {
        fitting.push(match name.as_str() {
            Some("null") => Just(Value::Null).boxed(),
            Some("boolean") => any::<bool>().prop_map(Value::Bool).boxed(),
            Some("number" | "integer") => number().boxed(),
            Some("string") => string().boxed(),
            Some("array") => prop::collection::vec(scalar(), 0..3)
                .prop_map(Value::Array)
                .boxed(),
            Some("object") => members_for(keywords),
            _ => continue,
        });
    }
    if fitting.is_empty() {
        return value();
    }
    let fitting = prop::strategy::Union::new(fitting);
    prop_oneof![19 => fitting, 1 => value()].boxed()
}

/// An object for a schema with `properties` or `required`: most properties with
/// inputs made for them, some required names, a member or two of other names,
/// and now and then an earlier member of a name given again.
fn members_for(keywords: &Object) -> BoxedStrategy<Value> {
    let properties: Vec<BoxedStrategy<Option<(String, Value)>>> = keywords
        .get("properties")
        .and_then(Value::as_object)
        .into_iter()
        .flat_map(Object::iter)
        .map(|(name, schema)| {
            let name = String::from(name.as_str());
            prop::option::weighted(0.85, input_for(schema))
                .prop_map(move |input| input.map(|input| (name.clone(), input)))
                .boxed()
        })
        .collect();
    let required: Vec<String> = match keywords.get("required") {
        Some(Value::Array(names)) => names
            .iter()
            .filter_map(Value::as_str)
            .map(String::from)
            .collect(),
        _ => Vec::new(),
    };
    let required = required
        .into_iter()
        .map(|name| {
            let schema = keywords
                .get("properties")
                .and_then(|p| p.get(name.as_str()));
            let input = schema.map_or_else(value, input_for);
            prop::option::weighted(0.95, input).prop_map(move |v| v.map(|v| (name.clone(), v)))
        })
        .collect::<Vec<_>>();
    let others = match keywords.get("additionalProperties") {
        Some(Value::Bool(false)) => prop::collection::vec((name(), value()), 0..2)
            .prop_filter("mostly none", |others| others.len() < 2)
            .boxed(),
        Some(schema) => prop::collection::vec((name(), input_for(schema)), 0..3).boxed(),
        None => prop::collection::vec((name(), value()), 0..3).boxed(),
    };
    let repeated = prop::option::weighted(0.2, (any::<prop::sample::Index>(), value()));
    (properties, required, others, repeated)
        .prop_map(|(properties, required, others, repeated)| {
            let mut members: Vec<(String, Value)> = required.into_iter().flatten().collect();
            members.extend(properties.into_iter().flatten());
            members.extend(others);
            // An earlier member of a name that comes again: checked too.
            if let Some((at, earlier)) = repeated.filter(|_| !members.is_empty()) {
                let name = members[at.index(members.len())].0.clone();
                members.insert(0, (name, earlier));
            }
            Value::Object(Object::from_iter(members))
        })
        .boxed()
}

fn schema_and_input() -> impl Strategy<Value = (Value, Value)> {
    schema().prop_flat_map(|schema| {
        let input = input_for(&schema);
        (Just(schema), input)
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1024))]

    /// The prepared schema gives what `validate` gives, errors included.
    #[test]
    fn a_prepared_schema_answers_as_validate_does((schema, input) in schema_and_input()) {
        let prepared = PreparedSchema::new(schema.clone());
        prop_assert_eq!(prepared.validate(&input), validate(&schema, &input));
    }

    /// Inside an object of a few properties beside a `path` string, as a tool's
    /// `inputSchema` usually is, with members of those names or of names of the
    /// same length, and other members allowed or not.
    #[test]
    fn a_tool_schema_answers_as_validate_does(
        (property, input) in schema_and_input(),
        names in prop::collection::vec(name(), 1..4),
        given in prop::collection::vec(
            (any::<prop::sample::Index>(), prop::option::weighted(0.3, name())),
            0..4,
        ),
        required in any::<bool>(),
        closed in any::<bool>(),
    ) {
        let mut properties: Vec<(String, Value)> =
            names.iter().map(|n| (n.clone(), property.clone())).collect();
        properties.push((String::from("path"), object([("type", Value::from("string"))])));
        let mut members = vec![
            ("type", Value::from("object")),
            ("properties", Value::Object(Object::from_iter(properties))),
        ];
        if required {
            members.push(("required", Value::from(vec!["path"])));
        }
        if closed {
            members.push(("additionalProperties", Value::Bool(false)));
        }
        let schema = object(members);
        // Mostly a name of the same length as a property's and other text (or the
        // property's own name again), sometimes any name.
        let given: Vec<String> = given
            .into_iter()
            .map(|(at, other)| {
                let property = &names[at.index(names.len())];
                other.unwrap_or_else(|| {
                    member_names()
                        .into_iter()
                        .find(|n| n.len() == property.len() && n != property)
                        .unwrap_or_else(|| property.clone())
                })
            })
            .collect();
        let input = object(
            names
                .iter()
                .chain(&given)
                .map(|n| (n.as_str(), input.clone()))
                .chain([("path", Value::from("src/lib.rs"))]),
        );
        let prepared = PreparedSchema::new(schema.clone());
        prop_assert_eq!(prepared.validate(&input), validate(&schema, &input));
    }
}
