//! Request bodies and query parameters: each operation's body, and its query, is one Rust type
//! (`#[derive(Deserialize, JsonSchema)]`), named once: by the handler, which takes
//! `request::Body<T>` and `request::Query<T>`. Its schema, worked out when the operation is
//! registered, is both what the OpenAPI document publishes and what [`BodyRules`] and
//! [`QueryRules`] enforce before the handler receives the value, so the two cannot drift. Missing
//! or mistyped fields answer `422 Invalid request.`, overlong strings and values outside an enum
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

/// A field's published schema, given as JSON Schema text (`#[schemars(schema_with = …)]`
/// functions return this for a query parameter the handler reads further: a pattern, say).
pub fn schema_text(text: &str) -> Schema {
    serde_json::from_str::<Value>(text).expect("a JSON Schema text").try_into().expect("an object schema")
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

    /// The body as `T`, the type these rules are of: checked first, for the platform's
    /// messages, then deserialized.
    pub fn read<T: serde::de::DeserializeOwned>(&self, body: Value) -> Result<T, ApiError> {
        self.check(&body)?;
        serde_json::from_value(body).map_err(ApiError::invalid_request)
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

/// Marks a query parameter whose values, repeated or sent as `name[]`, join into one
/// comma-separated list (`#[schemars(transform = validate::comma_list)]`).
const COMMA_LIST: &str = "x-comma-separated";

/// `#[schemars(transform = validate::comma_list)]` on a query field: every value given for it
/// (`name=a,b&name=c`, `name[]=a`) reaches the handler as one list, `["a", "b", "c"]`.
pub fn comma_list(s: &mut Schema) {
    s.insert(COMMA_LIST.into(), true.into());
}

/// `#[schemars(transform = validate::checked_by_handler)]` on a query field: published as
/// declared (an enum, a pattern), passed to the handler as the string sent, which it checks
/// with messages of its own.
pub fn checked_by_handler(s: &mut Schema) {
    s.insert(BY_HANDLER.into(), true.into());
}

#[derive(Debug)]
enum QueryKind {
    Int,
    Bool,
    /// A string, one of `allowed` when it is an enum.
    Str {
        allowed: Option<Vec<String>>,
    },
    /// Comma-separated and repeated values, each one of `allowed` when given.
    List {
        allowed: Option<Vec<String>>,
    },
}

/// A query parameter as the OpenAPI document publishes it.
#[derive(Clone, Debug)]
pub struct Param {
    pub name: String,
    pub description: String,
    /// A query parameter the operation cannot do without (422 when missing).
    pub required: bool,
    pub schema: Value,
}

/// A query parameter: how the contract reads it, and what the OpenAPI document publishes.
#[derive(Debug)]
pub struct QueryParam {
    kind: QueryKind,
    /// The published form.
    pub param: Param,
}

impl QueryParam {
    /// From a property of the query type's schema: its doc comment is the description; `null`
    /// (an `Option`), integer formats and the markers are not published.
    fn of(name: &str, mut schema: Value, required: bool) -> QueryParam {
        let o = schema.as_object_mut().unwrap_or_else(|| panic!("query parameter {name}: not an object schema"));
        let description = o.remove("description").and_then(|d| d.as_str().map(str::to_string)).unwrap_or_default();
        let by_handler = o.remove(BY_HANDLER).is_some();
        let list = o.remove(COMMA_LIST).is_some();
        o.remove("default");
        let ty = match o.get("type") {
            Some(Value::String(t)) => t.clone(),
            Some(Value::Array(ts)) => match ts.iter().filter_map(Value::as_str).filter(|t| *t != "null").collect::<Vec<_>>()[..] {
                [t] => t.to_string(),
                _ => panic!("query parameter {name}: one type besides null expected"),
            },
            _ => panic!("query parameter {name}: no type"),
        };
        o.insert("type".into(), Value::from(ty.as_str()));
        if ty == "integer" {
            o.remove("format");
        }
        if let Some(Value::Array(values)) = o.get_mut("enum") {
            values.retain(|v| !v.is_null());
        }
        let values = |v: Option<&Value>| -> Option<Vec<String>> {
            let v = v?.get("enum")?.as_array()?;
            Some(v.iter().filter_map(Value::as_str).map(str::to_string).collect())
        };
        let allowed = if by_handler { None } else { values(Some(&schema)).or_else(|| values(schema.get("items"))) };
        let kind = match ty.as_str() {
            _ if list => QueryKind::List { allowed },
            "array" => QueryKind::List { allowed },
            _ if by_handler => QueryKind::Str { allowed: None },
            "integer" => QueryKind::Int,
            "boolean" => QueryKind::Bool,
            "string" => QueryKind::Str { allowed },
            other => panic!("query parameter {name}: unsupported type {other}"),
        };
        QueryParam { kind, param: Param { name: name.into(), description, required, schema } }
    }

    fn takes(&self, key: &str) -> bool {
        let name = self.param.name.as_str();
        key == name || (matches!(self.kind, QueryKind::List { .. }) && key.strip_suffix("[]") == Some(name))
    }

    /// The JSON value of this parameter given `pairs` (`None`: absent), or the 422.
    fn read(&self, pairs: &[(String, String)]) -> Result<Option<Value>, ApiError> {
        let name = &self.param.name;
        let not_one_of =
            |v: &str, allowed: &[String]| ApiError::invalid_request(format!("For '{name}', {v:?} is not one of {}.", allowed.join(", ")));
        if let QueryKind::List { allowed } = &self.kind {
            let mut given = false;
            let mut items = Vec::new();
            for (_, v) in pairs.iter().filter(|(k, _)| self.takes(k)) {
                given = true;
                for item in v.split(',').map(str::trim).filter(|s| !s.is_empty()) {
                    if let Some(a) = allowed.as_ref().filter(|a| !a.iter().any(|x| x == item)) {
                        return Err(not_one_of(item, a));
                    }
                    items.push(Value::from(item));
                }
            }
            return Ok(given.then_some(Value::Array(items)));
        }
        // The last value given counts; an empty integer or boolean is absent.
        let Some(v) = pairs.iter().rev().find(|(k, _)| k == name).map(|(_, v)| v.as_str()) else { return Ok(None) };
        Ok(Some(match &self.kind {
            QueryKind::Int if v.is_empty() => return Ok(None),
            QueryKind::Int => Value::from(
                platform_core::pagination::saturating_int(v)
                    .ok_or_else(|| ApiError::invalid_request(format!("For '{name}', {v:?} is not an integer.")))?,
            ),
            QueryKind::Bool => match v.to_ascii_lowercase().as_str() {
                "" => return Ok(None),
                "true" | "1" => Value::Bool(true),
                "false" | "0" => Value::Bool(false),
                _ => return Err(ApiError::invalid_request(format!("For '{name}', {v:?} is not a boolean."))),
            },
            QueryKind::Str { allowed: Some(a) } if !a.iter().any(|x| x == v) => return Err(not_one_of(v, a)),
            QueryKind::Str { .. } | QueryKind::List { .. } => Value::from(v),
        }))
    }
}

/// An operation's query parameters, checked and read into the JSON object its query type
/// deserializes from, worked out once per operation (parameters in declaration order: the first
/// failing one answers). Integers and booleans that are not, and strings outside an enum, are
/// `422 Invalid request.` with the hosted platform's messages; parameters the type does not
/// declare pass through as strings (a type may read one it does not publish).
#[derive(Debug)]
pub struct QueryRules {
    pub params: Vec<QueryParam>,
}

impl QueryRules {
    pub fn of(schema: fn(&mut SchemaGenerator) -> Schema) -> QueryRules {
        let schema = schema(&mut generator()).to_value();
        let required: Vec<&str> =
            (schema.get("required").and_then(Value::as_array)).map(|a| a.iter().filter_map(Value::as_str).collect()).unwrap_or_default();
        let params = (schema.get("properties").and_then(Value::as_object))
            .map(|props| props.iter().map(|(name, p)| QueryParam::of(name, p.clone(), required.contains(&name.as_str()))).collect())
            .unwrap_or_default();
        QueryRules { params }
    }

    /// The query `pairs` (decoded, in request order) as the JSON object of the query type.
    pub fn check(&self, pairs: &[(String, String)]) -> Result<serde_json::Map<String, Value>, ApiError> {
        let mut out = serde_json::Map::new();
        for p in &self.params {
            match p.read(pairs)? {
                Some(v) => {
                    out.insert(p.param.name.clone(), v);
                }
                None if p.param.required => {
                    return Err(ApiError::invalid_request(format!("\"{}\" wasn't supplied.", p.param.name)));
                }
                None => {}
            }
        }
        for (k, v) in pairs.iter().rev() {
            if !out.contains_key(k) && !self.params.iter().any(|p| p.takes(k)) {
                out.insert(k.clone(), Value::from(v.as_str()));
            }
        }
        Ok(out)
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
        BodyRules::of("Status", crate::typed::schema_of::<Status>)
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
        let r = BodyRules::of("Update", crate::typed::schema_of::<Update>);
        assert_eq!(r.schema["properties"]["name"], json!({"type": ["string", "null"], "maxLength": DEFAULT_MAX_CHARS}));
        assert!(!r.required);
        assert!(r.check(&json!({"name": null})).is_ok());
        assert!(r.check(&json!({"name": 1})).is_err());
        let name = |v: Value| serde_json::from_value::<Update>(v).unwrap().name;
        assert_eq!(name(json!({})), Patch::Absent);
        assert_eq!(name(json!({"name": null})), Patch::Null);
        assert_eq!(name(json!({"name": "n"})), Patch::Value("n".into()));
    }

    #[derive(Deserialize, JsonSchema, Debug, PartialEq)]
    struct Page {
        /// Results per page.
        per_page: Option<i64>,
    }

    #[derive(Deserialize, JsonSchema, Debug, PartialEq)]
    struct Listing {
        /// Only these.
        #[schemars(extend("enum" = ["a", "b"]))]
        kind: Option<String>,
        /// Shown or not.
        shown: Option<bool>,
        /// Required.
        since: String,
        #[serde(flatten)]
        page: Page,
        /// Keys.
        #[serde(default)]
        #[schemars(with = "Option<String>", extend("pattern" = "^x$"), transform = comma_list)]
        keys: Vec<String>,
        /// Checked further by the handler.
        #[schemars(extend("enum" = ["up", "down"]), transform = checked_by_handler)]
        way: Option<String>,
        #[schemars(skip)]
        hidden: Option<String>,
    }

    fn pairs(q: &str) -> Vec<(String, String)> {
        q.split('&').filter(|p| !p.is_empty()).map(|p| p.split_once('=').unwrap_or((p, ""))).map(|(k, v)| (k.into(), v.into())).collect()
    }

    fn read(q: &str) -> Result<Listing, String> {
        let rules = QueryRules::of(crate::typed::schema_of::<Listing>);
        let m = rules.check(&pairs(q)).map_err(|e| e.message.to_string())?;
        serde_json::from_value(Value::Object(m)).map_err(|e| e.to_string())
    }

    #[test]
    fn query_parameters_are_published_from_the_type() {
        let rules = QueryRules::of(crate::typed::schema_of::<Listing>);
        let published: Vec<Value> =
            rules.params.iter().map(|p| json!([p.param.name, p.param.description, p.param.required, p.param.schema])).collect();
        assert_eq!(
            published,
            [
                json!(["kind", "Only these.", false, {"type": "string", "enum": ["a", "b"]}]),
                json!(["shown", "Shown or not.", false, {"type": "boolean"}]),
                json!(["since", "Required.", true, {"type": "string"}]),
                json!(["per_page", "Results per page.", false, {"type": "integer"}]),
                json!(["keys", "Keys.", false, {"type": "string", "pattern": "^x$"}]),
                json!(["way", "Checked further by the handler.", false, {"type": "string", "enum": ["up", "down"]}]),
            ]
        );
    }

    #[test]
    fn query_parameters_are_checked_and_typed() {
        let got = read("since=t&kind=a&shown=TRUE&per_page=+7&keys=x,y&keys[]=z&way=sideways&hidden=h&other=1").unwrap();
        let want = Listing {
            kind: Some("a".into()),
            shown: Some(true),
            since: "t".into(),
            page: Page { per_page: Some(7) },
            keys: vec!["x".into(), "y".into(), "z".into()],
            way: Some("sideways".into()),
            hidden: Some("h".into()),
        };
        assert_eq!(got, want);
        // The last value counts; empty integers and booleans are absent.
        let got = read("since=a&since=b&per_page=&shown=").unwrap();
        assert_eq!((got.since.as_str(), got.page.per_page, got.shown), ("b", None, None));
        assert_eq!(read("per_page=99999999999999999999&since=t").unwrap().page.per_page, Some(i64::MAX));
        let refused = [
            ("kind=a", "Invalid request.\n\n\"since\" wasn't supplied."),
            ("since=t&kind=c", "Invalid request.\n\nFor 'kind', \"c\" is not one of a, b."),
            ("since=t&kind=", "Invalid request.\n\nFor 'kind', \"\" is not one of a, b."),
            ("since=t&shown=maybe", "Invalid request.\n\nFor 'shown', \"maybe\" is not a boolean."),
            ("since=t&per_page=x", "Invalid request.\n\nFor 'per_page', \"x\" is not an integer."),
        ];
        for (q, message) in refused {
            assert_eq!(read(q).unwrap_err(), message, "{q}");
        }
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
