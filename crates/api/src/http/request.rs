//! What a handler receives: its context ([`Ctx`], with what the declaration names already
//! loaded and authorized), the typed query ([`Query`]) and body ([`Body`]), through the
//! [`Handler`] trait every operation's handler implements; and JSON bodies whose rejections are
//! our own error bodies. The query and body types are named in the handler's signature alone:
//! registration derives from them ([`Handler::takes`]) what the contract checks and the OpenAPI
//! document publishes ([`InputRules`]).
use std::future::Future;
use std::marker::PhantomData;
use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::{FromRequest, Request};
use platform_core::pagination::Page;
use platform_core::ApiVersion;
use platform_store::domain::accounts::{Account, Enterprise};
use platform_store::domain::repos::Repo;
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::Deserialize;
use serde_json::Value;

use crate::error::{ApiError, ApiResult};
use crate::input::{BodyRules, QueryRules};
use crate::operation::{Operation, Writes};
use crate::principal::{Principal, Role};
use crate::reply::Reply;
use crate::state::Shared;

/// Set by the contract layer on every API request.
#[derive(Clone)]
pub struct ReqInfo {
    pub principal: Principal,
    pub ip: std::net::IpAddr,
    pub version: ApiVersion,
    pub request_id: String,
    /// The write generation observed when the request began.
    pub generation: crate::state::Generation,
}

/// The operation that answered; set on its response.
#[derive(Clone, Copy)]
pub struct OpRef(pub &'static Operation);

/// What the operation's path names, loaded and authorized by the contract (`operation::On`).
pub enum Target {
    Nothing,
    /// The application of `{client_id}`, by its own basic credentials (`AuthKind::AppBasic`).
    App(platform_store::domain::apps::App),
    Repo {
        repo: Repo,
        role: Role,
    },
    Org(OrgCaller),
    Enterprise(EnterpriseCaller),
}

/// The caller of an organization operation, authorized.
#[derive(Clone, Debug)]
pub struct OrgCaller {
    pub org: Account,
    /// The user acting (none for installation tokens).
    pub user: Option<Account>,
    /// The user's role in the organization (`owner`, `member`).
    pub role: Option<String>,
    /// An installation token of the organization.
    pub installation: bool,
    /// The OAuth application of an OAuth token (it sees only what it created).
    pub oauth_app: Option<i64>,
}

/// The caller of an enterprise operation: a member, authorized.
#[derive(Clone, Debug)]
pub struct EnterpriseCaller {
    pub ent: Enterprise,
    pub user: Account,
    pub owner: bool,
    pub fine_grained: bool,
}

pub struct Ctx {
    pub app: Shared,
    pub principal: Principal,
    /// The write generation observed when the request began (see [`Ctx::generation`]).
    observed: crate::state::Generation,
    pub ip: std::net::IpAddr,
    pub version: ApiVersion,
    pub op: &'static Operation,
    /// Request path below the API base, e.g. `/repos/o/r/commits/main/statuses`.
    pub path: String,
    /// Decoded query pairs in request order (handlers read their typed [`Query`]).
    pairs: Vec<(String, String)>,
    params: Vec<(String, String)>,
    target: Target,
    /// The request's `Accept` header (empty when none), for operations that answer other
    /// media types too (raw file contents).
    pub accept: String,
    /// The request came by an operation's read alias (`…/git/refs/{ref}` for `…/git/ref/{ref}`).
    pub read_alias: bool,
}

impl Ctx {
    /// The context of a routed request, before its target is loaded.
    pub(crate) fn new(
        app: Shared,
        info: ReqInfo,
        op: &'static Operation,
        path: String,
        pairs: Vec<(String, String)>,
        params: Vec<(String, String)>,
    ) -> Ctx {
        Ctx {
            app,
            principal: info.principal,
            observed: info.generation,
            ip: info.ip,
            version: info.version,
            op,
            path,
            pairs,
            params,
            target: Target::Nothing,
            accept: String::new(),
            read_alias: false,
        }
    }

    pub(crate) fn set_target(&mut self, target: Target) {
        self.target = target;
    }

    /// A path parameter of the route (missing only through a routing bug).
    pub fn param(&self, name: &str) -> &str {
        self.params.iter().find(|(k, _)| k == name).map_or("", |(_, v)| v.as_str())
    }

    /// The repository of the path, authorized (the declaration names one: `On::Repo`).
    pub fn repo(&self) -> &Repo {
        match &self.target {
            Target::Repo { repo, .. } => repo,
            _ => self.undeclared("a repository"),
        }
    }

    /// The caller's role on [`Ctx::repo`].
    pub fn role(&self) -> Role {
        match &self.target {
            Target::Repo { role, .. } => *role,
            _ => self.undeclared("a repository"),
        }
    }

    /// The organization of the path and its caller, authorized (`On::Org…`).
    pub fn org(&self) -> &OrgCaller {
        match &self.target {
            Target::Org(c) => c,
            _ => self.undeclared("an organization"),
        }
    }

    /// The enterprise of the path and its member calling, authorized (`On::EnterpriseMember`).
    pub fn enterprise(&self) -> &EnterpriseCaller {
        match &self.target {
            Target::Enterprise(c) => c,
            _ => self.undeclared("an enterprise"),
        }
    }

    /// The application of the path, authenticated by its own credentials (`AuthKind::AppBasic`).
    pub fn application(&self) -> &platform_store::domain::apps::App {
        match &self.target {
            Target::App(a) => a,
            _ => self.undeclared("an application"),
        }
    }

    /// A handler reading what its declaration does not name: a bug the first test of the
    /// operation shows (a panic answers 500).
    fn undeclared(&self, what: &str) -> ! {
        panic!("{}: the handler reads {what} its declaration does not name", self.op.id)
    }

    /// Runs `f` in one write transaction, as the declaration's [`Writes`] says (which caches it
    /// invalidates).
    pub async fn write<T, E, F>(&self, f: F) -> Result<T, E>
    where
        F: FnOnce(&mut dyn platform_store::Conn) -> Result<T, E> + Send + 'static,
        T: Send + 'static,
        E: From<platform_store::DbError> + Send + 'static,
    {
        match self.op.writes {
            Writes::Anything => self.app.store.write(f).await,
            // The one place content writes are chosen: by the declaration.
            #[allow(clippy::disallowed_methods)]
            Writes::Content => self.app.store.write_content(f).await,
        }
    }

    /// The generation caches are keyed by for this request now (`None`: no cache).
    pub fn generation(&self) -> Option<u64> {
        self.app.generation(self.observed)
    }

    /// [`Ctx::generation`] for caches of credentials and repository access.
    pub fn access_generation(&self) -> Option<u64> {
        self.app.access_generation(self.observed)
    }

    /// The decoded query pairs in request order, for links that repeat the request's query.
    pub fn query_pairs(&self) -> &[(String, String)] {
        &self.pairs
    }

    /// The request's path and query, as the response cache keys it.
    pub fn path_and_query(&self) -> String {
        format!("{}?{}", self.path, encode_query(&self.pairs))
    }

    /// `Link` header for a page-based list: absolute URLs that repeat the request's query.
    pub fn link(&self, page: Page, total: i64) -> Option<String> {
        page.link_header(total, |n| {
            let mut q: Vec<(String, String)> = self.pairs.iter().filter(|(k, _)| k != "page").cloned().collect();
            q.push(("page".into(), n.to_string()));
            format!("{}{}?{}", self.app.urls.api, self.path, encode_query(&q))
        })
    }
}

/// `page` and `per_page` of a page-based list; `#[serde(flatten)]` into a query type.
#[derive(Clone, Copy, Debug, Default, Deserialize, JsonSchema)]
pub struct Pagination {
    /// Results per page (max 100).
    per_page: Option<i64>,
    /// Page number of the results to fetch.
    page: Option<i64>,
}

impl Pagination {
    /// The page asked for, with the operation's default size and maximum.
    pub fn page(&self, default: i64, max: i64) -> Page {
        Page::of(self.page, self.per_page, default, max)
    }
}

/// The query as `Q`: checked by the contract against the type's schema (its fields, with doc
/// comments as descriptions, are the published parameters), then deserialized.
pub struct Query<Q>(pub Q);

impl<Q: DeserializeOwned> Query<Q> {
    fn read(query: serde_json::Map<String, Value>) -> ApiResult<Query<Q>> {
        serde_json::from_value(Value::Object(query)).map(Query).map_err(ApiError::invalid_request)
    }
}

/// The body as `B`: a JSON object checked against the type's schema (the one OpenAPI publishes)
/// for the platform's messages, then deserialized.
pub struct Body<B>(pub B);

impl<B: DeserializeOwned> Body<B> {
    fn read(body: Payload, rules: &InputRules) -> ApiResult<Body<B>> {
        match (body, &rules.body) {
            (Payload::Json(v), Some(rules)) => rules.read(v).map(Body),
            _ => Err(ApiError::internal()),
        }
    }
}

/// The body as a JSON object, published as `B`, for a handler that checks it in an order of its
/// own: [`BodyValue::read`] then checks it as [`Body`] does.
pub struct BodyValue<B> {
    pub value: Value,
    rules: Arc<InputRules>,
    of: PhantomData<fn() -> B>,
}

impl<B: DeserializeOwned> BodyValue<B> {
    /// The body checked against `B`'s schema, then deserialized.
    pub fn read(self) -> ApiResult<B> {
        self.rules.body.as_ref().ok_or_else(ApiError::internal)?.read(self.value)
    }

    /// The body deserialized without the schema's checks, for a handler whose own checks answer
    /// what they would.
    pub fn deserialize(self) -> ApiResult<B> {
        serde_json::from_value(self.value).map_err(ApiError::invalid_request)
    }
}

/// The body as sent (within the size limit), published as `B`, for an operation whose body needs
/// a reader of its own.
pub struct RawBody<B>(pub Bytes, pub PhantomData<fn() -> B>);

/// What a handler takes besides its context: the checked query (read into its `Query<Q>`) and
/// the request body, read by the contract, with the rules of the types the handler takes.
pub struct Input {
    pub query: serde_json::Map<String, Value>,
    pub body: Payload,
    pub rules: Arc<InputRules>,
}

/// A request body as the contract read it: as the handler takes it.
pub enum Payload {
    /// The handler takes no body: none is read.
    Nothing,
    /// A JSON object ([`JsonBody`]), for [`Body`] and [`BodyValue`].
    Json(Value),
    /// The bytes, for [`RawBody`].
    Bytes(Bytes),
}

impl Payload {
    /// Reads the body as a handler taking `takes` needs it: the size limit, the read timeout and
    /// (for JSON) the syntax are a request's first answers, before what it names is looked at.
    pub async fn read(
        app: &crate::state::AppState,
        takes: Option<BodyRead>,
        length: Option<usize>,
        body: axum::body::Body,
    ) -> ApiResult<Payload> {
        Ok(match takes {
            None => Payload::Nothing,
            Some(BodyRead::Json) => Payload::Json(JsonBody::parse(&read_limited(app, length, body).await?)?),
            Some(BodyRead::Raw) => Payload::Bytes(read_limited(app, length, body).await?),
        })
    }
}

/// A schema of a Rust type (`typed::schema_of::<T>`).
pub type SchemaOf = fn(&mut schemars::SchemaGenerator) -> schemars::Schema;

/// The query and body types a handler takes: registration derives from them what the contract
/// checks and the OpenAPI document publishes, so each type is named once, in the handler.
#[derive(Clone, Copy)]
pub struct Takes {
    pub query: Option<SchemaOf>,
    pub body: Option<(BodyRead, SchemaOf)>,
}

/// How the contract reads a body the handler takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BodyRead {
    /// A JSON object ([`Body`], [`BodyValue`]).
    Json,
    /// The bytes as sent ([`RawBody`]).
    Raw,
}

impl Takes {
    const NOTHING: Takes = Takes { query: None, body: None };
}

/// What the types a handler takes make of its operation's input, worked out when it is
/// registered: the query's published parameters and checks, the body's published schema and
/// checks (its validation errors naming the declared `resource`).
#[derive(Debug)]
pub struct InputRules {
    pub query: Option<QueryRules>,
    pub body: Option<BodyRules>,
}

impl InputRules {
    pub fn of(takes: Takes, resource: Option<&'static str>) -> InputRules {
        InputRules {
            query: takes.query.map(QueryRules::of),
            body: takes.body.zip(resource).map(|((_, schema), resource)| BodyRules::of(resource, schema)),
        }
    }
}

/// An operation's handler: an `async fn(Ctx[, Query<Q>][, Body<B>]) -> ApiResult<Reply>` (or
/// `(Ctx, BodyValue<B>)`, `(Ctx, RawBody<B>)`). The contract builds the context and checks the
/// query before calling it.
pub trait Handler<Args>: Clone + Send + Sync + 'static {
    fn takes() -> Takes;
    fn call(self, ctx: Ctx, input: Input) -> impl Future<Output = ApiResult<Reply>> + Send;
}

impl<F, Fut> Handler<()> for F
where
    F: FnOnce(Ctx) -> Fut + Clone + Send + Sync + 'static,
    Fut: Future<Output = ApiResult<Reply>> + Send,
{
    fn takes() -> Takes {
        Takes::NOTHING
    }
    fn call(self, ctx: Ctx, _: Input) -> impl Future<Output = ApiResult<Reply>> + Send {
        self(ctx)
    }
}

impl<F, Fut, Q> Handler<(Query<Q>,)> for F
where
    F: FnOnce(Ctx, Query<Q>) -> Fut + Clone + Send + Sync + 'static,
    Fut: Future<Output = ApiResult<Reply>> + Send,
    Q: DeserializeOwned + JsonSchema + Send + 'static,
{
    fn takes() -> Takes {
        Takes { query: Some(crate::typed::schema_of::<Q>), ..Takes::NOTHING }
    }
    async fn call(self, ctx: Ctx, input: Input) -> ApiResult<Reply> {
        let q = Query::read(input.query)?;
        self(ctx, q).await
    }
}

impl<F, Fut, B> Handler<(Body<B>,)> for F
where
    F: FnOnce(Ctx, Body<B>) -> Fut + Clone + Send + Sync + 'static,
    Fut: Future<Output = ApiResult<Reply>> + Send,
    B: DeserializeOwned + JsonSchema + Send + 'static,
{
    fn takes() -> Takes {
        Takes { body: Some((BodyRead::Json, crate::typed::schema_of::<B>)), ..Takes::NOTHING }
    }
    async fn call(self, ctx: Ctx, input: Input) -> ApiResult<Reply> {
        let b = Body::read(input.body, &input.rules)?;
        self(ctx, b).await
    }
}

impl<F, Fut, Q, B> Handler<(Query<Q>, Body<B>)> for F
where
    F: FnOnce(Ctx, Query<Q>, Body<B>) -> Fut + Clone + Send + Sync + 'static,
    Fut: Future<Output = ApiResult<Reply>> + Send,
    Q: DeserializeOwned + JsonSchema + Send + 'static,
    B: DeserializeOwned + JsonSchema + Send + 'static,
{
    fn takes() -> Takes {
        Takes { query: Some(crate::typed::schema_of::<Q>), body: Some((BodyRead::Json, crate::typed::schema_of::<B>)) }
    }
    async fn call(self, ctx: Ctx, input: Input) -> ApiResult<Reply> {
        let q = Query::read(input.query)?;
        let b = Body::read(input.body, &input.rules)?;
        self(ctx, q, b).await
    }
}

impl<F, Fut, B> Handler<(BodyValue<B>,)> for F
where
    F: FnOnce(Ctx, BodyValue<B>) -> Fut + Clone + Send + Sync + 'static,
    Fut: Future<Output = ApiResult<Reply>> + Send,
    B: JsonSchema + 'static,
{
    fn takes() -> Takes {
        Takes { body: Some((BodyRead::Json, crate::typed::schema_of::<B>)), ..Takes::NOTHING }
    }
    async fn call(self, ctx: Ctx, input: Input) -> ApiResult<Reply> {
        let Payload::Json(value) = input.body else { return Err(ApiError::internal()) };
        self(ctx, BodyValue { value, rules: input.rules, of: PhantomData }).await
    }
}

impl<F, Fut, B> Handler<(RawBody<B>,)> for F
where
    F: FnOnce(Ctx, RawBody<B>) -> Fut + Clone + Send + Sync + 'static,
    Fut: Future<Output = ApiResult<Reply>> + Send,
    B: JsonSchema + 'static,
{
    fn takes() -> Takes {
        Takes { body: Some((BodyRead::Raw, crate::typed::schema_of::<B>)), ..Takes::NOTHING }
    }
    async fn call(self, ctx: Ctx, input: Input) -> ApiResult<Reply> {
        let Payload::Bytes(b) = input.body else { return Err(ApiError::internal()) };
        self(ctx, RawBody(b, PhantomData)).await
    }
}

/// Decoded query pairs in request order.
pub fn parse_query(q: &str) -> Vec<(String, String)> {
    q.split('&')
        .filter(|p| !p.is_empty())
        .map(|p| {
            let (k, v) = p.split_once('=').unwrap_or((p, ""));
            (percent_decode(k), percent_decode(v))
        })
        .collect()
}

pub fn percent_decode(s: &str) -> String {
    decode(s, true)
}

/// Percent-decoding of a URL path, where `+` is itself.
pub fn percent_decode_path(s: &str) -> String {
    decode(s, false)
}

fn decode(s: &str, plus_is_space: bool) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'+' if plus_is_space => out.push(b' '),
            b'%' if i + 2 < b.len() => match std::str::from_utf8(&b[i + 1..i + 3]).ok().and_then(|h| u8::from_str_radix(h, 16).ok()) {
                Some(v) => {
                    out.push(v);
                    i += 2;
                }
                None => out.push(b'%'),
            },
            c => out.push(c),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Encodes one query component (RFC 3986 unreserved characters stay).
pub fn percent_encode(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

pub fn encode_query(pairs: &[(String, String)]) -> String {
    pairs.iter().map(|(k, v)| format!("{}={}", percent_encode(k), percent_encode(v))).collect::<Vec<_>>().join("&")
}

/// A request body of at most `limit` bytes (413 beyond), received within the body-read timeout
/// (408 beyond: a client sending slowly holds nothing for long); the one place bodies are read.
pub async fn read_body(app: &crate::state::AppState, body: axum::body::Body, limit: usize) -> Result<Bytes, ApiError> {
    let read = tokio::time::timeout(app.config.body_read_timeout, axum::body::to_bytes(body, limit));
    read.await.map_err(|_| ApiError::request_timeout())?.map_err(|e| {
        if std::error::Error::source(&e).is_some_and(|s| s.is::<http_body_util::LengthLimitError>()) {
            ApiError::payload_too_large()
        } else {
            ApiError::bad_request("Problems parsing JSON")
        }
    })
}

/// A JSON object body. Empty bodies read as `{}` (required fields then fail validation);
/// invalid JSON is `400 Problems parsing JSON`, other JSON `400 Body should be a JSON object`,
/// a body over the configured size `413`.
pub struct JsonBody(pub Value);

/// A body of at most the configured size (`length`: its Content-Length, refused before
/// anything is read when larger).
pub async fn read_limited(app: &crate::state::AppState, length: Option<usize>, body: axum::body::Body) -> ApiResult<Bytes> {
    let limit = app.config.limits.max_body_bytes;
    if length.is_some_and(|n| n > limit) {
        return Err(ApiError::payload_too_large());
    }
    read_body(app, body, limit).await
}

impl JsonBody {
    /// A JSON object body read within the limits.
    pub fn parse(bytes: &[u8]) -> ApiResult<Value> {
        if bytes.iter().all(u8::is_ascii_whitespace) {
            return Ok(Value::Object(Default::default()));
        }
        match serde_json::from_slice::<Value>(bytes) {
            Ok(v @ Value::Object(_)) => {
                crate::input::check_strings(&v)?;
                Ok(v)
            }
            Ok(_) => Err(ApiError::bad_request("Body should be a JSON object")),
            Err(_) => Err(ApiError::bad_request("Problems parsing JSON")),
        }
    }
}

/// A request's declared body length.
pub fn content_length(headers: &axum::http::HeaderMap) -> Option<usize> {
    headers.get(axum::http::header::CONTENT_LENGTH).and_then(|v| v.to_str().ok()).and_then(|v| v.parse::<usize>().ok())
}

impl FromRequest<Shared> for JsonBody {
    type Rejection = ApiError;

    async fn from_request(req: Request, app: &Shared) -> Result<Self, ApiError> {
        let bytes = read_limited(app, content_length(req.headers()), req.into_body()).await?;
        JsonBody::parse(&bytes).map(JsonBody)
    }
}

#[cfg(test)]
mod tests {
    /// Query strings come from anyone.
    #[test]
    fn query_parsing_never_panics() {
        for s in platform_core::fuzz::strings(&["a=b&c=%20d", "%zz%4", "x=%C3%A9&y", "=&&="], 20_000, 7) {
            let _ = parse_query(&s);
            let _ = percent_encode(&percent_decode(&s));
        }
    }

    use super::*;
    #[test]
    fn query_round_trip() {
        let q = parse_query("a=1&b=x%2Fy+z&a=2&flag");
        assert_eq!(q, [("a", "1"), ("b", "x/y z"), ("a", "2"), ("flag", "")].map(|(k, v)| (k.to_string(), v.to_string())));
        assert_eq!(percent_decode("%zz%4"), "%zz%4");
        assert_eq!(percent_encode("heads/main x"), "heads%2Fmain%20x");
    }
}
