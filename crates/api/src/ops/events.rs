//! Event feeds (document 3): polled timelines of platform activity.
//!
//! Each timeline is read straight from the activity outbox (`platform_store::domain::feeds`):
//! the newest 300 feed events of one index range, then only those of the last 30 days by the
//! platform clock, newest first, paginated. Pages are cached with their ETag while nothing was
//! written and no event of the timeline has left the window, so a conditional poll that answers
//! 304 neither queries the database nor hashes a body.

use platform_core::pagination::Page;
use platform_core::TokenKind;
use platform_store::domain::accounts::{self, Account};
use platform_store::domain::feeds::{self, FeedEvent, Scope};
use platform_store::DbError;
use schemars::JsonSchema;
use serde::Serialize;
use serde_json::Value;

use crate::authorize::{has_permission, not_accessible};
use crate::error::{ApiError, ApiResult};
use crate::operation::{Access, Level, Operation, Poll, Resp};
use crate::ops::git_hosting::effects::{DeleteActivity, PushActivity};
use crate::ops::hooks::activity::{CreateActivity, PublicActivity, Record, WatchActivity};
use crate::principal::Principal;
use crate::registry::Api;
use crate::reply::Reply;
use crate::request::{Ctx, Pagination, Query};
use crate::shapes::Urls;
use crate::typed::{Timestamp, Uri};

/// Events older than this leave every timeline.
pub const WINDOW_SECONDS: i64 = 30 * 24 * 3600;

const HEADERS: &[&str] = &["Link"];

/// Public data, readable without credentials; no scope or permission.
const PUBLIC: Access = Access::token(&[], None, Level::Read).public();
/// A repository's events: Metadata read; private repositories need a private-repository scope.
const REPO: Access = Access::read(&["repo"], "metadata");
/// A user's events: private ones need the optional Events (user) permission of fine-grained tokens.
const USER: Access = Access::token(&[], Some(("events", Level::Read)), Level::Read).public();
/// The user's organization dashboard: authenticated as that user, Events (organization) read.
const ORG_FOR_USER: Access = Access::token(&[], Some(("events", Level::Read)), Level::Read);

pub static LIST_PUBLIC: Operation = Operation::get("events/list-public", "/events", "List public events")
    .docs("https://docs.service.example/rest/activity/events#list-public-events")
    .access(PUBLIC)
    .cached()
    .polled(Poll::Feed)
    .responds(&[
        Resp::typed::<Vec<Event>>(200, "Public events of public repositories, newest first (`per_page` default 15).").with_headers(HEADERS)
    ]);

pub static LIST_FOR_NETWORK: Operation =
    Operation::get("events/list-for-network", "/networks/{owner}/{repo}/events", "List public events for a network of repositories")
        .docs("https://docs.service.example/rest/activity/events#list-public-events-for-a-network-of-repositories")
        .access(REPO)
        .cached()
        .polled(Poll::Feed)
        .responds(&[Resp::typed::<Vec<Event>>(200, "Events of the repository's network, newest first.").with_headers(HEADERS)]);

pub static LIST_FOR_ORG: Operation = Operation::get("events/list-for-org", "/orgs/{org}/events", "List public organization events")
    .docs("https://docs.service.example/rest/activity/events#list-public-organization-events")
    .access(PUBLIC)
    .cached()
    .polled(Poll::Feed)
    .responds(&[Resp::typed::<Vec<Event>>(200, "Public events of the organization's repositories, newest first; elements carry `org`.")
        .with_headers(HEADERS)]);

pub static LIST_FOR_REPO: Operation = Operation::get("events/list-for-repo", "/repos/{owner}/{repo}/events", "List repository events")
    .docs("https://docs.service.example/rest/activity/events#list-repository-events")
    .access(REPO)
    .cached()
    .polled(Poll::Feed)
    .responds(&[Resp::typed::<Vec<Event>>(200, "Events of the repository, newest first.").with_headers(HEADERS)]);

pub static LIST_FOR_USER: Operation =
    Operation::get("events/list-for-user", "/users/{username}/events", "List events for the authenticated user")
        .docs("https://docs.service.example/rest/activity/events#list-events-for-the-authenticated-user")
        .access(USER)
        .cached()
        .polled(Poll::Feed)
        .responds(&[Resp::typed::<Vec<Event>>(200, "Events the user performed, newest first; private ones only for the user themself.")
            .with_headers(HEADERS)]);

pub static LIST_PUBLIC_FOR_USER: Operation =
    Operation::get("events/list-public-for-user", "/users/{username}/events/public", "List public events for a user")
        .docs("https://docs.service.example/rest/activity/events#list-public-events-for-a-user")
        .access(PUBLIC)
        .cached()
        .polled(Poll::Feed)
        .responds(&[Resp::typed::<Vec<Event>>(200, "Public events the user performed, newest first.").with_headers(HEADERS)]);

pub static LIST_ORG_FOR_USER: Operation = Operation::get("events/list-org-for-user", "/users/{username}/events/orgs/{org}", "List organization events for the authenticated user")
    .docs("https://docs.service.example/rest/activity/events#list-organization-events-for-the-authenticated-user")
    .access(ORG_FOR_USER)
    .cached()
    .polled(Poll::Feed)
    .responds(&[Resp::typed::<Vec<Event>>(200, "The user's organization dashboard: events of the organization's repositories (private ones for members), newest first; elements carry `org`.")
    .with_headers(HEADERS)]);

pub fn routes(api: Api) -> Api {
    api.op(&LIST_PUBLIC, list_public)
        .op(&LIST_FOR_NETWORK, list_for_repo)
        .op(&LIST_FOR_ORG, list_for_org)
        .op(&LIST_FOR_REPO, list_for_repo)
        .op(&LIST_FOR_USER, list_for_user)
        .op(&LIST_PUBLIC_FOR_USER, list_public_for_user)
        .op(&LIST_ORG_FOR_USER, list_org_for_user)
}

async fn list_public(ctx: Ctx, Query(q): Query<Pagination>) -> ApiResult<Reply> {
    feed(&ctx, Scope::Public, q.page(15, 100)).await
}

/// The repository and network feeds (no forks exist, so a network is its repository): the
/// repository's events to whoever may see the repository.
async fn list_for_repo(ctx: Ctx, Query(q): Query<Pagination>) -> ApiResult<Reply> {
    feed(&ctx, Scope::Repo(ctx.repo().id), q.page(30, 100)).await
}

async fn list_for_org(ctx: Ctx, Query(q): Query<Pagination>) -> ApiResult<Reply> {
    let org = account(&ctx, ctx.param("org"), true).await?;
    feed(&ctx, Scope::Org { id: org.id, public_only: true }, q.page(30, 100)).await
}

async fn list_for_user(ctx: Ctx, Query(q): Query<Pagination>) -> ApiResult<Reply> {
    let user = account(&ctx, ctx.param("username"), false).await?;
    let own = sees_own_private_events(&ctx.principal, &user);
    feed(&ctx, Scope::Actor { id: user.id, public_only: !own }, q.page(30, 100)).await
}

async fn list_public_for_user(ctx: Ctx, Query(q): Query<Pagination>) -> ApiResult<Reply> {
    let user = account(&ctx, ctx.param("username"), false).await?;
    feed(&ctx, Scope::Actor { id: user.id, public_only: true }, q.page(30, 100)).await
}

async fn list_org_for_user(ctx: Ctx, Query(q): Query<Pagination>) -> ApiResult<Reply> {
    let t = match &ctx.principal {
        Principal::Anonymous => return Err(ApiError::requires_authentication()),
        Principal::App(_) => return Err(ApiError::forbidden("Resource not accessible by integration")),
        Principal::Token(t) => t.clone(),
    };
    if t.token.kind.is_integration() {
        return Err(not_accessible(t.token.kind));
    }
    let user = account(&ctx, ctx.param("username"), false).await?;
    let org = account(&ctx, ctx.param("org"), true).await?;
    // Only the user themself sees their dashboard; anyone else finds nothing.
    if t.user.as_ref().is_none_or(|u| u.id != user.id) {
        return Err(ApiError::not_found());
    }
    if t.token.kind == TokenKind::FineGrained && !has_permission(&t, ("events", Level::Read)) {
        return Err(not_accessible(t.token.kind));
    }
    let (org_id, user_id) = (org.id, user.id);
    let member = ctx.app.store.read(move |c| accounts::org_role(c, org_id, user_id)).await?.is_some();
    feed(&ctx, Scope::Org { id: org.id, public_only: !member }, q.page(30, 100)).await
}

/// Private events of a user are visible to the user themself: classic and OAuth tokens always,
/// fine-grained and app user tokens with the Events permission.
fn sees_own_private_events(p: &Principal, user: &Account) -> bool {
    let Principal::Token(t) = p else { return false };
    if t.user.as_ref().is_none_or(|u| u.id != user.id) {
        return false;
    }
    match t.token.kind {
        TokenKind::Classic | TokenKind::Oauth => true,
        TokenKind::FineGrained | TokenKind::UserToServer => has_permission(t, ("events", Level::Read)),
        TokenKind::Installation | TokenKind::Workflow => false,
    }
}

/// The account of a path parameter (case-insensitive); an organization when `org`, else any
/// account. Unknown: 404.
async fn account(ctx: &Ctx, login: &str, org: bool) -> ApiResult<Account> {
    let login = login.to_string();
    let found = ctx.app.store.read(move |c| accounts::by_login(c, &login)).await?;
    found.filter(|a| !org || a.is_org()).ok_or_else(ApiError::not_found)
}

/// Serves a page of a timeline: only events of repositories the credential reaches are shown.
/// Pages are cached per caller (`Cache::Caller`) until the next write, or until the oldest
/// event of the timeline leaves the window.
async fn feed(ctx: &Ctx, scope: Scope, page: Page) -> ApiResult<Reply> {
    let now = ctx.app.clock.now();
    let reach = crate::authorize::reach(&ctx.principal, &ctx.op.access);
    let rows = ctx.app.store.read(move |c| -> Result<_, DbError> { feeds::timeline(c, scope) }).await?;
    let cutoff = now - WINDOW_SECONDS;
    let within =
        |e: &FeedEvent| e.repo.as_ref().is_some_and(|(id, _)| reach.allows(*id, e.repo_owner_id.unwrap_or(-1), !e.activity.public));
    let rows: Vec<FeedEvent> = rows.into_iter().filter(|e| e.activity.created_at >= cutoff && within(e)).collect();
    // Exact until the oldest event of the timeline leaves the window.
    let until = rows.iter().map(|e| e.activity.created_at + WINDOW_SECONDS).min().unwrap_or(i64::MAX);
    let total = rows.len() as i64;
    let start = page.offset().min(total) as usize;
    let end = page.offset().saturating_add(page.per_page).min(total) as usize;
    let body: Vec<Event> = rows[start..end].iter().map(|e| event(&ctx.app.urls, e)).collect();
    Ok(Reply::ok(body).opt_header("link", ctx.link(page, total)).fresh_until(until))
}

/// Event (api-facts §4.10): an activity event of the feeds.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct Event {
    pub id: String,
    #[serde(rename = "type")]
    pub kind: String,
    pub actor: EventAccount,
    pub repo: EventRepo,
    pub payload: FeedPayload,
    pub public: bool,
    pub created_at: Timestamp,
    /// Present whenever the repository belongs to an organization.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub org: Option<EventAccount>,
}

/// `actor` and `org` of an event; `display_login` only on the actor.
#[derive(Clone, Debug, Serialize, JsonSchema)]
#[schemars(inline)]
pub struct EventAccount {
    pub id: i64,
    pub login: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub display_login: Option<String>,
    pub gravatar_id: String,
    pub url: Uri,
    pub avatar_url: Uri,
}

#[derive(Clone, Debug, Serialize, JsonSchema)]
#[schemars(inline)]
pub struct EventRepo {
    pub id: i64,
    pub name: String,
    pub url: Uri,
}

/// An event's payload: the Events API's form of the record, by `type` (WatchEvent, PushEvent,
/// CreateEvent, DeleteEvent, PublicEvent).
#[derive(Clone, Debug, Serialize, JsonSchema)]
#[serde(untagged)]
#[schemars(inline)]
pub enum FeedPayload {
    Watch(WatchActivity),
    // Push and Delete without what only webhooks show (`of`).
    Push(Box<PushActivity>),
    Create(CreateActivity),
    Delete(DeleteActivity),
    Public(PublicActivity),
    /// A record written before its kind had its type, as stored.
    #[schemars(skip)]
    Stored(Value),
}

impl FeedPayload {
    /// The payload a feed shows for a stored record.
    pub fn of(kind: &str, stored: &Value) -> FeedPayload {
        match Record::read(kind, stored) {
            Some(Record::Watch(w)) => FeedPayload::Watch(w),
            Some(Record::Push(p)) => FeedPayload::Push(Box::new(PushActivity { pushed: None, ..p })),
            Some(Record::Create(k)) => FeedPayload::Create(k),
            Some(Record::Delete(d)) => FeedPayload::Delete(DeleteActivity { before: None, ..d }),
            Some(Record::Public(p)) => FeedPayload::Public(p),
            _ => FeedPayload::Stored(stored.clone()),
        }
    }
}

fn account_ref(u: &Urls, a: &Account, display: bool) -> EventAccount {
    let path = if a.is_org() && !display { "orgs" } else { "users" };
    EventAccount {
        id: a.id,
        login: a.login.clone(),
        display_login: display.then(|| a.login.clone()),
        gravatar_id: String::new(),
        url: Uri(format!("{}/{path}/{}", u.api, a.login)),
        avatar_url: Uri(format!("{}/avatars/u/{}?v=4", u.web, a.id)),
    }
}

/// An event without a recorded actor (a push to an organization's repository with no pusher)
/// shows the organization as its actor.
pub fn event(u: &Urls, e: &FeedEvent) -> Event {
    let a = &e.activity;
    // An object in the spec: an event whose actor is gone shows the ghost account.
    let actor = account_ref(u, e.actor.as_ref().or(e.org.as_ref()).unwrap_or_else(|| crate::shapes::ghost()), true);
    let (repo_id, name) = e.repo.clone().unwrap_or((0, String::new()));
    Event {
        id: a.id.to_string(),
        kind: a.kind.clone(),
        actor,
        repo: EventRepo { id: repo_id, url: Uri(format!("{}/repos/{name}", u.api)), name },
        payload: FeedPayload::of(&a.kind, &a.payload),
        public: a.public,
        created_at: Timestamp(a.created_at),
        org: e.org.as_ref().map(|org| account_ref(u, org, false)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // The store selects feed records by kind (`feeds::FEED_KINDS`, also in its partial indexes):
    // exactly the records a feed payload shows.
    #[test]
    fn the_feed_kinds_are_the_records_feeds_show() {
        let create = CreateActivity {
            name: None,
            ref_type: "repository".into(),
            full_ref: None,
            master_branch: "main".into(),
            description: None,
            pusher_type: "user".into(),
        };
        let push = PushActivity {
            repository_id: 1,
            push_id: 1,
            name: "refs/heads/main".into(),
            head: "b".into(),
            before: "a".into(),
            pushed: None,
        };
        let delete = DeleteActivity { name: "x".into(), ref_type: "tag".into(), pusher_type: "user".into(), before: None };
        let shown = [
            Record::Watch(WatchActivity::started()),
            Record::Push(push),
            Record::Create(create),
            Record::Public(PublicActivity {}),
            Record::Delete(delete),
        ];
        for r in &shown {
            assert!(!matches!(FeedPayload::of(r.kind(), &r.stored()), FeedPayload::Stored(_)), "{}", r.kind());
        }
        let mut kinds: Vec<&str> = shown.iter().map(Record::kind).collect();
        let mut want = feeds::FEED_KINDS.to_vec();
        kinds.sort();
        want.sort();
        assert_eq!(kinds, want);
    }
}
