//! Identifiers: node ids, random secrets, hashes, request ids.
use base64::Engine;
use rand::Rng;
use sha2::{Digest, Sha256};

/// Global node id of an object, e.g. `MDQ6VXNlcjE=` for User 1 (`04:User1`).
pub fn node_id(kind: &str, id: i64) -> String {
    base64::engine::general_purpose::STANDARD.encode(format!("0{}:{kind}{id}", kind.len()))
}

const ALNUM: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

/// `n` random alphanumeric characters from the OS-seeded CSPRNG.
pub fn random_alnum(n: usize) -> String {
    let mut rng = rand::rng();
    (0..n).map(|_| ALNUM[rng.random_range(0..ALNUM.len())] as char).collect()
}

pub fn random_hex(bytes: usize) -> String {
    let mut buf = vec![0u8; bytes];
    rand::rng().fill(&mut buf[..]);
    hex::encode(buf)
}

pub fn sha256_hex(data: &[u8]) -> String {
    hex::encode(Sha256::digest(data))
}

/// `14E0:4BC6:F1B8BA:208E317:62EC2715`-shaped request id.
pub fn request_id() -> String {
    let mut rng = rand::rng();
    format!(
        "{:X}:{:X}:{:X}:{:X}:{:X}",
        rng.random_range(0x1000..0xFFFFu32),
        rng.random_range(0x1000..0xFFFFu32),
        rng.random_range(0x100000..0xFFFFFFu32),
        rng.random_range(0x1000000..0xFFFFFFFu32),
        rng.random::<u32>()
    )
}

/// Is this a full 40-hex commit id?
pub fn is_sha(s: &str) -> bool {
    s.len() == 40 && s.bytes().all(|c| c.is_ascii_hexdigit())
}

#[cfg(test)]
mod tests {
    #[test]
    fn node_ids_are_stable() {
        assert_eq!(super::node_id("User", 1), "MDQ6VXNlcjE=");
        assert!(super::is_sha(&"a".repeat(40)));
        assert!(!super::is_sha("main"));
    }
}
