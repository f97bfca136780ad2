//! The `created` filter of the workflow run lists: a date or date-time range in the search
//! syntax (`>=D`, `<=D`, `>D`, `<D`, `D..D`, `D..*`, `*..D`, or `D` alone), where `D` is a date
//! (`YYYY-MM-DD`, the whole UTC day) or a date-time (`YYYY-MM-DDTHH:MM[:SS](Z|±HH:MM)`, one second).
use crate::time::parse_ts;

/// A half-open range of epoch seconds: `from <= t < until`; `None` is unbounded.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Range {
    pub from: Option<i64>,
    pub until: Option<i64>,
}

impl Range {
    pub fn contains(&self, t: i64) -> bool {
        self.from.is_none_or(|f| t >= f) && self.until.is_none_or(|u| t < u)
    }
}

/// The span a date or date-time names: `[start, end)`.
fn span(d: &str) -> Option<(i64, i64)> {
    let start = parse_ts(d)?;
    Some((start, start + if d.len() == 10 { 86_400 } else { 1 }))
}

/// Parses the filter; `None` when it is malformed.
pub fn parse(s: &str) -> Option<Range> {
    let s = s.trim();
    if let Some(d) = s.strip_prefix(">=") {
        return Some(Range { from: Some(span(d)?.0), until: None });
    }
    if let Some(d) = s.strip_prefix("<=") {
        return Some(Range { from: None, until: Some(span(d)?.1) });
    }
    if let Some(d) = s.strip_prefix('>') {
        return Some(Range { from: Some(span(d)?.1), until: None });
    }
    if let Some(d) = s.strip_prefix('<') {
        return Some(Range { from: None, until: Some(span(d)?.0) });
    }
    if let Some((a, b)) = s.split_once("..") {
        let from = if a == "*" { None } else { Some(span(a)?.0) };
        let until = if b == "*" { None } else { Some(span(b)?.1) };
        if from.is_none() && until.is_none() {
            return None;
        }
        return Some(Range { from, until });
    }
    let (from, until) = span(s)?;
    Some(Range { from: Some(from), until: Some(until) })
}

#[cfg(test)]
mod tests {
    use super::*;
    const DAY: i64 = 1_773_100_800; // 2026-03-10
    #[test]
    fn grammar() {
        assert_eq!(parse(">=2026-03-10"), Some(Range { from: Some(DAY), until: None }));
        assert_eq!(parse(">2026-03-10"), Some(Range { from: Some(DAY + 86_400), until: None }));
        assert_eq!(parse("<=2026-03-10"), Some(Range { from: None, until: Some(DAY + 86_400) }));
        assert_eq!(parse("<2026-03-10"), Some(Range { from: None, until: Some(DAY) }));
        assert_eq!(parse("2026-03-10..2026-03-11"), Some(Range { from: Some(DAY), until: Some(DAY + 2 * 86_400) }));
        assert_eq!(parse("2026-03-10..*"), Some(Range { from: Some(DAY), until: None }));
        assert_eq!(parse("*..2026-03-10"), Some(Range { from: None, until: Some(DAY + 86_400) }));
        assert_eq!(parse("2026-03-10"), Some(Range { from: Some(DAY), until: Some(DAY + 86_400) }));
        assert_eq!(parse(">2026-03-10T00:00:00Z"), Some(Range { from: Some(DAY + 1), until: None }));
        assert_eq!(parse("2026-03-10T01:00:00+01:00..2026-03-10T00:00:10Z"), Some(Range { from: Some(DAY), until: Some(DAY + 11) }));
        for bad in ["", "yesterday", ">=", "2026-13-01", "*..*", "2026-03-10...2026-03-11", "=>2026-03-10", "2026-03-10..", ">>2026-03-10"]
        {
            assert_eq!(parse(bad), None, "{bad}");
        }
        assert!(parse("2026-03-10").unwrap().contains(DAY + 86_399));
        assert!(!parse("2026-03-10").unwrap().contains(DAY + 86_400));
    }
}
