//! Where a request is addressed: below the public URL's path, with the slashes of the path
//! parameters that may hold them (branch names, refs) encoded so the router sees one segment.
use axum::extract::Request;
use axum::http::Method;

use crate::operation::Operation;
use crate::ratelimit::GRAPHQL_PATH;

/// Strips the public URL's path (e.g. `/api/v3`: the API answers there as well as at the root)
/// and encodes the slashes of branch names; rewrites the request's URI when that changed it.
/// Returns the path as sent below the base (faults match it) and the routed one.
pub fn locate(base: &str, slashes: &SlashRoutes, req: &mut Request) -> (String, String) {
    let mut path = req.uri().path().to_string();
    if !base.is_empty() && (path == base || path.starts_with(&format!("{base}/"))) {
        path = path[base.len()..].to_string();
        if path.is_empty() {
            path = "/".into();
        }
    } else if enterprise_graphql(base).is_some_and(|g| g == path) {
        path = GRAPHQL_PATH.into();
    }
    let api_path = path.clone();
    if let Some(p) = slashes.normalize(&path, matches!(*req.method(), Method::GET | Method::HEAD)) {
        // Encoding slashes changes nothing else: anything more is a read alias's new name.
        if p.replace("%2F", "/") != path {
            req.extensions_mut().insert(ReadAlias);
        }
        path = p;
    }
    if path != req.uri().path() {
        let pq = match req.uri().query() {
            Some(q) => format!("{path}?{q}"),
            None => path.clone(),
        };
        if let Ok(uri) = pq.parse() {
            *req.uri_mut() = uri;
        }
    }
    (api_path, path)
}

/// Marks a request whose path a read alias renamed (the handler may answer the alias's own way).
#[derive(Clone, Copy, Debug)]
pub struct ReadAlias;

/// The enterprise layout's GraphQL endpoint: beside a base ending in `/api/v3`, `…/api/graphql`
/// (where gh and other clients look for it on an enterprise host).
fn enterprise_graphql(base: &str) -> Option<String> {
    base.strip_suffix("/v3").filter(|api| api.ends_with("/api")).map(|api| format!("{api}/graphql"))
}

/// The routes whose path parameter may hold `/` (`Operation::slash_param`), worked out once per
/// process from the declarations: a path matching one has the parameter's slashes encoded so
/// the router sees one segment (the path extractor decodes them again).
#[derive(Debug, Default)]
pub struct SlashRoutes(Vec<SlashRoute>);

#[derive(Debug)]
struct SlashRoute {
    /// Segments before the parameter (from the leading empty one): literals, `None` for
    /// parameters.
    head: Vec<Option<&'static str>>,
    /// Literal segments after it.
    tail: Vec<&'static str>,
    /// Last segments that are no part of it (resources below).
    not_ending_in: &'static [&'static str],
    /// A read alias: reads only, routed to the operation's own head.
    alias_of: Option<Vec<Option<&'static str>>>,
}

/// Segments a path is matched on at most (longer paths are routed as they are).
const MAX_SEGMENTS: usize = 64;

impl SlashRoutes {
    pub fn of(ops: &[&'static Operation]) -> SlashRoutes {
        let mut routes = Vec::new();
        for op in ops {
            let Some(slash) = op.slash else { continue };
            let own = SlashRoute::of(op.path, slash.name, slash.not_ending_in, None);
            if let Some(alias) = slash.read_alias {
                let route = SlashRoute::of(alias, slash.name, &[], Some(own.head.clone()));
                assert_eq!(route.head.len(), own.head.len(), "{}: a read alias has the operation's parameters", op.id);
                routes.push(route);
            }
            routes.push(own);
        }
        // A route with literal segments after the parameter is tried before one without, which
        // would take them into the parameter.
        routes.sort_by_key(|r| std::cmp::Reverse(r.tail.len()));
        SlashRoutes(routes)
    }

    /// The path with the slashes of a parameter encoded (and a read alias renamed); `None` when
    /// it is routed as it is. `read`: a GET or HEAD.
    pub fn normalize(&self, path: &str, read: bool) -> Option<String> {
        let mut segs = [""; MAX_SEGMENTS];
        let mut n = 0;
        for s in path.split('/') {
            *segs.get_mut(n)? = s;
            n += 1;
        }
        let segs = &segs[..n];
        let (route, middle) = self.0.iter().filter(|r| read || r.alias_of.is_none()).find_map(|r| Some((r, r.matches(segs)?)))?;
        if route.alias_of.is_none() && middle.len() == 1 {
            return None;
        }
        let head = route.alias_of.as_ref().unwrap_or(&route.head);
        let mut out = String::with_capacity(path.len() + 16);
        for (i, lit) in head.iter().enumerate().skip(1) {
            out.push('/');
            out.push_str(lit.unwrap_or(segs[i]));
        }
        out.push('/');
        out.push_str(&middle.join("%2F"));
        for t in &route.tail {
            out.push('/');
            out.push_str(t);
        }
        Some(out)
    }
}

impl SlashRoute {
    fn of(
        path: &'static str,
        name: &str,
        not_ending_in: &'static [&'static str],
        alias_of: Option<Vec<Option<&'static str>>>,
    ) -> SlashRoute {
        let segs: Vec<&'static str> = path.split('/').collect();
        let at = segs.iter().position(|s| s.strip_prefix('{').and_then(|s| s.strip_suffix('}')) == Some(name));
        let at = at.unwrap_or_else(|| panic!("{path}: no parameter {name}"));
        let literal = |s: &&'static str| (!s.starts_with('{')).then_some(*s);
        let tail: Vec<&'static str> = segs[at + 1..].to_vec();
        assert!(tail.iter().all(|s| literal(s).is_some()), "{path}: only literal segments after {name}");
        SlashRoute { head: segs[..at].iter().map(literal).collect(), tail, not_ending_in, alias_of }
    }

    /// The segments of the parameter, when `segs` is a path of this route.
    fn matches<'a>(&self, segs: &'a [&'a str]) -> Option<&'a [&'a str]> {
        let (h, t) = (self.head.len(), self.tail.len());
        if segs.len() < h + 1 + t {
            return None;
        }
        let head_ok = self.head.iter().zip(segs).all(|(lit, s)| lit.is_none_or(|l| l == *s));
        let tail_ok = self.tail.iter().zip(&segs[segs.len() - t..]).all(|(l, s)| l == s);
        let middle = &segs[h..segs.len() - t];
        let below = t == 0 && middle.len() > 1 && self.not_ending_in.contains(middle.last()?);
        (head_ok && tail_ok && !middle[0].is_empty() && !below).then_some(middle)
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn enterprise_graphql_only_beside_an_api_v3_base() {
        assert_eq!(super::enterprise_graphql("/api/v3").as_deref(), Some("/api/graphql"));
        assert_eq!(super::enterprise_graphql("/ghe/api/v3").as_deref(), Some("/ghe/api/graphql"));
        assert_eq!(super::enterprise_graphql("/v3"), None);
        assert_eq!(super::enterprise_graphql(""), None);
        assert_eq!(super::enterprise_graphql("/api"), None);
    }

    use crate::operation::Operation;

    // The routes of the branch, commit and reference operations, as `ops/` declares them.
    static COMBINED: Operation = Operation::get("t/combined", "/repos/{owner}/{repo}/commits/{ref}/status", "").slash_param("ref");
    static STATUSES: Operation = Operation::get("t/statuses", "/repos/{owner}/{repo}/commits/{ref}/statuses", "").slash_param("ref");
    static COMMIT: Operation = Operation::get("t/commit", "/repos/{owner}/{repo}/commits/{ref}", "")
        .slash_param_except("ref", &["check-runs", "check-suites", "comments", "pulls", "branches-where-head"]);
    static BRANCH: Operation = Operation::get("t/branch", "/repos/{owner}/{repo}/branches/{branch}", "").slash_param("branch");
    static RULES: Operation = Operation::get("t/rules", "/repos/{owner}/{repo}/rules/branches/{branch}", "").slash_param("branch");
    static REF: Operation = Operation::get("t/ref", "/repos/{owner}/{repo}/git/ref/{ref}", "")
        .slash_param_read_alias("ref", "/repos/{owner}/{repo}/git/refs/{ref}");
    static MATCHING: Operation = Operation::get("t/matching", "/repos/{owner}/{repo}/git/matching-refs/{ref}", "").slash_param("ref");

    fn normalize_path(path: &str, read: bool) -> Option<String> {
        static ROUTES: std::sync::OnceLock<super::SlashRoutes> = std::sync::OnceLock::new();
        ROUTES
            .get_or_init(|| super::SlashRoutes::of(&[&COMBINED, &STATUSES, &COMMIT, &BRANCH, &RULES, &REF, &MATCHING]))
            .normalize(path, read)
    }

    #[test]
    fn branch_refs_with_slashes_become_one_segment() {
        assert_eq!(
            normalize_path("/repos/o/r/commits/heads/feature/x/status", true).as_deref(),
            Some("/repos/o/r/commits/heads%2Ffeature%2Fx/status")
        );
        assert_eq!(normalize_path("/repos/o/r/commits/main/status", true), None);
        assert_eq!(normalize_path("/repos/o/r/rules/branches/feature/x", true).as_deref(), Some("/repos/o/r/rules/branches/feature%2Fx"));
        assert_eq!(normalize_path("/repos/o/r/rules/branches/main", true), None);
        assert_eq!(normalize_path("/repos/o/r/commits/a/b/check-runs", true), None);
        assert_eq!(normalize_path("/repos/o/r/commits/a/b/statuses", true).as_deref(), Some("/repos/o/r/commits/a%2Fb/statuses"));
        assert_eq!(normalize_path("/repos/o/r/rulesets/1/x", true), None);
        assert_eq!(normalize_path("/orgs/o/r/commits/a/b/status", true), None);
        assert_eq!(normalize_path("/repos/o/r/commits/heads/feature/x", true).as_deref(), Some("/repos/o/r/commits/heads%2Ffeature%2Fx"));
        assert_eq!(normalize_path("/repos/o/r/commits/main", true), None);
        assert_eq!(normalize_path("/repos/o/r/branches/feature/x", true).as_deref(), Some("/repos/o/r/branches/feature%2Fx"));
        assert_eq!(normalize_path("/repos/o/r/git/ref/heads/main", true).as_deref(), Some("/repos/o/r/git/ref/heads%2Fmain"));
        assert_eq!(normalize_path("/repos/o/r/git/matching-refs/tags/v1", true).as_deref(), Some("/repos/o/r/git/matching-refs/tags%2Fv1"));
        assert_eq!(normalize_path("/repos/o/r/git/matching-refs/tags", true), None);
        assert_eq!(normalize_path("/repos/o/r/git/refs/heads/main", false), None);
    }

    #[test]
    fn references_read_through_their_url() {
        assert_eq!(normalize_path("/repos/o/r/git/refs/heads/feature/x", true).as_deref(), Some("/repos/o/r/git/ref/heads%2Ffeature%2Fx"));
        assert_eq!(normalize_path("/repos/o/r/git/refs/main", true).as_deref(), Some("/repos/o/r/git/ref/main"));
        assert_eq!(normalize_path("/repos/o/r/git/refs/heads/feature/x", false), None);
        assert_eq!(normalize_path("/repos/o/r/git/refs/", true), None);
        assert_eq!(normalize_path("/repos/o/r/git/refs", true), None);
        assert_eq!(normalize_path("/repos/o/r/git/ref/main", true), None);
    }
}
