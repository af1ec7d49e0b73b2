//! Calendar days (`YYYY-MM-DD`, UTC) for dated prices: when a price takes effect, when it was last
//! checked, and the day a run is priced on (`--on`).

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

    /// The day `days` after 1970-01-01 (H. Hinnant's civil-from-days algorithm).
    pub(crate) fn from_days_since_epoch(days: i64) -> Self {
        let z = days + 719_468;
        let era = z.div_euclid(146_097);
        let doe = z.rem_euclid(146_097);
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
        let mp = (5 * doy + 2) / 153;
        let day = (doy - (153 * mp + 2) / 5 + 1) as u8;
        let month = if mp < 10 { mp + 3 } else { mp - 9 } as u8;
        let year = (yoe + era * 400 + i64::from(month <= 2)) as i32;
        Day { year, month, day }
    }
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
}
