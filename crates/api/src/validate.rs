//! Request bodies: each operation's body is one Rust type (`#[derive(Deserialize, JsonSchema)]`,
//! named by [`crate::operation::Body::of`]). Its schema, worked out once per operation, is both
//! what the OpenAPI document publishes and what [`BodyRules`] enforces before the handler
//! deserializes the body (`Ctx::body`), so the two cannot drift. Missing or mistyped fields
//! answer `422 Invalid request.`, overlong strings and values outside an enum
//! `422 Validation Failed`, with the hosted platform's messages (serde's own would differ).
//!
//! In a body type: `Option<T>` may be absent but not null; `#[schemars(transform = nullable)]`
//! accepts null too; strings without `#[schemars(length(max = …))]` get [`DEFAULT_MAX_CHARS`];
//! `#[schemars(extend("enum" = …))]` lists a string's values; a field its handler validates
//! itself is a `Value` published with `#[schemars(schema_with = …)]` returning [`by_handler`]
//! (with [`present`], a null sent reaches the handler as `Some(Value::Null)`); a field where null
//! and absence mean different things (null clears, absent keeps) is a [`Patch`].
use schemars::{Schema, SchemaGenerator};
use serde::{Deserialize, Deserializer};
use serde_json::Value;

use crate::error::ApiError;

/// The type of a query parameter, as the OpenAPI document publishes it.
#[derive(Clone, Copy, Debug)]
pub enum Ty {
    Str,
    /// An ISO 8601 timestamp (a string; the handler parses it and answers 422 when it can't).
    Timestamp,
    Int,
    Bool,
    Enum(&'static [&'static str]),
    /// Any value, published with this JSON Schema text; the handler validates it.
    Json(&'static str),
}

/// Longest string field without a bound of its own: every stored string has a documented maximum.
pub const DEFAULT_MAX_CHARS: usize = 1024;
/// Longest string anywhere in a body (inside arrays and objects too).
pub const BODY_STRING_MAX_CHARS: usize = 65_536;
/// Sealed secret values, base64: a secret of about 48 KB, the hosted platform's limit.
pub const SEALED_VALUE_MAX_CHARS: usize = 65_536;

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

/// Marks a field its handler validates: published with its own schema, any JSON passes.
const BY_HANDLER: &str = "x-validated-by-handler";
/// Marks a field that accepts `null` (`Option` alone means "may be absent").
const NULLABLE: &str = "x-nullable";

/// The schema of a field its handler validates deeper than a type (`#[schemars(schema_with =
/// "…")]` functions return this for their JSON Schema text): the checks let any value through.
pub fn by_handler(text: &str) -> Schema {
    by_handler_value(serde_json::from_str(text).expect("a JSON Schema text"))
}

/// [`by_handler`] for a schema built as a value.
pub fn by_handler_value(schema: Value) -> Schema {
    let mut s: Schema = schema.try_into().expect("an object schema");
    s.insert(BY_HANDLER.into(), true.into());
    s
}

/// `#[schemars(transform = validate::nullable)]`: the field accepts `null` as well as absence.
pub fn nullable(s: &mut Schema) {
    s.insert(NULLABLE.into(), true.into());
}

/// `#[serde(default, deserialize_with = "validate::present")]` on an `Option<Value>` field the
/// handler validates: a `null` sent is `Some(Value::Null)`, told apart from absence.
pub fn present<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Value>, D::Error> {
    Value::deserialize(d).map(Some)
}

/// A field of an update where `null` and absence differ: absent keeps the current value, `null`
/// clears it. `#[serde(default)]` on the field; published (and checked) as a nullable `T`.
#[derive(Clone, Debug, Default, PartialEq)]
pub enum Patch<T> {
    #[default]
    Absent,
    Null,
    Value(T),
}

impl<T> Patch<T> {
    pub fn is_absent(&self) -> bool {
        matches!(self, Patch::Absent)
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Patch<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        // Called only for a key that is there (absence is the `#[serde(default)]`).
        Ok(Option::<T>::deserialize(d)?.map_or(Patch::Null, Patch::Value))
    }
}

impl<T: schemars::JsonSchema> schemars::JsonSchema for Patch<T> {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        T::schema_name()
    }
    fn inline_schema() -> bool {
        true
    }
    fn json_schema(g: &mut SchemaGenerator) -> Schema {
        let mut s = T::json_schema(g);
        nullable(&mut s);
        s
    }
}

/// The generator of body schemas: as deserialized, every subschema inline (a body reads whole).
fn generator() -> SchemaGenerator {
    let mut settings = schemars::generate::SchemaSettings::draft2020_12().for_deserialize();
    settings.inline_subschemas = true;
    settings.meta_schema = None;
    settings.into_generator()
}

#[derive(Debug)]
enum Kind {
    /// A string: `max` characters at most, one of `allowed` when it is an enum.
    Str {
        max: usize,
        allowed: Option<Vec<String>>,
    },
    Int,
    Bool,
    StrArray,
    IntArray,
    Object,
    /// Anything: the handler validates it.
    Any,
}

impl Kind {
    fn name(&self) -> &'static str {
        match self {
            Kind::Str { .. } => "a string",
            Kind::Int => "an integer",
            Kind::Bool => "a boolean",
            Kind::StrArray | Kind::IntArray => "an array",
            Kind::Object => "an object",
            Kind::Any => "a valid value",
        }
    }

    fn accepts(&self, v: &Value) -> bool {
        match self {
            Kind::Str { .. } => v.is_string(),
            Kind::Int => v.is_i64() || v.is_u64(),
            Kind::Bool => v.is_boolean(),
            Kind::StrArray => v.as_array().is_some_and(|a| a.iter().all(Value::is_string)),
            Kind::IntArray => v.as_array().is_some_and(|a| a.iter().all(|x| x.is_i64())),
            Kind::Object => v.is_object(),
            Kind::Any => true,
        }
    }
}

#[derive(Debug)]
struct Field {
    name: String,
    kind: Kind,
    required: bool,
    nullable: bool,
}

impl Field {
    /// The checks of one property, and its published form: `null` only where the field says
    /// so, strings without a bound of their own get [`DEFAULT_MAX_CHARS`], markers removed.
    fn of(name: &str, schema: &mut Value, required: bool) -> Field {
        let o = schema.as_object_mut().unwrap_or_else(|| panic!("body field {name}: not an object schema"));
        let by_handler = o.remove(BY_HANDLER).is_some();
        let nullable = o.remove(NULLABLE).is_some();
        // `#[serde(default)]` on an `Option` publishes `"default": null`: absence says that.
        if o.get("default") == Some(&Value::Null) {
            o.remove("default");
        }
        if by_handler {
            return Field { name: name.into(), kind: Kind::Any, required, nullable };
        }
        let ty = match o.get("type") {
            Some(Value::String(t)) => t.clone(),
            Some(Value::Array(ts)) => match ts.iter().filter_map(Value::as_str).filter(|t| *t != "null").collect::<Vec<_>>()[..] {
                [t] => t.to_string(),
                _ => panic!("body field {name}: one type besides null expected"),
            },
            _ => panic!("body field {name}: no type (a field the handler validates uses validate::by_handler)"),
        };
        o.insert("type".into(), if nullable { serde_json::json!([ty, "null"]) } else { Value::from(ty.as_str()) });
        let kind = match ty.as_str() {
            "string" => {
                let allowed: Option<Vec<String>> =
                    o.get("enum").and_then(Value::as_array).map(|a| a.iter().filter_map(Value::as_str).map(str::to_string).collect());
                if allowed.is_none() && !o.contains_key("maxLength") {
                    o.insert("maxLength".into(), DEFAULT_MAX_CHARS.into());
                }
                let max = o.get("maxLength").and_then(Value::as_u64).map_or(usize::MAX, |m| m as usize);
                Kind::Str { max, allowed }
            }
            "integer" => Kind::Int,
            "boolean" => Kind::Bool,
            "object" => Kind::Object,
            "array" => match o.get("items").and_then(|i| i.get("type")).and_then(Value::as_str) {
                Some("string") => Kind::StrArray,
                Some("integer") => Kind::IntArray,
                _ => panic!("body field {name}: arrays of strings or integers only"),
            },
            other => panic!("body field {name}: unsupported type {other}"),
        };
        Field { name: name.into(), kind, required, nullable }
    }
}

/// A request body's published schema and the checks derived from it, worked out once per
/// operation (fields in declaration order: the first failing one answers).
#[derive(Debug)]
pub struct BodyRules {
    /// `resource` of validation errors, e.g. `Status`.
    resource: &'static str,
    fields: Vec<Field>,
    /// The requestBody schema the OpenAPI document publishes.
    pub schema: Value,
    /// Whether any field is required (then the body is, in the document).
    pub required: bool,
}

impl BodyRules {
    pub fn of(resource: &'static str, schema: fn(&mut SchemaGenerator) -> Schema) -> BodyRules {
        let mut schema = schema(&mut generator()).to_value();
        let required: Vec<String> = (schema.get("required").and_then(Value::as_array))
            .map(|a| a.iter().filter_map(Value::as_str).map(str::to_string).collect())
            .unwrap_or_default();
        let mut fields = Vec::new();
        if let Some(props) = schema.get_mut("properties").and_then(Value::as_object_mut) {
            for (name, p) in props.iter_mut() {
                fields.push(Field::of(name, p, required.contains(name)));
            }
        }
        BodyRules { resource, fields, required: !required.is_empty(), schema }
    }

    /// Checks a JSON object body (the extractor already refused non-objects).
    pub fn check(&self, body: &Value) -> Result<(), ApiError> {
        for f in &self.fields {
            match body.get(&f.name) {
                None if f.required => {
                    return Err(ApiError::invalid_request(format!("\"{}\" wasn't supplied.", f.name)));
                }
                None => {}
                Some(Value::Null) if f.nullable => {}
                Some(v) if !f.kind.accepts(v) => {
                    let or_null = if f.nullable { " or null" } else { "" };
                    return Err(ApiError::invalid_request(format!(
                        "For 'properties/{}', {} is not {}{or_null}.",
                        f.name,
                        v,
                        f.kind.name()
                    )));
                }
                Some(v) => {
                    if let (Kind::Str { max, allowed }, Some(s)) = (&f.kind, v.as_str()) {
                        if s.len() > *max && s.chars().count() > *max {
                            return Err(ApiError::invalid_field(
                                self.resource,
                                &f.name,
                                "custom",
                                Some(format!("{} is too long (maximum is {max} characters)", f.name)),
                            ));
                        }
                        if allowed.as_ref().is_some_and(|a| !a.iter().any(|x| x == s)) {
                            return Err(ApiError::invalid_field(
                                self.resource,
                                &f.name,
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
    use schemars::JsonSchema;
    use serde_json::json;

    #[derive(Deserialize, JsonSchema)]
    #[allow(dead_code)]
    struct Status {
        #[schemars(extend("enum" = ["a", "b"]))]
        state: String,
        #[schemars(transform = nullable)]
        description: Option<String>,
        #[schemars(length(max = 3))]
        context: Option<String>,
        #[serde(default, deserialize_with = "present")]
        #[schemars(schema_with = "any_schema")]
        any: Option<Value>,
        ids: Option<Vec<i64>>,
    }

    fn any_schema(_: &mut SchemaGenerator) -> Schema {
        by_handler(r#"{"type": "object"}"#)
    }

    fn rules() -> BodyRules {
        BodyRules::of("Status", crate::shape::schema_of::<Status>)
    }

    #[test]
    fn published_schema() {
        let r = rules();
        assert!(r.required);
        assert_eq!(
            r.schema["properties"],
            json!({
                "state": {"type": "string", "enum": ["a", "b"]},
                "description": {"type": ["string", "null"], "maxLength": DEFAULT_MAX_CHARS},
                "context": {"type": "string", "maxLength": 3},
                "any": {"type": "object"},
                "ids": {"type": "array", "items": {"type": "integer", "format": "int64"}},
            })
        );
        assert_eq!(r.schema["required"], json!(["state"]));
    }

    #[test]
    fn checks() {
        let s = rules();
        assert!(s.check(&json!({"state": "a", "description": null})).is_ok());
        let e = s.check(&json!({})).unwrap_err();
        assert_eq!(e.message, "Invalid request.\n\n\"state\" wasn't supplied.");
        let e = s.check(&json!({"state": 5})).unwrap_err();
        assert_eq!(e.message, "Invalid request.\n\nFor 'properties/state', 5 is not a string.");
        let e = s.check(&json!({"state": "c"})).unwrap_err();
        assert_eq!(e.message, "Validation Failed");
        let e = s.check(&json!({"state": "a", "description": 1})).unwrap_err();
        assert!(e.message.ends_with("1 is not a string or null."));
        // Lengths count characters, not bytes.
        assert!(s.check(&json!({"state": "a", "description": "é".repeat(DEFAULT_MAX_CHARS)})).is_ok());
        let e = s.check(&json!({"state": "a", "description": "x".repeat(DEFAULT_MAX_CHARS + 1)})).unwrap_err();
        assert_eq!(e.message, "Validation Failed");
        // `Option` alone is "may be absent"; the handler's fields take anything, null included.
        let e = s.check(&json!({"state": "a", "context": null})).unwrap_err();
        assert_eq!(e.message, "Invalid request.\n\nFor 'properties/context', null is not a string.");
        assert!(s.check(&json!({"state": "a", "any": null})).is_ok());
        let e = s.check(&json!({"state": "a", "ids": [1, "x"]})).unwrap_err();
        assert!(e.message.ends_with("[1,\"x\"] is not an array."));
        let b: Status = serde_json::from_value(json!({"state": "a", "any": null})).unwrap();
        assert_eq!(b.any, Some(Value::Null));
    }

    #[derive(Deserialize, JsonSchema)]
    struct Update {
        #[serde(default)]
        name: Patch<String>,
    }

    #[test]
    fn patch_tells_null_from_absent() {
        let r = BodyRules::of("Update", crate::shape::schema_of::<Update>);
        assert_eq!(r.schema["properties"]["name"], json!({"type": ["string", "null"], "maxLength": DEFAULT_MAX_CHARS}));
        assert!(!r.required);
        assert!(r.check(&json!({"name": null})).is_ok());
        assert!(r.check(&json!({"name": 1})).is_err());
        let name = |v: Value| serde_json::from_value::<Update>(v).unwrap().name;
        assert_eq!(name(json!({})), Patch::Absent);
        assert_eq!(name(json!({"name": null})), Patch::Null);
        assert_eq!(name(json!({"name": "n"})), Patch::Value("n".into()));
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
