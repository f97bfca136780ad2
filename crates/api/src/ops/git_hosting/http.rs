//! Smart HTTP at the web root (the public URL without its API path):
//! `GET /{owner}/{repo}(.git)/info/refs?service=git-upload-pack|git-receive-pack`,
//! `POST …/git-upload-pack`, `POST …/git-receive-pack`.
//!
//! Credentials as on the hosted platform: a token as the Basic password (any user name;
//! `x-access-token` is customary) or as a Bearer token. Reach is the API's (`authorize`):
//! fetching needs read access (public repositories: none), pushing write access (classic `repo`,
//! or `public_repo` on public repositories; `contents: write` for other tokens). An anonymous
//! caller who is refused gets `401` with a Basic challenge (so git asks its credential helper);
//! an authenticated one gets `404 Repository not found.` for what it may not see and `403` for
//! what it may not push to. Bad credentials are `401` and count toward the address's lockout.
//! Answers are streamed both ways; none goes through the API's contract (rate limits, ETags).
use axum::body::Body;
use axum::extract::{Path, Query, Request, State};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::Router;
use base64::Engine;
use platform_core::TokenKind;
use platform_git::transport::{self, Options, Service};
use platform_store::domain::repos::{self, Lookup, Repo};
use platform_store::DbError;

use super::push::PushGate;
use super::repository;
use crate::authorize::{check_repo, role_of};
use crate::operation::Access;
use crate::principal::{Principal, Role};
use crate::state::Shared;

/// Fetching: read access (anyone, on public repositories).
const FETCH: Access = Access::read(&["repo"], "contents");
/// Pushing to a public repository: `repo` or `public_repo`; to a private one, `repo`.
const PUSH_PUBLIC: Access = Access::write(&["repo", "public_repo"], "contents");
const PUSH_PRIVATE: Access = Access::write(&["repo"], "contents");

/// The routes, at the web root.
pub fn routes() -> Router<Shared> {
    Router::new()
        .route("/{owner}/{repo}/info/refs", get(info_refs))
        .route("/{owner}/{repo}/git-upload-pack", post(upload_pack))
        .route("/{owner}/{repo}/git-receive-pack", post(receive_pack))
}

#[derive(serde::Deserialize)]
struct InfoQuery {
    service: Option<String>,
}

fn text(status: StatusCode, body: String) -> Response {
    (status, [(header::CONTENT_TYPE, "text/plain; charset=utf-8")], body).into_response()
}

/// The answer that makes git ask for credentials.
fn challenge() -> Response {
    let mut r = text(StatusCode::UNAUTHORIZED, "Authentication required.\n".into());
    r.headers_mut().insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Basic realm=\"platformd\""));
    r
}

fn not_found() -> Response {
    text(StatusCode::NOT_FOUND, "Repository not found.\n".into())
}

/// The token a git client sends: a Basic password (the user name when the password is empty or
/// `x-oauth-basic`), or a Bearer token. `Err` when the header cannot be read.
fn token_text(headers: &HeaderMap) -> Result<Option<String>, ()> {
    let Some(v) = headers.get(header::AUTHORIZATION) else { return Ok(None) };
    let v = v.to_str().map_err(|_| ())?.trim();
    let (scheme, rest) = v.split_once(' ').unwrap_or((v, ""));
    let rest = rest.trim();
    match scheme.to_ascii_lowercase().as_str() {
        "basic" => {
            let decoded = base64::engine::general_purpose::STANDARD.decode(rest).map_err(|_| ())?;
            let decoded = String::from_utf8(decoded).map_err(|_| ())?;
            let (user, pass) = decoded.split_once(':').unwrap_or((&decoded, ""));
            let t = if pass.is_empty() || pass == "x-oauth-basic" { user } else { pass };
            Ok(Some(t.to_string()))
        }
        "bearer" | "token" if !rest.is_empty() => Ok(Some(rest.to_string())),
        _ => Err(()),
    }
}

/// A request's head, and the address it came from.
struct Head {
    parts: axum::http::request::Parts,
    ip: std::net::IpAddr,
}

impl Head {
    fn of(app: &Shared, req: Request) -> (Head, Body) {
        let ip = crate::contract::client_ip(&req, &app.config.trusted_proxies);
        let (parts, body) = req.into_parts();
        (Head { parts, ip }, body)
    }
}

/// Who is calling: anonymous, a token, or an answer refusing the request (bad credentials, a
/// locked-out address).
async fn caller(app: &Shared, head: &Head) -> Result<Principal, Response> {
    let ip = head.ip;
    let text = match token_text(&head.parts.headers) {
        Ok(None) => return Ok(Principal::Anonymous),
        Ok(Some(t)) => Some(t),
        Err(()) => None,
    };
    if app.secondary.locked_out(ip, app.clock.now()).await.is_some() {
        return Err(text_response(StatusCode::FORBIDDEN, crate::secondary::LOCKOUT_MESSAGE));
    }
    let principal = match text.filter(|t| TokenKind::from_token(t).is_some()) {
        Some(t) => {
            let observed = app.observe().await;
            crate::authenticate::token(app, &t, observed).await.ok()
        }
        None => None,
    };
    match principal {
        Some(p) => Ok(p),
        None => {
            app.secondary.failed_login(ip, app.clock.now()).await;
            let mut r = text_response(
                StatusCode::UNAUTHORIZED,
                "Invalid username or token. Password authentication is not supported for Git operations.",
            );
            r.headers_mut().insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Basic realm=\"platformd\""));
            Err(r)
        }
    }
}

fn text_response(status: StatusCode, message: &str) -> Response {
    text(status, format!("{message}\n"))
}

/// The repository of the path, if the caller may use `service` on it.
async fn admit(app: &Shared, head: &Head, owner: &str, name: &str, service: Service) -> Result<(Repo, Principal), Response> {
    let principal = caller(app, head).await?;
    let name = name.strip_suffix(".git").unwrap_or(name);
    let (owner_l, name_l, p) = (owner.to_lowercase(), name.to_lowercase(), principal.clone());
    let (found, role) = app
        .store
        .read(move |c| -> Result<_, DbError> {
            let found = repos::lookup(c, &owner_l, &name_l)?;
            let role = match &found {
                Lookup::Found(r) | Lookup::Moved(r) => role_of(c, &p, r)?,
                Lookup::Missing => Role::None,
            };
            Ok((found, role))
        })
        .await
        .map_err(|e| {
            tracing::error!(error = %e.message, "git request: database");
            text_response(StatusCode::SERVICE_UNAVAILABLE, "Service unavailable.")
        })?;
    let anonymous = matches!(principal, Principal::Anonymous);
    let repo = match found {
        Lookup::Missing => return Err(if anonymous { challenge() } else { not_found() }),
        Lookup::Moved(r) => {
            if r.private && role == Role::None {
                return Err(if anonymous { challenge() } else { not_found() });
            }
            // The old name answers with the new one (git follows the first redirect).
            let path = head.parts.uri.path();
            let tail = path.splitn(4, '/').nth(3).unwrap_or("");
            let query = head.parts.uri.query().map(|q| format!("?{q}")).unwrap_or_default();
            let location = format!("{}/{}/{}.git/{tail}{query}", app.urls.web, r.owner.login, r.name);
            return Err((StatusCode::MOVED_PERMANENTLY, [(header::LOCATION, location)]).into_response());
        }
        Lookup::Found(r) => r,
    };
    let access = match (service, repo.private) {
        (Service::UploadPack, _) => &FETCH,
        (Service::ReceivePack, false) => &PUSH_PUBLIC,
        (Service::ReceivePack, true) => &PUSH_PRIVATE,
    };
    match check_repo(&principal, access, &repo, role) {
        Ok(()) => Ok((repo, principal)),
        Err(_) if anonymous => Err(challenge()),
        Err(e) if e.status == StatusCode::NOT_FOUND => Err(not_found()),
        Err(_) => {
            Err(text_response(StatusCode::FORBIDDEN, &format!("Permission to {}.git denied to {}.", repo.full_name(), who(&principal))))
        }
    }
}

/// How a refusal names the caller.
fn who(p: &Principal) -> String {
    match p {
        Principal::Token(t) => match (&t.user, &t.app) {
            (Some(u), _) => u.login.clone(),
            (None, Some(a)) => format!("{}[bot]", a.slug),
            (None, None) => "this token".into(),
        },
        _ => "anonymous".into(),
    }
}

/// How the request arrived: gzip, and the protocol it asks for; a `Git-Protocol` git could
/// misread is refused.
fn options(headers: &HeaderMap) -> Result<Options, Response> {
    let gzip = headers.get(header::CONTENT_ENCODING).and_then(|v| v.to_str().ok()).is_some_and(|v| v.eq_ignore_ascii_case("gzip"));
    let protocol = match headers.get("git-protocol").map(|v| v.to_str().unwrap_or("\0")) {
        None => None,
        Some(p) if transport::plain_protocol(p) => Some(p.to_string()),
        Some(_) => return Err(text_response(StatusCode::BAD_REQUEST, "Bad Git-Protocol header.")),
    };
    Ok(Options { gzip, protocol })
}

fn streamed(content_type: &'static str, body: transport::Body) -> Response {
    let mut r = Response::new(Body::from_stream(body));
    let h = r.headers_mut();
    h.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache, max-age=0, must-revalidate"));
    h.insert(header::PRAGMA, HeaderValue::from_static("no-cache"));
    h.insert(header::EXPIRES, HeaderValue::from_static("Fri, 01 Jan 1980 00:00:00 GMT"));
    r
}

fn unavailable(e: crate::error::ApiError) -> Response {
    tracing::error!(error = %e.message, "git request failed");
    text_response(StatusCode::INTERNAL_SERVER_ERROR, "Internal error.")
}

async fn info_refs(
    State(app): State<Shared>,
    Path((owner, name)): Path<(String, String)>,
    Query(q): Query<InfoQuery>,
    req: Request,
) -> Response {
    let Some(service) = q.service.as_deref().and_then(Service::parse) else {
        return text_response(StatusCode::FORBIDDEN, "Only the smart HTTP protocol is served: please upgrade your git client.");
    };
    let (head, _) = Head::of(&app, req);
    let (repo, _) = match admit(&app, &head, &owner, &name, service).await {
        Ok(x) => x,
        Err(r) => return r,
    };
    let opts = match options(&head.parts.headers) {
        Ok(o) => o,
        Err(r) => return r,
    };
    let git = match repository(&app, &repo).await {
        Ok(g) => g,
        Err(e) => return unavailable(e),
    };
    streamed(service.advertisement_type(), transport::advertise(&git, service, &opts))
}

async fn upload_pack(State(app): State<Shared>, Path((owner, name)): Path<(String, String)>, req: Request) -> Response {
    serve(app, owner, name, Service::UploadPack, req).await
}

async fn receive_pack(State(app): State<Shared>, Path((owner, name)): Path<(String, String)>, req: Request) -> Response {
    serve(app, owner, name, Service::ReceivePack, req).await
}

async fn serve(app: Shared, owner: String, name: String, service: Service, req: Request) -> Response {
    let (head, body) = Head::of(&app, req);
    let (repo, principal) = match admit(&app, &head, &owner, &name, service).await {
        Ok(x) => x,
        Err(r) => return r,
    };
    let headers = &head.parts.headers;
    let opts = match options(headers) {
        Ok(o) => o,
        Err(r) => return r,
    };
    let content_type = headers.get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok()).unwrap_or("");
    if content_type != service.request_type() {
        return text_response(StatusCode::UNSUPPORTED_MEDIA_TYPE, &format!("Expected {}.", service.request_type()));
    }
    let announced = headers.get(header::CONTENT_LENGTH).and_then(|v| v.to_str().ok()).and_then(|v| v.parse::<u64>().ok());
    if service == Service::ReceivePack && !opts.gzip && announced.is_some_and(|n| n > app.config.git.max_push_bytes) {
        return text_response(StatusCode::PAYLOAD_TOO_LARGE, "The push is larger than this server accepts.");
    }
    let git = match repository(&app, &repo).await {
        Ok(g) => g,
        Err(e) => return unavailable(e),
    };
    let body = body.into_data_stream();
    let out = match service {
        Service::UploadPack => transport::upload_pack(&git, body, &opts),
        Service::ReceivePack => match transport::receive_pack(&git, body, &opts, PushGate::new(app.clone(), repo, principal)) {
            Ok(b) => b,
            Err(e) => return unavailable(super::git_error(e)),
        },
    };
    streamed(service.result_type(), out)
}
