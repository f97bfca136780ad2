//! The interactive API reference at `GET /docs`: a small, dependency-free page (HTML, JS, CSS
//! embedded in the binary) that fetches the OpenAPI document at `openapi.json` next to it and
//! renders every operation with a "Try it" panel. Everything is served by platformd itself, so
//! the page works offline; a strict Content-Security-Policy allows nothing but this origin.
use axum::http::{header, HeaderValue};
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::get;
use axum::Router;

pub const INDEX_HTML: &str = include_str!("docs/index.html");
pub const DOCS_JS: &str = include_str!("docs/docs.js");
pub const DOCS_CSS: &str = include_str!("docs/docs.css");

/// No inline script or style, no other origin; `fetch` only to this origin (the API itself).
pub const CSP: &str = "default-src 'self'; connect-src 'self'; script-src 'self'; style-src 'self'; \
                       img-src 'self' data:; object-src 'none'; base-uri 'none'; form-action 'none'; \
                       frame-ancestors 'none'";

/// `/docs`, `/docs/` (redirects, so relative asset URLs resolve), `/docs/docs.js`, `/docs/docs.css`.
pub fn router<S: Clone + Send + Sync + 'static>() -> Router<S> {
    Router::new()
        .route("/docs", get(index))
        .route("/docs/", get(|| async { Redirect::permanent("../docs") }))
        .route("/docs/docs.js", get(script))
        .route("/docs/docs.css", get(style))
}

fn asset(content_type: &'static str, body: &'static str) -> Response {
    let mut r = body.into_response();
    let h = r.headers_mut();
    h.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    h.insert(header::CONTENT_SECURITY_POLICY, HeaderValue::from_static(CSP));
    h.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    h.insert(header::REFERRER_POLICY, HeaderValue::from_static("no-referrer"));
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    r
}

async fn index() -> Response {
    asset("text/html; charset=utf-8", INDEX_HTML)
}

async fn script() -> Response {
    asset("application/javascript; charset=utf-8", DOCS_JS)
}

async fn style() -> Response {
    asset("text/css; charset=utf-8", DOCS_CSS)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    /// A small OpenAPI 3.1 document for tests and manual checks only (never served).
    const FIXTURE: &str = include_str!("docs/fixture.json");

    /// `http://` or `https://` in an asset, outside of prose: the page must load nothing from
    /// anywhere but platformd.
    fn external_urls(asset: &str) -> Vec<String> {
        let mut found = Vec::new();
        for (i, line) in asset.lines().enumerate() {
            for scheme in ["http://", "https://"] {
                if line.contains(scheme) {
                    found.push(format!("line {}: {}", i + 1, line.trim()));
                }
            }
        }
        found
    }

    #[test]
    fn assets_load_nothing_external() {
        for (name, a) in [("index.html", INDEX_HTML), ("docs.js", DOCS_JS), ("docs.css", DOCS_CSS)] {
            assert_eq!(external_urls(a), Vec::<String>::new(), "{name}");
            for bad in ["@import", "cdn.", "fonts.googleapis", "<script>", " style=\""] {
                assert!(!a.contains(bad), "{name} contains {bad:?}");
            }
        }
        // Assets are referenced relative to the page, so the page works under any base path.
        assert!(INDEX_HTML.contains("src=\"docs/docs.js\""));
        assert!(INDEX_HTML.contains("href=\"docs/docs.css\""));
        assert!(DOCS_JS.contains("'openapi.json'"));
    }

    #[test]
    fn fixture_is_an_openapi_31_document_with_unique_operation_ids() {
        let doc: Value = serde_json::from_str(FIXTURE).unwrap();
        assert!(doc["openapi"].as_str().unwrap().starts_with("3.1"));
        let mut ids = Vec::new();
        for (path, item) in doc["paths"].as_object().unwrap() {
            for (method, op) in item.as_object().unwrap() {
                let id = op["operationId"].as_str().unwrap_or_else(|| panic!("{method} {path}: operationId"));
                assert!(op["responses"].is_object(), "{id}: responses");
                assert!(op["tags"].as_array().is_some_and(|t| !t.is_empty()), "{id}: tags");
                ids.push(id.to_string());
            }
        }
        let n = ids.len();
        ids.sort();
        ids.dedup();
        assert_eq!(ids.len(), n, "duplicate operationId");
        assert!(n >= 5);
    }

    #[test]
    fn csp_is_strict() {
        assert!(CSP.starts_with("default-src 'self';"));
        assert!(CSP.contains("connect-src 'self'"));
        assert!(!CSP.contains("unsafe"));
        HeaderValue::from_static(CSP);
    }
}
