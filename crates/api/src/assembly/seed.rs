//! Seed files (TOML): a world of users, organizations, repositories, apps and tokens, loaded
//! through the same control operations as the admin API: accounts and repositories in one
//! transaction, then the refs (each a change of git and the store, through git hosting's one
//! path), then everything else in one transaction. Loading a seed again is safe: what exists is
//! kept (a ref written as a new commit is skipped once it exists), apps get a fresh secret and
//! every token is new (so the printed credentials always work).
use platform_store::domain::{accounts, apps, repos};
use platform_store::Conn;
use serde::Deserialize;

use crate::error::ApiError;
use crate::ops::provision::{self, AppIn, EnterpriseIn, OrgIn, RefIn, RepoIn, TeamIn, TokenIn, UserIn};
use crate::state::Shared;

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct Seed {
    #[serde(default)]
    pub users: Vec<UserIn>,
    #[serde(default)]
    pub enterprises: Vec<EnterpriseIn>,
    #[serde(default)]
    pub orgs: Vec<OrgIn>,
    #[serde(default)]
    pub teams: Vec<SeedTeam>,
    #[serde(default)]
    pub enterprise_teams: Vec<SeedEnterpriseTeam>,
    #[serde(default)]
    pub repos: Vec<RepoIn>,
    #[serde(default)]
    pub refs: Vec<SeedRef>,
    #[serde(default)]
    pub apps: Vec<AppIn>,
    #[serde(default)]
    pub installations: Vec<SeedInstallation>,
    #[serde(default)]
    pub tokens: Vec<SeedToken>,
    #[serde(default)]
    pub depbot_alerts: Vec<SeedAlert>,
    #[serde(default)]
    pub depbot_bulk: Vec<crate::ops::depbot::alerts::BulkIn>,
    #[serde(default)]
    pub rulesets: Vec<crate::ops::rulesets::control::SeedRuleset>,
    #[serde(default)]
    pub runs: Vec<SeedRun>,
    #[serde(default)]
    pub run_batches: Vec<crate::ops::workflow_runs::plan::BatchIn>,
}

#[derive(Deserialize)]
pub struct SeedAlert {
    /// `owner/name`
    pub repo: String,
    #[serde(flatten)]
    pub alert: crate::ops::depbot::alerts::AlertIn,
}

/// A ruleset of an organization (`org`) or a repository (`repo = "owner/name"`); the rest of the
/// table is the ruleset body. Created when no ruleset of that name exists there.
#[derive(Deserialize)]
pub struct SeedRun {
    /// `owner/name`
    pub repo: String,
    #[serde(flatten)]
    pub plan: crate::ops::workflow_runs::plan::PlanIn,
}

#[derive(Deserialize)]
pub struct SeedTeam {
    pub org: String,
    #[serde(flatten)]
    pub team: TeamIn,
}

#[derive(Deserialize)]
pub struct SeedEnterpriseTeam {
    /// Enterprise slug.
    pub enterprise: String,
    #[serde(flatten)]
    pub team: crate::ops::enterprise_teams::EnterpriseTeamIn,
}

#[derive(Deserialize)]
pub struct SeedRef {
    /// `owner/name`
    pub repo: String,
    #[serde(flatten)]
    pub r#ref: RefIn,
}

#[derive(Deserialize)]
pub struct SeedInstallation {
    /// App name.
    pub app: String,
    pub org: String,
}

#[derive(Deserialize)]
pub struct SeedToken {
    /// Label under which the token is printed and written to `--tokens-out`.
    pub name: String,
    #[serde(flatten)]
    pub token: TokenIn,
}

/// What a seed created that is shown only once.
#[derive(Default, Debug)]
pub struct SeedReport {
    /// (label, kind, login or subject, token)
    pub tokens: Vec<(String, String, String, String)>,
    /// (name, kind, client_id, client_secret)
    pub apps: Vec<(String, String, String, String)>,
}

pub fn parse(text: &str) -> Result<Seed, String> {
    toml::from_str(text).map_err(|e| e.to_string())
}

pub async fn load(app: &Shared, seed: Seed) -> Result<SeedReport, ApiError> {
    let seed = std::sync::Arc::new(seed);
    let (s, now) = (seed.clone(), app.clock.now());
    let created = app.store.write(move |c| accounts_and_repos(c, &s, now)).await?;
    for repo in &created {
        crate::ops::git_hosting::repository(app, repo).await?;
    }
    for r in &seed.refs {
        let (name, full) = (r.r#ref.name.clone(), r.repo.clone());
        let (repo, exists) = app
            .store
            .read(move |c| -> Result<_, ApiError> {
                let repo = provision::repo(c, &full)?;
                let exists = platform_store::domain::git::get_ref(c, repo.id, &name)?.is_some();
                Ok((repo, exists))
            })
            .await?;
        // A ref the seed writes as a new commit is written once.
        if r.r#ref.sha.is_none() && exists {
            continue;
        }
        crate::ops::git_hosting::control::push_ref(app, &repo, &RefIn { bypass_rules: true, ..r.r#ref.clone() }).await?;
    }
    let (s, now, u) = (seed.clone(), app.clock.now(), app.urls.clone());
    app.store.write(move |c| apply(c, &u, &s, now)).await
}

/// The accounts and repositories of a seed (those that do not exist yet); the repositories made.
fn accounts_and_repos(c: &mut dyn Conn, s: &Seed, now: i64) -> Result<Vec<repos::Repo>, ApiError> {
    let mut created = Vec::new();
    for u in &s.users {
        if accounts::by_login(c, &u.login)?.is_none() {
            provision::create_user(c, u, now)?;
        }
    }
    for e in &s.enterprises {
        if accounts::enterprise_by_slug(c, &e.slug)?.is_none() {
            provision::create_enterprise(c, e, now)?;
        }
    }
    for o in &s.orgs {
        if accounts::by_login(c, &o.login)?.is_none() {
            provision::create_org(c, o, now)?;
        }
    }
    for t in &s.teams {
        let org = provision::org(c, &t.org)?;
        let exists = c
            .query_opt(
                "SELECT 1 FROM teams WHERE org_id = ? AND slug = ?",
                platform_store::params![org.id, accounts::slugify(&t.team.name)],
            )?
            .is_some();
        if !exists {
            provision::create_team(c, &t.org, &t.team, now)?;
        }
    }
    for t in &s.enterprise_teams {
        crate::ops::enterprise_teams::seed_team(c, &t.enterprise, &t.team, now)?;
    }
    for r in &s.repos {
        if matches!(repos::lookup(c, &r.owner, &r.name)?, repos::Lookup::Missing) {
            created.push(provision::create_repo(c, r, now)?);
        }
    }
    Ok(created)
}

/// What a seed holds beyond accounts, repositories and refs.
fn apply(c: &mut dyn Conn, u: &crate::shapes::Urls, s: &Seed, now: i64) -> Result<SeedReport, ApiError> {
    let mut report = SeedReport::default();
    for a in &s.apps {
        let (app, secret) = match apps::by_name(c, &a.name)? {
            Some(existing) => {
                let secret = platform_core::ids::random_hex(20);
                apps::set_secret(c, existing.id, &platform_core::ids::sha256_hex(secret.as_bytes()), now)?;
                (existing, secret)
            }
            None => provision::create_app(c, a, now)?,
        };
        report.apps.push((app.name.clone(), app.kind.clone(), app.client_id.clone(), secret));
    }
    for i in &s.installations {
        let app = apps::by_name(c, &i.app)?.ok_or_else(ApiError::not_found)?;
        let org = provision::org(c, &i.org)?;
        if apps::installation_for(c, app.id, org.id)?.is_none() {
            provision::create_installation(c, &app, &i.org, now)?;
        }
    }
    for a in &s.depbot_alerts {
        let repo = provision::repo(c, &a.repo)?;
        crate::ops::depbot::alerts::create_alert(c, u, &repo, &a.alert, now)?;
    }
    for b in &s.depbot_bulk {
        crate::ops::depbot::alerts::create_bulk(c, b, now)?;
    }
    for r in &s.rulesets {
        crate::ops::rulesets::control::seed(c, u, r, now)?;
    }
    for r in &s.runs {
        let repo = provision::repo(c, &r.repo)?;
        crate::ops::workflow_runs::plan::create(c, &repo, &r.plan, now)?;
    }
    for b in &s.run_batches {
        crate::ops::workflow_runs::plan::batch(c, b, now)?;
    }
    for t in &s.tokens {
        let (tok, text) = provision::create_token(c, &t.token, now)?;
        let subject = t.token.login.clone().or(t.token.repo.clone()).or(t.token.org.clone()).unwrap_or_default();
        report.tokens.push((t.name.clone(), tok.kind.as_str().to_string(), subject, text));
    }
    Ok(report)
}
