//! Which rulesets apply where: fnmatch patterns over ref and repository names, compiled once.
//! Patterns follow the platform's fnmatch rules: `*` and `?` stop at `/`, `**` crosses it (`**/`
//! also matches no directory at all), `[...]` is a class (`[!...]`/`[^...]` negated), `{a,b}`
//! alternatives; `~ALL` matches everything and `~DEFAULT_BRANCH` the repository's default branch.
//! A condition holds when an include pattern matches and no exclude pattern does.
use serde_json::Value;

#[derive(Clone, Debug, PartialEq)]
enum Tok {
    Lit(char),
    /// `?`: one character but `/`.
    One,
    /// `*`: any run of characters without `/`.
    Star,
    /// `**/`: zero or more whole directories.
    Dirs,
    /// `**` elsewhere: anything.
    Any,
    Class(Vec<(char, char)>, bool),
}

/// One compiled pattern (its brace alternatives expanded).
#[derive(Clone, Debug)]
pub enum Pattern {
    All,
    DefaultBranch,
    Glob(Vec<Glob>),
}

/// One alternative: its literal prefix (checked first: most patterns fail there) and the rest.
#[derive(Clone, Debug)]
pub struct Glob {
    prefix: Vec<char>,
    rest: Rest,
}

/// What follows a pattern's literal prefix, with the common shapes told apart when compiled.
#[derive(Clone, Debug)]
enum Rest {
    /// Nothing: the pattern is a literal.
    Nothing,
    /// `*` and a literal suffix (`feature/*-fix`).
    StarThen(Vec<char>),
    /// Anything else: matched by [`matches`].
    Tokens(Vec<Tok>),
}

impl Glob {
    fn new(p: &str) -> Glob {
        let toks = tokens(p);
        let lit = |t: &Tok| if let Tok::Lit(c) = t { Some(*c) } else { None };
        let n = toks.iter().take_while(|t| matches!(t, Tok::Lit(_))).count();
        let prefix = toks[..n].iter().filter_map(lit).collect();
        let rest = match &toks[n..] {
            [] => Rest::Nothing,
            [Tok::Star, tail @ ..] if tail.iter().all(|t| matches!(t, Tok::Lit(_))) => {
                Rest::StarThen(tail.iter().filter_map(lit).collect())
            }
            other => Rest::Tokens(other.to_vec()),
        };
        Glob { prefix, rest }
    }

    fn matches(&self, s: &[char]) -> bool {
        s.starts_with(&self.prefix) && self.rest_matches(&s[self.prefix.len()..])
    }

    /// Does the rest match `s`, the characters after the prefix?
    fn rest_matches(&self, s: &[char]) -> bool {
        match &self.rest {
            Rest::Nothing => s.is_empty(),
            Rest::StarThen(suffix) => s.len() >= suffix.len() && s.ends_with(suffix) && !s[..s.len() - suffix.len()].contains(&'/'),
            Rest::Tokens(toks) => matches(toks, s),
        }
    }
}

/// Alternatives one pattern may expand to; beyond that the braces are taken literally.
const MAX_ALTERNATIVES: usize = 256;

/// Expands `{a,b}` alternatives (nested ones too) into plain patterns, within `budget`.
fn expand(p: &str, budget: &mut usize) -> Vec<String> {
    let chars: Vec<char> = p.chars().collect();
    let Some(open) = chars.iter().position(|c| *c == '{') else {
        *budget = budget.saturating_sub(1);
        return vec![p.to_string()];
    };
    let (mut depth, mut close, mut commas) = (0, None, vec![]);
    for (i, c) in chars.iter().enumerate().skip(open) {
        match c {
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    close = Some(i);
                    break;
                }
            }
            ',' if depth == 1 => commas.push(i),
            _ => {}
        }
    }
    let Some(close) = close else { return vec![p.to_string()] };
    let s = |a: usize, b: usize| chars[a..b].iter().collect::<String>();
    let (head, tail) = (s(0, open), s(close + 1, chars.len()));
    let mut bounds = vec![open];
    bounds.extend(&commas);
    bounds.push(close);
    let mut out = Vec::new();
    for w in bounds.windows(2) {
        if *budget == 0 {
            break;
        }
        out.extend(expand(&format!("{head}{}{tail}", s(w[0] + 1, w[1])), budget));
    }
    out
}

fn tokens(p: &str) -> Vec<Tok> {
    let c: Vec<char> = p.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < c.len() {
        match c[i] {
            '*' if c.get(i + 1) == Some(&'*') => {
                if c.get(i + 2) == Some(&'/') {
                    out.push(Tok::Dirs);
                    i += 3;
                } else {
                    out.push(Tok::Any);
                    i += 2;
                }
                continue;
            }
            '*' => out.push(Tok::Star),
            '?' => out.push(Tok::One),
            '[' => {
                let mut j = i + 1;
                let negated = matches!(c.get(j), Some('!') | Some('^'));
                if negated {
                    j += 1;
                }
                let start = j;
                let mut ranges = Vec::new();
                while j < c.len() && (c[j] != ']' || j == start) {
                    if c.get(j + 1) == Some(&'-') && c.get(j + 2).is_some_and(|e| *e != ']') {
                        ranges.push((c[j], c[j + 2]));
                        j += 3;
                    } else {
                        ranges.push((c[j], c[j]));
                        j += 1;
                    }
                }
                if j < c.len() {
                    out.push(Tok::Class(ranges, negated));
                    i = j + 1;
                    continue;
                }
                out.push(Tok::Lit('[')); // unclosed: literal
            }
            '\\' if i + 1 < c.len() => {
                out.push(Tok::Lit(c[i + 1]));
                i += 2;
                continue;
            }
            ch => out.push(Tok::Lit(ch)),
        }
        i += 1;
    }
    out
}

/// Dynamic programming over (token, position): linear in both lengths, so no pattern can make
/// matching slow however many stars it has.
fn matches(p: &[Tok], s: &[char]) -> bool {
    let n = s.len();
    // Short names keep the two rows on the stack.
    let (mut a, mut b) = ([false; 128], [false; 128]);
    let (mut va, mut vb);
    let (mut next, mut cur): (&mut [bool], &mut [bool]) = if n < 128 {
        (&mut a[..=n], &mut b[..=n])
    } else {
        va = vec![false; n + 1];
        vb = vec![false; n + 1];
        (&mut va[..], &mut vb[..])
    };
    // `next[j]`: tokens after the current one match `s[j..]`.
    next[n] = true;
    for tok in p.iter().rev() {
        let one = |c: char| match tok {
            Tok::Lit(l) => c == *l,
            Tok::One => c != '/',
            Tok::Class(ranges, negated) => c != '/' && ranges.iter().any(|(a, b)| *a <= c && c <= *b) != *negated,
            _ => false,
        };
        let mut dirs = false; // `**/`: some `/` at or after j ends a skipped prefix
        for j in (0..=n).rev() {
            cur[j] = match tok {
                Tok::Star => next[j] || (j < n && s[j] != '/' && cur[j + 1]),
                Tok::Any => next[j] || (j < n && cur[j + 1]),
                Tok::Dirs => {
                    dirs |= j < n && s[j] == '/' && next[j + 1];
                    next[j] || dirs
                }
                _ => j < n && one(s[j]) && next[j + 1],
            };
        }
        std::mem::swap(&mut next, &mut cur);
    }
    next[0]
}

impl Pattern {
    pub fn compile(p: &str) -> Pattern {
        match p {
            "~ALL" => Pattern::All,
            "~DEFAULT_BRANCH" => Pattern::DefaultBranch,
            _ => {
                let mut budget = MAX_ALTERNATIVES + 1;
                let alts = expand(p, &mut budget);
                let alts = if budget == 0 { vec![p.to_string()] } else { alts };
                Pattern::Glob(alts.iter().map(|x| Glob::new(x)).collect())
            }
        }
    }

    /// Does the pattern match `name` (given as its characters too)? `default` is the ref or name
    /// `~DEFAULT_BRANCH` stands for.
    fn matches_chars(&self, name: &str, chars: &[char], default: Option<&str>) -> bool {
        match self {
            Pattern::All => true,
            Pattern::DefaultBranch => default == Some(name),
            Pattern::Glob(alts) => alts.iter().any(|g| g.matches(chars)),
        }
    }

    pub fn matches(&self, name: &str, default: Option<&str>) -> bool {
        self.matches_chars(name, &name.chars().collect::<Vec<_>>(), default)
    }
}

/// An include/exclude condition, compiled.
#[derive(Clone, Debug, Default)]
pub struct Condition {
    include: Vec<Pattern>,
    exclude: Vec<Pattern>,
}

impl Condition {
    /// From `{include: [...], exclude: [...]}`; absent lists are empty (nothing included).
    pub fn compile(v: &Value) -> Condition {
        let list = |k: &str| -> Vec<Pattern> {
            v.get(k)
                .and_then(Value::as_array)
                .map(|a| a.iter().filter_map(Value::as_str).map(Pattern::compile).collect())
                .unwrap_or_default()
        };
        Condition { include: list("include"), exclude: list("exclude") }
    }

    pub fn holds(&self, name: &str, default: Option<&str>) -> bool {
        self.holds_chars(name, &name.chars().collect::<Vec<_>>(), default)
    }

    /// The include alternatives that start with a literal prefix, as (prefix, include, alternative),
    /// or `None` when some include pattern may match any name (`~ALL`, `~DEFAULT_BRANCH`, a
    /// leading wildcard): lets many conditions be narrowed down by prefix before matching.
    pub fn include_prefixes(&self) -> Option<Vec<(String, usize, usize)>> {
        let mut out = Vec::new();
        for (i, p) in self.include.iter().enumerate() {
            match p {
                Pattern::Glob(alts) => {
                    for (a, g) in alts.iter().enumerate() {
                        if g.prefix.is_empty() {
                            return None;
                        }
                        out.push((g.prefix.iter().collect(), i, a));
                    }
                }
                Pattern::All | Pattern::DefaultBranch => return None,
            }
        }
        Some(out)
    }

    /// Does the include alternative `(include, alternative)` of [`Condition::include_prefixes`]
    /// match the rest of a name whose start is its prefix (`rest`: the characters after it)?
    pub fn include_rest_matches(&self, include: usize, alternative: usize, rest: &[char]) -> bool {
        match &self.include[include] {
            Pattern::Glob(alts) => alts[alternative].rest_matches(rest),
            _ => false,
        }
    }

    /// Does an include pattern match?
    pub fn includes(&self, name: &str, chars: &[char], default: Option<&str>) -> bool {
        self.include.iter().any(|p| p.matches_chars(name, chars, default))
    }

    /// Does an exclude pattern match?
    pub fn excluded(&self, name: &str, chars: &[char], default: Option<&str>) -> bool {
        self.exclude.iter().any(|p| p.matches_chars(name, chars, default))
    }

    /// [`Condition::holds`] for a name already split into characters (one split for many conditions).
    pub fn holds_chars(&self, name: &str, chars: &[char], default: Option<&str>) -> bool {
        self.includes(name, chars, default) && !self.excluded(name, chars, default)
    }
}

/// The repository condition of an organization ruleset.
#[derive(Clone, Debug)]
pub enum RepoCondition {
    Name(Condition),
    Ids(Vec<i64>),
}

impl RepoCondition {
    /// From an organization ruleset's normalized `conditions`.
    pub fn compile(conditions: &Value) -> Option<RepoCondition> {
        if let Some(n) = conditions.get("repository_name") {
            return Some(RepoCondition::Name(Condition::compile(n)));
        }
        let ids = conditions.get("repository_id")?.get("repository_ids")?.as_array()?;
        Some(RepoCondition::Ids(ids.iter().filter_map(Value::as_i64).collect()))
    }

    pub fn applies(&self, repo_id: i64, repo_name: &str) -> bool {
        match self {
            RepoCondition::Name(c) => c.holds(repo_name, None),
            RepoCondition::Ids(ids) => ids.contains(&repo_id),
        }
    }
}

#[cfg(test)]
mod tests {
    /// Ruleset patterns and the names matched against them come from clients.
    #[test]
    fn patterns_never_panic() {
        let seeds = [
            "refs/heads/main",
            "refs/heads/**/*",
            "refs/heads/{a,b}*",
            "release/[0-9]*",
            "~ALL",
            "~DEFAULT_BRANCH",
            "**",
            "a?b",
            "[!a-z]x",
        ];
        let inputs = platform_core::fuzz::strings(&seeds, 3_000, 4);
        for (i, p) in inputs.iter().enumerate() {
            let pattern = Pattern::compile(p);
            for name in inputs.iter().skip(i % 97).step_by(301) {
                let _ = pattern.matches(name, Some("refs/heads/main"));
            }
        }
    }

    use super::*;

    fn m(p: &str, s: &str) -> bool {
        Pattern::compile(p).matches(s, Some("refs/heads/main"))
    }

    #[test]
    fn fnmatch() {
        assert!(m("refs/heads/main", "refs/heads/main"));
        assert!(!m("refs/heads/main", "refs/heads/main2"));
        assert!(m("refs/heads/dev*", "refs/heads/develop"));
        assert!(!m("refs/heads/dev*", "refs/heads/dev/x"));
        assert!(m("refs/heads/**", "refs/heads/dev/x/y"));
        assert!(m("refs/heads/releases/**/*", "refs/heads/releases/v1"));
        assert!(m("refs/heads/releases/**/*", "refs/heads/releases/a/b/v1"));
        assert!(m("refs/heads/v?", "refs/heads/v1"));
        assert!(!m("refs/heads/v?", "refs/heads/v12"));
        assert!(m("refs/heads/[a-c]x", "refs/heads/bx"));
        assert!(!m("refs/heads/[!a-c]x", "refs/heads/bx"));
        assert!(m("refs/heads/{main,master}", "refs/heads/master"));
        assert!(m("refs/heads/[x", "refs/heads/[x"));
        // The shortcut shapes: a literal tail, and `*` before a literal suffix.
        assert!(m("refs/heads/feature/*50", "refs/heads/feature/x50"));
        assert!(m("refs/heads/feature/*50", "refs/heads/feature/50"));
        assert!(!m("refs/heads/feature/*50", "refs/heads/feature/a/x50"));
        assert!(!m("refs/heads/feature/*50", "refs/heads/feature/0"));
        assert!(m("refs/*/main", "refs/heads/main") && !m("refs/*/main", "refs/heads/x/main"));
        assert!(m("refs/heads/feature/*", "refs/heads/feature/") && !m("refs/heads/feature/*", "refs/heads/feature/a/b"));
        assert!(!m("refs/heads/feature/*long-suffix", "refs/heads/feature/x"));
        assert!(m("*", "main") && !m("*", "a/b") && m("*x", "x"));
        assert!(m("~ALL", "refs/heads/anything"));
        assert!(m("~DEFAULT_BRANCH", "refs/heads/main"));
        assert!(!m("~DEFAULT_BRANCH", "refs/heads/other"));
    }

    #[test]
    fn exclusions_win() {
        let c = Condition::compile(&serde_json::json!({"include": ["~ALL"], "exclude": ["refs/heads/tmp*"]}));
        assert!(c.holds("refs/heads/main", None));
        assert!(!c.holds("refs/heads/tmp1", None));
        assert!(!Condition::compile(&serde_json::json!({})).holds("refs/heads/main", None));
    }
}
