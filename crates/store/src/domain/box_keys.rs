//! Sealed-box key pairs: one per owner and scope (`repo` for development-environment secrets,
//! `org` for private registries). The secret key is stored encrypted by the caller.
use crate::{params, Conn, DbError};

#[derive(Clone, Debug)]
pub struct BoxKey {
    pub key_id: String,
    /// Base64 X25519 public key.
    pub public_key: String,
    pub secret_key_enc: String,
}

pub fn get(c: &mut dyn Conn, scope: &str, owner_id: i64) -> Result<Option<BoxKey>, DbError> {
    Ok(c.query_opt("SELECT key_id, public_key, secret_key_enc FROM box_keys WHERE scope = ? AND owner_id = ?", params![scope, owner_id])?
        .map(|r| BoxKey { key_id: r.string(0), public_key: r.string(1), secret_key_enc: r.string(2) }))
}

/// The owner's key, created with `make` the first time (a concurrent creator's key wins).
pub fn get_or_create(c: &mut dyn Conn, scope: &str, owner_id: i64, now: i64, make: impl FnOnce() -> BoxKey) -> Result<BoxKey, DbError> {
    if let Some(k) = get(c, scope, owner_id)? {
        return Ok(k);
    }
    let k = make();
    c.execute(
        "INSERT INTO box_keys (scope, owner_id, key_id, public_key, secret_key_enc, created_at) VALUES (?, ?, ?, ?, ?, ?) \
         ON CONFLICT (scope, owner_id) DO NOTHING",
        params![scope, owner_id, &k.key_id, &k.public_key, &k.secret_key_enc, now],
    )?;
    Ok(get(c, scope, owner_id)?.unwrap_or(k))
}
