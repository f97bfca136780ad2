//! Hostile strings for property tests of hand-written parsers: valid examples mutated by
//! inserting, deleting and replacing characters drawn from what parsers trip on (multi-byte
//! characters at every boundary, NUL, signs, separators, huge digit runs), plus random strings.
//! Deterministic per seed, so a failure is reproducible.
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

const ALPHABET: &[&str] = &[
    "0",
    "1",
    "9",
    "00",
    "99999999999999999999",
    "-",
    "+",
    ":",
    ".",
    "..",
    ",",
    "*",
    ">",
    "<",
    "=",
    ">=",
    "T",
    "Z",
    "z",
    " ",
    "/",
    "\\",
    "[",
    "]",
    "{",
    "}",
    "?",
    "!",
    "%",
    "%00",
    "\0",
    "m",
    "h",
    "d",
    "é",
    "€",
    "𝄞",
    "\u{301}",
    "\u{FEFF}",
    "\n",
    "~",
    "^",
    "**",
];

/// `count` strings derived from `seeds` (each seed also appears unchanged).
pub fn strings(seeds: &[&str], count: usize, seed: u64) -> Vec<String> {
    let mut rng = StdRng::seed_from_u64(seed);
    let mut out: Vec<String> = seeds.iter().map(|s| s.to_string()).collect();
    while out.len() < count {
        let mut chars: Vec<String> = if seeds.is_empty() || rng.random_bool(0.2) {
            Vec::new()
        } else {
            seeds[rng.random_range(0..seeds.len())].chars().map(String::from).collect()
        };
        for _ in 0..rng.random_range(1..6) {
            let piece = ALPHABET[rng.random_range(0..ALPHABET.len())].to_string();
            let at = rng.random_range(0..=chars.len());
            match rng.random_range(0..3) {
                0 => chars.insert(at, piece),
                1 if at < chars.len() => chars[at] = piece,
                _ if at < chars.len() => {
                    chars.remove(at);
                }
                _ => chars.push(piece),
            }
        }
        out.push(chars.concat());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deterministic_and_hostile() {
        let a = strings(&["2026-03-10"], 500, 7);
        assert_eq!(a, strings(&["2026-03-10"], 500, 7));
        assert_eq!(a[0], "2026-03-10");
        assert!(a.iter().any(|s| s.contains('é')) && a.iter().any(|s| s.contains('\0')));
    }

    /// The parsers of this crate never panic, whatever they are given.
    #[test]
    fn parsers_never_panic() {
        let seeds = [
            "2026-03-10",
            "2026-03-10T12:00:00Z",
            "2026-03-10T12:00:00.123+02:00",
            "Sun, 06 Nov 1994 08:49:37 GMT",
            ">=2026-03-10",
            "2026-01-01..2026-02-01",
            "*..2026-01-01",
            "2022-11-28",
            "5",
            "100",
        ];
        for s in strings(&seeds, 20_000, 1) {
            let _ = crate::time::parse_ts(&s);
            let _ = crate::time::parse_http_date(&s);
            let _ = crate::daterange::parse(&s);
            let _ = crate::ApiVersion::parse(&s);
            let _ = crate::TokenKind::parse(&s);
            let _ = crate::pagination::Page::parse(Some(&s), Some(&s), 30, 100);
        }
    }
}
