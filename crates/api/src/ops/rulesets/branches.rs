//! The rules that apply to a branch (`GET …/rules/branches/{branch}`, and the `protected` flag
//! of the branch endpoints): the repository's and organization's active branch rulesets,
//! compiled once per repository and matched by name. Judging a ref change is [`super::enforce`].
use std::collections::HashMap;
use std::sync::Arc;

use platform_store::domain::repos::Repo;
use platform_store::domain::rulesets::Ruleset;
use schemars::{JsonSchema, SchemaGenerator};
use serde::Serialize;
use serde_json::{json, Value};

use super::matching::Condition;
use super::{body, definition_of, repo_origin, visible};
use crate::cache::GenCache;
use crate::error::ApiResult;
use crate::reply::{json_array, Reply};
use crate::request::{Ctx, Pagination, Query};
use crate::shapes::Urls;
use crate::state::{ApiConfig, FeatureState, FEATURE_CACHE_SHARE};

/// BranchRule: a rule that applies to a branch, with the ruleset it comes from.
#[derive(Serialize)]
pub struct BranchRule<'a> {
    #[serde(rename = "type")]
    pub kind: &'a Value,
    pub ruleset_source_type: &'static str,
    pub ruleset_source: &'a str,
    pub ruleset_id: i64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parameters: Option<&'a Value>,
}

/// One of the rules of [`body`] (`type` and its `parameters`), and where it comes from.
impl JsonSchema for BranchRule<'_> {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "BranchRule".into()
    }
    fn json_schema(_: &mut SchemaGenerator) -> schemars::Schema {
        let mut rule = body::rule_schema();
        rule["type"] = json!("object");
        rule["properties"] = json!({
            "ruleset_source_type": {"type": "string", "enum": ["Repository", "Organization"]},
            "ruleset_source": {"type": "string"},
            "ruleset_id": {"type": "integer"},
        });
        rule["required"] = json!(["type", "ruleset_source_type", "ruleset_source", "ruleset_id"]);
        rule.try_into().expect("an object schema")
    }
}

/// The active branch rulesets of a repository, compiled: each condition with its rules, already
/// serialized as BranchRule JSON (an answer is these joined, no JSON tree built per request).
/// Cached per repository for as long as nothing is written.
pub struct BranchRulesets {
    entries: Vec<(Condition, Vec<Box<[u8]>>)>,
    /// Include alternatives by their literal prefixes (entry, include, alternative), and the
    /// entries any name may match: a branch is matched against the alternatives some prefix of
    /// it names, not against every pattern.
    by_prefix: HashMap<String, Vec<(usize, usize, usize)>, foldhash::fast::RandomState>,
    /// The byte lengths of those prefixes: only prefixes of these lengths are looked up.
    prefix_lens: Vec<usize>,
    always: Vec<usize>,
}

impl BranchRulesets {
    fn compile(u: &Urls, repo: &Repo, all: &[Ruleset]) -> BranchRulesets {
        let entries = all
            .iter()
            .filter(|rs| rs.target == "branch" && rs.enforcement == "active")
            .map(|rs| {
                let def = definition_of(rs);
                let o = repo_origin(u, rs, repo);
                let rules = def["rules"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .map(|r| {
                        let rule = BranchRule {
                            kind: &r["type"],
                            ruleset_source_type: o.kind,
                            ruleset_source: &o.source,
                            ruleset_id: rs.id,
                            parameters: r.get("parameters"),
                        };
                        serde_json::to_vec(&rule).unwrap_or_default().into_boxed_slice()
                    })
                    .collect();
                (Condition::compile(&def["conditions"]["ref_name"]), rules)
            })
            .collect::<Vec<_>>();
        let (mut by_prefix, mut always) = (HashMap::<_, Vec<_>, foldhash::fast::RandomState>::default(), Vec::new());
        for (i, (cond, _)) in entries.iter().enumerate() {
            match cond.include_prefixes() {
                Some(alternatives) => {
                    for (prefix, include, alternative) in alternatives {
                        by_prefix.entry(prefix).or_default().push((i, include, alternative));
                    }
                }
                None => always.push(i),
            }
        }
        let mut prefix_lens: Vec<usize> = by_prefix.keys().map(String::len).collect();
        prefix_lens.sort_unstable();
        prefix_lens.dedup();
        BranchRulesets { entries, by_prefix, prefix_lens, always }
    }

    /// The rules that apply to `branch`, in ruleset order.
    fn for_branch(&self, branch: &str, default_branch: &str) -> Vec<&[u8]> {
        let (r, d) = (format!("refs/heads/{branch}"), format!("refs/heads/{default_branch}"));
        let chars: Vec<char> = r.chars().collect();
        let mut included = vec![false; self.entries.len()];
        for &i in &self.always {
            included[i] = self.entries[i].0.includes(&r, &chars, Some(&d));
        }
        for &len in self.prefix_lens.iter().take_while(|&&len| len <= r.len()) {
            let Some(prefix) = r.get(..len) else { continue };
            // The prefix, a literal, has as many characters as bytes only when ASCII; otherwise
            // count them.
            let skip = if prefix.is_ascii() { len } else { prefix.chars().count() };
            for &(i, include, alternative) in self.by_prefix.get(prefix).into_iter().flatten() {
                if !included[i] {
                    included[i] = self.entries[i].0.include_rest_matches(include, alternative, &chars[skip..]);
                }
            }
        }
        self.entries
            .iter()
            .zip(included)
            .filter(|((cond, _), inc)| *inc && !cond.excluded(&r, &chars, Some(&d)))
            .flat_map(|((_, rules), _)| rules.iter().map(|r| &r[..]))
            .collect()
    }
}

/// Repository id → its active branch rulesets, compiled: this feature's cache, exact under the
/// write generation.
pub struct Compiled(GenCache<i64, Arc<BranchRulesets>>);

impl FeatureState for Compiled {
    fn new(config: &ApiConfig) -> Compiled {
        Compiled(GenCache::new(config.cache_bytes / 100 * FEATURE_CACHE_SHARE, |_, _| 4096))
    }
    fn clear(&self) {
        self.0.clear();
    }
}

async fn branch_rulesets(ctx: &Ctx, repo: &Repo) -> ApiResult<Arc<BranchRulesets>> {
    let generation = ctx.generation();
    let cache = ctx.app.feature::<Compiled>();
    if let Some(hit) = generation.and_then(|g| cache.0.get(&repo.id, g)) {
        return Ok(hit);
    }
    let all = visible(ctx, repo, true).await?;
    let compiled = Arc::new(BranchRulesets::compile(&ctx.app.urls, repo, &all));
    if let Some(g) = generation {
        cache.0.put(repo.id, g, compiled.clone());
    }
    Ok(compiled)
}

/// Whether active rules apply to a branch: what the branch endpoints call `protected`.
pub async fn protected_branches(ctx: &Ctx, repo: &Repo) -> ApiResult<impl Fn(&str) -> bool> {
    let compiled = branch_rulesets(ctx, repo).await?;
    let default = repo.default_branch.clone();
    Ok(move |branch: &str| !compiled.for_branch(branch, &default).is_empty())
}

pub(super) async fn branch_rules(ctx: Ctx, Query(q): Query<Pagination>) -> ApiResult<Reply> {
    let repo = ctx.repo();
    let page = q.page(30, 100);
    let compiled = branch_rulesets(&ctx, repo).await?;
    let rules = compiled.for_branch(ctx.param("branch"), &repo.default_branch);
    let total = rules.len() as i64;
    let items = rules.into_iter().skip(page.offset() as usize).take(page.per_page as usize);
    Ok(Reply::ok_serialized(json_array(items, 512)).opt_header("link", ctx.link(page, total)))
}
