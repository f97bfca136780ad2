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
    // A table lookup, not `hex::encode`'s char iterator: this runs on every authenticated request.
    let mut out = String::with_capacity(64);
    for b in Sha256::digest(data) {
        out.push(b"0123456789abcdef"[(b >> 4) as usize] as char);
        out.push(b"0123456789abcdef"[(b & 15) as usize] as char);
    }
    out
}

/// `14E0:4BC6:F1B8BA:208E317:62EC2715`-shaped request id.
pub fn request_id() -> String {
    let mut rng = rand::rng();
    let parts = [
        rng.random_range(0x1000..0xFFFFu32),
        rng.random_range(0x1000..0xFFFFu32),
        rng.random_range(0x100000..0xFFFFFFu32),
        rng.random_range(0x1000000..0xFFFFFFFu32),
        rng.random::<u32>(),
    ];
    let mut out = String::with_capacity(36);
    for (i, p) in parts.into_iter().enumerate() {
        if i > 0 {
            out.push(':');
        }
        // Upper-case hex without leading zeros, as `{:X}` writes it.
        let digits = (8 - p.leading_zeros() as usize / 4).max(1);
        for d in (0..digits).rev() {
            out.push(b"0123456789ABCDEF"[(p >> (4 * d) & 15) as usize] as char);
        }
    }
    out
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

    #[test]
    fn hashes_and_request_ids_are_well_formed() {
        use sha2::Digest;
        assert_eq!(super::sha256_hex(b"abc"), hex::encode(sha2::Sha256::digest(b"abc")));
        for _ in 0..100 {
            let id = super::request_id();
            let parts: Vec<_> = id.split(':').collect();
            assert_eq!(parts.len(), 5, "{id}");
            assert!([4, 4, 6, 7].iter().zip(&parts).all(|(n, p)| p.len() == *n), "{id}");
            assert!(parts.iter().all(|p| p.bytes().all(|c| matches!(c, b'0'..=b'9' | b'A'..=b'F'))), "{id}");
        }
    }
}
