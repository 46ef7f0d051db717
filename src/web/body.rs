//! Request bodies read against the contract: every JSON body the API takes goes through
//! [`read`] (or the [`JsonBody`] extractor), which holds it to the very schema the
//! OpenAPI document publishes for it (`super::openapi`), so what the document allows and
//! what the server accepts are one thing (issue #59: schemathesis' positive and negative
//! checks).
//!
//! - The request must say `Content-Type: application/json` (415 `json_required`
//!   otherwise).
//! - An empty body reads as `{}` (the panel's bodyless POSTs; a body with required fields
//!   is then refused for the missing field).
//! - Not JSON, or JSON outside the schema (a wrong type, a value past a `minimum` or
//!   `maximum`, an integer past its `int32`/`int64` format, an unknown field where the
//!   schema has `additionalProperties: false`, a string that does not match its
//!   `pattern`, ...) → 400 `malformed`, naming where.
//! - A JSON number with an integral value (`5.0`) is an integer, as JSON Schema says.
//!
//! The validator knows the keywords utoipa writes (`$ref`, `oneOf`, `anyOf`, `allOf`,
//! `type`, `enum`, `format`, `minimum`, `maximum`, `pattern`, `minLength`, `maxLength`,
//! `required`, `properties`, `additionalProperties`, `propertyNames`, `items`,
//! `minItems`, `maxItems`, `minProperties`, `maxProperties`); any other keyword is
//! documentation.

use super::api::ApiError;
use axum::extract::{FromRequest, Request};
use axum::http::header::CONTENT_TYPE;
use axum::http::HeaderMap;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};
use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};
use utoipa::ToSchema;

/// A type the API takes as a JSON body: what its 400 names as the expected shape, and how
/// it words a refusal.
pub trait RequestBody: DeserializeOwned + ToSchema {
    /// The body as people write it (`{"seat": N, "main": AMOUNT}`), named in a 400
    /// `malformed`; empty for a body that carries nothing.
    const EXAMPLE: &'static str;

    /// A refusal of this body ([`read`]'s), in the body's own words where it has them.
    fn refusal(e: ApiError) -> ApiError {
        e
    }
}

/// A JSON body of type `T`, read by [`read`] (see the module doc) with `T`'s example.
pub struct JsonBody<T>(pub T);

impl<T, S> FromRequest<S> for JsonBody<T>
where
    T: RequestBody,
    S: Send + Sync,
{
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<JsonBody<T>, ApiError> {
        let (headers, text) = text(req, state).await?;
        read_body(&headers, &text).map(JsonBody)
    }
}

/// A request's headers and its body as text: the body as axum's `String` extractor takes
/// it (its limit, UTF-8), its refusal in the one error shape.
pub async fn text<S: Send + Sync>(
    req: Request,
    state: &S,
) -> Result<(HeaderMap, String), ApiError> {
    let headers = req.headers().clone();
    let text = String::from_request(req, state)
        .await
        .map_err(|e| ApiError::Http {
            status: e.status(),
            message: e.body_text(),
        })?;
    Ok((headers, text))
}

/// [`read`] with `T`'s own example and words (see [`RequestBody`]).
pub fn read_body<T: RequestBody>(headers: &HeaderMap, body: &str) -> Result<T, ApiError> {
    read(headers, body, T::EXAMPLE).map_err(T::refusal)
}

/// Whether the media type is exactly `application/json` (parameters such as `charset`
/// allowed): not `application/jsonp`, not `application/json-seq`.
pub fn is_json(headers: &HeaderMap) -> bool {
    headers
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .is_some_and(|media| media.trim().eq_ignore_ascii_case("application/json"))
}

/// Reads `body` as a `T`, held to `T`'s schema in the document; `what` (an example of
/// the body, may be empty) goes into the 400's message.
pub fn read<T: DeserializeOwned + ToSchema>(
    headers: &HeaderMap,
    body: &str,
    what: &str,
) -> Result<T, ApiError> {
    read_as(headers, body, what, &T::name())
}

/// [`read`] held to the document's component schema `schema` (a type whose schema is
/// described apart from it: the engine's input).
pub fn read_as<T: DeserializeOwned>(
    headers: &HeaderMap,
    body: &str,
    what: &str,
    schema: &str,
) -> Result<T, ApiError> {
    if !is_json(headers) {
        return Err(ApiError::JsonRequired);
    }
    let expected = if what.is_empty() {
        String::new()
    } else {
        format!("expected {what}: ")
    };
    let mut value: Value = if body.trim().is_empty() {
        Value::Object(Map::new())
    } else {
        serde_json::from_str(body)
            .map_err(|e| ApiError::Malformed(format!("{expected}not JSON: {e}")))?
    };
    validate(schema, &value).map_err(|e| ApiError::Malformed(format!("{expected}{e}")))?;
    integers(&mut value);
    serde_json::from_value(value).map_err(|e| ApiError::Malformed(format!("{expected}{e}")))
}

/// Checks `value` against the component schema `name` of the document.
pub fn validate(name: &str, value: &Value) -> Result<(), String> {
    let doc = document();
    let schema = doc
        .pointer(&format!("/components/schemas/{name}"))
        .ok_or_else(|| format!("no schema {name} in the document"))?;
    check(doc, schema, value, "body")
}

/// The document as JSON (built once).
fn document() -> &'static Value {
    static DOC: OnceLock<Value> = OnceLock::new();
    DOC.get_or_init(|| serde_json::to_value(super::openapi::document()).unwrap_or(Value::Null))
}

/// A compiled `pattern` (each compiled once).
fn matches(pattern: &str, text: &str) -> Result<bool, String> {
    static CACHE: OnceLock<Mutex<HashMap<String, regex::Regex>>> = OnceLock::new();
    let cache = CACHE.get_or_init(Default::default);
    let mut cache = cache
        .lock()
        .map_err(|_| "pattern cache poisoned".to_string())?;
    if let Some(re) = cache.get(pattern) {
        return Ok(re.is_match(text));
    }
    let re = regex::Regex::new(pattern).map_err(|e| format!("pattern {pattern}: {e}"))?;
    let found = re.is_match(text);
    cache.insert(pattern.to_string(), re);
    Ok(found)
}

/// The value of an integral JSON number (`5`, `5.0`), if it is one.
fn integral(n: &serde_json::Number) -> Option<i128> {
    if let Some(i) = n.as_i64() {
        return Some(i128::from(i));
    }
    if let Some(u) = n.as_u64() {
        return Some(i128::from(u));
    }
    let f = n.as_f64()?;
    // Past 2^100 no integer field of this API is near; such a value is out of every
    // format's range anyway (and i128 holds it exactly below that).
    (f.fract() == 0.0 && f.abs() < 1e30).then_some(f as i128)
}

/// Whether `value` is of the JSON Schema type `ty`.
fn is_type(ty: &str, value: &Value) -> bool {
    match (ty, value) {
        ("null", Value::Null)
        | ("boolean", Value::Bool(_))
        | ("object", Value::Object(_))
        | ("array", Value::Array(_))
        | ("string", Value::String(_))
        | ("number", Value::Number(_)) => true,
        ("integer", Value::Number(n)) => integral(n).is_some(),
        _ => false,
    }
}

/// `value` against `schema` at `at` (a path for the message).
fn check(doc: &Value, schema: &Value, value: &Value, at: &str) -> Result<(), String> {
    let Some(s) = schema.as_object() else {
        // `true` (anything) or `false` (nothing).
        return if schema == &Value::Bool(false) {
            Err(format!("{at}: not allowed"))
        } else {
            Ok(())
        };
    };
    if let Some(r) = s.get("$ref").and_then(Value::as_str) {
        let target = r
            .strip_prefix('#')
            .and_then(|p| doc.pointer(p))
            .ok_or_else(|| format!("{at}: unresolved {r}"))?;
        check(doc, target, value, at)?;
    }
    if let Some(all) = s.get("allOf").and_then(Value::as_array) {
        for sub in all {
            check(doc, sub, value, at)?;
        }
    }
    if let Some(any) = s.get("anyOf").and_then(Value::as_array) {
        if !any.iter().any(|sub| check(doc, sub, value, at).is_ok()) {
            return Err(format!("{at}: matches none of the allowed shapes"));
        }
    }
    if let Some(one) = s.get("oneOf").and_then(Value::as_array) {
        let errors: Vec<String> = one
            .iter()
            .filter_map(|sub| check(doc, sub, value, at).err())
            .collect();
        match one.len() - errors.len() {
            1 => {}
            0 if errors.len() == 1 => return Err(errors.join("")),
            0 => {
                return Err(format!(
                    "{at}: matches none of the allowed shapes ({})",
                    errors.join("; ")
                ))
            }
            _ => return Err(format!("{at}: matches more than one shape")),
        }
    }
    if let Some(ty) = s.get("type") {
        let ok = match ty {
            Value::String(t) => is_type(t, value),
            Value::Array(ts) => ts
                .iter()
                .filter_map(Value::as_str)
                .any(|t| is_type(t, value)),
            _ => true,
        };
        if !ok {
            return Err(format!("{at}: expected {ty}, not {}", kind(value)));
        }
    }
    if let Some(allowed) = s.get("enum").and_then(Value::as_array) {
        if !allowed.iter().any(|a| same(a, value)) {
            return Err(format!(
                "{at}: {value} is not one of {}",
                Value::from(allowed.clone())
            ));
        }
    }
    match value {
        Value::Number(n) => number(s, n, at)?,
        Value::String(text) => string(s, text, at)?,
        Value::Array(items) => array(doc, s, items, at)?,
        Value::Object(map) => object(doc, s, map, at)?,
        _ => {}
    }
    Ok(())
}

/// Equal as JSON values, `5.0` equal to `5`.
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => match (integral(x), integral(y)) {
            (Some(x), Some(y)) => x == y,
            _ => x.as_f64() == y.as_f64(),
        },
        _ => a == b,
    }
}

/// The JSON type of `value`, for messages.
fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// A bound of a schema as a number to compare with.
fn bound(s: &Map<String, Value>, key: &str) -> Option<f64> {
    s.get(key).and_then(Value::as_f64)
}

fn number(s: &Map<String, Value>, n: &serde_json::Number, at: &str) -> Result<(), String> {
    let is_integer_schema = match s.get("type") {
        Some(Value::String(t)) => t == "integer",
        Some(Value::Array(ts)) => ts.iter().any(|t| t == "integer"),
        _ => false,
    };
    if let (true, Some(i)) = (is_integer_schema, integral(n)) {
        let (lo, hi) = match s.get("format").and_then(Value::as_str) {
            Some("int32") => (i128::from(i32::MIN), i128::from(i32::MAX)),
            Some("int64") => (i128::from(i64::MIN), i128::from(i64::MAX)),
            _ => (i128::MIN, i128::MAX),
        };
        if i < lo || i > hi {
            return Err(format!("{at}: {n} is out of the integer's range"));
        }
        // Integer bounds compared exactly (an f64 cannot tell 2^63 - 1 from 2^63).
        let exact = |key: &str| {
            s.get(key).and_then(|b| match b {
                Value::Number(b) => integral(b),
                _ => None,
            })
        };
        if let Some(min) = exact("minimum") {
            if i < min {
                return Err(format!("{at}: {n} is below the minimum {min}"));
            }
        }
        if let Some(max) = exact("maximum") {
            if i > max {
                return Err(format!("{at}: {n} is above the maximum {max}"));
            }
        }
        return Ok(());
    }
    let x = n.as_f64().unwrap_or(f64::NAN);
    if let Some(min) = bound(s, "minimum") {
        if x.is_nan() || x < min {
            return Err(format!("{at}: {n} is below the minimum {min}"));
        }
    }
    if let Some(max) = bound(s, "maximum") {
        if x.is_nan() || x > max {
            return Err(format!("{at}: {n} is above the maximum {max}"));
        }
    }
    Ok(())
}

fn string(s: &Map<String, Value>, text: &str, at: &str) -> Result<(), String> {
    let len = text.chars().count() as u64;
    if let Some(min) = s.get("minLength").and_then(Value::as_u64) {
        if len < min {
            return Err(format!("{at}: shorter than {min} characters"));
        }
    }
    if let Some(max) = s.get("maxLength").and_then(Value::as_u64) {
        if len > max {
            return Err(format!("{at}: longer than {max} characters"));
        }
    }
    if let Some(pattern) = s.get("pattern").and_then(Value::as_str) {
        if !matches(pattern, text).map_err(|e| format!("{at}: {e}"))? {
            return Err(format!("{at}: does not match {pattern}"));
        }
    }
    Ok(())
}

/// `n` (an array's items, an object's fields: `what`) within the schema's `keys` (its
/// minimum and maximum count keywords).
fn count(
    s: &Map<String, Value>,
    (min, max): (&str, &str),
    n: usize,
    at: &str,
    what: &str,
) -> Result<(), String> {
    let n = n as u64;
    let bound = |key: &str| s.get(key).and_then(Value::as_u64);
    if bound(min).is_some_and(|m| n < m) {
        return Err(format!("{at}: too few {what}"));
    }
    if bound(max).is_some_and(|m| n > m) {
        return Err(format!("{at}: too many {what}"));
    }
    Ok(())
}

fn array(doc: &Value, s: &Map<String, Value>, items: &[Value], at: &str) -> Result<(), String> {
    count(s, ("minItems", "maxItems"), items.len(), at, "items")?;
    if let Some(item) = s.get("items") {
        for (i, v) in items.iter().enumerate() {
            check(doc, item, v, &format!("{at}[{i}]"))?;
        }
    }
    Ok(())
}

fn object(
    doc: &Value,
    s: &Map<String, Value>,
    map: &Map<String, Value>,
    at: &str,
) -> Result<(), String> {
    count(
        s,
        ("minProperties", "maxProperties"),
        map.len(),
        at,
        "fields",
    )?;
    if let Some(required) = s.get("required").and_then(Value::as_array) {
        for name in required.iter().filter_map(Value::as_str) {
            if !map.contains_key(name) {
                return Err(format!("{at}: missing field `{name}`"));
            }
        }
    }
    let properties = s.get("properties").and_then(Value::as_object);
    for (key, v) in map {
        let here = format!("{at}.{key}");
        if let Some(names) = s.get("propertyNames") {
            check(doc, names, &Value::String(key.clone()), &here)?;
        }
        match properties.and_then(|p| p.get(key)) {
            Some(sub) => check(doc, sub, v, &here)?,
            None => match s.get("additionalProperties") {
                Some(Value::Bool(false)) => return Err(format!("{here}: unknown field")),
                Some(sub) => check(doc, sub, v, &here)?,
                None => {}
            },
        }
    }
    Ok(())
}

/// Integral numbers written as floats (`5.0`) made integers, so that they deserialize
/// into integer fields (after [`validate`], which bounds them).
fn integers(value: &mut Value) {
    match value {
        Value::Number(n) if n.is_f64() => {
            if let Some(i) = integral(n) {
                if let Ok(i) = i64::try_from(i) {
                    *value = Value::from(i);
                } else if let Ok(u) = u64::try_from(i) {
                    *value = Value::from(u);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(integers),
        Value::Object(map) => map.values_mut().for_each(integers),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn json_headers() -> HeaderMap {
        let mut h = HeaderMap::new();
        h.insert(CONTENT_TYPE, "application/json".parse().unwrap());
        h
    }

    #[test]
    fn schema_names_are_the_documents() {
        // `read` finds each body's schema by `ToSchema::name()`: every body type must be in
        // the document under that name (a renamed type would refuse every request).
        for name in [
            super::super::api::EmptyBody::name(),
            super::super::api::BetBody::name(),
            super::super::api::DecisionBody::name(),
            super::super::api::DealBody::name(),
        ] {
            assert!(
                document()
                    .pointer(&format!("/components/schemas/{name}"))
                    .is_some(),
                "{name} is in the document"
            );
        }
    }

    #[test]
    fn the_schema_is_held_to() {
        let h = json_headers();
        type Bet = super::super::api::BetBody;
        assert!(read::<Bet>(&h, r#"{"seat": 3, "main": 100}"#, "").is_ok());
        // JSON Schema's integers include 3.0.
        assert!(read::<Bet>(&h, r#"{"seat": 3.0, "main": 100.0}"#, "").is_ok());
        for bad in [
            r#"{"seat": 0, "main": 100}"#,
            r#"{"seat": 256, "main": 100}"#,
            r#"{"seat": 3, "main": -1}"#,
            r#"{"seat": 3, "main": 1, "side": {"pair": -5}}"#,
            r#"{"seat": 3, "main": 9223372036854775808}"#,
            r#"{"seat": 3.5, "main": 1}"#,
            r#"{"seat": "3", "main": 1}"#,
            r#"{"seat": 3, "main": 1, "extra": 1}"#,
            r#"{"main": 1}"#,
            r#"[3, 1]"#,
            r#"null"#,
            r#"{"seat": 3"#,
        ] {
            let e = read::<Bet>(&h, bad, "").err();
            assert!(
                matches!(e, Some(ApiError::Malformed(_))),
                "{bad} is refused as malformed: {e:?}"
            );
        }
    }

    #[test]
    fn an_empty_body_is_an_empty_object_and_json_is_required() {
        type Empty = super::super::api::EmptyBody;
        assert!(read::<Empty>(&json_headers(), "", "").is_ok());
        assert!(read::<Empty>(&json_headers(), "{}", "").is_ok());
        assert!(read::<Empty>(&json_headers(), "[]", "").is_err());
        assert!(matches!(
            read::<Empty>(&HeaderMap::new(), "{}", ""),
            Err(ApiError::JsonRequired)
        ));
        let mut form = HeaderMap::new();
        form.insert(CONTENT_TYPE, "application/jsonp".parse().unwrap());
        assert!(matches!(
            read::<Empty>(&form, "{}", ""),
            Err(ApiError::JsonRequired)
        ));
    }

    #[test]
    fn one_of_takes_exactly_one() {
        let doc = json!({});
        let schema = json!({"oneOf": [{"type": "null"}, {"type": "integer", "minimum": 1}]});
        assert!(check(&doc, &schema, &json!(null), "x").is_ok());
        assert!(check(&doc, &schema, &json!(2), "x").is_ok());
        assert!(check(&doc, &schema, &json!(0), "x").is_err());
        assert!(check(&doc, &schema, &json!("a"), "x").is_err());
    }
}
