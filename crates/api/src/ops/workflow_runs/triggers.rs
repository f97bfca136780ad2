//! Workflow files that start runs when code moves: each `.workflows/*.yml` (or `.yaml`) at a
//! pushed branch's or tag's new commit whose `on:` names `push` and whose filters (`branches`,
//! `branches-ignore`, `tags`, `tags-ignore`, `paths`, `paths-ignore`, as hosted) match the ref
//! and the paths the push changed starts a run on that commit, in the transaction that records
//! the push. Its jobs are the file's (`name`, `needs`, `runs-on`, `environment`, step names);
//! nothing in the file is executed. Each job succeeds after 60 seconds unless its `env` sets
//! `PLATFORM_OUTCOME` (a conclusion, or a comma-separated list, one per attempt) or
//! `PLATFORM_DURATION_SECONDS`, which the hosted platform ignores, so one file serves both.
//!
//! YAML is read with `serde_norway` (the maintained fork of `serde_yaml`, which bounds nesting
//! and alias expansion, so a hostile file cannot make parsing slow); files are at most
//! [`MAX_FILE_BYTES`].
use std::collections::BTreeMap;

use platform_store::domain::accounts::Account;
use platform_store::domain::repos::Repo;
use platform_store::{Conn, DbError};
use serde::Deserialize;
use serde_norway::Value as Yaml;

use super::plan::{self, EnvironmentIn, JobIn, OneOrMany, PlanIn};
use crate::ops::git_hosting::WORKFLOWS_DIR;
use crate::ops::rulesets::matching::Pattern;

/// Workflow files larger than this are not read.
pub const MAX_FILE_BYTES: u64 = 256 * 1024;

/// A workflow file at a pushed commit.
#[derive(Clone, Debug)]
pub struct WorkflowFile {
    pub path: String,
    pub text: String,
}

/// What a push did to one ref, as the triggers read it.
pub struct Pushed<'a> {
    /// `refs/heads/…` or `refs/tags/…`.
    pub name: &'a str,
    pub sha: &'a str,
    /// The first line is the run's title.
    pub message: &'a str,
    /// Every path the push's commits changed.
    pub changed: &'a [String],
}

#[derive(Deserialize)]
struct File {
    name: Option<String>,
    #[serde(rename = "on")]
    on: Yaml,
    #[serde(default)]
    jobs: serde_norway::Mapping,
}

/// `on.push`'s filters.
#[derive(Default, Deserialize)]
#[serde(rename_all = "kebab-case")]
struct PushFilters {
    branches: Option<Vec<String>>,
    branches_ignore: Option<Vec<String>>,
    tags: Option<Vec<String>>,
    tags_ignore: Option<Vec<String>>,
    paths: Option<Vec<String>>,
    paths_ignore: Option<Vec<String>>,
}

#[derive(Deserialize)]
#[serde(rename_all = "kebab-case")]
struct Job {
    name: Option<String>,
    #[serde(default)]
    needs: OneOrList,
    #[serde(default)]
    runs_on: OneOrList,
    environment: Option<Yaml>,
    #[serde(default)]
    steps: Vec<Step>,
    #[serde(default)]
    env: BTreeMap<String, Yaml>,
}

#[derive(Default, Deserialize)]
#[serde(untagged)]
enum OneOrList {
    #[default]
    None,
    One(String),
    List(Vec<String>),
}

impl OneOrList {
    fn list(&self) -> Vec<String> {
        match self {
            OneOrList::None => Vec::new(),
            OneOrList::One(s) => vec![s.clone()],
            OneOrList::List(v) => v.clone(),
        }
    }
}

#[derive(Deserialize)]
struct Step {
    name: Option<String>,
    run: Option<String>,
    uses: Option<String>,
}

/// The push filters of a file's `on:`, if it runs on pushes at all.
fn push_filters(on: &Yaml) -> Option<PushFilters> {
    match on {
        Yaml::String(s) => (s == "push").then(PushFilters::default),
        Yaml::Sequence(list) => list.iter().any(|e| e.as_str() == Some("push")).then(PushFilters::default),
        Yaml::Mapping(m) => match m.get("push")? {
            Yaml::Null => Some(PushFilters::default()),
            f => serde_norway::from_value(f.clone()).ok(),
        },
        _ => None,
    }
}

/// Hosted pattern lists: later patterns win, and a `!` pattern takes back what earlier ones
/// matched.
fn listed(patterns: &[String], name: &str) -> bool {
    let mut hit = false;
    for p in patterns {
        match p.strip_prefix('!') {
            Some(neg) if hit && Pattern::compile(neg).matches(name, None) => hit = false,
            Some(_) => {}
            None if !hit && Pattern::compile(p).matches(name, None) => hit = true,
            None => {}
        }
    }
    hit
}

impl PushFilters {
    fn admits(&self, p: &Pushed) -> bool {
        let (branch, tag) = (p.name.strip_prefix("refs/heads/"), p.name.strip_prefix("refs/tags/"));
        let names_branches = self.branches.is_some() || self.branches_ignore.is_some();
        let names_tags = self.tags.is_some() || self.tags_ignore.is_some();
        let ref_ok = match (branch, tag) {
            // A file that filters only the other kind of ref does not run for this one.
            (Some(_), _) if names_tags && !names_branches => false,
            (Some(b), _) => {
                self.branches.as_ref().is_none_or(|l| listed(l, b)) && !self.branches_ignore.as_ref().is_some_and(|l| listed(l, b))
            }
            (_, Some(_)) if names_branches && !names_tags => false,
            (_, Some(t)) => self.tags.as_ref().is_none_or(|l| listed(l, t)) && !self.tags_ignore.as_ref().is_some_and(|l| listed(l, t)),
            _ => false,
        };
        // Paths are not evaluated for tags, as hosted.
        if !ref_ok || tag.is_some() {
            return ref_ok;
        }
        let paths_ok = self.paths.as_ref().is_none_or(|l| p.changed.iter().any(|f| listed(l, f)));
        let ignore_ok = self.paths_ignore.as_ref().is_none_or(|l| p.changed.is_empty() || p.changed.iter().any(|f| !listed(l, f)));
        paths_ok && ignore_ok
    }
}

fn scalar(v: &Yaml) -> Option<String> {
    match v {
        Yaml::String(s) => Some(s.clone()),
        Yaml::Number(n) => Some(n.to_string()),
        Yaml::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

/// The runner a `runs-on` names, among the three the platform knows (labels and self-hosted
/// runners count as `ubuntu`).
fn runner(labels: &[String]) -> String {
    let first = labels.first().map(|l| l.to_lowercase()).unwrap_or_default();
    ["macos", "windows"].into_iter().find(|os| first.starts_with(os)).unwrap_or("ubuntu").to_string()
}

fn step_name(s: &Step) -> String {
    match (&s.name, &s.run, &s.uses) {
        (Some(n), _, _) => n.clone(),
        (None, Some(run), _) => format!("Run {}", run.lines().next().unwrap_or("").trim()),
        (None, None, Some(uses)) => format!("Run {uses}"),
        _ => "Run".into(),
    }
}

/// The plan of the run `file` starts for push `p`, if it starts one; `Err` says why a file that
/// runs on pushes cannot be read.
fn plan_of(file: &WorkflowFile, p: &Pushed, actor: &str) -> Result<Option<PlanIn>, String> {
    let f: File = serde_norway::from_str(&file.text).map_err(|e| e.to_string())?;
    let Some(filters) = push_filters(&f.on) else { return Ok(None) };
    if !filters.admits(p) {
        return Ok(None);
    }
    let mut ids: Vec<(String, Job)> = Vec::new();
    for (id, job) in &f.jobs {
        let id = scalar(id).ok_or("a job's id is not a name")?;
        let job: Job = serde_norway::from_value(job.clone()).map_err(|e| format!("job {id}: {e}"))?;
        ids.push((id, job));
    }
    let shown = |id: &str| ids.iter().find(|(i, _)| i == id).map(|(i, j)| j.name.clone().unwrap_or_else(|| i.clone()));
    let mut jobs = Vec::new();
    for (id, j) in &ids {
        let needs = j.needs.list().iter().map(|n| shown(n).ok_or(format!("job {id} needs unknown job {n}"))).collect::<Result<_, _>>()?;
        let env = |k: &str| j.env.get(k).and_then(scalar);
        let outcome = env("PLATFORM_OUTCOME").map(|o| OneOrMany::Many(o.split(',').map(|s| s.trim().to_string()).collect()));
        let duration_seconds = match env("PLATFORM_DURATION_SECONDS") {
            Some(d) => Some(d.parse().map_err(|_| format!("job {id}: PLATFORM_DURATION_SECONDS is not a number"))?),
            None => None,
        };
        let environment = j.environment.as_ref().and_then(|e| match e {
            Yaml::Mapping(m) => m.get("name").and_then(scalar),
            other => scalar(other),
        });
        jobs.push(JobIn {
            name: shown(id).unwrap_or_else(|| id.clone()),
            needs,
            runs_on: Some(runner(&j.runs_on.list())),
            duration_seconds,
            outcome,
            log: None,
            steps: Some(j.steps.iter().map(step_name).collect()),
            environment: environment.map(|name| EnvironmentIn { name, reviewers: Vec::new(), wait_timer: 0, as_configured: true }),
        });
    }
    let short = p.name.strip_prefix("refs/heads/").or_else(|| p.name.strip_prefix("refs/tags/")).unwrap_or(p.name);
    Ok(Some(PlanIn {
        workflow: file.path.clone(),
        name: f.name,
        event: Some("push".into()),
        branch: Some(short.into()),
        head_sha: Some(p.sha.into()),
        actor: Some(actor.into()),
        triggering_actor: None,
        message: Some(p.message.trim_end().into()),
        display_title: None,
        pull_requests: Vec::new(),
        fork: false,
        queue_seconds: None,
        jobs: (!jobs.is_empty()).then_some(jobs),
    }))
}

/// The workflow files at commit `sha` (read before the push is recorded).
pub async fn files_at(git: &platform_git::Repo, sha: &str) -> Result<Vec<WorkflowFile>, platform_git::Error> {
    let files = git.files_in(sha, WORKFLOWS_DIR, &[".yml", ".yaml"], MAX_FILE_BYTES).await?;
    Ok(files.into_iter().map(|(path, bytes)| WorkflowFile { path, text: String::from_utf8_lossy(&bytes).into_owned() }).collect())
}

/// Starts, in the caller's transaction, the runs that `files` (at the pushed commit) start for
/// push `p` by `pusher`; returns their ids. A file that cannot be read or planned starts nothing
/// and is logged (the push itself stands).
pub fn start_runs(
    c: &mut dyn Conn,
    repo: &Repo,
    pusher: &Account,
    files: &[WorkflowFile],
    p: &Pushed,
    now: i64,
) -> Result<Vec<i64>, DbError> {
    let mut started = Vec::new();
    for file in files {
        let planned = match plan_of(file, p, &pusher.login) {
            Ok(Some(planned)) => planned,
            Ok(None) => continue,
            Err(why) => {
                tracing::warn!(repo_id = repo.id, workflow = %file.path, error = %why, "a workflow file could not be read");
                continue;
            }
        };
        match plan::create(c, repo, &planned, now) {
            Ok(id) => started.push(id),
            // A database failure fails the push's record (tried again); a bad plan starts nothing.
            Err(e) if e.status.is_server_error() => return Err(DbError::other(e.message)),
            Err(e) => tracing::warn!(repo_id = repo.id, workflow = %file.path, error = %e.message, "a workflow file's run was not started"),
        }
    }
    Ok(started)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(text: &str) -> WorkflowFile {
        WorkflowFile { path: ".workflows/ci.yml".into(), text: text.into() }
    }

    fn push<'a>(name: &'a str, changed: &'a [String]) -> Pushed<'a> {
        Pushed { name, sha: "0123456789012345678901234567890123456789", message: "Change\n\nbody", changed }
    }

    fn runs(text: &str, name: &str, changed: &[&str]) -> bool {
        let changed: Vec<String> = changed.iter().map(|s| s.to_string()).collect();
        plan_of(&file(text), &push(name, &changed), "alice").unwrap().is_some()
    }

    #[test]
    fn on_forms_and_filters() {
        let jobs = "\njobs:\n  build:\n    runs-on: ubuntu-latest\n";
        assert!(runs(&format!("on: push{jobs}"), "refs/heads/x", &[]));
        assert!(runs(&format!("on: [pull_request, push]{jobs}"), "refs/tags/v1", &[]));
        assert!(!runs(&format!("on: workflow_dispatch{jobs}"), "refs/heads/main", &[]));
        let f = format!("on:\n  push:\n    branches: [main, 'release/**', '!release/old']{jobs}");
        assert!(runs(&f, "refs/heads/main", &["a"]));
        assert!(runs(&f, "refs/heads/release/v1/x", &["a"]));
        assert!(!runs(&f, "refs/heads/release/old", &["a"]));
        assert!(!runs(&f, "refs/heads/feature", &["a"]));
        assert!(!runs(&f, "refs/tags/v1", &[]), "branches only: no tag runs");
        let f = format!("on:\n  push:\n    tags: ['v*']{jobs}");
        assert!(runs(&f, "refs/tags/v2", &[]));
        assert!(!runs(&f, "refs/heads/main", &["a"]), "tags only: no branch runs");
        let f = format!("on:\n  push:\n    paths: ['src/**']\n    branches-ignore: [wip]{jobs}");
        assert!(runs(&f, "refs/heads/main", &["src/a/b.rs", "README.md"]));
        assert!(!runs(&f, "refs/heads/main", &["README.md"]));
        assert!(!runs(&f, "refs/heads/wip", &["src/a.rs"]));
        let f = format!("on:\n  push:\n    paths-ignore: ['docs/**']{jobs}");
        assert!(!runs(&f, "refs/heads/main", &["docs/a.md"]));
        assert!(runs(&f, "refs/heads/main", &["docs/a.md", "src/x"]));
    }

    #[test]
    fn jobs_come_from_the_file() {
        let text = "name: CI\non: push\njobs:\n  build:\n    runs-on: [macos-latest]\n    steps:\n      - uses: actions/checkout@v4\n      - run: |\n          make\n          make more\n      - name: Named\n  test:\n    name: Tests\n    needs: build\n    runs-on: windows-2022\n    env:\n      PLATFORM_OUTCOME: failure, success\n      PLATFORM_DURATION_SECONDS: 5\n    environment:\n      name: staging\n";
        let p = plan_of(&file(text), &push("refs/heads/main", &[]), "alice").unwrap().unwrap();
        assert_eq!((p.name.as_deref(), p.branch.as_deref(), p.actor.as_deref()), (Some("CI"), Some("main"), Some("alice")));
        let jobs = p.jobs.unwrap();
        assert_eq!(jobs[0].name, "build");
        assert_eq!(jobs[0].runs_on.as_deref(), Some("macos"));
        assert_eq!(jobs[0].steps.as_deref().unwrap(), ["Run actions/checkout@v4", "Run make", "Named"]);
        assert_eq!(
            (jobs[1].name.as_str(), jobs[1].needs.clone(), jobs[1].runs_on.as_deref()),
            ("Tests", vec!["build".to_string()], Some("windows"))
        );
        assert!(matches!(&jobs[1].outcome, Some(OneOrMany::Many(v)) if v == &["failure", "success"]));
        assert_eq!(jobs[1].duration_seconds, Some(5));
        assert_eq!(jobs[1].environment.as_ref().map(|e| e.name.as_str()), Some("staging"));
    }

    #[test]
    fn bad_files_say_why_and_hostile_ones_stay_cheap() {
        assert!(plan_of(&file("on: push\njobs: ["), &push("refs/heads/main", &[]), "a").is_err());
        let err = plan_of(&file("on: push\njobs:\n  a:\n    needs: nope\n"), &push("refs/heads/main", &[]), "a").err();
        assert!(err.is_some_and(|e| e.contains("nope")));
        // Nested aliases that would expand to billions of nodes are refused, not expanded.
        let mut bomb = String::from("a: &a [x, x, x, x, x, x, x, x, x]\n");
        for i in 1..12 {
            bomb += &format!(
                "{}: &{} [*{}, *{}, *{}, *{}, *{}, *{}, *{}, *{}, *{}]\n",
                (b'a' + i) as char,
                (b'a' + i) as char,
                (b'a' + i - 1) as char,
                (b'a' + i - 1) as char,
                (b'a' + i - 1) as char,
                (b'a' + i - 1) as char,
                (b'a' + i - 1) as char,
                (b'a' + i - 1) as char,
                (b'a' + i - 1) as char,
                (b'a' + i - 1) as char,
                (b'a' + i - 1) as char
            );
        }
        bomb += "on: *l\njobs: {}\n";
        assert!(plan_of(&file(&bomb), &push("refs/heads/main", &[]), "a").is_err());
    }
}
