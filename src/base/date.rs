//! Calendar dates, the one home of the civil-date arithmetic: days (`YYYY-MM-DD`, UTC) for dated
//! prices (when a price takes effect, when it was last checked, the day a run is priced on with
//! `--on`), and RFC 3339 timestamps to and from Unix seconds for usage logs and traces.

use std::fmt;
use std::str::FromStr;

/// One calendar day in the proleptic Gregorian calendar. Orders as time does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Day {
    year: i32,
    month: u8,
    day: u8,
}

fn is_leap(y: i32) -> bool {
    (y % 4 == 0 && y % 100 != 0) || y % 400 == 0
}

fn days_in_month(y: i32, m: u8) -> u8 {
    match m {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        _ if is_leap(y) => 29,
        _ => 28,
    }
}

impl Day {
    /// The day, if it exists.
    pub(crate) fn new(year: i32, month: u8, day: u8) -> Option<Self> {
        ((1..=12).contains(&month) && day >= 1 && day <= days_in_month(year, month))
            .then_some(Day { year, month, day })
    }

    /// Today in UTC, or the day of `SOURCE_DATE_EPOCH` when it is set to a Unix time (the
    /// reproducible-builds convention: a report or an import made then says that day, so outputs
    /// that name today can be reproduced and snapshot-tested).
    pub(crate) fn today() -> Self {
        let from_env = std::env::var("SOURCE_DATE_EPOCH")
            .ok()
            .and_then(|v| v.trim().parse::<u64>().ok());
        let secs = from_env.unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_secs())
        });
        Self::from_days_since_epoch((secs / 86_400) as i64)
    }

    /// The day `days` after 1970-01-01.
    pub(crate) fn from_days_since_epoch(days: i64) -> Self {
        let (year, month, day) = civil_from_days(days);
        Day {
            year: year as i32,
            month,
            day,
        }
    }
}

/// (year, month, day) of the day `days` after 1970-01-01 (H. Hinnant's civil-from-days algorithm).
fn civil_from_days(days: i64) -> (i64, u8, u8) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u8;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u8;
    (yoe + era * 400 + i64::from(month <= 2), month, day)
}

/// Days from 1970-01-01 to (year, month, day), which must be a valid date (H. Hinnant's
/// days-from-civil algorithm, the inverse of [`civil_from_days`]).
fn days_from_civil(year: i64, month: u8, day: u8) -> i64 {
    let (m, d) = (i64::from(month), i64::from(day));
    let y = if m <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The UTC date (`YYYY-MM-DD`) of Unix seconds.
pub(crate) fn utc_date(unix: f64) -> String {
    Day::from_days_since_epoch((unix / 86_400.0).floor() as i64).to_string()
}

/// `YYYY-MM-DDTHH:MM:SS[.fff](Z|±HH:MM)` to Unix seconds; `None` unless the date is a day of the
/// calendar, the hour is below 24, the minute below 60, the second below 61 (60 is a leap second)
/// and the offset's hours below 24 and minutes below 60.
pub(crate) fn parse_rfc3339(s: &str) -> Option<f64> {
    let s = s.trim();
    if let Some((y, mo, day, h, m, sec)) = canonical_rfc3339(s.as_bytes()) {
        return unix_seconds(y, mo, day, h, m, sec, 0.0);
    }
    if s.len() < 19 || !s.is_char_boundary(19) || !s.is_char_boundary(10) {
        return None;
    }
    let (date, rest) = s.split_at(10);
    let d: Vec<i64> = date
        .split('-')
        .map(|x| x.parse().ok())
        .collect::<Option<_>>()?;
    if d.len() != 3 || !rest.is_char_boundary(1) || !matches!(&rest[..1], "T" | "t" | " ") {
        return None;
    }
    let time = &rest[1..];
    let (clock, zone) = match time.find(['Z', 'z', '+', '-']) {
        Some(i) => time.split_at(i),
        None => (time, ""),
    };
    let mut parts = clock.split(':');
    let h: f64 = parts.next()?.parse().ok()?;
    let m: f64 = parts.next()?.parse().ok()?;
    let sec: f64 = parts.next()?.parse().ok()?;
    let offset = match zone {
        "" | "Z" | "z" => 0.0,
        z => {
            let sign = if z.starts_with('-') { -1.0 } else { 1.0 };
            let (oh, om) = z.get(1..)?.split_once(':')?;
            let (oh, om) = (oh.parse::<f64>().ok()?, om.parse::<f64>().ok()?);
            if !((0.0..24.0).contains(&oh) && (0.0..60.0).contains(&om)) {
                return None;
            }
            sign * (oh * 3600.0 + om * 60.0)
        }
    };
    unix_seconds(d[0], d[1], d[2], h, m, sec, offset)
}

/// Unix seconds of a civil date and a time of day, `offset` seconds east of UTC; `None` for a
/// time out of range or a day that does not exist.
fn unix_seconds(y: i64, mo: i64, day: i64, h: f64, m: f64, sec: f64, offset: f64) -> Option<f64> {
    if !((0.0..24.0).contains(&h) && (0.0..60.0).contains(&m) && (0.0..61.0).contains(&sec)) {
        return None;
    }
    let (mo, day) = (u8::try_from(mo).ok()?, u8::try_from(day).ok()?);
    Day::new(i32::try_from(y).ok()?, mo, day)?;
    let days = days_from_civil(y, mo, day);
    Some(days as f64 * 86_400.0 + h * 3600.0 + m * 60.0 + sec - offset)
}

/// The form logs write, `YYYY-MM-DDTHH:MM:SS[.f]Z` with 1 to 9 digits of fraction, read digit by
/// digit into the numbers [`parse_rfc3339`] reads otherwise (replay reads one per call): the
/// seconds are whole numbers divided once, which is the correctly rounded value `str::parse` gives.
fn canonical_rfc3339(s: &[u8]) -> Option<(i64, i64, i64, f64, f64, f64)> {
    let digits = |from: usize, to: usize| -> Option<i64> {
        s.get(from..to)?.iter().try_fold(0i64, |n, &b| {
            b.is_ascii_digit().then(|| n * 10 + i64::from(b - b'0'))
        })
    };
    let at = |i: usize, c: u8| s.get(i) == Some(&c);
    if s.len() < 20
        || !(at(4, b'-') && at(7, b'-') && at(10, b'T') && at(13, b':') && at(16, b':'))
        || s.last() != Some(&b'Z')
    {
        return None;
    }
    let whole = digits(17, 19)?;
    let sec = match s.len() - 20 {
        0 => whole as f64,
        n @ 2..=10 if at(19, b'.') => {
            let scale = 10i64.pow(n as u32 - 1);
            (whole * scale + digits(20, s.len() - 1)?) as f64 / scale as f64
        }
        _ => return None,
    };
    Some((
        digits(0, 4)?,
        digits(5, 7)?,
        digits(8, 10)?,
        digits(11, 13)? as f64,
        digits(14, 16)? as f64,
        sec,
    ))
}

impl FromStr for Day {
    type Err = String;

    /// Parses `YYYY-MM-DD` exactly (four-digit year, two-digit month and day).
    fn from_str(s: &str) -> Result<Self, String> {
        let bad = || format!("`{s}` is not a date of the form YYYY-MM-DD");
        let b = s.as_bytes();
        if b.len() != 10 || b[4] != b'-' || b[7] != b'-' {
            return Err(bad());
        }
        let digits = |r: std::ops::Range<usize>| -> Result<u32, String> {
            let part = &s[r];
            if part.bytes().all(|c| c.is_ascii_digit()) {
                part.parse().map_err(|_| bad())
            } else {
                Err(bad())
            }
        };
        let (y, m, d) = (digits(0..4)?, digits(5..7)?, digits(8..10)?);
        Day::new(y as i32, m as u8, d as u8)
            .ok_or_else(|| format!("`{s}` is not a day of the calendar"))
    }
}

impl fmt::Display for Day {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:04}-{:02}-{:02}", self.year, self.month, self.day)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_orders_and_prints() {
        let a: Day = "2026-10-07".parse().unwrap();
        let b: Day = "2027-01-01".parse().unwrap();
        assert!(a < b);
        assert_eq!(a.to_string(), "2026-10-07");
        for bad in [
            "2026-13-01",
            "2026-02-29",
            "26-01-01",
            "2026-1-01",
            "2026-01-0x",
            "",
        ] {
            assert!(bad.parse::<Day>().is_err(), "{bad}");
        }
        assert!("2028-02-29".parse::<Day>().is_ok());
    }

    #[test]
    fn days_since_epoch() {
        assert_eq!(Day::from_days_since_epoch(0).to_string(), "1970-01-01");
        // 2026-12-03 is day 20,790 after the epoch.
        assert_eq!(Day::from_days_since_epoch(20_790).to_string(), "2026-12-03");
        assert_eq!(Day::from_days_since_epoch(-1).to_string(), "1969-12-31");
    }

    #[test]
    fn days_from_civil_inverts_civil_from_days() {
        for days in (-800_000..800_000).step_by(997) {
            let (y, m, d) = civil_from_days(days);
            assert_eq!(days_from_civil(y, m, d), days, "{y}-{m}-{d}");
        }
        assert_eq!(utc_date(951_868_800.0), "2000-03-01");
        assert_eq!(utc_date(-0.5), "1969-12-31");
    }

    #[test]
    fn rfc3339_to_unix_seconds() {
        assert_eq!(parse_rfc3339("1970-01-01T00:00:00Z"), Some(0.0));
        assert_eq!(parse_rfc3339("2000-03-01T00:00:00Z"), Some(951_868_800.0));
        assert_eq!(
            parse_rfc3339("2026-12-02T10:00:01.500+01:00"),
            parse_rfc3339("2026-12-02T09:00:01.5Z")
        );
        assert_eq!(
            parse_rfc3339("2026-12-02T08:30:00-00:30"),
            parse_rfc3339("2026-12-02T09:00:00Z")
        );
        // The last second of a day and a leap second are times; the edges just past them are not.
        assert!(parse_rfc3339("2026-12-31T23:59:59.999Z").is_some());
        assert!(parse_rfc3339("2016-12-31T23:59:60Z").is_some());
        for bad in [
            "2026-12-02T24:00:00Z",
            "2026-12-02T99:00:00Z",
            "2026-12-02T10:60:00Z",
            "2026-12-02T10:00:61Z",
            "2026-12-02T-1:00:00Z",
            "2026-12-02T10:00:00+24:00",
            "2026-12-02T10:00:00+01:60",
            "2026-02-30T10:00:00Z",
            "2026-13-01T10:00:00Z",
            "2026-00-01T10:00:00Z",
            "yesterday",
        ] {
            assert_eq!(parse_rfc3339(bad), None, "{bad}");
        }
    }
}
