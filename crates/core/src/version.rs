//! API versions selected by `X-Service-Api-Version`.

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ApiVersion {
    V2022_11_28,
    V2026_03_10,
}

impl ApiVersion {
    /// Used when the request names no version.
    pub const DEFAULT: ApiVersion = ApiVersion::V2022_11_28;

    pub fn parse(s: &str) -> Option<ApiVersion> {
        match s.trim() {
            "2022-11-28" => Some(ApiVersion::V2022_11_28),
            "2026-03-10" => Some(ApiVersion::V2026_03_10),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            ApiVersion::V2022_11_28 => "2022-11-28",
            ApiVersion::V2026_03_10 => "2026-03-10",
        }
    }

    /// The message body `errors` text for an unsupported version.
    pub fn unsupported_message(given: &str) -> String {
        format!(
            "The version you specified in the \"X-Service-API-Version\" request header, \"{given}\", is not a supported version. The following versions are currently supported: \"2026-03-10\" (most recent) and \"2022-11-28\"."
        )
    }
}
