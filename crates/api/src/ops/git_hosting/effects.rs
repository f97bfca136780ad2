//! What a ref change causes, recorded in the transaction that records the change: the feed's
//! `CreateEvent`, `PushEvent` and `DeleteEvent`, which the webhook consumer turns into the
//! `create`, `push` and `delete` webhooks. A moved branch's activity keeps, beside the Events
//! API payload, what its `push` webhook shows (the commits with the paths each changed, the head
//! commit, whether it was forced), read from git before the transaction ([`gather`]).
use std::collections::{HashMap, HashSet};

use platform_core::time::format_ts_in_zone;
use platform_git::{is_oid, Commit, RefUpdate, Touched, ZERO};
use platform_store::domain::accounts::Account;
use platform_store::domain::repos::Repo;
use platform_store::{Conn, DbError};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::ops::hooks::activity::{self, CreateActivity, Record, Scope};
use crate::shapes::Urls;

/// Commits a `push` webhook lists at most (oldest first, the newest kept).
pub const MAX_PUSHED_COMMITS: usize = 100;

/// An author or committer of a pushed commit.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CommitPerson {
    pub name: String,
    pub email: String,
    pub date: String,
}

/// A commit as a `push` webhook shows it (its `url` is derived when sent).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct PushedCommit {
    pub id: String,
    pub tree_id: String,
    /// First seen in the repository with this push.
    pub distinct: bool,
    pub message: String,
    pub timestamp: String,
    pub author: CommitPerson,
    pub committer: CommitPerson,
    pub added: Vec<String>,
    pub removed: Vec<String>,
    pub modified: Vec<String>,
}

/// What only a branch's `push` webhook shows.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Pushed {
    pub forced: bool,
    pub commits: Vec<PushedCommit>,
    pub head_commit: Option<PushedCommit>,
}

/// The `PushEvent` activity of a moved branch: the Events API payload, and [`Pushed`] (absent
/// for placeholder shas git does not have, and in records older than git hosting; feeds never
/// show it).
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[schemars(inline, description = "A `PushEvent`'s payload: the moved branch (`ref`), its new `head` and what it was `before`.")]
pub struct PushActivity {
    pub repository_id: i64,
    pub push_id: i64,
    #[serde(rename = "ref")]
    pub name: String,
    pub head: String,
    pub before: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(skip)]
    pub pushed: Option<Pushed>,
}

/// The `DeleteEvent` activity of a deleted branch or tag; `before` (where it pointed) is for the
/// `push` webhook of the deletion (feeds never show it).
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[schemars(inline, description = "A `DeleteEvent`'s payload: a deleted branch or tag.")]
pub struct DeleteActivity {
    #[serde(rename = "ref")]
    pub name: String,
    pub ref_type: String,
    pub pusher_type: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(skip)]
    pub before: Option<String>,
}

/// One moved ref, as the activity needs it: its full name, where it pointed before (in the
/// store), the commit it points at now (`None`: deleted), and the push detail from git.
pub struct RefMove<'a> {
    pub name: &'a str,
    pub before: Option<&'a str>,
    pub after: Option<&'a str>,
    pub pushed: Option<Pushed>,
}

/// Records the activity of one moved ref in the caller's transaction: `CreateEvent` for a new
/// branch or tag, `PushEvent` for a branch that moved (created included), `DeleteEvent` for a
/// deleted one.
pub fn record(c: &mut dyn Conn, repo: &Repo, pusher: Option<&Account>, m: RefMove, now: i64) -> Result<(), DbError> {
    let (ref_type, short) = match (m.name.strip_prefix("refs/heads/"), m.name.strip_prefix("refs/tags/")) {
        (Some(b), _) => ("branch", b),
        (_, Some(t)) => ("tag", t),
        _ => return Ok(()),
    };
    let at = Scope::repo(pusher.map(|p| p.id), repo);
    let mut emit = |r: Record| activity::record(c, at, &r, now);
    let Some(after) = m.after else {
        if m.before.is_some() {
            let d = DeleteActivity {
                name: short.into(),
                ref_type: ref_type.into(),
                pusher_type: "user".into(),
                before: m.before.map(str::to_string),
            };
            emit(Record::Delete(d))?;
        }
        return Ok(());
    };
    if m.before.is_none() {
        let created = CreateActivity {
            name: Some(short.into()),
            ref_type: ref_type.into(),
            full_ref: Some(m.name.into()),
            master_branch: repo.default_branch.clone(),
            description: repo.description.clone(),
            pusher_type: "user".into(),
        };
        emit(Record::Create(created))?;
    }
    if ref_type == "branch" && m.before != Some(after) {
        let p = PushActivity {
            repository_id: repo.id,
            push_id: rand::random::<u32>() as i64 + 1,
            name: m.name.into(),
            head: after.into(),
            before: m.before.map(str::to_string).unwrap_or_else(|| ZERO.into()),
            pushed: m.pushed,
        };
        emit(Record::Push(p))?;
    }
    Ok(())
}

/// A pushed commit as a `push` webhook shows it: with its web URL.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct WebhookCommit {
    #[serde(flatten)]
    pub commit: PushedCommit,
    pub url: String,
}

/// Who pushed, as a `push` webhook names them.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct Pusher {
    pub name: String,
    pub email: Option<String>,
}

/// The `push` webhook's own fields (the consumer adds repository, organization and sender).
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct PushWebhook {
    #[serde(rename = "ref")]
    pub name: String,
    pub before: String,
    pub after: String,
    pub created: bool,
    pub deleted: bool,
    pub forced: bool,
    pub base_ref: Option<String>,
    pub compare: String,
    pub commits: Vec<WebhookCommit>,
    pub head_commit: Option<WebhookCommit>,
    pub pusher: Pusher,
}

/// The `push` webhook of a `PushEvent`, or of a `DeleteEvent` of a branch or tag
/// (`deleted: true`); `None` for others.
pub fn push_webhook(u: &Urls, repo: Option<&Repo>, r: &Record, pusher: Pusher) -> Option<PushWebhook> {
    let full_name = repo.map(|r| r.full_name()).unwrap_or_default();
    let (name, before, after, pushed) = match r.clone() {
        Record::Push(p) => (p.name, p.before, p.head, p.pushed.unwrap_or_default()),
        Record::Delete(d) => {
            let prefix = if d.ref_type == "tag" { "refs/tags/" } else { "refs/heads/" };
            (format!("{prefix}{}", d.name), d.before?, ZERO.to_string(), Pushed::default())
        }
        _ => return None,
    };
    let (created, deleted) = (before == ZERO, after == ZERO);
    let short = |s: &str| s[..12.min(s.len())].to_string();
    let compare = if created {
        let shown = name.strip_prefix("refs/heads/").or_else(|| name.strip_prefix("refs/tags/")).unwrap_or(&name);
        format!("{}/{full_name}/compare/{shown}", u.web)
    } else {
        format!("{}/{full_name}/compare/{}...{}", u.web, short(&before), short(&after))
    };
    let commit = |k: &PushedCommit| WebhookCommit { commit: k.clone(), url: format!("{}/{full_name}/commit/{}", u.web, k.id) };
    Some(PushWebhook {
        commits: pushed.commits.iter().map(commit).collect(),
        head_commit: pushed.head_commit.as_ref().map(commit),
        name,
        before,
        after,
        created,
        deleted,
        forced: pushed.forced,
        base_ref: None,
        compare,
        pusher,
    })
}

/// Reads from git what the `push` webhooks of `updates` show (by ref name): branches that now
/// point at a commit, with the commits the update brought that no ref had before (`before`: the
/// refs as they were), at most [`MAX_PUSHED_COMMITS`] each.
pub async fn gather(
    git: &platform_git::Repo,
    updates: &[RefUpdate],
    before: &[platform_git::Ref],
) -> Result<HashMap<String, Pushed>, platform_git::Error> {
    let branches: Vec<&RefUpdate> = updates.iter().filter(|u| u.name.starts_with("refs/heads/") && !u.is_delete()).collect();
    if branches.is_empty() {
        return Ok(HashMap::new());
    }
    let known: Vec<String> = before.iter().map(|r| r.oid.clone()).collect();
    let new_anywhere: HashSet<String> =
        git.rev_list(&branches.iter().map(|u| u.new.clone()).collect::<Vec<_>>(), &known).await?.into_iter().collect();
    let mut lists = Vec::new();
    for u in &branches {
        // What this branch gained: commits reachable from its new value but not from what it or
        // any other ref pointed at.
        let mut not: Vec<String> = known.clone();
        if !u.is_create() {
            not.push(u.old.clone());
        }
        let mut ids = git.rev_list(std::slice::from_ref(&u.new), &not).await?;
        ids.truncate(MAX_PUSHED_COMMITS);
        ids.reverse();
        let forced = !u.is_create() && !git.is_ancestor(&u.old, &u.new).await?;
        lists.push((u, ids, forced));
    }
    let mut wanted: Vec<String> = lists.iter().flat_map(|(u, ids, _)| ids.iter().cloned().chain([u.new.clone()])).collect();
    wanted.sort();
    wanted.dedup();
    let commits: HashMap<String, Commit> = git.commits(&wanted).await?.into_iter().map(|k| (k.oid.clone(), k)).collect();
    let touched = git.touched(&wanted).await?;
    let shown = |id: &String| commits.get(id).map(|k| pushed_commit(k, touched.get(id), new_anywhere.contains(id)));
    Ok(lists
        .into_iter()
        .filter(|(u, _, _)| is_oid(&u.new))
        .map(|(u, ids, forced)| {
            let pushed = Pushed { forced, commits: ids.iter().filter_map(shown).collect(), head_commit: shown(&u.new) };
            (u.name.clone(), pushed)
        })
        .collect())
}

fn pushed_commit(k: &Commit, touched: Option<&Touched>, distinct: bool) -> PushedCommit {
    let person = |p: &platform_git::Person| CommitPerson {
        name: p.name.clone(),
        email: p.email.clone(),
        date: format_ts_in_zone(p.time, p.offset_minutes.into()),
    };
    let t = touched.cloned().unwrap_or_default();
    PushedCommit {
        id: k.oid.clone(),
        tree_id: k.tree.clone(),
        distinct,
        message: k.message.trim_end_matches('\n').to_string(),
        timestamp: format_ts_in_zone(k.committer.time, k.committer.offset_minutes.into()),
        author: person(&k.author),
        committer: person(&k.committer),
        added: t.added,
        removed: t.removed,
        modified: t.modified,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::events::FeedPayload;
    use serde_json::json;

    #[test]
    fn feeds_show_the_events_api_payload_and_old_records_still_read() {
        let p = PushActivity {
            repository_id: 1,
            push_id: 2,
            name: "refs/heads/main".into(),
            head: "b".repeat(40),
            before: ZERO.into(),
            pushed: Some(Pushed { forced: true, ..Pushed::default() }),
        };
        let shown = |r: &Record| serde_json::to_value(FeedPayload::of(r.kind(), &r.stored())).unwrap();
        let want = json!({"repository_id": 1, "push_id": 2, "ref": "refs/heads/main", "head": "b".repeat(40), "before": ZERO});
        assert_eq!(shown(&Record::Push(p)), want);
        let old = json!({"repository_id": 1, "push_id": 2, "ref": "refs/heads/main", "head": "b", "before": "a"});
        let read = Record::read("PushEvent", &old).unwrap();
        assert_eq!(shown(&read), old);
        let u = Urls::new("http://h/api/v3");
        let hook = push_webhook(&u, None, &read, Pusher { name: "x".into(), email: None }).unwrap();
        assert!(hook.commits.is_empty() && hook.head_commit.is_none() && !hook.forced);
    }
}
