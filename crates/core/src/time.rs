//! Timestamps: epoch seconds inside, `YYYY-MM-DDTHH:MM:SSZ` on the wire.

/// Days since 1970-01-01 → (year, month, day). Howard Hinnant's civil-from-days.
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let mp = if m > 2 { m - 3 } else { m + 9 } as i64;
    let doy = (153 * mp + 2) / 5 + d as i64 - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// `2026-03-10T12:00:00Z`
pub fn format_ts(secs: i64) -> String {
    let (y, mo, d) = civil_from_days(secs.div_euclid(86_400));
    let s = secs.rem_euclid(86_400);
    format!("{y:04}-{mo:02}-{d:02}T{:02}:{:02}:{:02}Z", s / 3600, s / 60 % 60, s % 60)
}

/// `2026-03-10T13:00:00+01:00`: the local time of a zone `offset_minutes` east of UTC, as git
/// records commit dates (`Z` for UTC).
pub fn format_ts_in_zone(secs: i64, offset_minutes: i64) -> String {
    if offset_minutes == 0 {
        return format_ts(secs);
    }
    let local = format_ts(secs + offset_minutes * 60);
    let sign = if offset_minutes < 0 { '-' } else { '+' };
    let m = offset_minutes.unsigned_abs();
    format!("{}{sign}{:02}:{:02}", local.trim_end_matches('Z'), m / 60, m % 60)
}

/// RFC 7231 HTTP-date, for `Last-Modified`, `Sunset`.
pub fn http_date(secs: i64) -> String {
    const DAYS: [&str; 7] = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"];
    const MONTHS: [&str; 12] = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
    let days = secs.div_euclid(86_400);
    let (y, mo, d) = civil_from_days(days);
    let s = secs.rem_euclid(86_400);
    format!(
        "{}, {d:02} {} {y:04} {:02}:{:02}:{:02} GMT",
        DAYS[days.rem_euclid(7) as usize],
        MONTHS[mo as usize - 1],
        s / 3600,
        s / 60 % 60,
        s % 60
    )
}

/// Parses an HTTP-date (`Sun, 06 Nov 1994 08:49:37 GMT`).
pub fn parse_http_date(s: &str) -> Option<i64> {
    const MONTHS: [&str; 12] = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
    let mut it = s.split_whitespace();
    it.next()?;
    let d: u32 = it.next()?.parse().ok()?;
    let mo = MONTHS.iter().position(|m| Some(*m) == it.clone().next())? as u32 + 1;
    it.next()?;
    let y: i64 = it.next()?.parse().ok()?;
    let hms: Vec<i64> = it.next()?.split(':').map(|p| p.parse().ok()).collect::<Option<_>>()?;
    if hms.len() != 3 || it.next()? != "GMT" {
        return None;
    }
    // Field ranges first: the arithmetic below must not overflow on a hostile header.
    if !(1..=31).contains(&d) || !(0..=9999).contains(&y) || hms[0] > 23 || hms[1] > 59 || hms[2] > 60 || hms.iter().any(|v| *v < 0) {
        return None;
    }
    Some(days_from_civil(y, mo, d) * 86_400 + hms[0] * 3600 + hms[1] * 60 + hms[2])
}

/// Parses ISO 8601 as clients send it: `YYYY-MM-DD`, `YYYY-MM-DDTHH:MM[:SS][.fff](Z|±HH:MM)`.
/// A date alone is midnight UTC. Returns epoch seconds.
pub fn parse_ts(s: &str) -> Option<i64> {
    let b = s.as_bytes();
    if b.len() < 10 || b[4] != b'-' || b[7] != b'-' {
        return None;
    }
    let num = |r: std::ops::Range<usize>| -> Option<i64> {
        let t = s.get(r)?;
        if t.bytes().all(|c| c.is_ascii_digit()) {
            t.parse().ok()
        } else {
            None
        }
    };
    let (y, mo, d) = (num(0..4)?, num(5..7)? as u32, num(8..10)? as u32);
    if !(1..=12).contains(&mo) || !(1..=31).contains(&d) {
        return None;
    }
    let day = days_from_civil(y, mo, d);
    if b.len() == 10 {
        return Some(day * 86_400);
    }
    if b[10] != b'T' && b[10] != b' ' {
        return None;
    }
    let (h, mi) = (num(11..13)?, num(14..16)?);
    if b.get(13) != Some(&b':') {
        return None;
    }
    let mut i = 16;
    let mut sec = 0;
    if b.get(i) == Some(&b':') {
        sec = num(17..19)?;
        i = 19;
        if b.get(i) == Some(&b'.') {
            i += 1;
            while b.get(i).is_some_and(|c| c.is_ascii_digit()) {
                i += 1;
            }
        }
    }
    if h > 23 || mi > 59 || sec > 60 {
        return None;
    }
    let offset = match &s[i..] {
        "Z" | "z" | "" => 0,
        tz if tz.len() == 6 && (tz.starts_with('+') || tz.starts_with('-')) && tz.as_bytes()[3] == b':' => {
            let (oh, om) = (num(i + 1..i + 3)?, num(i + 4..i + 6)?);
            let o = oh * 3600 + om * 60;
            if tz.starts_with('+') {
                o
            } else {
                -o
            }
        }
        _ => return None,
    };
    Some(day * 86_400 + h * 3600 + mi * 60 + sec - offset)
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn round_trips() {
        for t in [0, 951_782_400, 1_773_100_800, 4_102_444_799] {
            assert_eq!(parse_ts(&format_ts(t)), Some(t));
            assert_eq!(parse_http_date(&http_date(t)), Some(t));
        }
        assert_eq!(format_ts(1_773_100_800), "2026-03-10T00:00:00Z");
        assert_eq!(http_date(784_111_777), "Sun, 06 Nov 1994 08:49:37 GMT");
        assert_eq!(parse_ts("2026-03-10"), Some(1_773_100_800));
        assert_eq!(parse_ts("2026-03-10T02:00:00+02:00"), Some(1_773_100_800));
        assert_eq!(format_ts_in_zone(1_773_100_800, 120), "2026-03-10T02:00:00+02:00");
        assert_eq!(format_ts_in_zone(1_773_100_800, -450), "2026-03-09T16:30:00-07:30");
        assert_eq!(parse_ts(&format_ts_in_zone(1_773_100_800, -450)), Some(1_773_100_800));
        assert_eq!(parse_ts("2026-03-10T00:00:00.123Z"), Some(1_773_100_800));
        for bad in ["", "2026-13-01", "2026-03-10T25:00:00Z", "yesterday", "2026-03-10Tx"] {
            assert_eq!(parse_ts(bad), None, "{bad}");
        }
    }
}
