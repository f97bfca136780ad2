//! Where a request is addressed: below the public URL's path, with the slashes of branch names
//! encoded so the router sees one segment.
use axum::extract::Request;
use axum::http::Method;

use crate::ratelimit::GRAPHQL_PATH;

/// Strips the public URL's path (e.g. `/api/v3`: the API answers there as well as at the root)
/// and encodes the slashes of branch names; rewrites the request's URI when that changed it.
/// Returns the path as sent below the base (faults match it) and the routed one.
pub fn locate(base: &str, req: &mut Request) -> (String, String) {
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
    if let Some(p) = normalize_path(&path, matches!(*req.method(), Method::GET | Method::HEAD)) {
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

/// The enterprise layout's GraphQL endpoint: beside a base ending in `/api/v3`, `…/api/graphql`
/// (where gh and other clients look for it on an enterprise host).
fn enterprise_graphql(base: &str) -> Option<String> {
    base.strip_suffix("/v3").filter(|api| api.ends_with("/api")).map(|api| format!("{api}/graphql"))
}

/// Paths whose last parameter may contain `/` (branch names): the slashes are encoded so the
/// router sees one segment; the path extractor decodes them again. A `read` (GET, HEAD) of
/// `…/git/refs/{ref..}` is routed as `…/git/ref/{ref..}`, as on the hosted platform: it is the
/// `url` of every reference and what a repository's `git_refs_url` expands to (other methods
/// there are the reference writes).
fn normalize_path(path: &str, read: bool) -> Option<String> {
    // Most paths need nothing: look at the fifth segment only, without splitting the rest.
    let mut head = path.splitn(6, '/');
    let (Some(""), Some("repos"), Some(owner), Some(repo), Some(fifth), Some(rest)) =
        (head.next(), head.next(), head.next(), head.next(), head.next(), head.next())
    else {
        return None;
    };
    // `…/commits/{ref..}[/status|statuses]`, `…/branches/{branch..}`, `…/rules/branches/{branch..}`,
    // `…/git/ref/{ref..}` and `…/git/matching-refs/{ref..}`: the slashes of the ref or branch
    // (what lies between `keep_head` and `keep_tail`) are encoded.
    let mut renamed = false;
    let (keep_head, name, keep_tail) = match fifth {
        "commits" => match rest.rsplit_once('/') {
            Some((name, last @ ("status" | "statuses"))) => ("commits/", name, Some(last)),
            // Other resources below a commit are not refs.
            Some((_, "check-runs" | "check-suites" | "comments" | "pulls" | "branches-where-head")) => return None,
            _ => ("commits/", rest, None),
        },
        "branches" => ("branches/", rest, None),
        "rules" => ("rules/branches/", rest.strip_prefix("branches/")?, None),
        "git" => match rest.split_once('/')? {
            ("ref", name) => ("git/ref/", name, None),
            ("refs", name) if read && !name.is_empty() => {
                renamed = true;
                ("git/ref/", name, None)
            }
            ("matching-refs", name) => ("git/matching-refs/", name, None),
            _ => return None,
        },
        _ => return None,
    };
    if !renamed && !name.contains('/') {
        return None;
    }
    let mut out = String::with_capacity(path.len() + 16);
    for part in ["/repos/", owner, "/", repo, "/", keep_head] {
        out.push_str(part);
    }
    for (i, seg) in name.split('/').enumerate() {
        if i > 0 {
            out.push_str("%2F");
        }
        out.push_str(seg);
    }
    if let Some(last) = keep_tail {
        out.push('/');
        out.push_str(last);
    }
    Some(out)
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

    #[test]
    fn branch_refs_with_slashes_become_one_segment() {
        assert_eq!(
            super::normalize_path("/repos/o/r/commits/heads/feature/x/status", true).as_deref(),
            Some("/repos/o/r/commits/heads%2Ffeature%2Fx/status")
        );
        assert_eq!(super::normalize_path("/repos/o/r/commits/main/status", true), None);
        assert_eq!(
            super::normalize_path("/repos/o/r/rules/branches/feature/x", true).as_deref(),
            Some("/repos/o/r/rules/branches/feature%2Fx")
        );
        assert_eq!(super::normalize_path("/repos/o/r/rules/branches/main", true), None);
        assert_eq!(super::normalize_path("/repos/o/r/commits/a/b/check-runs", true), None);
        assert_eq!(super::normalize_path("/repos/o/r/commits/a/b/statuses", true).as_deref(), Some("/repos/o/r/commits/a%2Fb/statuses"));
        assert_eq!(super::normalize_path("/repos/o/r/rulesets/1/x", true), None);
        assert_eq!(super::normalize_path("/orgs/o/r/commits/a/b/status", true), None);
        assert_eq!(
            super::normalize_path("/repos/o/r/commits/heads/feature/x", true).as_deref(),
            Some("/repos/o/r/commits/heads%2Ffeature%2Fx")
        );
        assert_eq!(super::normalize_path("/repos/o/r/commits/main", true), None);
        assert_eq!(super::normalize_path("/repos/o/r/branches/feature/x", true).as_deref(), Some("/repos/o/r/branches/feature%2Fx"));
        assert_eq!(super::normalize_path("/repos/o/r/git/ref/heads/main", true).as_deref(), Some("/repos/o/r/git/ref/heads%2Fmain"));
        assert_eq!(
            super::normalize_path("/repos/o/r/git/matching-refs/tags/v1", true).as_deref(),
            Some("/repos/o/r/git/matching-refs/tags%2Fv1")
        );
        assert_eq!(super::normalize_path("/repos/o/r/git/matching-refs/tags", true), None);
        assert_eq!(super::normalize_path("/repos/o/r/git/refs/heads/main", false), None);
    }

    #[test]
    fn references_read_through_their_url() {
        assert_eq!(
            super::normalize_path("/repos/o/r/git/refs/heads/feature/x", true).as_deref(),
            Some("/repos/o/r/git/ref/heads%2Ffeature%2Fx")
        );
        assert_eq!(super::normalize_path("/repos/o/r/git/refs/main", true).as_deref(), Some("/repos/o/r/git/ref/main"));
        assert_eq!(super::normalize_path("/repos/o/r/git/refs/heads/feature/x", false), None);
        assert_eq!(super::normalize_path("/repos/o/r/git/refs/", true), None);
        assert_eq!(super::normalize_path("/repos/o/r/git/refs", true), None);
        assert_eq!(super::normalize_path("/repos/o/r/git/ref/main", true), None);
    }
}
