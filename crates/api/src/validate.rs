//! Request-body schemas: declared once per operation, checked before any write, and (later)
//! published in the OpenAPI document. Missing or mistyped fields answer `422 Invalid request.`,
//! values outside an enum `422 Validation Failed`, as the hosted platform does.
use serde_json::Value;

use crate::error::ApiError;

#[derive(Clone, Copy, Debug)]
pub enum Ty {
    Str,
    /// An ISO 8601 timestamp (a string; the handler parses it and answers 422 when it can't).
    Timestamp,
    Int,
    Bool,
    Enum(&'static [&'static str]),
    StrArray,
    IntArray,
    Object,
    /// Any JSON value, published with this JSON Schema text; the handler validates it.
    Json(&'static str),
}

#[derive(Clone, Copy, Debug)]
pub struct Field {
    pub name: &'static str,
    pub ty: Ty,
    pub required: bool,
    pub nullable: bool,
    /// Longest accepted string, in characters (0: [`DEFAULT_MAX_CHARS`]); published as `maxLength`.
    max_chars: usize,
}

/// Longest string field without a bound of its own: every stored string has a documented maximum.
pub const DEFAULT_MAX_CHARS: usize = 1024;
/// Longest string anywhere in a body (inside arrays and objects too).
pub const BODY_STRING_MAX_CHARS: usize = 65_536;
/// Sealed secret values, base64: a secret of about 48 KB, the hosted platform's limit.
pub const SEALED_VALUE_MAX_CHARS: usize = 65_536;

impl Field {
    pub const fn req(name: &'static str, ty: Ty) -> Field {
        Field { name, ty, required: true, nullable: false, max_chars: 0 }
    }
    pub const fn opt(name: &'static str, ty: Ty) -> Field {
        Field { name, ty, required: false, nullable: false, max_chars: 0 }
    }
    pub const fn nullable(name: &'static str, ty: Ty) -> Field {
        Field { name, ty, required: false, nullable: true, max_chars: 0 }
    }
    /// A string field with its own maximum length.
    pub const fn max(self, chars: usize) -> Field {
        Field { max_chars: chars, ..self }
    }
    /// The maximum length of a string field (`None` for other types).
    pub fn max_chars(&self) -> Option<usize> {
        match self.ty {
            Ty::Str | Ty::Timestamp => Some(if self.max_chars == 0 { DEFAULT_MAX_CHARS } else { self.max_chars }),
            _ => None,
        }
    }
}

/// Strings no stored field can hold: NUL (PostgreSQL text refuses it) and anything longer than
/// [`BODY_STRING_MAX_CHARS`], at any depth of a body, keys included. `422 Invalid request.`
pub fn check_strings(v: &Value) -> Result<(), ApiError> {
    fn walk(v: &Value, at: &mut String) -> Result<(), ApiError> {
        let bad = |s: &str, at: &str| -> Option<ApiError> {
            if s.contains('\0') {
                Some(ApiError::invalid_request(format!("For '{at}', strings may not contain NUL characters.")))
            } else if s.len() > BODY_STRING_MAX_CHARS && s.chars().count() > BODY_STRING_MAX_CHARS {
                Some(ApiError::invalid_request(format!("For '{at}', strings may be at most {BODY_STRING_MAX_CHARS} characters long.")))
            } else {
                None
            }
        };
        match v {
            Value::String(s) => bad(s, at).map_or(Ok(()), Err),
            Value::Array(items) => items.iter().try_for_each(|x| walk(x, at)),
            Value::Object(m) => m.iter().try_for_each(|(k, x)| {
                let len = at.len();
                at.push('/');
                at.push_str(&k.chars().take(64).collect::<String>());
                let r = bad(k, at).map_or(Ok(()), Err).and_then(|_| walk(x, at));
                at.truncate(len);
                r
            }),
            _ => Ok(()),
        }
    }
    walk(v, &mut String::from("properties"))
}

#[derive(Debug)]
pub struct Schema {
    /// `resource` of validation errors, e.g. `Status`.
    pub resource: &'static str,
    pub fields: &'static [Field],
}

fn type_name(ty: Ty) -> &'static str {
    match ty {
        Ty::Str | Ty::Timestamp | Ty::Enum(_) => "a string",
        Ty::Int => "an integer",
        Ty::Bool => "a boolean",
        Ty::StrArray | Ty::IntArray => "an array",
        Ty::Object => "an object",
        Ty::Json(_) => "a valid value",
    }
}

fn has_type(ty: Ty, v: &Value) -> bool {
    match ty {
        Ty::Str | Ty::Timestamp | Ty::Enum(_) => v.is_string(),
        Ty::Int => v.is_i64() || v.is_u64(),
        Ty::Bool => v.is_boolean(),
        Ty::StrArray => v.as_array().is_some_and(|a| a.iter().all(Value::is_string)),
        Ty::IntArray => v.as_array().is_some_and(|a| a.iter().all(|x| x.is_i64())),
        Ty::Object => v.is_object(),
        Ty::Json(_) => true,
    }
}

impl Schema {
    /// Checks a JSON object body (the extractor already refused non-objects).
    pub fn check(&self, body: &Value) -> Result<(), ApiError> {
        for f in self.fields {
            match body.get(f.name) {
                None if f.required => {
                    return Err(ApiError::invalid_request(format!("\"{}\" wasn't supplied.", f.name)));
                }
                None => {}
                Some(Value::Null) if f.nullable => {}
                Some(v) if !has_type(f.ty, v) => {
                    let or_null = if f.nullable { " or null" } else { "" };
                    return Err(ApiError::invalid_request(format!(
                        "For 'properties/{}', {} is not {}{or_null}.",
                        f.name,
                        v,
                        type_name(f.ty)
                    )));
                }
                Some(v) => {
                    if let (Some(max), Some(s)) = (f.max_chars(), v.as_str()) {
                        if s.len() > max && s.chars().count() > max {
                            return Err(ApiError::invalid_field(
                                self.resource,
                                f.name,
                                "custom",
                                Some(format!("{} is too long (maximum is {max} characters)", f.name)),
                            ));
                        }
                    }
                    if let (Ty::Enum(allowed), Some(s)) = (f.ty, v.as_str()) {
                        if !allowed.contains(&s) {
                            return Err(ApiError::invalid_field(
                                self.resource,
                                f.name,
                                "custom",
                                Some(format!("{} is not included in the list", f.name)),
                            ));
                        }
                    }
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    static S: Schema =
        Schema { resource: "Status", fields: &[Field::req("state", Ty::Enum(&["a", "b"])), Field::nullable("description", Ty::Str)] };
    #[test]
    fn checks() {
        assert!(S.check(&json!({"state": "a", "description": null})).is_ok());
        let e = S.check(&json!({})).unwrap_err();
        assert_eq!(e.message, "Invalid request.\n\n\"state\" wasn't supplied.");
        let e = S.check(&json!({"state": 5})).unwrap_err();
        assert_eq!(e.message, "Invalid request.\n\nFor 'properties/state', 5 is not a string.");
        let e = S.check(&json!({"state": "c"})).unwrap_err();
        assert_eq!(e.message, "Validation Failed");
        let e = S.check(&json!({"state": "a", "description": 1})).unwrap_err();
        assert!(e.message.ends_with("1 is not a string or null."));
        // Lengths count characters, not bytes.
        assert!(S.check(&json!({"state": "a", "description": "é".repeat(DEFAULT_MAX_CHARS)})).is_ok());
        let e = S.check(&json!({"state": "a", "description": "x".repeat(DEFAULT_MAX_CHARS + 1)})).unwrap_err();
        assert_eq!(e.message, "Validation Failed");
    }

    #[test]
    fn strings_anywhere() {
        assert!(check_strings(&json!({"a": ["x", {"b": "y"}], "n": 1})).is_ok());
        let e = check_strings(&json!({"a": [{"b": "y\u{0}"}]})).unwrap_err();
        assert_eq!(e.message, "Invalid request.\n\nFor 'properties/a/b', strings may not contain NUL characters.");
        assert!(check_strings(&json!({"k\u{0}": 1})).is_err());
        assert!(check_strings(&json!({"a": "x".repeat(BODY_STRING_MAX_CHARS + 1)})).is_err());
        assert!(check_strings(&json!({"a": "x".repeat(BODY_STRING_MAX_CHARS)})).is_ok());
    }
}
