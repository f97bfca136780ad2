//! Page-based pagination: `page`/`per_page` and the `Link` header.

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Page {
    pub page: i64,
    pub per_page: i64,
}

impl Page {
    /// From raw query values, refusing values that are not integers (the name of the first bad
    /// parameter and its value); integers out of range are clamped as [`Page::from_query`] does.
    pub fn parse(page: Option<&str>, per_page: Option<&str>, default: i64, max: i64) -> Result<Page, (&'static str, String)> {
        let mut ints = [None, None];
        for (i, (name, v)) in [("page", page), ("per_page", per_page)].into_iter().enumerate() {
            if let Some(v) = v {
                ints[i] = Some(saturating_int(v).ok_or_else(|| (name, v.to_string()))?.to_string());
            }
        }
        Ok(Page::from_query(ints[0].as_deref(), ints[1].as_deref(), default, max))
    }

    /// From raw query values. Unparsable or out-of-range values fall back the way the hosted
    /// platform does: `per_page` is clamped to `1..=max`, `page` below 1 is 1.
    pub fn from_query(page: Option<&str>, per_page: Option<&str>, default: i64, max: i64) -> Page {
        let int = |v: Option<&str>| v.and_then(|v| v.trim().parse::<i64>().ok());
        Page::of(int(page), int(per_page), default, max)
    }

    /// From integer values (absent: the defaults), clamped as [`Page::from_query`] says.
    pub fn of(page: Option<i64>, per_page: Option<i64>, default: i64, max: i64) -> Page {
        let per_page = match per_page {
            Some(n) if n >= 1 => n.min(max),
            Some(_) => default.min(max),
            None => default,
        };
        Page { page: page.filter(|p| *p >= 1).unwrap_or(1), per_page }
    }

    pub fn offset(&self) -> i64 {
        (self.page - 1).saturating_mul(self.per_page)
    }

    pub fn last_page(&self, total: i64) -> i64 {
        ((total + self.per_page - 1) / self.per_page).max(1)
    }

    /// `Link` header value for a list of `total` items, or `None` for a single page.
    /// `url_for(page)` builds the absolute URL of a page (it repeats the request's other query).
    pub fn link_header(&self, total: i64, url_for: impl Fn(i64) -> String) -> Option<String> {
        let last = self.last_page(total);
        if last <= 1 && self.page <= 1 {
            return None;
        }
        let mut parts = Vec::new();
        if self.page > 1 {
            parts.push(format!("<{}>; rel=\"prev\"", url_for((self.page - 1).min(last))));
        }
        if self.page < last {
            parts.push(format!("<{}>; rel=\"next\"", url_for(self.page + 1)));
            parts.push(format!("<{}>; rel=\"last\"", url_for(last)));
        }
        if self.page > 1 {
            parts.push(format!("<{}>; rel=\"first\"", url_for(1)));
        }
        (!parts.is_empty()).then(|| parts.join(", "))
    }
}

/// An integer of any size (`[+-]digits`), saturated to the `i64` range.
pub fn saturating_int(s: &str) -> Option<i64> {
    let t = s.trim();
    let digits = t.strip_prefix(['+', '-']).unwrap_or(t);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some(t.parse::<i64>().unwrap_or(if t.starts_with('-') { i64::MIN } else { i64::MAX }))
}

#[cfg(test)]
mod tests {
    use super::Page;
    fn u(p: i64) -> String {
        format!("http://x/l?page={p}")
    }
    #[test]
    fn links() {
        let p = Page::from_query(None, None, 30, 100);
        assert_eq!(p, Page { page: 1, per_page: 30 });
        assert_eq!(p.link_header(30, u), None);
        assert_eq!(p.link_header(61, u).unwrap(), "<http://x/l?page=2>; rel=\"next\", <http://x/l?page=3>; rel=\"last\"");
        let p3 = Page { page: 3, per_page: 30 };
        assert_eq!(p3.link_header(61, u).unwrap(), "<http://x/l?page=2>; rel=\"prev\", <http://x/l?page=1>; rel=\"first\"");
        assert_eq!(Page::from_query(Some("0"), Some("500"), 30, 100), Page { page: 1, per_page: 100 });
        assert_eq!(Page::from_query(Some("x"), Some("-1"), 30, 100), Page { page: 1, per_page: 30 });
        assert_eq!(Page::parse(Some("2"), Some("500"), 30, 100), Ok(Page { page: 2, per_page: 100 }));
        assert_eq!(Page::parse(Some("x"), None, 30, 100), Err(("page", "x".to_string())));
        assert_eq!(Page::parse(None, Some("1e3"), 30, 100), Err(("per_page", "1e3".to_string())));
        assert_eq!(
            Page::parse(Some("99999999999999999999999"), Some("-99999999999999999999"), 30, 100),
            Ok(Page { page: i64::MAX, per_page: 30 })
        );
    }
}
