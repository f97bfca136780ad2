//! Every difference between API versions lives here, so shapes ask one place.
use platform_core::ApiVersion;

/// `has_downloads` on repository objects exists only before 2026-03-10.
pub fn has_downloads(v: ApiVersion) -> Option<bool> {
    (v < ApiVersion::V2026_03_10).then_some(true)
}

/// `rate` (a copy of `resources.core`) exists only before 2026-03-10.
pub fn rate_limit_rate<T>(v: ApiVersion, core: T) -> Option<T> {
    (v < ApiVersion::V2026_03_10).then_some(core)
}

/// `authorizations_url` and `hub_url` on the API root exist only before 2026-03-10.
pub fn root_legacy_urls(v: ApiVersion, api: &str) -> Option<(String, String)> {
    (v < ApiVersion::V2026_03_10).then(|| (format!("{api}/authorizations"), format!("{api}/hub")))
}

/// `cvss` of a dependency alert's `security_advisory` exists only before 2026-03-10 (read
/// `cvss_severities` instead).
pub fn advisory_has_cvss(v: ApiVersion) -> bool {
    v < ApiVersion::V2026_03_10
}
