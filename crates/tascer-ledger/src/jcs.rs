//! RFC 8785 JSON Canonicalization Scheme (JCS).
//!
//! The canonical form of a JSON value is what every hash and signature in
//! the ledger covers, so any implementation in any language that follows
//! RFC 8785 recomputes the same bytes:
//!
//! - no whitespace;
//! - object members sorted by their names compared as arrays of UTF-16
//!   code units (not by UTF-8 bytes, not by locale);
//! - strings escaped as ECMAScript `JSON.stringify` does: `\"`, `\\`,
//!   `\b \f \n \r \t`, other control characters as `\u00xx` (lowercase hex),
//!   everything else literally (UTF-8);
//! - numbers are IEEE-754 doubles printed as ECMAScript `Number.toString`
//!   (shortest round-trip digits; plain notation for 1e-6 ≤ |x| < 1e21,
//!   otherwise `d.ddde+N` / `d.ddde-N`; `-0` prints as `0`); NaN and
//!   infinities are rejected.
//!
//! Integers outside ±(2^53 − 1) are rejected rather than silently rounded
//! (as the reference Python implementation does), since a double cannot
//! represent them and two verifiers could disagree about their value.

use std::fmt::Write as _;

use serde::Serialize;
use serde_json::{Map, Number, Value};

/// The largest integer magnitude a double represents exactly (2^53 − 1).
pub const MAX_SAFE_INTEGER: u64 = (1 << 53) - 1;

/// Why a value has no canonical form.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum JcsError {
    /// NaN or an infinity: JSON has no such numbers.
    #[error("NaN and Infinity have no JSON form")]
    NonFinite,
    /// An integer a double cannot represent exactly.
    #[error("integer {0} is outside the I-JSON range ±(2^53-1)")]
    IntegerOutOfRange(String),
    /// The value could not be turned into JSON at all.
    #[error("value is not JSON: {0}")]
    NotJson(String),
    /// The input text is not valid JSON.
    #[error("input is not valid JSON: {0}")]
    Parse(String),
}

/// The canonical bytes of a JSON value.
pub fn canonicalize(value: &Value) -> Result<Vec<u8>, JcsError> {
    let mut out = String::new();
    write_value(&mut out, value)?;
    Ok(out.into_bytes())
}

/// The canonical form of a JSON value, as a string.
pub fn canonical_string(value: &Value) -> Result<String, JcsError> {
    let mut out = String::new();
    write_value(&mut out, value)?;
    Ok(out)
}

/// Appends the canonical form of a string (quoted and escaped) to `out`.
pub(crate) fn push_string(out: &mut String, s: &str) {
    write_string(out, s);
}

/// Appends the canonical form of a value to `out`.
pub(crate) fn push_value(out: &mut String, value: &Value) -> Result<(), JcsError> {
    write_value(out, value)
}

/// The canonical bytes of any serializable value.
///
/// Floats are checked before serde_json sees them (serde_json would turn
/// NaN into `null`), so a NaN anywhere is an error.
pub fn canonicalize_serialize<T: Serialize + ?Sized>(value: &T) -> Result<Vec<u8>, JcsError> {
    let value = to_value_strict(value)?;
    canonicalize(&value)
}

/// Parses JSON text and returns its canonical bytes.
pub fn canonicalize_text(text: &str) -> Result<Vec<u8>, JcsError> {
    let value: Value = serde_json::from_str(text).map_err(|e| JcsError::Parse(e.to_string()))?;
    canonicalize(&value)
}

/// Serializes to a [`Value`], rejecting non-finite floats instead of
/// letting serde_json turn them into `null`.
pub fn to_value_strict<T: Serialize + ?Sized>(value: &T) -> Result<Value, JcsError> {
    // serde_json::to_value maps NaN and infinities to `null`: check first.
    value.serialize(FiniteCheck).map_err(|e| match e {
        CheckError::NonFinite => JcsError::NonFinite,
        CheckError::Other(m) => JcsError::NotJson(m),
    })?;
    serde_json::to_value(value).map_err(|e| JcsError::NotJson(e.to_string()))
}

/// Formats a double as ECMAScript `Number.prototype.toString` does (the
/// number serialization RFC 8785 prescribes).
pub fn format_f64(x: f64) -> Result<String, JcsError> {
    if !x.is_finite() {
        return Err(JcsError::NonFinite);
    }
    if x == 0.0 {
        return Ok("0".to_string());
    }
    // Rust's `{:e}` gives the shortest digits that round-trip, closest to
    // the value: exactly the digits ECMAScript picks.
    let (digits, exp) = shortest_digits(x.abs());
    let k = i32::try_from(digits.len()).unwrap_or(i32::MAX);
    let n = exp + 1; // position of the decimal point relative to the digits
    let mut out = String::new();
    if x < 0.0 {
        out.push('-');
    }
    if k <= n && n <= 21 {
        out.push_str(&digits);
        for _ in 0..(n - k) {
            out.push('0');
        }
    } else if 0 < n && n <= 21 {
        let split = usize::try_from(n).unwrap_or(0);
        out.push_str(&digits[..split]);
        out.push('.');
        out.push_str(&digits[split..]);
    } else if -6 < n && n <= 0 {
        out.push_str("0.");
        for _ in 0..(-n) {
            out.push('0');
        }
        out.push_str(&digits);
    } else {
        let e = n - 1;
        out.push_str(&digits[..1]);
        if k > 1 {
            out.push('.');
            out.push_str(&digits[1..]);
        }
        out.push('e');
        out.push(if e > 0 { '+' } else { '-' });
        let _ = write!(out, "{}", e.unsigned_abs());
    }
    Ok(out)
}

/// Splits `{:e}` output into its digits and decimal exponent.
fn split_sci(sci: &str) -> (String, i32) {
    let (mantissa, exp) = sci.split_once('e').unwrap_or((sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let digits: String = mantissa.chars().filter(|c| *c != '.').collect();
    (digits, exp)
}

/// The shortest round-trip digits of a positive finite double and the
/// decimal exponent of the first digit, with ECMAScript's tie rule.
///
/// Rust picks the shortest digits closest to the value; when two
/// candidates of that length are exactly equally close, ECMAScript picks
/// the one whose last digit is even, which Rust does not guarantee.
fn shortest_digits(x: f64) -> (String, i32) {
    let (digits, exp) = split_sci(&format!("{x:e}"));
    let k = digits.len();
    if k < 15 {
        // A tie needs both neighbours to round-trip, which only happens
        // when the spacing of doubles is coarser than the 15th digit.
        return (digits, exp);
    }
    // The exact decimal expansion (Rust formats with a precision exactly).
    let (exact, exact_exp) = split_sci(&format!("{x:.800e}"));
    let exact = exact.trim_end_matches('0');
    if exact_exp != exp || exact.len() != k + 1 || !exact.ends_with('5') {
        return (digits, exp);
    }
    let lo = &exact[..k];
    let Some(hi) = increment_digits(lo) else {
        return (digits, exp);
    };
    let even = |d: &str| {
        d.bytes()
            .last()
            .is_some_and(|b| (b - b'0').is_multiple_of(2))
    };
    let round_trips = |d: &str| {
        let text = format!("{}.{}e{}", &d[..1], &d[1..], exp);
        text.parse::<f64>().ok() == Some(x)
    };
    for candidate in [lo.to_string(), hi] {
        if even(&candidate) && round_trips(&candidate) {
            return (candidate, exp);
        }
    }
    (digits, exp)
}

/// Adds one in the last place of a digit string; `None` on carry-out.
fn increment_digits(d: &str) -> Option<String> {
    let mut bytes = d.as_bytes().to_vec();
    for b in bytes.iter_mut().rev() {
        if *b == b'9' {
            *b = b'0';
        } else {
            *b += 1;
            return String::from_utf8(bytes).ok();
        }
    }
    None
}

fn write_number(out: &mut String, n: &Number) -> Result<(), JcsError> {
    if let Some(u) = n.as_u64() {
        if u > MAX_SAFE_INTEGER {
            return Err(JcsError::IntegerOutOfRange(u.to_string()));
        }
        let _ = write!(out, "{u}");
        return Ok(());
    }
    if let Some(i) = n.as_i64() {
        if i.unsigned_abs() > MAX_SAFE_INTEGER {
            return Err(JcsError::IntegerOutOfRange(i.to_string()));
        }
        let _ = write!(out, "{i}");
        return Ok(());
    }
    match n.as_f64() {
        Some(f) => {
            out.push_str(&format_f64(f)?);
            Ok(())
        }
        None => Err(JcsError::NotJson(format!("number {n}"))),
    }
}

fn write_string(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

fn write_object(out: &mut String, map: &Map<String, Value>) -> Result<(), JcsError> {
    let mut members: Vec<(&String, &Value)> = map.iter().collect();
    members.sort_by(|a, b| a.0.encode_utf16().cmp(b.0.encode_utf16()));
    out.push('{');
    for (i, (key, value)) in members.into_iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        write_string(out, key);
        out.push(':');
        write_value(out, value)?;
    }
    out.push('}');
    Ok(())
}

fn write_value(out: &mut String, value: &Value) -> Result<(), JcsError> {
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(true) => out.push_str("true"),
        Value::Bool(false) => out.push_str("false"),
        Value::Number(n) => write_number(out, n)?,
        Value::String(s) => write_string(out, s),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_value(out, item)?;
            }
            out.push(']');
        }
        Value::Object(map) => write_object(out, map)?,
    }
    Ok(())
}

/// A serializer that only checks every float is finite.
struct FiniteCheck;

#[derive(Debug)]
enum CheckError {
    NonFinite,
    Other(String),
}

impl std::fmt::Display for CheckError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CheckError::NonFinite => f.write_str("non-finite float"),
            CheckError::Other(m) => f.write_str(m),
        }
    }
}

impl std::error::Error for CheckError {}

impl serde::ser::Error for CheckError {
    fn custom<T: std::fmt::Display>(msg: T) -> Self {
        CheckError::Other(msg.to_string())
    }
}

macro_rules! ok_scalar {
    ($($name:ident: $ty:ty),*) => {
        $(fn $name(self, _v: $ty) -> Result<(), CheckError> { Ok(()) })*
    };
}

impl serde::Serializer for FiniteCheck {
    type Ok = ();
    type Error = CheckError;
    type SerializeSeq = FiniteCheck;
    type SerializeTuple = FiniteCheck;
    type SerializeTupleStruct = FiniteCheck;
    type SerializeTupleVariant = FiniteCheck;
    type SerializeMap = FiniteCheck;
    type SerializeStruct = FiniteCheck;
    type SerializeStructVariant = FiniteCheck;

    ok_scalar!(serialize_bool: bool, serialize_i8: i8, serialize_i16: i16, serialize_i32: i32,
        serialize_i64: i64, serialize_i128: i128, serialize_u8: u8, serialize_u16: u16,
        serialize_u32: u32, serialize_u64: u64, serialize_u128: u128, serialize_char: char,
        serialize_str: &str, serialize_bytes: &[u8]);

    fn serialize_f32(self, v: f32) -> Result<(), CheckError> {
        if v.is_finite() {
            Ok(())
        } else {
            Err(CheckError::NonFinite)
        }
    }
    fn serialize_f64(self, v: f64) -> Result<(), CheckError> {
        if v.is_finite() {
            Ok(())
        } else {
            Err(CheckError::NonFinite)
        }
    }
    fn serialize_none(self) -> Result<(), CheckError> {
        Ok(())
    }
    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result<(), CheckError> {
        value.serialize(self)
    }
    fn serialize_unit(self) -> Result<(), CheckError> {
        Ok(())
    }
    fn serialize_unit_struct(self, _name: &'static str) -> Result<(), CheckError> {
        Ok(())
    }
    fn serialize_unit_variant(
        self,
        _name: &'static str,
        _index: u32,
        _variant: &'static str,
    ) -> Result<(), CheckError> {
        Ok(())
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        value: &T,
    ) -> Result<(), CheckError> {
        value.serialize(self)
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        _index: u32,
        _variant: &'static str,
        value: &T,
    ) -> Result<(), CheckError> {
        value.serialize(self)
    }
    fn serialize_seq(self, _len: Option<usize>) -> Result<FiniteCheck, CheckError> {
        Ok(FiniteCheck)
    }
    fn serialize_tuple(self, _len: usize) -> Result<FiniteCheck, CheckError> {
        Ok(FiniteCheck)
    }
    fn serialize_tuple_struct(
        self,
        _name: &'static str,
        _len: usize,
    ) -> Result<FiniteCheck, CheckError> {
        Ok(FiniteCheck)
    }
    fn serialize_tuple_variant(
        self,
        _name: &'static str,
        _index: u32,
        _variant: &'static str,
        _len: usize,
    ) -> Result<FiniteCheck, CheckError> {
        Ok(FiniteCheck)
    }
    fn serialize_map(self, _len: Option<usize>) -> Result<FiniteCheck, CheckError> {
        Ok(FiniteCheck)
    }
    fn serialize_struct(self, _name: &'static str, _len: usize) -> Result<FiniteCheck, CheckError> {
        Ok(FiniteCheck)
    }
    fn serialize_struct_variant(
        self,
        _name: &'static str,
        _index: u32,
        _variant: &'static str,
        _len: usize,
    ) -> Result<FiniteCheck, CheckError> {
        Ok(FiniteCheck)
    }
}

impl serde::ser::SerializeSeq for FiniteCheck {
    type Ok = ();
    type Error = CheckError;
    fn serialize_element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), CheckError> {
        value.serialize(FiniteCheck)
    }
    fn end(self) -> Result<(), CheckError> {
        Ok(())
    }
}

impl serde::ser::SerializeTuple for FiniteCheck {
    type Ok = ();
    type Error = CheckError;
    fn serialize_element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), CheckError> {
        value.serialize(FiniteCheck)
    }
    fn end(self) -> Result<(), CheckError> {
        Ok(())
    }
}

impl serde::ser::SerializeTupleStruct for FiniteCheck {
    type Ok = ();
    type Error = CheckError;
    fn serialize_field<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), CheckError> {
        value.serialize(FiniteCheck)
    }
    fn end(self) -> Result<(), CheckError> {
        Ok(())
    }
}

impl serde::ser::SerializeTupleVariant for FiniteCheck {
    type Ok = ();
    type Error = CheckError;
    fn serialize_field<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), CheckError> {
        value.serialize(FiniteCheck)
    }
    fn end(self) -> Result<(), CheckError> {
        Ok(())
    }
}

impl serde::ser::SerializeMap for FiniteCheck {
    type Ok = ();
    type Error = CheckError;
    fn serialize_key<T: Serialize + ?Sized>(&mut self, key: &T) -> Result<(), CheckError> {
        key.serialize(FiniteCheck)
    }
    fn serialize_value<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), CheckError> {
        value.serialize(FiniteCheck)
    }
    fn end(self) -> Result<(), CheckError> {
        Ok(())
    }
}

impl serde::ser::SerializeStruct for FiniteCheck {
    type Ok = ();
    type Error = CheckError;
    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        _key: &'static str,
        value: &T,
    ) -> Result<(), CheckError> {
        value.serialize(FiniteCheck)
    }
    fn end(self) -> Result<(), CheckError> {
        Ok(())
    }
}

impl serde::ser::SerializeStructVariant for FiniteCheck {
    type Ok = ();
    type Error = CheckError;
    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        _key: &'static str,
        value: &T,
    ) -> Result<(), CheckError> {
        value.serialize(FiniteCheck)
    }
    fn end(self) -> Result<(), CheckError> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn sorts_by_utf16_code_units() {
        // U+1F602 (surrogates D83D DE02) sorts before U+FB33 in UTF-16,
        // after it in UTF-8.
        let v = json!({"\u{fb33}": 1, "\u{1f602}": 2});
        assert_eq!(
            canonical_string(&v).unwrap(),
            "{\"\u{1f602}\":2,\"\u{fb33}\":1}"
        );
    }

    #[test]
    fn rejects_nan_through_serialize() {
        #[derive(Serialize)]
        struct S {
            x: f64,
        }
        assert_eq!(
            canonicalize_serialize(&S { x: f64::NAN }),
            Err(JcsError::NonFinite)
        );
        assert!(canonicalize_serialize(&S { x: 1.5 }).is_ok());
    }

    #[test]
    fn rejects_unsafe_integers() {
        assert!(matches!(
            canonicalize(&json!(9_007_199_254_740_993u64)),
            Err(JcsError::IntegerOutOfRange(_))
        ));
        assert_eq!(
            canonicalize(&json!(-9_007_199_254_740_991i64)).unwrap(),
            b"-9007199254740991"
        );
    }

    #[test]
    fn control_characters() {
        assert_eq!(
            canonical_string(&json!("\u{1}\u{7f}\u{8}")).unwrap(),
            "\"\\u0001\u{7f}\\b\""
        );
    }
}
