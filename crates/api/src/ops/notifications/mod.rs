//! Notifications (document 3): the caller's threads, marking them read or done, and thread
//! subscriptions. Classic (and OAuth) tokens with `notifications` or `repo` only; every other
//! token kind is 403. A thread of another user, or on a repository the caller can no longer
//! see, is 404.
pub mod produce;

use axum::http::StatusCode;
use platform_core::pagination::Page;
use platform_core::time::{http_date, parse_ts};
use platform_core::TokenKind;
use platform_store::domain::accounts::Account;
use platform_store::domain::notifications::{self as notif, Filter, Thread as ThreadRow};
use platform_store::domain::repos;
use platform_store::DbError;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::authorize::{has_scope, not_accessible};
use crate::error::{ApiError, ApiResult};
use crate::operation::{Access, Level, Operation, Poll, Resp};
use crate::principal::Principal;
use crate::registry::Api;
use crate::reply::Reply;
use crate::request::{Body, Ctx, JsonBody, Query};
use crate::shapes::{self, MinimalRepository, Urls};
use crate::typed::{Timestamp, Uri};

const SCOPES: &[&str] = &["notifications", "repo"];
const ACCESS: Access = Access::token(SCOPES, None, Level::Read);
pub const MARK_READ_ACCEPTED: &str =
    "Unread notifications couldn't be marked in a single request. Notifications are being marked as read in the background.";

#[derive(Deserialize, JsonSchema)]
struct ListQuery {
    /// Include read notifications (default false).
    all: Option<bool>,
    /// Only threads the caller takes part in: every reason but `subscribed` (default false).
    participating: Option<bool>,
    /// Only threads updated at or after this ISO 8601 time.
    #[schemars(extend("format" = "date-time"))]
    since: Option<String>,
    /// Only threads updated before this ISO 8601 time.
    #[schemars(extend("format" = "date-time"))]
    before: Option<String>,
    /// Results per page (default 50, max 50).
    per_page: Option<i64>,
    /// Page number of the results to fetch.
    page: Option<i64>,
}

pub static LIST: Operation = Operation::get("notifications/list", "/notifications", "List notifications for the authenticated user")
    .docs("https://docs.service.example/rest/activity/notifications#list-notifications-for-the-authenticated-user")
    .access(ACCESS)
    .polled(Poll::Notifications)
    .responds(&[Resp::typed::<Vec<Thread>>(200, "The caller's threads, newest update first.").with_headers(&["Link", "Last-Modified"])]);

pub static MARK_READ: Operation = Operation::put("notifications/mark-read", "/notifications", "Mark notifications as read")
    .docs("https://docs.service.example/rest/activity/notifications#mark-notifications-as-read")
    .access(ACCESS)
    .resource("Notification")
    .responds(&[
        Resp::typed::<NotificationsMarkAccepted>(
            202,
            "Too many threads to change in one request: they are being marked in the background.",
        ),
        Resp::empty(205, "The threads updated at or before `last_read_at` were marked read."),
    ]);

pub static GET_THREAD: Operation = Operation::get("notifications/get-thread", "/notifications/threads/{thread_id}", "Get a thread")
    .docs("https://docs.service.example/rest/activity/notifications#get-a-thread")
    .access(ACCESS)
    .polled(Poll::Notifications)
    .responds(&[Resp::typed::<Thread>(200, "The thread.").with_headers(&["Last-Modified"])]);

pub static MARK_THREAD_READ: Operation =
    Operation::patch("notifications/mark-thread-read", "/notifications/threads/{thread_id}", "Mark a thread as read")
        .docs("https://docs.service.example/rest/activity/notifications#mark-a-thread-as-read")
        .access(ACCESS)
        .responds(&[Resp::empty(205, "The thread was marked read.")]);

pub static MARK_THREAD_DONE: Operation =
    Operation::delete("notifications/mark-thread-done", "/notifications/threads/{thread_id}", "Mark a thread as done")
        .docs("https://docs.service.example/rest/activity/notifications#mark-a-thread-as-done")
        .access(ACCESS)
        .responds(&[Resp::empty(204, "The thread is done: it leaves the lists until new activity reopens it.")]);

pub static GET_SUBSCRIPTION: Operation = Operation::get(
    "notifications/get-thread-subscription",
    "/notifications/threads/{thread_id}/subscription",
    "Get a thread subscription for the authenticated user",
)
.docs("https://docs.service.example/rest/activity/notifications#get-a-thread-subscription-for-the-authenticated-user")
.access(ACCESS)
.responds(&[Resp::typed::<ThreadSubscription>(200, "The caller's subscription to the thread.")]);

pub static SET_SUBSCRIPTION: Operation =
    Operation::put("notifications/set-thread-subscription", "/notifications/threads/{thread_id}/subscription", "Set a thread subscription")
        .docs("https://docs.service.example/rest/activity/notifications#set-a-thread-subscription")
        .access(ACCESS)
        .resource("ThreadSubscription")
        .responds(&[Resp::typed::<ThreadSubscription>(200, "The subscription: `ignored` true mutes the thread.")]);

pub static DELETE_SUBSCRIPTION: Operation = Operation::delete(
    "notifications/delete-thread-subscription",
    "/notifications/threads/{thread_id}/subscription",
    "Delete a thread subscription",
)
.docs("https://docs.service.example/rest/activity/notifications#delete-a-thread-subscription")
.access(ACCESS)
.responds(&[Resp::empty(204, "Unsubscribed: the thread is muted until the caller is mentioned or comments.")]);

#[derive(Deserialize, JsonSchema)]
struct MarkRead {
    #[schemars(extend("format" = "date-time"))]
    last_read_at: Option<String>,
    read: Option<bool>,
}

#[derive(Deserialize, JsonSchema)]
struct SetSubscription {
    ignored: Option<bool>,
}

pub fn routes(api: Api) -> Api {
    api.op(&LIST, list)
        .op(&MARK_READ, mark_read)
        .op(&GET_THREAD, get_thread)
        .op(&MARK_THREAD_READ, mark_thread_read)
        .op(&MARK_THREAD_DONE, mark_thread_done)
        .op(&GET_SUBSCRIPTION, get_subscription)
        .op(&SET_SUBSCRIPTION, set_subscription)
        .op(&DELETE_SUBSCRIPTION, delete_subscription)
}

/// The caller, when the credentials may use notifications: a classic or OAuth token with
/// `notifications` or `repo`. Fine-grained, app and workflow tokens are 403.
fn caller(ctx: &Ctx) -> ApiResult<Account> {
    let t = match &ctx.principal {
        Principal::Anonymous => return Err(ApiError::requires_authentication()),
        Principal::App(_) => return Err(ApiError::forbidden("Resource not accessible by integration")),
        Principal::Token(t) => t,
    };
    let kind = t.token.kind;
    if !matches!(kind, TokenKind::Classic | TokenKind::Oauth) || !has_scope(&t.token.scopes, SCOPES) {
        return Err(not_accessible(kind));
    }
    t.user.clone().ok_or_else(|| not_accessible(kind))
}

fn thread_url(u: &Urls, id: i64) -> String {
    format!("{}/notifications/threads/{id}", u.api)
}

fn thread_json(ctx: &Ctx, t: &ThreadRow, repo: &repos::Repo) -> Thread {
    thread_value(&ctx.app.urls, ctx.version, t, repo)
}

/// ThreadSubscription: the caller's subscription to a thread.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct ThreadSubscription {
    pub subscribed: bool,
    pub ignored: bool,
    pub reason: Option<String>,
    pub created_at: Option<Timestamp>,
    pub url: Uri,
    pub thread_url: Uri,
}

/// By default the caller is subscribed for the thread's reason; explicit subscriptions have no
/// reason; a deleted one is neither subscribed nor ignored.
fn subscription(u: &Urls, t: &ThreadRow) -> ThreadSubscription {
    let url = thread_url(u, t.id);
    let (subscribed, ignored, reason, created) = match t.sub_state.as_str() {
        "subscribed" => (true, false, None, t.sub_created_at),
        "ignored" => (false, true, None, t.sub_created_at),
        "unsubscribed" => (false, false, None, None),
        _ => (true, false, Some(t.reason.clone()), Some(t.created_at)),
    };
    ThreadSubscription {
        subscribed,
        ignored,
        reason,
        created_at: created.map(Timestamp),
        url: Uri(format!("{url}/subscription")),
        thread_url: Uri(url),
    }
}

fn time_param(name: &str, v: Option<&str>) -> ApiResult<Option<i64>> {
    match v {
        None => Ok(None),
        Some(v) => parse_ts(v).map(Some).ok_or_else(|| ApiError::invalid_request(format!("For '{name}', {v:?} is not a timestamp."))),
    }
}

async fn list(ctx: Ctx, Query(q): Query<ListQuery>) -> ApiResult<Reply> {
    let user = caller(&ctx)?;
    let f = Filter {
        all: q.all.unwrap_or(false),
        participating: q.participating.unwrap_or(false),
        since: time_param("since", q.since.as_deref())?,
        before: time_param("before", q.before.as_deref())?,
    };
    let page = Page::of(q.page, q.per_page, 50, 50);
    let uid = user.id;
    let (threads, repos, total, modified) = ctx
        .app
        .store
        .read(move |c| -> Result<_, DbError> {
            let (threads, total) = notif::list(c, uid, &f, page.offset(), page.per_page)?;
            let mut repos: Vec<repos::Repo> = Vec::new();
            for t in &threads {
                if !repos.iter().any(|r| r.id == t.repo_id) {
                    if let Some(r) = repos::by_id(c, t.repo_id)? {
                        repos.push(r);
                    }
                }
            }
            Ok((threads, repos, total, notif::modified_at(c, uid)?))
        })
        .await?;
    let body: Vec<Thread> =
        threads.iter().filter_map(|t| repos.iter().find(|r| r.id == t.repo_id).map(|r| thread_json(&ctx, t, r))).collect();
    Ok(Reply::ok(body).opt_header("link", ctx.link(page, total)).opt_header("last-modified", modified.map(http_date)))
}

async fn mark_read(ctx: Ctx, Body(b): Body<MarkRead>) -> ApiResult<Reply> {
    let user = caller(&ctx)?;
    let now = ctx.app.clock.now();
    let until = match &b.last_read_at {
        Some(s) => parse_ts(s)
            .ok_or_else(|| ApiError::invalid_field("Notification", "last_read_at", "invalid", Some(format!("{s:?} is not a timestamp"))))?,
        None => now,
    };
    // `read: false` changes nothing (threads become unread only through new activity).
    if b.read == Some(false) {
        return Ok(Reply::empty(StatusCode::RESET_CONTENT));
    }
    let limit = ctx.app.config.notifications.sync_limit.max(1);
    let uid = user.id;
    let done = ctx
        .write(move |c| -> Result<bool, DbError> {
            if notif::count_unread_until(c, uid, until)? > limit {
                return Ok(false);
            }
            notif::mark_all_read(c, uid, until, limit, now)?;
            Ok(true)
        })
        .await?;
    if done {
        return Ok(Reply::empty(StatusCode::RESET_CONTENT));
    }
    produce::spawn_mark_all(ctx.app.clone(), uid, until, limit);
    Ok(Reply::json(StatusCode::ACCEPTED, NotificationsMarkAccepted { message: MARK_READ_ACCEPTED.into() }))
}

/// The caller's thread of the path (with its repository), 404 otherwise.
async fn thread(ctx: &Ctx) -> ApiResult<(Account, ThreadRow, repos::Repo)> {
    let user = caller(ctx)?;
    let id: i64 = ctx.param("thread_id").parse().map_err(|_| ApiError::not_found())?;
    let uid = user.id;
    let found = ctx
        .app
        .store
        .read(move |c| -> Result<_, DbError> {
            let Some(t) = notif::get(c, uid, id)? else { return Ok(None) };
            Ok(repos::by_id(c, t.repo_id)?.map(|r| (t, r)))
        })
        .await?;
    let (t, r) = found.ok_or_else(ApiError::not_found)?;
    Ok((user, t, r))
}

async fn get_thread(ctx: Ctx) -> ApiResult<Reply> {
    let (user, t, repo) = thread(&ctx).await?;
    let uid = user.id;
    let modified = ctx.app.store.read(move |c| notif::modified_at(c, uid)).await.map_err(ApiError::from)?;
    Ok(Reply::ok(thread_json(&ctx, &t, &repo)).opt_header("last-modified", modified.map(http_date)))
}

async fn mark_thread_read(ctx: Ctx) -> ApiResult<Reply> {
    let (_, t, _) = thread(&ctx).await?;
    let now = ctx.app.clock.now();
    ctx.write(move |c| notif::mark_read(c, &t, now)).await.map_err(ApiError::from)?;
    Ok(Reply::empty(StatusCode::RESET_CONTENT))
}

async fn mark_thread_done(ctx: Ctx) -> ApiResult<Reply> {
    let (_, t, _) = thread(&ctx).await?;
    let now = ctx.app.clock.now();
    ctx.write(move |c| notif::mark_done(c, &t, now)).await.map_err(ApiError::from)?;
    Ok(Reply::empty(StatusCode::NO_CONTENT))
}

async fn get_subscription(ctx: Ctx) -> ApiResult<Reply> {
    let (_, t, _) = thread(&ctx).await?;
    Ok(Reply::ok(subscription(&ctx.app.urls, &t)))
}

async fn set_subscription(ctx: Ctx, Body(b): Body<SetSubscription>) -> ApiResult<Reply> {
    let (_, t, _) = thread(&ctx).await?;
    let ignored = b.ignored.unwrap_or(false);
    let state = if ignored { "ignored" } else { "subscribed" };
    let now = ctx.app.clock.now();
    let id = t.id;
    let uid = t.user_id;
    let t = ctx
        .write(move |c| -> Result<_, DbError> {
            notif::set_subscription(c, &t, state, now)?;
            notif::get(c, uid, id)
        })
        .await?
        .ok_or_else(ApiError::not_found)?;
    Ok(Reply::ok(subscription(&ctx.app.urls, &t)))
}

async fn delete_subscription(ctx: Ctx) -> ApiResult<Reply> {
    let (_, t, _) = thread(&ctx).await?;
    let now = ctx.app.clock.now();
    ctx.write(move |c| notif::set_subscription(c, &t, "unsubscribed", now)).await.map_err(ApiError::from)?;
    Ok(Reply::empty(StatusCode::NO_CONTENT))
}

/// The 202 body of mark-read: the threads are being marked in the background.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct NotificationsMarkAccepted {
    pub message: String,
}

/// Thread (api-facts §4.11): a notification thread of the caller.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct Thread {
    pub id: String,
    pub repository: MinimalRepository,
    pub subject: ThreadSubject,
    pub reason: String,
    pub unread: bool,
    pub updated_at: Timestamp,
    pub last_read_at: Option<Timestamp>,
    pub subscription_url: Uri,
    pub url: Uri,
}

/// What a thread is about; strings in the spec even when the platform has no URL for it.
#[derive(Clone, Debug, Serialize, JsonSchema)]
#[schemars(inline)]
pub struct ThreadSubject {
    pub title: String,
    pub url: String,
    pub latest_comment_url: String,
    #[serde(rename = "type")]
    pub kind: String,
}

pub fn thread_value(u: &Urls, version: platform_core::ApiVersion, t: &ThreadRow, repo: &repos::Repo) -> Thread {
    let url = thread_url(u, t.id);
    // A subject delivered without a URL points at its repository, and without a latest comment
    // at the subject itself.
    let subject_url = t.subject_url.clone().unwrap_or_else(|| shapes::repo_api_url(u, repo));
    let latest_comment_url = t.latest_comment_url.clone().unwrap_or_else(|| subject_url.clone());
    Thread {
        id: t.id.to_string(),
        repository: shapes::minimal_repository(u, version, repo),
        subject: ThreadSubject { title: t.subject_title.clone(), url: subject_url, latest_comment_url, kind: t.subject_type.clone() },
        reason: t.reason.clone(),
        unread: t.unread,
        updated_at: Timestamp(t.updated_at),
        last_read_at: t.last_read_at.map(Timestamp),
        subscription_url: Uri(format!("{url}/subscription")),
        url: Uri(url),
    }
}

/// The control plane's part: `POST /_admin/notifications`, `{login, repo, subject: {title,
/// type, url?}, reason}` → 201 the thread.
pub fn control(r: axum::Router<crate::state::Shared>) -> axum::Router<crate::state::Shared> {
    r.route("/notifications", axum::routing::post(create_notification))
}

async fn create_notification(
    axum::extract::State(app): axum::extract::State<crate::state::Shared>,
    JsonBody(b): JsonBody,
) -> ApiResult<Reply> {
    let n: crate::ops::provision::NotificationIn = crate::ops::provision::parse(b)?;
    let (thread, repo) = crate::ops::provision::write(&app, move |c, now| crate::ops::provision::notify(c, &n, now)).await?;
    Ok(Reply::created(thread_value(&app.urls, platform_core::ApiVersion::DEFAULT, &thread, &repo)))
}
