//! Every operation is declared once: method, path, access rule and docs. The same declaration
//! wires the route, enforces authentication/authorization, fills the `X-Accepted-*` headers and
//! (later) feeds the OpenAPI document, so none of them can drift.
use std::sync::OnceLock;

use axum::http::{HeaderName, HeaderValue, Method};

use crate::validate::{BodyRules, Ty};

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    Read,
    Write,
}

impl Level {
    pub fn as_str(self) -> &'static str {
        match self {
            Level::Read => "read",
            Level::Write => "write",
        }
    }
}

/// How callers authenticate to an operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AuthKind {
    /// Tokens (and, for public data, none or application credentials).
    Token,
    /// Application basic credentials only (OAuth authorizations).
    AppBasic,
    /// Meta operations: any caller.
    Any,
}

#[derive(Clone, Copy, Debug)]
pub struct Access {
    pub auth: AuthKind,
    /// Public resources readable without credentials.
    pub public: bool,
    /// Accepted classic/OAuth scopes (any one suffices); empty: none needed.
    pub scopes: &'static [&'static str],
    /// Fine-grained permission name and level.
    pub permission: Option<(&'static str, Level)>,
    /// Level of access to the resource the caller's identity needs (push access for writes).
    pub role: Level,
}

impl Access {
    pub const fn read(scopes: &'static [&'static str], permission: &'static str) -> Access {
        Access { auth: AuthKind::Token, public: true, scopes, permission: Some((permission, Level::Read)), role: Level::Read }
    }
    pub const fn write(scopes: &'static [&'static str], permission: &'static str) -> Access {
        Access { auth: AuthKind::Token, public: false, scopes, permission: Some((permission, Level::Write)), role: Level::Write }
    }
    pub const fn app_basic() -> Access {
        Access { auth: AuthKind::AppBasic, public: false, scopes: &[], permission: None, role: Level::Read }
    }
    pub const fn any() -> Access {
        Access { auth: AuthKind::Any, public: true, scopes: &[], permission: None, role: Level::Read }
    }
}

/// A query parameter of an operation.
#[derive(Clone, Copy, Debug)]
pub struct Param {
    pub name: &'static str,
    pub ty: Ty,
    pub description: &'static str,
    /// A query parameter the operation cannot do without (422 when missing).
    pub required: bool,
}

/// `page` and `per_page` of a page-based list.
pub const PAGINATION: [Param; 2] = [
    Param { name: "per_page", ty: Ty::Int, description: "Results per page (max 100).", required: false },
    Param { name: "page", ty: Ty::Int, description: "Page number of the results to fetch.", required: false },
];

/// A success response: status, description, the schema of its body's type (none for an empty
/// body) and the headers it carries besides the common ones.
#[derive(Clone, Copy, Debug)]
pub struct Resp {
    pub status: u16,
    pub description: &'static str,
    pub schema: Option<fn(&mut schemars::SchemaGenerator) -> schemars::Schema>,
    pub headers: &'static [&'static str],
}

impl Resp {
    /// A body of the typed shape `T` (`Vec<T>` for a list).
    pub const fn typed<T: schemars::JsonSchema>(status: u16, description: &'static str) -> Resp {
        Resp { status, description, schema: Some(crate::shape::schema_of::<T>), headers: &[] }
    }
    pub const fn empty(status: u16, description: &'static str) -> Resp {
        Resp { status, description, schema: None, headers: &[] }
    }
    pub const fn with_headers(self, headers: &'static [&'static str]) -> Resp {
        Resp { headers, ..self }
    }
}

/// A request body: the Rust type it deserializes into (one declaration: its schema is both the
/// published requestBody and what `Ctx::body` checks) and the `resource` its validation errors
/// name.
#[derive(Clone, Copy, Debug)]
pub struct Body {
    /// `resource` of validation errors, e.g. `Status`.
    pub resource: &'static str,
    pub schema: fn(&mut schemars::SchemaGenerator) -> schemars::Schema,
    type_name: fn() -> &'static str,
}

impl Body {
    pub const fn of<T: schemars::JsonSchema + serde::de::DeserializeOwned>(resource: &'static str) -> Body {
        Body { resource, schema: crate::shape::schema_of::<T>, type_name: std::any::type_name::<T> }
    }
    /// Whether `T` is the declared type (a handler reading another would skip its checks' intent).
    pub fn is<T>(&self) -> bool {
        (self.type_name)() == std::any::type_name::<T>()
    }
}

pub struct Operation {
    /// `area/operation`, e.g. `statuses/get-combined`; the area is the OpenAPI tag.
    pub id: &'static str,
    pub method: Method,
    /// Path as the spec writes it, e.g. `/repos/{owner}/{repo}/commits/{ref}/status`.
    pub path: &'static str,
    pub summary: &'static str,
    pub docs: &'static str,
    pub access: Access,
    pub query: &'static [Param],
    /// The request body's type; handlers read it with `Ctx::body`.
    pub body: Option<Body>,
    /// Success responses; error responses follow from the access rule and the body.
    pub responses: &'static [Resp],
    /// What sets the operation apart from the rest beyond access and responses.
    pub traits: Traits,
    /// What follows from the fields above, worked out on first use.
    pub derived: Derived,
}

/// An operation's behaviour that is neither access nor shape: read by the contract, the limiter
/// and the OpenAPI document alike, so none of them matches operation ids.
#[derive(Clone, Copy, Debug)]
pub struct Traits {
    /// Closing down: `Deprecation` and `Sunset` on every response, deprecated in OpenAPI.
    pub closing_down: Option<ClosingDown>,
    /// Polled: `X-Poll-Interval` on its 200 and 304 answers, from this setting.
    pub poll: Option<Poll>,
    /// How the primary rate limit counts it.
    pub limits: Limits,
}

impl Traits {
    /// The traits of most operations: none.
    pub const NONE: Traits = Traits { closing_down: None, poll: None, limits: Limits::Charged };

    pub const fn closing_down(c: ClosingDown) -> Traits {
        Traits { closing_down: Some(c), ..Traits::NONE }
    }
    pub const fn polled(p: Poll) -> Traits {
        Traits { poll: Some(p), ..Traits::NONE }
    }
}

/// Which setting gives a polled operation's `X-Poll-Interval`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Poll {
    /// Event feeds: `poll_interval`.
    Feed,
    /// Notifications: `notifications_poll_interval`.
    Notifications,
}

/// How the primary rate limit treats an operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Limits {
    /// Charged (a 304 is refunded).
    Charged,
    /// Charged, and counted per application toward the token-issuing limit.
    IssuesTokens,
    /// The limit report itself: never charged, and 404 while rate limits are off.
    Report,
}

impl Operation {
    /// `X-Accepted-OAuth-Scopes` value.
    pub fn accepted_scopes(&self) -> String {
        self.access.scopes.join(", ")
    }
    /// Content-creating operations (they answer 201), which count toward the secondary limits
    /// on content creation.
    pub fn creates(&self) -> bool {
        self.responses.iter().any(|r| r.status == 201)
    }
    /// `X-Accepted-Service-Permissions` value (`name=level`).
    pub fn accepted_permissions(&self) -> Option<String> {
        self.access.permission.map(|(n, l)| format!("{n}={}", l.as_str()))
    }
}

/// A closing-down operation: every response carries `Deprecation` and `Sunset` (HTTP-dates,
/// RFC 9745 / RFC 8594) and the OpenAPI document marks it deprecated. No `Link` entry is added:
/// clients read `Link` for pagination and expect no other `rel` kinds there.
#[derive(Clone, Copy, Debug)]
pub struct ClosingDown {
    pub deprecation: &'static str,
    pub sunset: &'static str,
}

/// Security manager teams are removed from 1 January 2026 (document 2).
pub const SECURITY_MANAGERS_SUNSET: ClosingDown =
    ClosingDown { deprecation: "Tue, 01 Jul 2025 00:00:00 GMT", sunset: "Thu, 01 Jan 2026 00:00:00 GMT" };

/// Run usage (timing) is closing down (document 3); dates chosen here, the spec gives none.
pub const RUN_USAGE_SUNSET: ClosingDown =
    ClosingDown { deprecation: "Tue, 15 Apr 2025 00:00:00 GMT", sunset: "Thu, 15 Apr 2027 00:00:00 GMT" };

/// Source imports are retired: scheduled to stop at 00:00 UTC on 12 April 2024 (document 3);
/// the deprecation date is chosen here, the spec gives none.
pub const IMPORTS_SUNSET: ClosingDown =
    ClosingDown { deprecation: "Tue, 12 Sep 2023 00:00:00 GMT", sunset: "Fri, 12 Apr 2024 00:00:00 GMT" };

/// What follows from an operation's declaration alone, worked out once per process (on first
/// use) instead of on every request: the constant headers its responses carry, where its
/// path names an organization, and its body's schema and checks.
pub struct Derived(OnceLock<OpMeta>);

impl Derived {
    pub const fn new() -> Derived {
        Derived(OnceLock::new())
    }
}

impl Default for Derived {
    fn default() -> Derived {
        Derived::new()
    }
}

pub struct OpMeta {
    /// `X-Accepted-OAuth-Scopes`, `X-Accepted-Service-Permissions`, `Deprecation`, `Sunset`.
    pub headers: Vec<(HeaderName, HeaderValue)>,
    /// Index of the path segment naming the organization (`{org}`, or a repository's `{owner}`).
    pub org_segment: Option<usize>,
    /// The body's published schema and checks.
    pub body: Option<BodyRules>,
}

impl OpMeta {
    fn of(op: &Operation) -> OpMeta {
        use crate::headers as names;
        // Operations are statics, so their values can be static ones: cloning them per response
        // is a copy, with no reference count shared between threads.
        let value = |s: String| HeaderValue::from_static(Box::leak(s.into_boxed_str()));
        let mut headers = vec![(names::X_ACCEPTED_OAUTH_SCOPES, value(op.accepted_scopes()))];
        if let Some(p) = op.accepted_permissions() {
            headers.push((names::X_ACCEPTED_SERVICE_PERMISSIONS, value(p)));
        }
        if let Some(cd) = op.traits.closing_down {
            headers.push((names::DEPRECATION, HeaderValue::from_static(cd.deprecation)));
            headers.push((names::SUNSET, HeaderValue::from_static(cd.sunset)));
        }
        let org_segment = op.path.split('/').position(|s| s == "{org}" || s == "{owner}");
        let body = op.body.map(|b| BodyRules::of(b.resource, b.schema));
        OpMeta { headers, org_segment, body }
    }
}

impl Operation {
    /// This operation's [`OpMeta`].
    pub fn meta(&'static self) -> &'static OpMeta {
        self.derived.0.get_or_init(|| OpMeta::of(self))
    }

    /// The body as this operation's declared type: checked first against its schema (the one
    /// OpenAPI publishes) for the platform's messages, then deserialized. Handlers use
    /// `Ctx::body`; the control plane, which takes an operation's body too, this.
    pub fn read_body<T: serde::de::DeserializeOwned>(&'static self, body: serde_json::Value) -> Result<T, crate::error::ApiError> {
        debug_assert!(self.body.is_some_and(|b| b.is::<T>()), "{}: not the declared body type", self.id);
        if let Some(rules) = &self.meta().body {
            rules.check(&body)?;
        }
        serde_json::from_value(body).map_err(crate::error::ApiError::invalid_request)
    }
}
