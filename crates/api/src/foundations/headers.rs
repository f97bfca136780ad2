//! Names of the platform's own response headers, parsed once: `HeaderName::from_static` parses
//! and validates its argument on every call, which showed as the largest single cost of a
//! cached 304 (a dozen headers per response).
use axum::http::{header, HeaderName};

macro_rules! names {
    ($($id:ident = $s:literal;)*) => {
        $(pub const $id: HeaderName = HeaderName::from_static($s);)*
        /// A header name from a literal, without parsing it again when it is one of ours.
        pub fn name(s: &'static str) -> HeaderName {
            match s {
                $($s => $id,)*
                "link" => header::LINK,
                "location" => header::LOCATION,
                "etag" => header::ETAG,
                "last-modified" => header::LAST_MODIFIED,
                "retry-after" => header::RETRY_AFTER,
                other => HeaderName::from_static(other),
            }
        }
    };
}

/// How many headers the contract may add to a response: maps made for responses leave room
/// for them.
pub const ADDED_HEADERS: usize = 24;

names! {
    X_RATELIMIT_LIMIT = "x-ratelimit-limit";
    X_RATELIMIT_REMAINING = "x-ratelimit-remaining";
    X_RATELIMIT_RESET = "x-ratelimit-reset";
    X_RATELIMIT_USED = "x-ratelimit-used";
    X_RATELIMIT_RESOURCE = "x-ratelimit-resource";
    X_OAUTH_SCOPES = "x-oauth-scopes";
    X_OAUTH_CLIENT_ID = "x-oauth-client-id";
    X_ACCEPTED_OAUTH_SCOPES = "x-accepted-oauth-scopes";
    X_ACCEPTED_SERVICE_PERMISSIONS = "x-accepted-service-permissions";
    X_SERVICE_API_VERSION = "x-service-api-version";
    X_SERVICE_API_VERSION_SELECTED = "x-service-api-version-selected";
    X_SERVICE_REQUEST_ID = "x-service-request-id";
    X_SERVICE_MEDIA_TYPE = "x-service-media-type";
    X_POLL_INTERVAL = "x-poll-interval";
    X_FORWARDED_FOR = "x-forwarded-for";
    DEPRECATION = "deprecation";
    SUNSET = "sunset";
}

#[cfg(test)]
mod tests {
    #[test]
    fn known_and_other_names() {
        assert_eq!(super::name("x-poll-interval"), super::X_POLL_INTERVAL);
        assert_eq!(super::name("link").as_str(), "link");
        assert_eq!(super::name("x-something-else").as_str(), "x-something-else");
    }
}
