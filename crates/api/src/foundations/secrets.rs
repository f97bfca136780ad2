//! Secrets, in one place: encryption at rest under the server key (webhook secrets, secret
//! values, sealed-box secret keys), and the sealed boxes clients send (libsodium
//! `crypto_box_seal`: X25519, XSalsa20-Poly1305), opened on write so that garbage is refused.
use base64::Engine;
use chacha20poly1305::aead::{Aead, AeadCore, KeyInit, Payload};
use chacha20poly1305::{XChaCha20Poly1305, XNonce};
use crypto_box::{PublicKey, SecretKey};
use hmac::{Hmac, Mac};
use platform_store::domain::{box_keys, hooks};
use platform_store::{Conn, DbError};
use sha2::Sha256;

use crate::error::ApiError;

type HmacSha256 = Hmac<Sha256>;

pub fn hmac256(key: &[u8], parts: &[&[u8]]) -> [u8; 32] {
    let mut m = <HmacSha256 as Mac>::new_from_slice(key).expect("hmac key");
    for p in parts {
        m.update(p);
    }
    m.finalize().into_bytes().into()
}

/// Where the key that encrypts secrets at rest comes from.
#[derive(Clone, Copy, Default, PartialEq, Eq)]
pub enum AtRestKey {
    /// Generated once per database and kept in it (zero configuration): protects against
    /// secrets showing in responses and logs, not against a copy of the database.
    #[default]
    InDatabase,
    /// The operator's (`PLATFORM_SECRET_KEY` / `PLATFORM_SECRET_KEY_FILE`): the database holds
    /// only a check value, so a copy of it alone reveals no secret.
    External([u8; 32]),
}

impl std::fmt::Debug for AtRestKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            AtRestKey::InDatabase => "InDatabase",
            AtRestKey::External(_) => "External(<redacted>)",
        })
    }
}

impl AtRestKey {
    /// From the operator's text: 64 hex digits or base64 of 32 bytes (e.g. `openssl rand -hex 32`).
    pub fn parse(text: &str) -> Result<AtRestKey, String> {
        let t = text.trim();
        let bytes = hex::decode(t).ok().or_else(|| base64::engine::general_purpose::STANDARD.decode(t).ok());
        match bytes.and_then(|b| <[u8; 32]>::try_from(b).ok()) {
            Some(k) => Ok(AtRestKey::External(k)),
            None => Err("the secret key must be 32 bytes, as 64 hex digits or base64".into()),
        }
    }
}

/// `secret_key = "…"` in the configuration file.
impl<'de> serde::Deserialize<'de> for AtRestKey {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        AtRestKey::parse(&String::deserialize(d)?).map_err(serde::de::Error::custom)
    }
}

/// Name of the in-database key, and of the check value an external key leaves instead.
const DB_KEY: &str = "secret-encryption";
const CHECK: &str = "secret-key-check";

/// The tables holding the server key or values encrypted under it.
pub const TABLES: [&str; 6] = ["webhook_keys", "hooks", "box_keys", "devenv_secrets", "private_registries", "imports"];

/// Every column holding a value encrypted under the server key.
const ENCRYPTED: [(&str, &str); 5] = [
    ("hooks", "secret_enc"),
    ("box_keys", "secret_key_enc"),
    ("devenv_secrets", "value_enc"),
    ("private_registries", "value_enc"),
    ("imports", "credentials_enc"),
];

/// The server key.
pub fn server_key(c: &mut dyn Conn, k: &AtRestKey) -> Result<Vec<u8>, DbError> {
    match k {
        AtRestKey::External(key) => Ok(key.to_vec()),
        AtRestKey::InDatabase => {
            let k = hooks::key(c, DB_KEY, || platform_core::ids::random_hex(32))?;
            Ok(hex::decode(k).unwrap_or_default())
        }
    }
}

fn check_value(key: &[u8; 32]) -> String {
    hex::encode(hmac256(key, &[b"platformd at-rest key check"]))
}

/// What [`prepare`] did.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Prepared {
    /// Secrets moved from the in-database key to an external one: the old key and ciphertexts
    /// are deleted, and the caller scrubs the database files ([`platform_store::Store::scrub`]).
    pub moved_to_external: bool,
    /// Values re-encrypted from the old format ([`legacy`]) to the current one.
    pub upgraded: usize,
}

/// Brings the database in line with the configured key, at start and after a reset, in one
/// write transaction: values in the old at-rest format are re-encrypted in the current one;
/// with an external key, rows still encrypted under the in-database key are re-encrypted under
/// it and the in-database key is deleted; a key that is not the one the database was encrypted
/// with, or no key for a database that needs one, is refused.
pub fn prepare(c: &mut dyn Conn, k: &AtRestKey) -> Result<Result<Prepared, String>, DbError> {
    // Lock the in-database key's row first: nodes starting together re-encrypt once.
    c.execute("UPDATE webhook_keys SET value = value WHERE name = ?", platform_store::params![DB_KEY])?;
    let read = |c: &mut dyn Conn, name: &str| -> Result<Option<String>, DbError> {
        Ok(c.query_opt("SELECT value FROM webhook_keys WHERE name = ?", platform_store::params![name])?.map(|r| r.string(0)))
    };
    let (db_key, check) = (read(c, DB_KEY)?, read(c, CHECK)?);
    let db_key = db_key.and_then(|h| hex::decode(h).ok());
    let key =
        match k {
            AtRestKey::InDatabase if check.is_some() => return Ok(Err(
                "this database's secrets are encrypted under an external key: start with PLATFORM_SECRET_KEY or PLATFORM_SECRET_KEY_FILE"
                    .into(),
            )),
            AtRestKey::InDatabase => {
                let upgraded = match db_key {
                    Some(key) => reencrypt(c, &key, &key)?,
                    None => 0,
                };
                return Ok(Ok(Prepared { moved_to_external: false, upgraded }));
            }
            AtRestKey::External(key) => key,
        };
    let expected = check_value(key);
    if check.as_deref().is_some_and(|v| v != expected) {
        return Ok(Err("PLATFORM_SECRET_KEY is not the key this database's secrets are encrypted with".into()));
    }
    let mut done = Prepared::default();
    if let Some(old) = db_key {
        reencrypt(c, &old, key)?;
        c.execute("DELETE FROM webhook_keys WHERE name = ?", platform_store::params![DB_KEY])?;
        done.moved_to_external = true;
    } else {
        done.upgraded = reencrypt(c, key, key)?;
    }
    c.execute(
        "INSERT INTO webhook_keys (name, value) VALUES (?, ?) ON CONFLICT (name) DO NOTHING",
        platform_store::params![CHECK, expected],
    )?;
    Ok(Ok(done))
}

/// What a node does at start: [`prepare`] in a transaction of its own, then, when secrets moved
/// to an external key, a scrub of the database files ([`platform_store::Store::scrub`]) so that
/// neither the old key nor the old ciphertexts can be read back from free pages or the log.
pub async fn prepare_at_start(store: &platform_store::Store, k: AtRestKey) -> Result<Prepared, String> {
    let db = |e: DbError| format!("database: {}", e.message);
    let done = store.write(move |c| prepare(c, &k)).await.map_err(db)??;
    if done.upgraded > 0 {
        tracing::info!(values = done.upgraded, "secrets at rest re-encrypted in the current format");
    }
    if done.moved_to_external {
        store.scrub(&TABLES).await.map_err(db)?;
        tracing::info!("secrets moved to the external key; the old key and ciphertexts are scrubbed from the database files");
    }
    Ok(done)
}

/// Re-encrypts under `to`, in the current format, every stored value that `from` opens: all of
/// them when the key changes, else only those in the old format. Returns how many.
fn reencrypt(c: &mut dyn Conn, from: &[u8], to: &[u8]) -> Result<usize, DbError> {
    let only_legacy = if from == to { format!(" AND {{col}} LIKE '{}%'", legacy::PREFIX) } else { String::new() };
    let mut n = 0;
    for (table, col) in ENCRYPTED {
        let filter = only_legacy.replace("{col}", col);
        let rows = c.query(&format!("SELECT {col} FROM {table} WHERE {col} IS NOT NULL{filter}"), &[])?;
        for text in rows.iter().map(|r| r.string(0)) {
            let Some(plain) = decrypt(from, &text) else { continue };
            c.execute(&format!("UPDATE {table} SET {col} = ? WHERE {col} = ?"), platform_store::params![encrypt(to, &plain), text])?;
            n += 1;
        }
    }
    Ok(n)
}

/// The at-rest format: `v2:` and base64 of a random 24-byte nonce followed by the
/// XChaCha20-Poly1305 ciphertext and tag, under a key derived from the server key.
const V2: &str = "v2:";
const AAD: &[u8] = b"platformd secret at rest";

fn cipher(server_key: &[u8]) -> XChaCha20Poly1305 {
    XChaCha20Poly1305::new(&hmac256(server_key, &[b"platformd at-rest xchacha20poly1305"]).into())
}

/// Encrypts a value at rest (XChaCha20-Poly1305: a random nonce never repeats in practice).
pub fn encrypt(key: &[u8], plain: &[u8]) -> String {
    let nonce = XChaCha20Poly1305::generate_nonce(&mut chacha20poly1305::aead::OsRng);
    let sealed = cipher(key).encrypt(&nonce, Payload { msg: plain, aad: AAD }).expect("encryption of an in-memory value");
    let mut out = nonce.to_vec();
    out.extend_from_slice(&sealed);
    format!("{V2}{}", B64.encode(out))
}

/// The value [`encrypt`] sealed (or the old format, [`legacy`]); `None` when the text was not
/// made with this key.
pub fn decrypt(key: &[u8], text: &str) -> Option<Vec<u8>> {
    let Some(b64) = text.strip_prefix(V2) else { return legacy::decrypt(key, text) };
    let bytes = B64.decode(b64).ok()?;
    if bytes.len() < 24 {
        return None;
    }
    let (nonce, sealed) = bytes.split_at(24);
    cipher(key).decrypt(XNonce::from_slice(nonce), Payload { msg: sealed, aad: AAD }).ok()
}

/// The at-rest format of earlier versions (`v1:`, an HMAC-SHA256 keystream with encrypt-then-MAC),
/// kept only to read databases written by them: [`prepare`] re-encrypts such values at start.
pub mod legacy {
    use super::{constant_time_eq, hmac256};

    pub const PREFIX: &str = "v1:";

    pub fn decrypt(key: &[u8], text: &str) -> Option<Vec<u8>> {
        let mut it = text.strip_prefix(PREFIX)?.split(':');
        let nonce = hex::decode(it.next()?).ok()?;
        let ct = hex::decode(it.next()?).ok()?;
        let tag = hex::decode(it.next()?).ok()?;
        let (ke, km) = (hmac256(key, &[b"enc"]), hmac256(key, &[b"mac"]));
        if !constant_time_eq(&hmac256(&km, &[&nonce, &ct]), &tag) {
            return None;
        }
        Some(keystream_xor(&ke, &nonce, &ct))
    }

    /// What earlier versions wrote; for tests that build an old database.
    pub fn encrypt(key: &[u8], plain: &[u8]) -> String {
        let nonce: [u8; 16] = rand::random();
        let (ke, km) = (hmac256(key, &[b"enc"]), hmac256(key, &[b"mac"]));
        let ct = keystream_xor(&ke, &nonce, plain);
        let tag = hmac256(&km, &[&nonce, &ct]);
        format!("{PREFIX}{}:{}:{}", hex::encode(nonce), hex::encode(&ct), hex::encode(tag))
    }

    fn keystream_xor(key: &[u8], nonce: &[u8], data: &[u8]) -> Vec<u8> {
        let mut out = Vec::with_capacity(data.len());
        for (i, chunk) in data.chunks(32).enumerate() {
            let block = hmac256(key, &[nonce, &(i as u64).to_be_bytes()]);
            out.extend(chunk.iter().zip(block.iter()).map(|(a, b)| a ^ b));
        }
        out
    }
}

// ---------------------------------------------------------------------------------------------
// Sealed boxes.

/// Who a key pair belongs to.
#[derive(Clone, Copy, Debug)]
pub enum KeyScope {
    /// A repository (development-environment secrets).
    Repo(i64),
    /// An organization (private registries).
    Org(i64),
}

impl KeyScope {
    fn parts(self) -> (&'static str, i64) {
        match self {
            KeyScope::Repo(id) => ("repo", id),
            KeyScope::Org(id) => ("org", id),
        }
    }
}

const B64: base64::engine::GeneralPurpose = base64::engine::general_purpose::STANDARD;

/// The owner's public key `(key_id, base64 key)`, made on first use.
pub fn public_key(c: &mut dyn Conn, sk: &AtRestKey, scope: KeyScope, now: i64) -> Result<(String, String), DbError> {
    let k = key_pair(c, sk, scope, now)?;
    Ok((k.key_id, k.public_key))
}

fn key_pair(c: &mut dyn Conn, sk: &AtRestKey, scope: KeyScope, now: i64) -> Result<box_keys::BoxKey, DbError> {
    let server = server_key(c, sk)?;
    let (name, owner) = scope.parts();
    box_keys::get_or_create(c, name, owner, now, || {
        let secret = SecretKey::from(rand::random::<[u8; 32]>());
        // A decimal id, as the platform's key ids look.
        let key_id = format!("{:018}", rand::random::<u64>() % 1_000_000_000_000_000_000);
        box_keys::BoxKey {
            key_id,
            public_key: B64.encode(secret.public_key().as_bytes()),
            secret_key_enc: encrypt(&server, &secret.to_bytes()),
        }
    })
}

/// Why a sealed value was refused; each is a 422 with its own message.
#[derive(Debug, PartialEq, Eq)]
pub enum SealError {
    Base64,
    StaleKey,
    DoesNotOpen,
}

impl SealError {
    pub fn message(&self) -> &'static str {
        match self {
            SealError::Base64 => "encrypted_value is not valid base64.",
            SealError::StaleKey => "key_id does not name the current public key; fetch the public key and encrypt again.",
            SealError::DoesNotOpen => {
                "encrypted_value could not be decrypted: it must be a sealed box (crypto_box_seal) made with the current public key."
            }
        }
    }

    /// The 422 on `resource.field`.
    pub fn into_error(self, resource: &str) -> ApiError {
        let field = if self == SealError::StaleKey { "key_id" } else { "encrypted_value" };
        ApiError::invalid_field(resource, field, "invalid", Some(self.message().into()))
    }
}

/// Opens a sealed box sent with `key_id` and returns its plaintext encrypted at rest.
pub fn open_sealed(
    c: &mut dyn Conn,
    sk: &AtRestKey,
    scope: KeyScope,
    key_id: &str,
    encrypted_value: &str,
    now: i64,
) -> Result<Result<String, SealError>, DbError> {
    let k = key_pair(c, sk, scope, now)?;
    let server = server_key(c, sk)?;
    let Ok(boxed) = B64.decode(encrypted_value.trim()) else { return Ok(Err(SealError::Base64)) };
    if key_id != k.key_id {
        return Ok(Err(SealError::StaleKey));
    }
    let secret: [u8; 32] = match decrypt(&server, &k.secret_key_enc).and_then(|b| b.try_into().ok()) {
        Some(s) => s,
        None => return Err(DbError::other("sealed-box key cannot be decrypted with the server key")),
    };
    match SecretKey::from(secret).unseal(&boxed) {
        Ok(plain) => Ok(Ok(encrypt(&server, &plain))),
        Err(_) => Ok(Err(SealError::DoesNotOpen)),
    }
}

/// Seals `plain` for a base64 public key (tests and the control plane's round-trip check).
pub fn seal_for(public_key_b64: &str, plain: &[u8]) -> Option<String> {
    let pk: [u8; 32] = B64.decode(public_key_b64).ok()?.try_into().ok()?;
    let sealed = PublicKey::from(pk).seal(&mut crypto_box::aead::OsRng, plain).ok()?;
    Some(B64.encode(sealed))
}

/// Equality of secrets in time independent of where they differ.
pub fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn at_rest_round_trip() {
        let key = [7u8; 32];
        let e = encrypt(&key, b"s3cret");
        assert!(e.starts_with("v2:") && !e.contains("s3cret"));
        assert_eq!(decrypt(&key, &e).as_deref(), Some(&b"s3cret"[..]));
        assert_eq!(decrypt(&[8u8; 32], &e), None);
        assert_ne!(encrypt(&key, b"s3cret"), e, "a fresh nonce each time");
        // Tampering with any byte is detected.
        let mut bytes = B64.decode(&e[3..]).unwrap();
        let last = bytes.len() - 1;
        bytes[last] ^= 1;
        assert_eq!(decrypt(&key, &format!("v2:{}", B64.encode(&bytes))), None);
        // The old format still opens (for the migration at start).
        let old = legacy::encrypt(&key, b"s3cret");
        assert_eq!(decrypt(&key, &old).as_deref(), Some(&b"s3cret"[..]));
        assert_eq!(decrypt(&[8u8; 32], &old), None);
    }
    #[test]
    fn sealed_round_trip() {
        let secret = SecretKey::from([3u8; 32]);
        let public = B64.encode(secret.public_key().as_bytes());
        let sealed = B64.decode(seal_for(&public, b"hello").unwrap()).unwrap();
        assert_eq!(secret.unseal(&sealed).unwrap(), b"hello");
        assert!(SecretKey::from([4u8; 32]).unseal(&sealed).is_err());
    }
}
