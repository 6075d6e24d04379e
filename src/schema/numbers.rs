//! Exact arithmetic on JSON numbers by their decimal text: comparison for the bounds,
//! `enum` and `const`, and divisibility for `multipleOf`, whatever their size.

use alloc::vec::Vec;
use core::cmp::Ordering;

use crate::json::Number;

/// Exponents are read up to this magnitude; beyond it, numbers whose exponents differ
/// compare as if they were equal in exponent.
const EXPONENT_CAP: i128 = 1_000_000_000_000_000_000_000_000_000;

/// A number as `±0.d₁d₂…dₖ × 10^scale`, with the significant digits `head ++ tail`
/// (no leading or trailing zeros). No digits means zero.
pub(super) struct Decimal<'a> {
    negative: bool,
    head: &'a [u8],
    tail: &'a [u8],
    pub(super) scale: i128,
}

impl<'a> Decimal<'a> {
    pub(super) fn of(n: &'a Number) -> Decimal<'a> {
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
        // The digits after the `.` and after the `e`, each empty when absent.
        let after_first = |part: &'a [u8]| part.split_first().map_or(part, |(_, rest)| rest);
        let frac = after_first(frac);
        let exponent = after_first(exponent);
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

    pub(super) fn is_zero(&self) -> bool {
        self.head.is_empty() && self.tail.is_empty()
    }

    pub(super) fn is_integral(&self) -> bool {
        self.is_zero() || (self.head.len() + self.tail.len()) as i128 <= self.scale
    }

    pub(super) fn signum(&self) -> i8 {
        match (self.is_zero(), self.negative) {
            (true, _) => 0,
            (false, true) => -1,
            (false, false) => 1,
        }
    }

    pub(super) fn digits(&self) -> impl Iterator<Item = &u8> {
        self.head.iter().chain(self.tail.iter())
    }
}

/// Compares two JSON numbers by their exact decimal value (`1 == 1.0 == 10e-1`).
pub(super) fn compare_numbers(a: &Number, b: &Number) -> Ordering {
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

/// Whether `n` is an integral multiple of `divisor`, exactly; `None` when `divisor`
/// is not greater than zero (and `multipleOf` is ignored).
///
/// With `n = A × 10^x` and `divisor = B × 10^y` (`A`, `B` their significant digits,
/// no trailing zeros), `n / divisor` is integral exactly when `x >= y` and `B`
/// divides `A × 10^(x - y)`. Writing `B = 2^p × 5^q × m`, that holds for every
/// shift past `max(p, q)` exactly when `m` divides `A`, so the shift is cut to
/// `4 × digits(B) + 4`, more than `p` or `q` can be: the work is linear in the
/// digits of both numbers, whatever their exponents.
pub(super) fn is_multiple_of(n: &Number, divisor: &Number) -> Option<bool> {
    let (a, b) = (Decimal::of(n), Decimal::of(divisor));
    if b.signum() <= 0 {
        return None;
    }
    if a.is_zero() {
        return Some(true);
    }
    let exponent = |d: &Decimal<'_>| d.scale - (d.head.len() + d.tail.len()) as i128;
    let shift = exponent(&a) - exponent(&b);
    if shift < 0 {
        // `A` does not end in a zero, so `A / (B × 10^-shift)` is not integral.
        return Some(false);
    }
    let divisor_digits: Vec<u8> = b.digits().map(|d| d - b'0').collect();
    let cap = 4 * divisor_digits.len() as i128 + 4;
    let zeros = core::iter::repeat_n(0u8, shift.min(cap) as usize);
    // The remainder of `A × 10^shift` by `B`, a digit at a time, in decimal digits.
    let mut remainder: Vec<u8> = Vec::with_capacity(divisor_digits.len() + 1);
    for digit in a.digits().map(|d| d - b'0').chain(zeros) {
        if remainder.is_empty() && digit == 0 {
            continue;
        }
        remainder.push(digit);
        while !less_than(&remainder, &divisor_digits) {
            subtract(&mut remainder, &divisor_digits);
        }
    }
    Some(remainder.is_empty())
}

/// Whether the decimal digits `a` (no leading zeros) are less than `b` (likewise).
fn less_than(a: &[u8], b: &[u8]) -> bool {
    a.len().cmp(&b.len()).then_with(|| a.cmp(b)).is_lt()
}

/// `a -= b`, for `a >= b`, leaving `a` without leading zeros.
fn subtract(a: &mut Vec<u8>, b: &[u8]) {
    let mut borrow = 0;
    let mut b_digits = b.iter().rev();
    for digit in a.iter_mut().rev() {
        let sub = b_digits.next().copied().unwrap_or(0) + borrow;
        if *digit >= sub {
            *digit -= sub;
            borrow = 0;
        } else {
            *digit += 10 - sub;
            borrow = 1;
        }
    }
    let leading = a.iter().take_while(|&&d| d == 0).count();
    a.drain(..leading);
}
