//! Token kinds of document 1, each with its own recognisable neutral prefix.
use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TokenKind {
    /// Classic personal access token (scopes).
    Classic,
    /// Fine-grained personal access token (permissions, resource owner, repository selection).
    FineGrained,
    /// OAuth app user token (scopes, acts for the user).
    Oauth,
    /// App user-to-server token (app permissions, acts for the user).
    UserToServer,
    /// App installation token (app permissions on the installation's account).
    Installation,
    /// Workflow built-in token, scoped to one repository.
    Workflow,
}

impl TokenKind {
    pub const ALL: [TokenKind; 6] = [
        TokenKind::Classic,
        TokenKind::FineGrained,
        TokenKind::Oauth,
        TokenKind::UserToServer,
        TokenKind::Installation,
        TokenKind::Workflow,
    ];

    pub fn prefix(self) -> &'static str {
        match self {
            TokenKind::Classic => "svp_",
            TokenKind::FineGrained => "service_pat_",
            TokenKind::Oauth => "svo_",
            TokenKind::UserToServer => "svu_",
            TokenKind::Installation => "svs_",
            TokenKind::Workflow => "svw_",
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            TokenKind::Classic => "classic",
            TokenKind::FineGrained => "fine_grained",
            TokenKind::Oauth => "oauth",
            TokenKind::UserToServer => "user_to_server",
            TokenKind::Installation => "installation",
            TokenKind::Workflow => "workflow",
        }
    }

    pub fn parse(s: &str) -> Option<TokenKind> {
        Self::ALL.into_iter().find(|k| k.as_str() == s)
    }

    /// The kind a presented token claims by its prefix (a cheap pre-check before the hash lookup).
    pub fn from_token(token: &str) -> Option<TokenKind> {
        Self::ALL.into_iter().find(|k| token.starts_with(k.prefix()))
    }

    /// Scope-based tokens: `X-OAuth-Scopes` applies to them.
    pub fn uses_scopes(self) -> bool {
        matches!(self, TokenKind::Classic | TokenKind::Oauth)
    }

    /// Tokens of apps (installation, user-to-server, workflow): denials say "by integration".
    pub fn is_integration(self) -> bool {
        matches!(self, TokenKind::UserToServer | TokenKind::Installation | TokenKind::Workflow)
    }

    /// A new random token of this kind: prefix + 36 alphanumerics (+ the fine-grained shape).
    pub fn generate(self) -> String {
        match self {
            TokenKind::FineGrained => {
                format!("{}{}_{}", self.prefix(), crate::ids::random_alnum(22), crate::ids::random_alnum(59))
            }
            _ => format!("{}{}", self.prefix(), crate::ids::random_alnum(36)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn prefixes_are_recognised() {
        for k in TokenKind::ALL {
            assert_eq!(TokenKind::from_token(&k.generate()), Some(k));
            assert_eq!(TokenKind::parse(k.as_str()), Some(k));
        }
    }
}
