//! The general validator: every checked keyword, depth first, with explicit stacks
//! of the schemas being applied and of the path to the value they apply to.
//!
//! Each schema object applied to a value is a [`Task`] that goes through its
//! [`Phase`]s in a fixed order: the assertions on the value itself, then the
//! schemas applied to the same value (`$ref`, `allOf`, `anyOf`, `oneOf`, `not`,
//! `if`, `dependentSchemas`), then `contains`, then the elements or members. A
//! phase that needs a schema's answer for a value asks for it and waits; the
//! answer is handed back when that schema's task is done. Nothing recurses.

use alloc::string::String;
use alloc::vec::Vec;
use core::fmt::{self, Write};

use super::equality::{first_repeat, json_equal};
use super::keywords::{JsonType, Keywords, characters, count, is_identifier};
use super::messages::{Listed, PREVIEW_CHARS, Preview, PreviewNumber, Quoted, Truncated};
use super::numbers::{compare_numbers, is_multiple_of};
use super::pattern::Regex;
use super::refs::{Dialect, has_embedded_resource, resolve};
use super::{MAX_DEPTH, MAX_SCHEMAS, SchemaError};
use crate::json::{Number, Object, Str, Value};

/// References followed in one validation, at most: this many, plus
/// [`REFS_PER_VALUE`] for each value in the input.
const REFS_BASE: u64 = 1024;
/// See [`REFS_BASE`].
const REFS_PER_VALUE: u64 = 64;

/// Checks `instance` against `schema`, the whole of the [module docs](super).
pub(super) fn validate(schema: &Value, instance: &Value) -> Result<(), SchemaError> {
    run(schema, schema, instance).map_err(Failure::into_error)
}

/// Checks `instance` against `schema`, a schema of the document `root`.
fn run(root: &Value, schema: &Value, instance: &Value) -> Result<(), Failure> {
    let mut v = Validator {
        root,
        input: instance,
        dialect: Dialect::of(root),
        path: Stack::new(),
        references: References::Uncounted,
    };
    let mut tasks: Stack<Task<'_>> = Stack::new();
    let mut returned = match v.start(schema, instance, 0) {
        Started::Task(task) => {
            tasks.push(task);
            None
        }
        Started::Settled(outcome) => return outcome,
    };
    // Depth first: the explicit form of the obvious recursion.
    while let Some(task) = tasks.last_mut() {
        v.path.truncate(task.depth);
        match v.step(task, returned.take()) {
            Action::Apply(schema, instance, step) => {
                let depth = task.depth + usize::from(step.is_some());
                if let Some(step) = step {
                    v.path.push(step);
                }
                match v.start(schema, instance, depth) {
                    Started::Task(task) if tasks.len() < MAX_SCHEMAS => tasks.push(task),
                    Started::Task(_) => {
                        return Err(Failure::Abort(v.fail(format_args!(
                            "Schemas nested more than {MAX_SCHEMAS} levels deep"
                        ))));
                    }
                    Started::Settled(Ok(())) => returned = Some(Ok(())),
                    Started::Settled(Err(Failure::Invalid(e))) => returned = Some(Err(e)),
                    Started::Settled(Err(abort)) => return Err(abort),
                }
            }
            Action::Done(outcome) => {
                tasks.pop();
                returned = Some(outcome);
            }
            Action::Abort(e) => return Err(Failure::Abort(e)),
        }
    }
    returned.unwrap_or(Ok(())).map_err(Failure::Invalid)
}

/// Why a schema does not accept a value.
enum Failure {
    /// The value does not match: a combinator may still accept it another way.
    Invalid(SchemaError),
    /// A limit was reached (depth, nesting, references followed): the whole
    /// validation stops with this error, whatever the combinators around it.
    Abort(SchemaError),
}

impl Failure {
    fn into_error(self) -> SchemaError {
        match self {
            Failure::Invalid(e) | Failure::Abort(e) => e,
        }
    }
}

/// A schema to apply, or what it said without a task.
#[expect(
    clippy::large_enum_variant,
    reason = "a task goes straight onto the task stack; boxing it would allocate for each schema"
)]
enum Started<'a> {
    Task(Task<'a>),
    Settled(Result<(), Failure>),
}

/// What a task wants next.
enum Action<'a> {
    /// The answer of this schema for this value: the task's own value, or its child
    /// at this step.
    Apply(&'a Value, &'a Value, Option<Step<'a>>),
    /// The task's answer.
    Done(Result<(), SchemaError>),
    /// Stop everything with this error.
    Abort(SchemaError),
}

/// One step of a path: a member name or an array index.
enum Step<'a> {
    Member(&'a Str),
    Element(usize),
}

/// A schema object being applied to a value.
struct Task<'a> {
    keywords: Keywords<'a>,
    instance: &'a Value,
    /// How many steps the path to `instance` has.
    depth: usize,
    phase: Phase<'a>,
}

/// Where a [`Task`] is, in the order of its phases.
enum Phase<'a> {
    /// The assertions on the value itself, not yet checked.
    Start,
    /// Waiting for the schema `$ref` names.
    Reference,
    /// Waiting for the `allOf` entry before this index.
    AllOf(usize),
    /// Waiting for the `anyOf` entry before this index; all before it failed.
    AnyOf(usize, Misses),
    /// Waiting for the `oneOf` entry before this index.
    OneOf {
        next: usize,
        matched: Option<usize>,
        misses: Misses,
    },
    /// Waiting for the schema in `not`.
    Not,
    /// Waiting for the schema in `if`.
    If,
    /// Waiting for `then` or `else`.
    ThenOrElse,
    /// Waiting for the dependent schema before this index.
    Dependent(usize),
    /// Waiting for the `contains` schema's answer for the element before this index.
    Contains { next: usize, matched: u64 },
    /// Checking the elements or members.
    Children(Frame<'a>),
}

/// The failures of the entries of an `anyOf` or a `oneOf`, as far as explaining
/// them needs.
#[derive(Default)]
struct Misses {
    /// The types that entries refused the value itself for.
    types: u8,
    /// How many entries failed for another reason.
    others: usize,
    /// The first of those failures.
    first_other: Option<SchemaError>,
}

impl Misses {
    fn add(&mut self, e: SchemaError, depth: usize) {
        if e.depth == depth && e.expected_types != 0 {
            self.types |= e.expected_types;
        } else {
            self.others += 1;
            self.first_other.get_or_insert(e);
        }
    }
}

/// The JSON types in the order an error that merges several lists them.
const TYPE_ORDER: [JsonType; 7] = [
    JsonType::String,
    JsonType::Number,
    JsonType::Integer,
    JsonType::Boolean,
    JsonType::Object,
    JsonType::Array,
    JsonType::Null,
];

/// The bit of a type in [`SchemaError`]'s set of expected types.
fn type_bit(t: JsonType) -> u8 {
    1 << (t as u8)
}

struct Validator<'a> {
    /// The schema document, for references.
    root: &'a Value,
    /// The whole input, for the budget of references.
    input: &'a Value,
    dialect: Dialect,
    /// Where the value being checked sits in the input.
    path: Stack<Step<'a>>,
    references: References,
}

/// The references a validation may still follow.
#[derive(Clone, Copy)]
enum References {
    /// None met yet: the budget is counted on the first.
    Uncounted,
    /// This many more.
    Left(u64),
    /// None: the document has embedded resources (see [`has_embedded_resource`]).
    NotFollowed,
}

/// How many levels of the validator's stacks are kept in place: inputs nested no
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
            inline: [const { None }; INLINE_LEVELS],
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

    /// Removes the entries past the first `len`.
    fn truncate(&mut self, len: usize) {
        while self.len > len {
            self.pop();
        }
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
        /// The member whose schemas are being applied, and how far: 0 for its
        /// property, `1 + i` for `patterns[i]`, and whether any applied yet.
        current: Option<(&'a Str, &'a Value, usize, bool)>,
        properties: Option<&'a Object>,
        /// The `patternProperties` compiled, in the order the schema gives them.
        patterns: Vec<(Regex, &'a Value)>,
        /// The schema of the members no property or pattern applies to; `None`
        /// too when a pattern is outside the subset, since then no one knows.
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
                current,
                properties,
                patterns,
                additional,
            } => loop {
                let (name, value, stage, applied) = match current.take() {
                    Some(member) => member,
                    None => {
                        let (name, value) = members.next()?;
                        (name, value, 0, false)
                    }
                };
                let check = |schema| Some(Child::Check(Step::Member(name), schema, value));
                if stage == 0 {
                    *current = Some((name, value, 1, applied));
                    if let Some(schema) = properties.and_then(|p| p.get(name)) {
                        *current = Some((name, value, 1, true));
                        return check(schema);
                    }
                    continue;
                }
                if let Some((regex, schema)) = patterns.get(stage - 1) {
                    let matched = regex.is_match(name);
                    *current = Some((name, value, stage + 1, applied || matched));
                    if matched {
                        return check(schema);
                    }
                    continue;
                }
                // Neither a property nor a pattern: `additionalProperties`.
                match *additional {
                    _ if applied => {}
                    Some(Value::Bool(false)) => return Some(Child::Unexpected(name)),
                    Some(schema) => return check(schema),
                    None => {}
                }
            },
        }
    }
}

/// The entries of a keyword whose value is a non-empty array of schemas; none when
/// it is absent or malformed (and so ignored).
fn schema_list(keyword: Option<&Value>) -> &[Value] {
    match keyword {
        Some(Value::Array(schemas)) => schemas,
        _ => &[],
    }
}

/// The value of a keyword that holds one schema, when it is one.
fn schema_in(keyword: Option<&Value>) -> Option<&Value> {
    keyword.filter(|s| matches!(s, Value::Object(_) | Value::Bool(_)))
}

/// The members of a keyword whose value is an object; none otherwise.
fn members_of(keyword: Option<&Value>) -> &[(Str, Value)] {
    keyword
        .and_then(Value::as_object)
        .map_or(&[], Object::as_slice)
}

/// The names in an array of names (the other entries skipped).
fn names(list: &Value) -> impl Iterator<Item = &Str> {
    list.as_array()
        .into_iter()
        .flatten()
        .filter_map(|name| match name {
            Value::String(name) => Some(name),
            _ => None,
        })
}

impl<'a> Validator<'a> {
    /// Begins applying `schema` to `instance`, `depth` steps into the input: a
    /// task for a schema object, an answer at once for anything else.
    fn start(&mut self, schema: &'a Value, instance: &'a Value, depth: usize) -> Started<'a> {
        let keywords = match schema {
            Value::Object(keywords) => Keywords::of(keywords),
            Value::Bool(false) => {
                let e = self.fail(format_args!("Value not allowed"));
                return Started::Settled(Err(Failure::Invalid(e)));
            }
            _ => return Started::Settled(Ok(())),
        };
        if depth >= MAX_DEPTH {
            let e = self.fail(format_args!(
                "Input nested more than {MAX_DEPTH} levels deep"
            ));
            return Started::Settled(Err(Failure::Abort(e)));
        }
        let keywords = match keywords.reference {
            // Before 2019-09, a `$ref` stands for its whole schema.
            Some(Value::String(_)) if self.dialect == Dialect::Draft7OrEarlier => Keywords {
                reference: keywords.reference,
                ..Keywords::default()
            },
            _ => keywords,
        };
        Started::Task(Task {
            keywords,
            instance,
            depth,
            phase: Phase::Start,
        })
    }

    /// Moves `task` on, given the answer it waits for, if any, to the next schema it
    /// needs an answer from, or to its own answer.
    fn step(
        &mut self,
        task: &mut Task<'a>,
        returned: Option<Result<(), SchemaError>>,
    ) -> Action<'a> {
        let mut returned = returned;
        let k = &task.keywords;
        let instance = task.instance;
        loop {
            match &mut task.phase {
                Phase::Start => {
                    if let Err(e) = self.check_value(k, instance) {
                        return Action::Done(Err(e));
                    }
                    match self.check_names(k, instance) {
                        Ok(()) => {}
                        Err(Failure::Invalid(e)) => return Action::Done(Err(e)),
                        Err(Failure::Abort(e)) => return Action::Abort(e),
                    }
                    task.phase = Phase::Reference;
                    match self.follow(k.reference) {
                        Ok(Some(target)) => return Action::Apply(target, instance, None),
                        Ok(None) => task.phase = Phase::AllOf(0),
                        Err(e) => return Action::Abort(e),
                    }
                }
                Phase::Reference => {
                    if let Some(Err(e)) = returned.take() {
                        return Action::Done(Err(e));
                    }
                    task.phase = Phase::AllOf(0);
                }
                Phase::AllOf(next) => {
                    if let Some(Err(e)) = returned.take() {
                        return Action::Done(Err(e));
                    }
                    if let Some(schema) = schema_list(k.all_of).get(*next) {
                        *next += 1;
                        return Action::Apply(schema, instance, None);
                    }
                    task.phase = Phase::AnyOf(0, Misses::default());
                }
                Phase::AnyOf(next, misses) => {
                    let schemas = schema_list(k.any_of);
                    let matched = match returned.take() {
                        Some(Ok(())) => true,
                        Some(Err(e)) => {
                            misses.add(e, task.depth);
                            false
                        }
                        None => false,
                    };
                    if !matched {
                        if let Some(schema) = schemas.get(*next) {
                            *next += 1;
                            return Action::Apply(schema, instance, None);
                        }
                        if !schemas.is_empty() {
                            let misses = core::mem::take(misses);
                            return Action::Done(Err(self.explain(misses, "anyOf", instance)));
                        }
                    }
                    task.phase = Phase::OneOf {
                        next: 0,
                        matched: None,
                        misses: Misses::default(),
                    };
                }
                Phase::OneOf {
                    next,
                    matched,
                    misses,
                } => {
                    let schemas = schema_list(k.one_of);
                    match (returned.take(), *matched) {
                        (Some(Ok(())), Some(first)) => {
                            let second = *next - 1;
                            return Action::Done(Err(self.fail(format_args!(
                                "Value matches schemas {first} and {second} of oneOf, but must match exactly one"
                            ))));
                        }
                        (Some(Ok(())), None) => *matched = Some(*next - 1),
                        (Some(Err(e)), _) => misses.add(e, task.depth),
                        (None, _) => {}
                    }
                    if let Some(schema) = schemas.get(*next) {
                        *next += 1;
                        return Action::Apply(schema, instance, None);
                    }
                    if matched.is_none() && !schemas.is_empty() {
                        let misses = core::mem::take(misses);
                        return Action::Done(Err(self.explain(misses, "oneOf", instance)));
                    }
                    task.phase = Phase::Not;
                    if let Some(schema) = schema_in(k.not) {
                        return Action::Apply(schema, instance, None);
                    }
                    task.phase = Phase::If;
                }
                Phase::Not => {
                    if let Some(Ok(())) = returned.take() {
                        return Action::Done(Err(self.fail(format_args!(
                            "Value matches the schema in 'not', which it must not"
                        ))));
                    }
                    task.phase = Phase::If;
                }
                Phase::If => match (returned.take(), schema_in(k.when)) {
                    (Some(answer), _) => {
                        let branch = if answer.is_ok() { k.then } else { k.otherwise };
                        task.phase = Phase::ThenOrElse;
                        if let Some(schema) = schema_in(branch) {
                            return Action::Apply(schema, instance, None);
                        }
                    }
                    (None, Some(schema)) => return Action::Apply(schema, instance, None),
                    (None, None) => task.phase = Phase::ThenOrElse,
                },
                Phase::ThenOrElse => {
                    if let Some(Err(e)) = returned.take() {
                        return Action::Done(Err(e));
                    }
                    task.phase = Phase::Dependent(0);
                }
                Phase::Dependent(next) => {
                    if let Some(Err(e)) = returned.take() {
                        return Action::Done(Err(e));
                    }
                    if let Value::Object(members) = instance {
                        let dependent = members_of(k.dependent_schemas)
                            .iter()
                            .chain(members_of(k.dependencies))
                            .enumerate()
                            .skip(*next)
                            .filter(|(_, (_, schema))| schema_in(Some(schema)).is_some())
                            .find(|(_, (name, _))| members.contains_key(name));
                        if let Some((at, (_, schema))) = dependent {
                            *next = at + 1;
                            return Action::Apply(schema, instance, None);
                        }
                    }
                    task.phase = Phase::Contains {
                        next: 0,
                        matched: 0,
                    };
                }
                Phase::Contains { next, matched } => {
                    if let Some(Ok(())) = returned.take() {
                        *matched += 1;
                    }
                    if let (Value::Array(elements), Some(schema)) =
                        (instance, schema_in(k.contains))
                    {
                        if let Some(element) = elements.get(*next) {
                            *next += 1;
                            let step = Step::Element(*next - 1);
                            return Action::Apply(schema, element, Some(step));
                        }
                        if let Err(e) = self.check_contains(k, *matched) {
                            return Action::Done(Err(e));
                        }
                    }
                    match self.children(k, instance) {
                        Some(frame) => task.phase = Phase::Children(frame),
                        None => return Action::Done(Ok(())),
                    }
                }
                Phase::Children(frame) => {
                    if let Some(Err(e)) = returned.take() {
                        return Action::Done(Err(e));
                    }
                    return match frame.next_child() {
                        Some(Child::Check(step, schema, child)) => {
                            Action::Apply(schema, child, Some(step))
                        }
                        Some(Child::Unexpected(name)) => {
                            Action::Done(Err(self.fail_member("Unexpected", name)))
                        }
                        None => Action::Done(Ok(())),
                    };
                }
            }
        }
    }

    /// The schema a `$ref` names, when it is to be followed: a local reference in a
    /// document without embedded resources. Any other reference is not checked.
    /// An error when the budget of references is spent.
    fn follow(&mut self, reference: Option<&'a Value>) -> Result<Option<&'a Value>, SchemaError> {
        let Some(Value::String(reference)) = reference else {
            return Ok(None);
        };
        if let References::Uncounted = self.references {
            self.references = if has_embedded_resource(self.root) {
                References::NotFollowed
            } else {
                References::Left(
                    REFS_BASE.saturating_add(REFS_PER_VALUE.saturating_mul(values(self.input))),
                )
            };
        }
        let References::Left(left) = self.references else {
            return Ok(None);
        };
        let Some(target) = resolve(self.root, reference) else {
            return Ok(None);
        };
        match left.checked_sub(1) {
            Some(left) => {
                self.references = References::Left(left);
                Ok(Some(target))
            }
            None => Err(self.fail(format_args!(
                "Schema too costly to check: more references followed than {REFS_BASE} and {REFS_PER_VALUE} for each value of the input"
            ))),
        }
    }

    /// The children of an array or object that schemas apply to; `None` when there
    /// are none.
    fn children(&self, k: &Keywords<'a>, instance: &'a Value) -> Option<Frame<'a>> {
        match instance {
            Value::Array(elements) => {
                let (by_position, rest) = k.element_schemas();
                let any = !elements.is_empty() && (!by_position.is_empty() || rest.is_some());
                any.then(|| Frame::Elements {
                    elements: elements.iter().enumerate(),
                    by_position,
                    rest,
                })
            }
            Value::Object(members) if !members.is_empty() => {
                let properties = k.properties.and_then(Value::as_object);
                let given = members_of(k.pattern_properties);
                let patterns: Vec<(Regex, &'a Value)> = given
                    .iter()
                    .filter_map(|(pattern, schema)| Some((Regex::new(pattern)?, schema)))
                    .collect();
                let additional = match k.pattern_properties {
                    Some(Value::Object(_)) if patterns.len() < given.len() => None,
                    _ => k.additional_properties,
                };
                let any = properties.is_some() || additional.is_some() || !patterns.is_empty();
                any.then(|| Frame::Members {
                    members: members.iter(),
                    current: None,
                    properties,
                    patterns,
                    additional,
                })
            }
            _ => None,
        }
    }

    /// The error for an `anyOf` or `oneOf` none of whose entries matched: the one
    /// entry's own error when every other refused the value's type, a type error
    /// naming all their types when all did, and a sentence naming the keyword
    /// otherwise.
    fn explain(&self, misses: Misses, keyword: &str, instance: &Value) -> SchemaError {
        match (misses.others, misses.first_other) {
            (1, Some(e)) => e,
            (0, _) => {
                let types: Vec<JsonType> = TYPE_ORDER
                    .into_iter()
                    .filter(|&t| misses.types & type_bit(t) != 0)
                    .collect();
                self.type_error(&types, instance)
            }
            _ => self.fail(format_args!(
                "Value does not match any of the allowed schemas ({keyword})"
            )),
        }
    }

    /// The assertions of `k` on `instance` itself, in the documented order.
    fn check_value(&self, k: &Keywords<'a>, instance: &'a Value) -> Result<(), SchemaError> {
        self.check_type(k, instance)?;
        self.check_enum(k, instance)?;
        self.check_const(k, instance)?;
        match instance {
            Value::Number(n) => {
                self.check_bounds(k, n)?;
                self.check_multiple(k, n)
            }
            Value::String(s) => {
                self.check_length(k, s)?;
                self.check_pattern(k, s)
            }
            Value::Array(elements) => {
                let limits = Keywords::limits(k.min_items, k.max_items);
                self.check_count(limits, ("item", "items"), elements.len())?;
                self.check_unique(k, elements)
            }
            Value::Object(members) => {
                self.check_required(k, members)?;
                let limits = Keywords::limits(k.min_properties, k.max_properties);
                self.check_count(limits, ("property", "properties"), members.len())
            }
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
        Err(self.type_error(&types, instance))
    }

    /// `instance` is none of `types`: the error, which remembers the types.
    fn type_error(&self, types: &[JsonType], instance: &Value) -> SchemaError {
        let expected = Listed {
            items: types,
            last_separator: " or ",
            limit: types.len(),
        };
        let mut e = match instance {
            // A number refused by `integer`: show which number.
            Value::Number(n) if types.contains(&JsonType::Integer) => self.fail(format_args!(
                "Expected {expected}, found {}",
                PreviewNumber(n)
            )),
            _ => self.fail(format_args!(
                "Expected {expected}, found {}",
                instance.type_name()
            )),
        };
        e.expected_types = types.iter().fold(0, |set, &t| set | type_bit(t));
        e
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
        self.check_count(limits, ("character", "characters"), characters(s))
    }

    /// Checks a count against the values of a pair of `min…`/`max…` keywords; `unit`
    /// is what is counted, singular and plural.
    fn check_count(
        &self,
        (min, max): (Option<u64>, Option<u64>),
        unit: (&str, &str),
        count: usize,
    ) -> Result<(), SchemaError> {
        let count = count as u64;
        let units = |n: u64| if n == 1 { unit.0 } else { unit.1 };
        if let Some(min) = min.filter(|&min| count < min) {
            return Err(self.fail(format_args!(
                "Expected at least {min} {}, found {count}",
                units(min)
            )));
        }
        if let Some(max) = max.filter(|&max| count > max) {
            return Err(self.fail(format_args!(
                "Expected at most {max} {}, found {count}",
                units(max)
            )));
        }
        Ok(())
    }

    fn check_pattern(&self, keywords: &Keywords<'_>, s: &Str) -> Result<(), SchemaError> {
        let Some(Value::String(pattern)) = keywords.pattern else {
            return Ok(());
        };
        match Regex::new(pattern) {
            Some(regex) if !regex.is_match(s) => Err(self.fail(format_args!(
                "Expected a string matching the pattern {}, found {}",
                Quoted(pattern, PREVIEW_CHARS),
                Quoted(s, PREVIEW_CHARS)
            ))),
            // Matching, or a pattern outside the subset: not checked.
            _ => Ok(()),
        }
    }

    fn check_multiple(&self, keywords: &Keywords<'_>, n: &Number) -> Result<(), SchemaError> {
        let Some(divisor) = keywords.multiple_of.and_then(Value::as_number) else {
            return Ok(());
        };
        match is_multiple_of(n, divisor) {
            Some(false) => Err(self.fail(format_args!(
                "Expected a multiple of {}, found {}",
                PreviewNumber(divisor),
                PreviewNumber(n)
            ))),
            _ => Ok(()),
        }
    }

    fn check_unique(&self, keywords: &Keywords<'_>, elements: &[Value]) -> Result<(), SchemaError> {
        if keywords.unique_items.and_then(Value::as_bool) != Some(true) {
            return Ok(());
        }
        match first_repeat(elements) {
            Some((earlier, later)) => Err(self.fail(format_args!(
                "Expected unique items, found item {later} equal to item {earlier}"
            ))),
            None => Ok(()),
        }
    }

    /// `required`, then the names `dependentRequired` and `dependencies` ask for
    /// beside a member that is present, in the order the schema lists them.
    fn check_required(&self, keywords: &Keywords<'a>, members: &Object) -> Result<(), SchemaError> {
        if let Some(name) = keywords
            .required()
            .find(|&name| !members.contains_key(name))
        {
            return Err(self.fail_member("Missing required", name));
        }
        let dependent = members_of(keywords.dependent_required)
            .iter()
            .chain(members_of(keywords.dependencies))
            .filter(|(name, _)| members.contains_key(name));
        for (name, required) in dependent {
            if let Some(missing) = names(required).find(|&r| !members.contains_key(r)) {
                let kind = if self.path.is_empty() {
                    "parameter"
                } else {
                    "property"
                };
                return Err(self.fail(format_args!(
                    "Missing {kind} '{}', required with '{}'",
                    Truncated(missing),
                    Truncated(name)
                )));
            }
        }
        Ok(())
    }

    /// `propertyNames`: each member name, as a string, against its schema. A
    /// validation of its own, in which no name is met again (a string has no
    /// members), so it nests one level deep at most.
    fn check_names(&self, keywords: &Keywords<'_>, instance: &Value) -> Result<(), Failure> {
        let (Some(schema), Value::Object(members)) = (schema_in(keywords.property_names), instance)
        else {
            return Ok(());
        };
        for (name, _) in members.iter() {
            match run(self.root, schema, &Value::String(name.clone())) {
                Ok(()) => {}
                Err(Failure::Invalid(e)) => {
                    let kind = if self.path.is_empty() {
                        "parameter"
                    } else {
                        "property"
                    };
                    return Err(Failure::Invalid(self.fail(format_args!(
                        "Invalid {kind} name '{}' (propertyNames): {}",
                        Truncated(name),
                        e.message
                    ))));
                }
                // A limit inside: where the name is, the input's path.
                Err(Failure::Abort(e)) => {
                    let e = self.fail(format_args!(
                        "{} in the name '{}'",
                        e.message,
                        Truncated(name)
                    ));
                    return Err(Failure::Abort(e));
                }
            }
        }
        Ok(())
    }

    /// How many elements matched `contains`, against `minContains` (1 unless
    /// given) and `maxContains`.
    fn check_contains(&self, keywords: &Keywords<'_>, matched: u64) -> Result<(), SchemaError> {
        let min = keywords.min_contains.map_or(Some(1), count);
        let max = keywords.max_contains.and_then(count);
        let items = |n: u64| if n == 1 { "item" } else { "items" };
        if let Some(min) = min.filter(|&min| matched < min) {
            return Err(self.fail(format_args!(
                "Expected at least {min} {} matching 'contains', found {matched}",
                items(min)
            )));
        }
        if let Some(max) = max.filter(|&max| matched > max) {
            return Err(self.fail(format_args!(
                "Expected at most {max} {} matching 'contains', found {matched}",
                items(max)
            )));
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
        SchemaError {
            path,
            message,
            depth: self.path.len(),
            expected_types: 0,
        }
    }
}

/// How many values `input` holds, itself included, counted with a work list.
fn values(input: &Value) -> u64 {
    let mut count: u64 = 0;
    let mut pending = alloc::vec![input];
    while let Some(value) = pending.pop() {
        count = count.saturating_add(1);
        match value {
            Value::Array(elements) => pending.extend(elements),
            Value::Object(members) => pending.extend(members.iter().map(|(_, v)| v)),
            _ => {}
        }
    }
    count
}
