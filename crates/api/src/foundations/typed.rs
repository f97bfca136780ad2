//! Typed response shapes: a resource is one Rust type, serialized into response bodies and the
//! source of its OpenAPI component schema (schemars derives both from the same serde
//! attributes), so a body and its published schema cannot drift. An operation names its body
//! by type ([`crate::operation::Resp::typed`]); the document registers every type it reaches
//! as a component under the type's name.
//!
//! schemars rather than utoipa: it reads serde's own attributes (`rename`, `skip_serializing_if`,
//! `flatten`), so the schema follows exactly what serde writes, and it produces plain JSON
//! Schema 2020-12 — what OpenAPI 3.1 uses — without bringing a second OpenAPI model into a
//! crate that already writes its document.
use std::borrow::Cow;

use schemars::{json_schema, JsonSchema, Schema, SchemaGenerator};
use serde::{Serialize, Serializer};

/// The generator of the published document: JSON Schema 2020-12 as serialized (fields serde
/// skips are optional), components under `#/components/schemas/`.
pub fn generator() -> SchemaGenerator {
    let mut settings = schemars::generate::SchemaSettings::draft2020_12().for_serialize();
    settings.definitions_path = "/components/schemas".into();
    settings.meta_schema = None;
    settings.into_generator()
}

/// The schema of `T` as a response body, registering the components it names.
pub fn schema_of<T: JsonSchema>(g: &mut SchemaGenerator) -> Schema {
    g.subschema_for::<T>()
}

/// A time as the platform writes it: `2026-11-21T10:00:00Z` (UTC, whole seconds).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Timestamp(pub i64);

impl Serialize for Timestamp {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&platform_core::time::format_ts(self.0))
    }
}

impl JsonSchema for Timestamp {
    fn schema_name() -> Cow<'static, str> {
        "Timestamp".into()
    }
    fn inline_schema() -> bool {
        true
    }
    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({ "type": "string", "format": "date-time", "pattern": "^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}Z$" })
    }
}

/// An absolute URL (self-links, `html_url`s); URI templates are plain strings.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Uri(pub String);

impl Serialize for Uri {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.0)
    }
}

impl JsonSchema for Uri {
    fn schema_name() -> Cow<'static, str> {
        "Uri".into()
    }
    fn inline_schema() -> bool {
        true
    }
    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({ "type": "string", "format": "uri" })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_serialize_as_strings_with_their_schemas() {
        assert_eq!(serde_json::to_value(Timestamp(0)).unwrap(), "1970-01-01T00:00:00Z");
        assert_eq!(serde_json::to_value(Uri("http://x/y".into())).unwrap(), "http://x/y");
        let mut g = generator();
        assert_eq!(schema_of::<Uri>(&mut g).as_value()["format"], "uri");
        assert_eq!(schema_of::<Option<Timestamp>>(&mut g).as_value()["type"], serde_json::json!(["string", "null"]));
    }
}
