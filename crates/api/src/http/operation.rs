//! Every operation is declared once, in a few lines of a `const` builder:
//!
//! ```ignore
//! pub static CREATE: Operation = Operation::post("statuses/create", "/repos/{owner}/{repo}/statuses/{sha}", "Create a commit status")
//!     .docs("https://docs.service.example/rest/commits/statuses#create-a-commit-status")
//!     .access(Access::write(SCOPES, "statuses"))
//!     .resource("Status")
//!     .responds(&[Resp::typed::<CommitStatus>(201, "The status was created.").with_headers(&["Location"])]);
//! ```
//!
//! The same declaration wires the route, and the contract enforces what it says before the
//! handler runs (`contract/declared.rs`): the repository, organization or enterprise the path
//! names ([`On`]) is loaded and authorized per the [`Access`] rule, the query and body are
//! checked against the types the handler takes (named there alone: `registry.rs` derives them),
//! the response cache answers a [`Cache`]d read, the secondary limits the
//! operation counts toward are charged; a handler writes as [`Writes`] says; slashes in a
//! [`Operation::slash_param`] are routed. It also fills the `X-Accepted-*` headers and the
//! OpenAPI document, so none of them can drift.
//!
//! A `const` builder rather than an attribute macro: declarations stay plain Rust that any
//! reader (and rust-analyzer) follows, and the build needs no proc-macro crate.
use std::mem::ManuallyDrop;
use std::sync::OnceLock;

use axum::http::{HeaderName, HeaderValue, Method};
use platform_core::TokenKind;

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
    /// The kinds of token the operation serves (empty: every kind); checked before anything
    /// else, so anonymous callers hear 401 and other kinds 403 whatever the path names.
    pub tokens: &'static [TokenKind],
}

impl Access {
    pub const fn read(scopes: &'static [&'static str], permission: &'static str) -> Access {
        Access { auth: AuthKind::Token, public: true, scopes, permission: Some((permission, Level::Read)), role: Level::Read, tokens: &[] }
    }
    pub const fn write(scopes: &'static [&'static str], permission: &'static str) -> Access {
        Access {
            auth: AuthKind::Token,
            public: false,
            scopes,
            permission: Some((permission, Level::Write)),
            role: Level::Write,
            tokens: &[],
        }
    }
    /// Tokens with one of `scopes` or the permission at `level`, acting at that level; nothing
    /// public.
    pub const fn token(scopes: &'static [&'static str], permission: Option<(&'static str, Level)>, level: Level) -> Access {
        Access { auth: AuthKind::Token, public: false, scopes, permission, role: level, tokens: &[] }
    }
    pub const fn app_basic() -> Access {
        Access { auth: AuthKind::AppBasic, public: false, scopes: &[], permission: None, role: Level::Read, tokens: &[] }
    }
    pub const fn any() -> Access {
        Access { auth: AuthKind::Any, public: true, scopes: &[], permission: None, role: Level::Read, tokens: &[] }
    }
    /// The same, readable without credentials where the resource is public.
    pub const fn public(self) -> Access {
        Access { public: true, ..self }
    }
    /// The same, for these kinds of token only.
    pub const fn only(self, tokens: &'static [TokenKind]) -> Access {
        Access { tokens, ..self }
    }
}

/// What an operation's path names, which the contract loads and authorizes (per the access
/// rule) before the handler runs; the handler reads it from its context (`ctx.repo()`,
/// `ctx.org()`, `ctx.enterprise()`) and so cannot forget the check.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum On {
    /// Nothing the contract loads: the caller's own resources, public profiles, lists filtered
    /// by what the caller reaches. The default of paths that name no repository.
    Caller,
    /// `{owner}/{repo}`: the repository, case-insensitive (`.git` accepted; a renamed one answers
    /// 301), authorized by `authorize::check_repo`. The default of `/repos/{owner}/{repo}…` and
    /// `/networks/{owner}/{repo}…` paths.
    Repo,
    /// A repository its administrators alone may change (403 for others who see it).
    RepoAdmin,
    /// `{org}`: organization owners (and the organization's installations).
    OrgOwner,
    /// `{org}`: owners and members of its security manager teams.
    OrgOwnerOrSecurityManager,
    /// `{org}` or `{org_id}`: its members (and installations).
    OrgMember,
    /// `{enterprise}`: its members, with tokens acting for them.
    EnterpriseMember,
}

impl On {
    /// What a path names when the declaration does not say: a repository under `/repos/` and
    /// `/networks/`, nothing otherwise.
    pub const fn of_path(path: &str) -> On {
        if starts_with(path, "/repos/{owner}/{repo}") || starts_with(path, "/networks/{owner}/{repo}") {
            On::Repo
        } else {
            On::Caller
        }
    }

    pub fn names_repo(self) -> bool {
        matches!(self, On::Repo | On::RepoAdmin)
    }

    pub fn names_org(self) -> bool {
        matches!(self, On::OrgOwner | On::OrgOwnerOrSecurityManager | On::OrgMember)
    }
}

const fn starts_with(s: &str, prefix: &str) -> bool {
    let (s, p) = (s.as_bytes(), prefix.as_bytes());
    if s.len() < p.len() {
        return false;
    }
    let mut i = 0;
    while i < p.len() {
        if s[i] != p[i] {
            return false;
        }
        i += 1;
    }
    s.len() == p.len() || s[p.len()] == b'/'
}

/// Whether the contract's response cache answers a GET (authorization has run first; a write
/// anywhere empties it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cache {
    /// Not cached: writes, and reads cheaper than keying, storing and admitting an entry.
    No,
    /// Per caller: an entry is served only to the token (application, anonymous caller) that
    /// built it, so content that depends on who asks never reaches anyone else.
    Caller,
    /// Shared by every caller the contract admitted to the path's repository: for answers that
    /// depend on the repository alone, not on who asks.
    Repository,
}

/// What an operation's writes may change, which decides the caches they invalidate
/// (`platform_store::Store::write_content`). Handlers write through `Ctx::write`, which reads it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Writes {
    /// Anything, access included: every cache.
    Anything,
    /// Content only — never an account, membership, team, token, app, installation, grant or
    /// repository — so the caches of credentials and repository access stay valid.
    Content,
}

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
        Resp { status, description, schema: Some(crate::typed::schema_of::<T>), headers: &[] }
    }
    pub const fn empty(status: u16, description: &'static str) -> Resp {
        Resp { status, description, schema: None, headers: &[] }
    }
    pub const fn with_headers(self, headers: &'static [&'static str]) -> Resp {
        Resp { headers, ..self }
    }
}

/// A path parameter that may hold `/` (branch names, refs): the contract encodes its slashes
/// before routing so the router sees one segment (`contract/path.rs`).
#[derive(Clone, Copy, Debug)]
pub struct SlashParam {
    pub name: &'static str,
    /// Last segments that name another resource below the path rather than a part of the
    /// parameter (`…/commits/{ref}/check-runs`).
    pub not_ending_in: &'static [&'static str],
    /// Another path whose reads (GET, HEAD) this operation answers, as the hosted platform
    /// does for the `url` it gives out (`…/git/refs/{ref}` read as `…/git/ref/{ref}`).
    pub read_alias: Option<&'static str>,
}

/// HTTP method of an operation (`Copy`, so declarations are `const`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verb {
    Get,
    Post,
    Put,
    Patch,
    Delete,
}

impl Verb {
    pub fn as_str(self) -> &'static str {
        match self {
            Verb::Get => "GET",
            Verb::Post => "POST",
            Verb::Put => "PUT",
            Verb::Patch => "PATCH",
            Verb::Delete => "DELETE",
        }
    }

    pub fn http(self) -> Method {
        match self {
            Verb::Get => Method::GET,
            Verb::Post => Method::POST,
            Verb::Put => Method::PUT,
            Verb::Patch => Method::PATCH,
            Verb::Delete => Method::DELETE,
        }
    }
}

pub struct Operation {
    /// `area/operation`, e.g. `statuses/get-combined`; the area is the OpenAPI tag.
    pub id: &'static str,
    pub method: Verb,
    /// Path as the spec writes it, e.g. `/repos/{owner}/{repo}/commits/{ref}/status`.
    pub path: &'static str,
    pub summary: &'static str,
    pub docs: &'static str,
    pub access: Access,
    /// What the path names, loaded and authorized before the handler runs.
    pub on: On,
    /// The 403 a scope token lacking the operation's scopes hears instead of the usual one
    /// (repository deletion answers as to a non-admin, as on the hosted platform).
    pub scope_refusal: Option<&'static str>,
    /// The `resource` a body's validation errors name (e.g. `Status`), declared exactly when
    /// the handler takes a body; its type is the one the handler takes (`request::Body<T>`).
    pub resource: Option<&'static str>,
    /// Success responses; error responses follow from the access rule and the body.
    pub responses: &'static [Resp],
    /// What sets the operation apart from the rest beyond access and responses.
    pub traits: Traits,
    pub cache: Cache,
    pub writes: Writes,
    pub slash: Option<SlashParam>,
    /// What follows from the fields above, worked out on first use (never dropped: operations
    /// are statics, and `ManuallyDrop` lets the builder move it in `const` code).
    derived: ManuallyDrop<OnceLock<OpMeta>>,
}

impl Operation {
    /// An operation with nothing declared beyond its method, path and summary: token access
    /// with no scope, nothing public, no body resource, not cached, writes that may change
    /// anything. The path decides what it names ([`On`]).
    pub const fn new(method: Verb, id: &'static str, path: &'static str, summary: &'static str) -> Operation {
        Operation {
            id,
            method,
            path,
            summary,
            docs: "",
            access: Access::token(&[], None, Level::Read),
            on: On::of_path(path),
            scope_refusal: None,
            resource: None,
            responses: &[],
            traits: Traits::NONE,
            cache: Cache::No,
            writes: Writes::Anything,
            slash: None,
            derived: ManuallyDrop::new(OnceLock::new()),
        }
    }
    pub const fn get(id: &'static str, path: &'static str, summary: &'static str) -> Operation {
        Operation::new(Verb::Get, id, path, summary)
    }
    pub const fn post(id: &'static str, path: &'static str, summary: &'static str) -> Operation {
        Operation::new(Verb::Post, id, path, summary)
    }
    pub const fn put(id: &'static str, path: &'static str, summary: &'static str) -> Operation {
        Operation::new(Verb::Put, id, path, summary)
    }
    pub const fn patch(id: &'static str, path: &'static str, summary: &'static str) -> Operation {
        Operation::new(Verb::Patch, id, path, summary)
    }
    pub const fn delete(id: &'static str, path: &'static str, summary: &'static str) -> Operation {
        Operation::new(Verb::Delete, id, path, summary)
    }

    /// The documentation URL error bodies and the OpenAPI document link.
    pub const fn docs(self, docs: &'static str) -> Operation {
        Operation { docs, ..self }
    }
    pub const fn access(self, access: Access) -> Operation {
        Operation { access, ..self }
    }
    /// What the path names, when it is not what the path alone says ([`On::of_path`]).
    pub const fn on(self, on: On) -> Operation {
        Operation { on, ..self }
    }
    /// A repository operation for its administrators only.
    pub const fn admin(self) -> Operation {
        Operation { on: On::RepoAdmin, ..self }
    }
    pub const fn scope_refusal(self, message: &'static str) -> Operation {
        Operation { scope_refusal: Some(message), ..self }
    }
    /// The request body's validation errors name `resource` (the body's type is the one the
    /// handler takes).
    pub const fn resource(self, resource: &'static str) -> Operation {
        Operation { resource: Some(resource), ..self }
    }
    pub const fn responds(self, responses: &'static [Resp]) -> Operation {
        Operation { responses, ..self }
    }
    /// Served from the response cache, per caller.
    pub const fn cached(self) -> Operation {
        Operation { cache: Cache::Caller, ..self }
    }
    /// Served from the response cache to every caller admitted to the repository.
    pub const fn cached_per_repository(self) -> Operation {
        Operation { cache: Cache::Repository, ..self }
    }
    /// Writes content only, never access ([`Writes::Content`]).
    pub const fn writes_content(self) -> Operation {
        Operation { writes: Writes::Content, ..self }
    }
    /// The path parameter `name` may hold `/`.
    pub const fn slash_param(self, name: &'static str) -> Operation {
        Operation { slash: Some(SlashParam { name, not_ending_in: &[], read_alias: None }), ..self }
    }
    /// [`Operation::slash_param`], except when the path ends in one of `others` (resources below).
    pub const fn slash_param_except(self, name: &'static str, others: &'static [&'static str]) -> Operation {
        Operation { slash: Some(SlashParam { name, not_ending_in: others, read_alias: None }), ..self }
    }
    /// [`Operation::slash_param`], also answering reads of `alias` (same parameters).
    pub const fn slash_param_read_alias(self, name: &'static str, alias: &'static str) -> Operation {
        Operation { slash: Some(SlashParam { name, not_ending_in: &[], read_alias: Some(alias) }), ..self }
    }
    pub const fn closing_down(self, c: ClosingDown) -> Operation {
        Operation { traits: Traits { closing_down: Some(c), ..self.traits }, ..self }
    }
    pub const fn polled(self, p: Poll) -> Operation {
        Operation { traits: Traits { poll: Some(p), ..self.traits }, ..self }
    }
    pub const fn limits(self, limits: Limits) -> Operation {
        Operation { traits: Traits { limits, ..self.traits }, ..self }
    }
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
/// use) instead of on every request.
pub struct OpMeta {
    /// `X-Accepted-OAuth-Scopes`, `X-Accepted-Service-Permissions`, `Deprecation`, `Sunset`.
    pub headers: Vec<(HeaderName, HeaderValue)>,
    /// Index of the path segment naming the organization (`{org}`, or a repository's `{owner}`).
    pub org_segment: Option<usize>,
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
        OpMeta { headers, org_segment }
    }
}

impl Operation {
    /// This operation's [`OpMeta`].
    pub fn meta(&'static self) -> &'static OpMeta {
        self.derived.get_or_init(|| OpMeta::of(self))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_path_decides_what_an_undeclared_operation_names() {
        assert_eq!(On::of_path("/repos/{owner}/{repo}"), On::Repo);
        assert_eq!(On::of_path("/repos/{owner}/{repo}/commits/{ref}"), On::Repo);
        assert_eq!(On::of_path("/networks/{owner}/{repo}/events"), On::Repo);
        assert_eq!(On::of_path("/repos/{owner}/{repository}"), On::Caller);
        assert_eq!(On::of_path("/orgs/{org}/repos"), On::Caller);
        assert_eq!(On::of_path("/user/repos"), On::Caller);
    }

    static OP: Operation = Operation::post("x/create", "/repos/{owner}/{repo}/x", "Create an x")
        .docs("https://docs.service.example/x")
        .access(Access::write(&["repo"], "contents"))
        .writes_content()
        .closing_down(IMPORTS_SUNSET)
        .limits(Limits::IssuesTokens)
        .responds(&[Resp::empty(201, "Created.")]);

    #[test]
    fn what_is_not_declared_is_the_default() {
        assert_eq!((OP.method, OP.on, OP.cache, OP.writes), (Verb::Post, On::Repo, Cache::No, Writes::Content));
        assert!(OP.resource.is_none() && OP.slash.is_none() && OP.creates());
        assert_eq!(OP.traits.limits, Limits::IssuesTokens);
        assert!(OP.traits.closing_down.is_some() && OP.traits.poll.is_none());
        assert_eq!(OP.meta().headers.len(), 4);
    }
}
