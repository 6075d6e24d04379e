//! The JSON value model: [`Value`], [`Number`] (exact text) and [`Object`] (ordered).

use alloc::string::String;
use alloc::vec::Vec;
use core::fmt;

use super::string::Str;

/// A JSON value.
///
/// Equality is structural: numbers compare by their text (`1.0 != 1`), objects by
/// their members in order (duplicates included).
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub enum Value {
    /// `null`
    #[default]
    Null,
    /// `true` or `false`
    Bool(bool),
    /// A number, kept as its exact text.
    Number(Number),
    /// A string (always valid UTF-8; escapes decoded), inline when short.
    String(Str),
    /// An array.
    Array(Vec<Value>),
    /// An object, members in input order.
    Object(Object),
}

/// A JSON number, kept as the exact text it was written with.
///
/// The text is a [`Str`]: up to 22 bytes, which covers every `i64`/`u64`, it is
/// stored inline without allocating. Conversions ([`as_i64`](Number::as_i64),
/// [`as_u64`](Number::as_u64), [`as_f64`](Number::as_f64)) happen only when asked.
#[derive(Clone)]
pub struct Number {
    text: Str,
}

impl Number {
    /// Builds a number from bytes already checked against the JSON number grammar
    /// (so they are ASCII).
    #[inline]
    pub(crate) fn from_checked_bytes(b: &[u8]) -> Number {
        Number {
            text: Str::from_checked_bytes(b).unwrap_or_else(|| Str::from("0")),
        }
    }

    /// A number whose text has already been checked against the JSON number grammar.
    #[inline]
    pub(crate) fn from_checked_text(text: Str) -> Number {
        Number { text }
    }

    /// The text, to be filled in place (see [`Str::fill_checked_window`]).
    #[inline(always)]
    pub(crate) fn text_mut(&mut self) -> &mut Str {
        &mut self.text
    }

    /// Appends the text `Number::from(n)` holds to `out`, each digit written where it
    /// lands: no number is built, and nothing written in pieces is read back whole (a
    /// writer that sends an integer it keeps as such, like a request id).
    pub(crate) fn write_u64(n: u64, out: &mut Vec<u8>) {
        let start = out.len();
        out.resize(start + itoa_buf::digit_count(n), b'0');
        if let Some(slots) = out.get_mut(start..) {
            itoa_buf::fill_digits(n, slots);
        }
    }

    /// Builds a number from its text, if the text is a JSON number
    /// (`-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`).
    pub fn from_text(text: &str) -> Option<Number> {
        if is_number_text(text.as_bytes()) {
            Some(Number::from_checked_bytes(text.as_bytes()))
        } else {
            None
        }
    }

    /// Builds a number from an `f64`; `None` for NaN and the infinities, which JSON
    /// cannot represent. The text is the shortest that reads back as the same `f64`.
    pub fn from_f64(v: f64) -> Option<Number> {
        if !v.is_finite() {
            return None;
        }
        let mut s = String::new();
        // `{:?}` gives the shortest round-trip text, with `.0` for integral values
        // and exponents like `1e100`, which are all valid JSON number text.
        let _ = fmt::write(&mut s, format_args!("{:?}", v));
        Number::from_text(&s)
    }

    /// The exact text of the number.
    pub fn as_str(&self) -> &str {
        self.text.as_str()
    }

    /// The exact text as bytes (ASCII).
    #[inline]
    pub(crate) fn text_bytes(&self) -> &[u8] {
        self.text.as_bytes()
    }

    /// `true` when the text has no fraction and no exponent (`-12`, not `1.0`, not `1e2`).
    pub fn is_integer(&self) -> bool {
        !self
            .text_bytes()
            .iter()
            .any(|b| matches!(b, b'.' | b'e' | b'E'))
    }

    /// The value as an `i64`, if the text is an integer in range.
    pub fn as_i64(&self) -> Option<i64> {
        let (negative, magnitude) = self.integer_parts()?;
        if negative {
            0i64.checked_sub_unsigned(magnitude)
        } else {
            i64::try_from(magnitude).ok()
        }
    }

    /// The value as a `u64`, if the text is a non-negative integer in range
    /// (`-0` is 0).
    pub fn as_u64(&self) -> Option<u64> {
        match self.integer_parts()? {
            (false, magnitude) | (true, magnitude @ 0) => Some(magnitude),
            (true, _) => None,
        }
    }

    /// The sign and magnitude of an integer's text, if the magnitude fits a `u64`:
    /// read from the digits, which the grammar has already checked.
    fn integer_parts(&self) -> Option<(bool, u64)> {
        let text = self.text_bytes();
        let (negative, digits) = match text.split_first() {
            Some((b'-', digits)) => (true, digits),
            _ => (false, text),
        };
        if digits.is_empty() {
            return None;
        }
        let mut magnitude: u64 = 0;
        for &d in digits {
            if !d.is_ascii_digit() {
                return None;
            }
            magnitude = magnitude
                .checked_mul(10)?
                .checked_add(u64::from(d - b'0'))?;
        }
        Some((negative, magnitude))
    }

    /// The value as the nearest `f64` (large exponents give infinities).
    pub fn as_f64(&self) -> f64 {
        self.as_str().parse().unwrap_or(f64::NAN)
    }
}

/// Checks the JSON number grammar on a whole byte slice.
pub(crate) fn is_number_text(b: &[u8]) -> bool {
    super::scan::number_end(b, 0) == Ok(b.len())
}

impl PartialEq for Number {
    fn eq(&self, other: &Number) -> bool {
        self.text == other.text
    }
}
impl Eq for Number {}

impl fmt::Debug for Number {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl fmt::Display for Number {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

macro_rules! number_from_int {
    ($($t:ty),*) => {$(
        impl From<$t> for Number {
            fn from(v: $t) -> Number {
                // Every integer type here has its magnitude within `u64`, so the
                // digits are made with `u64` division, cheaper than `u128`'s.
                let v = v as i128;
                let magnitude = u64::try_from(v.unsigned_abs()).unwrap_or(u64::MAX);
                let (window, len) = itoa_buf::format(v < 0, magnitude);
                Number {
                    text: Str::from_checked_window(&window, len)
                        .unwrap_or_else(|| Str::from("0")),
                }
            }
        }
        impl From<$t> for Value {
            fn from(v: $t) -> Value {
                Value::Number(Number::from(v))
            }
        }
    )*};
}
number_from_int!(i8, i16, i32, i64, isize, u8, u16, u32, u64, usize);

/// Integer formatting straight into the bytes of an inline [`Str`] (no allocation,
/// no `fmt` machinery, no copy of a variable length).
mod itoa_buf {
    use super::Str;
    use crate::json::error::Sure;

    /// The decimal digits of `n`, with a leading `-` when `negative`, at the start of
    /// an inline string's bytes, and their length (at most 21: `u64::MAX` has 20
    /// digits).
    #[inline]
    pub(super) fn format(negative: bool, n: u64) -> ([u8; Str::INLINE_CAPACITY], usize) {
        let mut bytes = [0; Str::INLINE_CAPACITY];
        let digits = digit_count(n);
        let len = digits + usize::from(negative);
        let (sign, digit_slots) = bytes.split_at_mut(usize::from(negative));
        if let Some(minus) = sign.first_mut() {
            *minus = b'-';
        }
        fill_digits(n, digit_slots.get_mut(..digits).sure());
        (bytes, len)
    }

    /// How many decimal digits `n` has.
    #[inline]
    pub(super) fn digit_count(n: u64) -> usize {
        n.checked_ilog10().unwrap_or(0) as usize + 1
    }

    /// Writes the last `slots.len()` decimal digits of `n` into `slots`, from the
    /// last digit back to the first.
    #[inline]
    pub(super) fn fill_digits(mut n: u64, slots: &mut [u8]) {
        for slot in slots.iter_mut().rev() {
            *slot = b'0' + (n % 10) as u8;
            n /= 10;
        }
    }
}

/// A JSON object: members in input order, duplicate names kept.
///
/// [`get`](Object::get) returns the *last* member with a name, as JavaScript,
/// Python and serde_json do. [`insert`](Object::insert) replaces that last member or
/// appends; [`push`](Object::push) always appends.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Object {
    members: Vec<(Str, Value)>,
}

impl Object {
    /// An empty object.
    pub const fn new() -> Object {
        Object {
            members: Vec::new(),
        }
    }

    /// An empty object with room for `n` members.
    pub fn with_capacity(n: usize) -> Object {
        Object {
            members: Vec::with_capacity(n),
        }
    }

    /// Number of members, duplicates included.
    pub fn len(&self) -> usize {
        self.members.len()
    }

    /// `true` when there are no members.
    pub fn is_empty(&self) -> bool {
        self.members.is_empty()
    }

    /// The value of the last member named `name`.
    ///
    /// A name is anything with UTF-8 bytes: a `&str`, a [`Str`] (whose bytes are
    /// compared without checking them again), a `String`.
    pub fn get<N: AsRef<[u8]> + ?Sized>(&self, name: &N) -> Option<&Value> {
        let name = name.as_ref();
        self.members
            .iter()
            .rev()
            .find(|(k, _)| k.as_bytes() == name)
            .map(|(_, v)| v)
    }

    /// Mutable access to the value of the last member named `name`.
    pub fn get_mut<N: AsRef<[u8]> + ?Sized>(&mut self, name: &N) -> Option<&mut Value> {
        let name = name.as_ref();
        self.members
            .iter_mut()
            .rev()
            .find(|(k, _)| k.as_bytes() == name)
            .map(|(_, v)| v)
    }

    /// `true` when a member named `name` exists.
    pub fn contains_key<N: AsRef<[u8]> + ?Sized>(&self, name: &N) -> bool {
        let name = name.as_ref();
        self.members.iter().any(|(k, _)| k.as_bytes() == name)
    }

    /// How many members are named `name` (more than one means duplicates).
    pub fn count<N: AsRef<[u8]> + ?Sized>(&self, name: &N) -> usize {
        let name = name.as_ref();
        self.members
            .iter()
            .filter(|(k, _)| k.as_bytes() == name)
            .count()
    }

    /// Sets `name` to `value`: replaces the last member with that name, or appends.
    /// Returns the value that was replaced.
    pub fn insert(&mut self, name: impl Into<Str>, value: Value) -> Option<Value> {
        let name = name.into();
        match self.get_mut(&name) {
            Some(slot) => Some(core::mem::replace(slot, value)),
            None => {
                self.members.push((name, value));
                None
            }
        }
    }

    /// Appends a member, even if one with the same name exists.
    pub fn push(&mut self, name: impl Into<Str>, value: Value) {
        self.members.push((name.into(), value));
    }

    /// Removes every member named `name`; returns the value of the last one.
    ///
    /// ```
    /// use dhara_protocol::json::{Object, Value};
    ///
    /// let mut o = Object::from_iter([("a", Value::from(1)), ("b", Value::from(2)), ("a", Value::from(3))]);
    /// assert_eq!(o.remove("a"), Some(Value::from(3)));
    /// assert_eq!(o.keys().collect::<Vec<_>>(), ["b"]);
    /// assert_eq!(o.remove("a"), None);
    /// ```
    pub fn remove(&mut self, name: &str) -> Option<Value> {
        let mut last = None;
        self.members.retain_mut(|(k, v)| {
            if k == name {
                last = Some(core::mem::take(v));
            }
            k != name
        });
        last
    }

    /// The members in order.
    pub fn iter(&self) -> core::slice::Iter<'_, (Str, Value)> {
        self.members.iter()
    }

    /// The member names in order.
    pub fn keys(&self) -> impl Iterator<Item = &str> {
        self.members.iter().map(|(k, _)| k.as_str())
    }

    /// The members as a slice.
    pub fn as_slice(&self) -> &[(Str, Value)] {
        &self.members
    }

    /// The members as a vector.
    pub fn into_vec(self) -> Vec<(Str, Value)> {
        self.members
    }
}

impl From<Vec<(Str, Value)>> for Object {
    fn from(members: Vec<(Str, Value)>) -> Object {
        Object { members }
    }
}

impl<K: Into<Str>> FromIterator<(K, Value)> for Object {
    fn from_iter<I: IntoIterator<Item = (K, Value)>>(iter: I) -> Object {
        Object {
            members: iter.into_iter().map(|(k, v)| (k.into(), v)).collect(),
        }
    }
}

impl IntoIterator for Object {
    type Item = (Str, Value);
    type IntoIter = alloc::vec::IntoIter<(Str, Value)>;
    fn into_iter(self) -> Self::IntoIter {
        self.members.into_iter()
    }
}

impl<'a> IntoIterator for &'a Object {
    type Item = &'a (Str, Value);
    type IntoIter = core::slice::Iter<'a, (Str, Value)>;
    fn into_iter(self) -> Self::IntoIter {
        self.members.iter()
    }
}

impl core::ops::Index<&str> for Object {
    type Output = Value;
    /// The last member named `name`, or [`Value::Null`] when there is none.
    fn index(&self, name: &str) -> &Value {
        self.get(name).unwrap_or(&NULL)
    }
}

static NULL: Value = Value::Null;

impl Value {
    /// The member `name` of an object (last one wins); `None` for other values.
    pub fn get(&self, name: &str) -> Option<&Value> {
        match self {
            Value::Object(o) => o.get(name),
            _ => None,
        }
    }

    /// The element at `index` of an array; `None` for other values.
    pub fn get_index(&self, index: usize) -> Option<&Value> {
        match self {
            Value::Array(a) => a.get(index),
            _ => None,
        }
    }

    /// `true` for `null`.
    pub fn is_null(&self) -> bool {
        matches!(self, Value::Null)
    }

    /// The string, for a string value.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::String(s) => Some(s.as_str()),
            _ => None,
        }
    }

    /// The boolean, for `true`/`false`.
    pub fn as_bool(&self) -> Option<bool> {
        match self {
            Value::Bool(b) => Some(*b),
            _ => None,
        }
    }

    /// The number, for a number value.
    pub fn as_number(&self) -> Option<&Number> {
        match self {
            Value::Number(n) => Some(n),
            _ => None,
        }
    }

    /// The value as `i64`, for an integer number in range.
    pub fn as_i64(&self) -> Option<i64> {
        self.as_number().and_then(Number::as_i64)
    }

    /// The value as `u64`, for a non-negative integer number in range.
    pub fn as_u64(&self) -> Option<u64> {
        self.as_number().and_then(Number::as_u64)
    }

    /// The value as `f64`, for any number.
    pub fn as_f64(&self) -> Option<f64> {
        self.as_number().map(Number::as_f64)
    }

    /// The elements, for an array.
    pub fn as_array(&self) -> Option<&Vec<Value>> {
        match self {
            Value::Array(a) => Some(a),
            _ => None,
        }
    }

    /// Mutable elements, for an array.
    pub fn as_array_mut(&mut self) -> Option<&mut Vec<Value>> {
        match self {
            Value::Array(a) => Some(a),
            _ => None,
        }
    }

    /// The members, for an object.
    pub fn as_object(&self) -> Option<&Object> {
        match self {
            Value::Object(o) => Some(o),
            _ => None,
        }
    }

    /// Mutable members, for an object.
    pub fn as_object_mut(&mut self) -> Option<&mut Object> {
        match self {
            Value::Object(o) => Some(o),
            _ => None,
        }
    }

    /// Replaces the value with `null` and returns what it was.
    pub fn take(&mut self) -> Value {
        core::mem::take(self)
    }

    /// A short name of the value's type, for error messages: `"null"`, `"boolean"`,
    /// `"number"`, `"string"`, `"array"` or `"object"`.
    pub fn type_name(&self) -> &'static str {
        match self {
            Value::Null => "null",
            Value::Bool(_) => "boolean",
            Value::Number(_) => "number",
            Value::String(_) => "string",
            Value::Array(_) => "array",
            Value::Object(_) => "object",
        }
    }
}

impl core::ops::Index<&str> for Value {
    type Output = Value;
    /// The member `name` of an object, or [`Value::Null`] when absent or not an object.
    fn index(&self, name: &str) -> &Value {
        self.get(name).unwrap_or(&NULL)
    }
}

impl core::ops::Index<usize> for Value {
    type Output = Value;
    /// The element at `index` of an array, or [`Value::Null`] when absent or not an array.
    fn index(&self, index: usize) -> &Value {
        self.get_index(index).unwrap_or(&NULL)
    }
}

impl From<f64> for Value {
    /// A number with the shortest text that reads back as `v`; `null` for NaN and
    /// the infinities, which JSON cannot represent.
    fn from(v: f64) -> Value {
        Number::from_f64(v).map_or(Value::Null, Value::Number)
    }
}

impl From<bool> for Value {
    fn from(v: bool) -> Value {
        Value::Bool(v)
    }
}
impl From<&str> for Value {
    fn from(v: &str) -> Value {
        Value::String(Str::from(v))
    }
}
impl From<String> for Value {
    fn from(v: String) -> Value {
        Value::String(Str::from(v))
    }
}
impl From<Str> for Value {
    fn from(v: Str) -> Value {
        Value::String(v)
    }
}
impl From<Number> for Value {
    fn from(v: Number) -> Value {
        Value::Number(v)
    }
}
impl From<Object> for Value {
    fn from(v: Object) -> Value {
        Value::Object(v)
    }
}
impl<T: Into<Value>> From<Vec<T>> for Value {
    fn from(v: Vec<T>) -> Value {
        Value::Array(v.into_iter().map(Into::into).collect())
    }
}
impl<T: Into<Value>> From<Option<T>> for Value {
    fn from(v: Option<T>) -> Value {
        v.map_or(Value::Null, Into::into)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::format;

    /// The integer conversions agree with the standard library's parsers on the
    /// same text, at the edges of each type and past them.
    #[test]
    fn integers_become_their_decimal_text() {
        let expected = |n: Number, text: String| assert_eq!(n.as_str(), text);
        for v in [
            0,
            1,
            -1,
            9,
            10,
            -10,
            99,
            -100,
            i64::MIN,
            i64::MAX,
            i64::MIN + 1,
        ] {
            expected(Number::from(v), format!("{v}"));
        }
        for v in [0, 7, 10_000_000_000, u64::MAX, u64::MAX - 1] {
            expected(Number::from(v), format!("{v}"));
        }
        expected(Number::from(i8::MIN), format!("{}", i8::MIN));
        expected(Number::from(u8::MAX), format!("{}", u8::MAX));
        expected(Number::from(isize::MIN), format!("{}", isize::MIN));
        expected(Number::from(usize::MAX), format!("{}", usize::MAX));
    }

    #[test]
    fn integers_are_written_inline_at_every_digit_count() {
        let mut power = 1u64;
        loop {
            for v in [power - 1, power, power + 1] {
                let n = Number::from(v);
                assert_eq!(n.as_str(), format!("{v}"));
                assert!(n.text.is_inline(), "{v}");
                if let Ok(signed) = i64::try_from(v) {
                    assert_eq!(Number::from(-signed).as_str(), format!("{}", -signed));
                }
            }
            match power.checked_mul(10) {
                Some(next) => power = next,
                None => break,
            }
        }
        assert_eq!(Number::from(u64::MAX).as_str(), format!("{}", u64::MAX));
        assert_eq!(Number::from(i64::MIN).as_str(), format!("{}", i64::MIN));
    }

    #[test]
    fn integer_conversions_agree_with_str_parse() {
        let mut texts = alloc::vec![
            String::from("0"),
            String::from("-0"),
            String::from("-1"),
            format!("{}", i64::MIN),
            format!("{}", i64::MAX),
            format!("{}", u64::MAX),
            format!("-{}", i64::MIN.unsigned_abs() + 1),
            format!("{}0", u64::MAX),
            String::from("18446744073709551616"),
            String::from("-18446744073709551616"),
            String::from("12345678901234567890123"),
        ];
        let mut seed = 0x9E37_79B9_7F4A_7C15u64;
        for _ in 0..2000 {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            let digits = (seed % 21) as u32;
            texts.push(format!("{}", seed % 10u64.pow(digits.min(19)).max(1)));
            texts.push(format!("-{}", seed >> (seed % 64)));
        }
        for text in texts {
            let n = Number::from_text(&text).expect("integer text");
            let as_i64 = text.parse::<i64>().ok();
            let as_u64 = if text == "-0" {
                Some(0)
            } else {
                text.parse::<u64>().ok()
            };
            assert_eq!(n.as_i64(), as_i64, "{text}");
            assert_eq!(n.as_u64(), as_u64, "{text}");
        }
        for fraction in ["1.0", "1e2", "-0.5", "2E3"] {
            let n = Number::from_text(fraction).expect("number text");
            assert_eq!((n.as_i64(), n.as_u64()), (None, None), "{fraction}");
        }
    }
}
