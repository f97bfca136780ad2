//! Assistant content exclusion (document 3): get and set an organization's rules, an object of
//! scope keys to arrays of path strings. Set replaces the stored rules; comments (`//` and
//! `/* */`, accepted in the body) are dropped; a duplicate key keeps its last occurrence, which
//! takes a parser that sees duplicates. Organization owners; `assistant` (or `read:org` to
//! read) or the Assistant content exclusion permission. Bodies over [`MAX_BODY_BYTES`] are 413.
use std::fmt;

use axum::http::StatusCode;
use platform_store::domain::content_exclusions as store;
use schemars::JsonSchema;
use serde::de::{Deserializer, MapAccess, Visitor};
use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};

use crate::error::{ApiError, ApiResult};
use crate::operation::{Access, Level, On, Operation, Resp};
use crate::registry::Api;
use crate::reply::Reply;
use crate::request::{Ctx, RawBody};

/// The largest rules body accepted (neither the spec nor api-facts names one): 64 KiB, far more
/// than path rules for many repositories need.
pub const MAX_BODY_BYTES: usize = 64 * 1024;
const PERMISSION: &str = "assistant_content_exclusion";

pub static GET: Operation = Operation::get(
    "assistant-exclusions/get",
    "/orgs/{org}/assistant/content_exclusion",
    "Get assistant content exclusion rules for an organization",
)
.docs("https://docs.service.example/rest/assistant/assistant-content-exclusion-management#get-assistant-content-exclusion-rules-for-an-organization")
.access(Access::token(&["assistant", "read:org"], Some((PERMISSION, Level::Read)), Level::Read))
.on(On::OrgOwner)
.responds(&[Resp::typed::<ContentExclusionRules>(200, "The rules: scope keys to arrays of path strings (`{}` when none are set).")]);

pub static SET: Operation = Operation::put(
    "assistant-exclusions/set",
    "/orgs/{org}/assistant/content_exclusion",
    "Set assistant content exclusion rules for an organization",
)
.docs("https://docs.service.example/rest/assistant/assistant-content-exclusion-management#set-assistant-content-exclusion-rules-for-an-organization")
.access(Access::token(&["assistant"], Some((PERMISSION, Level::Write)), Level::Write))
.on(On::OrgOwner)
// The rules object, read by `parse_rules` (comments and duplicate keys need its parser).
.resource("ContentExclusion")
.responds(&[Resp::typed::<ContentExclusionSet>(
    200,
    "The rules were replaced (comments dropped, the last of duplicate keys kept). Bodies over 64 KiB are 413.",
)]);

pub fn routes(api: Api) -> Api {
    api.op(&GET, get).op(&SET, set)
}

/// ContentExclusionRules: scope keys to arrays of path strings, in the order they were set.
#[derive(Clone, Debug, Default, Serialize, Deserialize, JsonSchema)]
pub struct ContentExclusionRules(#[schemars(with = "std::collections::BTreeMap<String, Vec<String>>")] pub Map<String, Value>);

/// ContentExclusionSet: the answer to setting the rules.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct ContentExclusionSet {
    pub message: String,
}

async fn get(ctx: Ctx) -> ApiResult<Reply> {
    let org_id = ctx.org().org.id;
    let stored = ctx.app.store.read(move |c| store::get(c, org_id)).await?;
    // Stored as validated by `set`.
    let rules = stored.and_then(|s| serde_json::from_str(&s).ok()).map(ContentExclusionRules).unwrap_or_default();
    Ok(Reply::ok(rules))
}

async fn set(ctx: Ctx, RawBody(body, _): RawBody<ContentExclusionRules>) -> ApiResult<Reply> {
    if body.len() > MAX_BODY_BYTES {
        return Err(ApiError::payload_too_large());
    }
    let rules = parse_rules(&body)?;
    crate::input::check_strings(&Value::Object(rules.clone()))?;
    let (org_id, now) = (ctx.org().org.id, ctx.app.clock.now());
    let text = Value::Object(rules).to_string();
    ctx.write(move |c| store::set(c, org_id, &text, now)).await?;
    Ok(Reply::ok(ContentExclusionSet { message: "Content exclusion rules updated.".into() }))
}

/// Parses and validates a rules body: JSON with comments, an object whose values are arrays of
/// non-empty path strings; duplicate keys keep their last occurrence (in its place).
pub fn parse_rules(bytes: &[u8]) -> ApiResult<Map<String, Value>> {
    let text = std::str::from_utf8(bytes).map_err(|_| ApiError::bad_request("Problems parsing JSON"))?;
    let text = strip_comments(text).ok_or_else(|| ApiError::bad_request("Problems parsing JSON"))?;
    if text.trim().is_empty() {
        return Err(ApiError::bad_request("Body should be a JSON object"));
    }
    let entries = match serde_json::from_str::<Entries>(&text) {
        Ok(Entries(Some(e))) => e,
        Ok(Entries(None)) => return Err(ApiError::bad_request("Body should be a JSON object")),
        Err(_) => return Err(ApiError::bad_request("Problems parsing JSON")),
    };
    let mut rules = Map::new();
    let mut errors = Vec::new();
    for (i, (key, value)) in entries.iter().enumerate() {
        if entries[i + 1..].iter().any(|(k, _)| k == key) {
            continue; // a later occurrence wins
        }
        if key.trim().is_empty() {
            errors.push("Keys must be non-empty strings naming a repository or scope.".to_string());
            continue;
        }
        let paths = value.as_array().filter(|a| a.iter().all(|p| p.as_str().is_some_and(|s| !s.trim().is_empty())));
        match paths {
            Some(_) => {
                rules.insert(key.clone(), value.clone());
            }
            None => errors.push(format!("The value of {key:?} must be an array of non-empty path strings.")),
        }
    }
    if errors.is_empty() {
        Ok(rules)
    } else {
        Err(ApiError::new(StatusCode::UNPROCESSABLE_ENTITY, "Validation Failed").with_errors(json!(errors)))
    }
}

/// Every entry of a top-level JSON object in document order, duplicates included; `None` for
/// JSON that is not an object.
struct Entries(Option<Vec<(String, Value)>>);

impl<'de> Deserialize<'de> for Entries {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Entries;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a JSON value")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Entries, A::Error> {
                let mut out = Vec::new();
                while let Some((k, v)) = map.next_entry::<String, Value>()? {
                    out.push((k, v));
                }
                Ok(Entries(Some(out)))
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Entries, A::Error> {
                while seq.next_element::<serde::de::IgnoredAny>()?.is_some() {}
                Ok(Entries(None))
            }
            fn visit_bool<E>(self, _: bool) -> Result<Entries, E> {
                Ok(Entries(None))
            }
            fn visit_i64<E>(self, _: i64) -> Result<Entries, E> {
                Ok(Entries(None))
            }
            fn visit_u64<E>(self, _: u64) -> Result<Entries, E> {
                Ok(Entries(None))
            }
            fn visit_f64<E>(self, _: f64) -> Result<Entries, E> {
                Ok(Entries(None))
            }
            fn visit_str<E>(self, _: &str) -> Result<Entries, E> {
                Ok(Entries(None))
            }
            fn visit_unit<E>(self) -> Result<Entries, E> {
                Ok(Entries(None))
            }
        }
        d.deserialize_any(V)
    }
}

/// Removes `//` line and `/* */` block comments outside strings; `None` for an unterminated
/// block comment.
fn strip_comments(s: &str) -> Option<String> {
    let (mut out, mut chars) = (String::with_capacity(s.len()), s.chars().peekable());
    let (mut in_str, mut escaped) = (false, false);
    while let Some(c) = chars.next() {
        if in_str {
            out.push(c);
            match c {
                _ if escaped => escaped = false,
                '\\' => escaped = true,
                '"' => in_str = false,
                _ => {}
            }
            continue;
        }
        match (c, chars.peek()) {
            ('"', _) => {
                in_str = true;
                out.push(c);
            }
            ('/', Some('/')) => {
                for n in chars.by_ref() {
                    if n == '\n' {
                        out.push('\n');
                        break;
                    }
                }
            }
            ('/', Some('*')) => {
                chars.next();
                let mut prev = ' ';
                loop {
                    let n = chars.next()?;
                    if prev == '*' && n == '/' {
                        break;
                    }
                    prev = n;
                }
                out.push(' ');
            }
            _ => out.push(c),
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    /// Rules documents are client text: parsed or refused, never a panic.
    #[test]
    fn rules_never_panic() {
        let seeds = ["octo-repo:\n  - \"/src/some-dir/kernel.rs\"\n", "\"*\":\n  - \"**/.env\"\n", "a: [\"x\"]", "# c\nk:\n  - v"];
        for s in platform_core::fuzz::strings(&seeds, 20_000, 6) {
            let _ = super::parse_rules(s.as_bytes());
        }
    }

    use super::*;
    #[test]
    fn duplicates_keep_the_last_and_comments_go() {
        let body = br#"{ // repos
            "a": ["/x"], /* old */ "b": ["/y"], "a": ["/z", "/w // not a comment"] }"#;
        let rules = parse_rules(body).unwrap();
        assert_eq!(Value::Object(rules).to_string(), r#"{"b":["/y"],"a":["/z","/w // not a comment"]}"#);
    }
    #[test]
    fn refusals() {
        assert_eq!(parse_rules(br#"{"a": "/x"}"#).unwrap_err().status, 422);
        assert_eq!(parse_rules(br#"{"a": [1]}"#).unwrap_err().status, 422);
        assert_eq!(parse_rules(br#"["/x"]"#).unwrap_err().message, "Body should be a JSON object");
        assert_eq!(parse_rules(br#"{"a": [}"#).unwrap_err().message, "Problems parsing JSON");
        assert_eq!(parse_rules(b"{} /* open").unwrap_err().status, 400);
        // A duplicate whose last value is valid is accepted.
        assert!(parse_rules(br#"{"a": 5, "a": ["/ok"]}"#).is_ok());
    }
}
