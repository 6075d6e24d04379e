//! JSON equality, for `enum`, `const` and `uniqueItems`: numbers by value, objects as
//! unordered maps. Work lists, not recursion, so no value is too deep to compare.

use alloc::vec::Vec;

use super::numbers::{Decimal, compare_numbers};
use crate::json::{Object, Value};

/// JSON equality: numbers by value, objects as unordered maps (the last member of a
/// repeated name counts), arrays element by element. Uses a work list, not recursion.
pub(super) fn json_equal(a: &Value, b: &Value) -> bool {
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

/// The first repeated element of `items`: `(earlier, later)` for the smallest
/// `later` that equals an element before it. Elements are sorted by a hash that
/// equal values share, and only elements of one hash are compared, so the time is
/// `n log n` in the number of elements (and linear in their size).
pub(super) fn first_repeat(items: &[Value]) -> Option<(usize, usize)> {
    let mut hashed: Vec<(u64, usize)> = items
        .iter()
        .enumerate()
        .map(|(index, item)| (value_hash(item), index))
        .collect();
    hashed.sort_unstable();
    let mut first: Option<(usize, usize)> = None;
    for run in hashed.chunk_by(|a, b| a.0 == b.0) {
        // In index order: the first element of the run equal to one before it.
        'later: for (at, &(_, later)) in run.iter().enumerate().skip(1) {
            if first.is_some_and(|(_, found)| found < later) {
                break;
            }
            for &(_, earlier) in run.iter().take(at) {
                if let (Some(a), Some(b)) = (items.get(earlier), items.get(later)) {
                    if json_equal(a, b) {
                        first = Some((earlier, later));
                        break 'later;
                    }
                }
            }
        }
    }
    first
}

/// A hash of a value that equal values (by [`json_equal`]) share: FNV-1a over a
/// walk of it with numbers in their canonical decimal form and objects' members
/// sorted by name, the last of a repeated name counting.
fn value_hash(value: &Value) -> u64 {
    let mut hash = Fnv(0xcbf2_9ce4_8422_2325);
    let mut pending = alloc::vec![value];
    while let Some(value) = pending.pop() {
        match value {
            Value::Null => hash.write(&[0]),
            Value::Bool(b) => hash.write(&[1, u8::from(*b)]),
            Value::Number(n) => {
                let d = Decimal::of(n);
                hash.write(&[2, d.signum() as u8]);
                hash.write(&d.scale.to_le_bytes());
                d.digits().for_each(|&digit| hash.write(&[digit]));
            }
            Value::String(s) => {
                hash.write(&[3]);
                hash.write(&s.len().to_le_bytes());
                hash.write(s.as_bytes());
            }
            Value::Array(elements) => {
                hash.write(&[4]);
                hash.write(&elements.len().to_le_bytes());
                pending.extend(elements.iter().rev());
            }
            Value::Object(object) => {
                let members = effective_members(object);
                hash.write(&[5]);
                hash.write(&members.len().to_le_bytes());
                for (name, _) in &members {
                    hash.write(&name.len().to_le_bytes());
                    hash.write(name.as_bytes());
                }
                pending.extend(members.iter().rev().map(|(_, v)| *v));
            }
        }
    }
    hash.0
}

/// The 64-bit FNV-1a hash, a byte at a time.
struct Fnv(u64);

impl Fnv {
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
        }
    }
}
