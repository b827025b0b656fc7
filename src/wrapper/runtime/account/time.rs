//! Times as the account writes them and `report --since` reads them: RFC
//! 3339 in UTC (`2026-12-02T10:00:00Z`), or a duration back from now
//! (`90s`, `15m`, `2h`, `7d`). Seconds since the epoch inside; the calendar
//! arithmetic is Howard Hinnant's `days_from_civil` and its inverse.

use std::time::{SystemTime, UNIX_EPOCH};

/// Seconds since 1970-01-01T00:00:00Z, now.
pub fn now() -> i64 {
    match SystemTime::now().duration_since(UNIX_EPOCH) {
        Ok(since) => i64::try_from(since.as_secs()).unwrap_or(i64::MAX),
        Err(before) => -i64::try_from(before.duration().as_secs()).unwrap_or(i64::MAX),
    }
}

/// Days since the epoch of a date of the proleptic Gregorian calendar.
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let year = if month <= 2 { year - 1 } else { year };
    let era = year.div_euclid(400);
    let of_era = year - era * 400;
    let of_year = (153 * (month + if month > 2 { -3 } else { 9 }) + 2) / 5 + day - 1;
    let of_era_days = of_era * 365 + of_era / 4 - of_era / 100 + of_year;
    era * 146_097 + of_era_days - 719_468
}

/// The date of a day since the epoch: year, month, day.
fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let days = days + 719_468;
    let era = days.div_euclid(146_097);
    let of_era = days - era * 146_097;
    let year_of_era = (of_era - of_era / 1460 + of_era / 36_524 - of_era / 146_096) / 365;
    let of_year = of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let month_index = (5 * of_year + 2) / 153;
    let day = of_year - (153 * month_index + 2) / 5 + 1;
    let month = if month_index < 10 {
        month_index + 3
    } else {
        month_index - 9
    };
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

/// `2026-12-02T10:00:00Z`.
pub fn format(seconds: i64) -> String {
    let (days, of_day) = (seconds.div_euclid(86_400), seconds.rem_euclid(86_400));
    let (year, month, day) = civil_from_days(days);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        of_day / 3600,
        of_day / 60 % 60,
        of_day % 60
    )
}

/// Reads an RFC 3339 time (`T` or a space between date and time, a
/// fraction of a second ignored, `Z` or an offset `+HH:MM`): seconds since
/// the epoch.
pub fn parse_rfc3339(text: &str) -> Option<i64> {
    let bytes = text.as_bytes();
    let number = |from: usize, len: usize| -> Option<i64> {
        let digits = bytes.get(from..from + len)?;
        if !digits.iter().all(u8::is_ascii_digit) {
            return None;
        }
        std::str::from_utf8(digits).ok()?.parse().ok()
    };
    let at = |index: usize, wanted: &[u8]| bytes.get(index).is_some_and(|b| wanted.contains(b));
    if !(at(4, b"-") && at(7, b"-") && at(10, b"Tt ") && at(13, b":") && at(16, b":")) {
        return None;
    }
    let (year, month, day) = (number(0, 4)?, number(5, 2)?, number(8, 2)?);
    let (hour, minute, second) = (number(11, 2)?, number(14, 2)?, number(17, 2)?);
    let month_days = [
        31,
        28 + i64::from(leap(year)),
        31,
        30,
        31,
        30,
        31,
        31,
        30,
        31,
        30,
        31,
    ];
    let last = *month_days.get(usize::try_from(month - 1).ok()?)?;
    if day < 1 || day > last || hour > 23 || minute > 59 || second > 60 {
        return None;
    }
    let mut rest = bytes.get(19..)?;
    if let Some(fraction) = rest.strip_prefix(b".") {
        let digits = fraction.iter().take_while(|b| b.is_ascii_digit()).count();
        if digits == 0 {
            return None;
        }
        rest = fraction.get(digits..)?;
    }
    let offset = match rest {
        b"Z" | b"z" => 0,
        [sign @ (b'+' | b'-'), h1, h2, b':', m1, m2] => {
            let digits = [*h1, *h2, *m1, *m2];
            if !digits.iter().all(u8::is_ascii_digit) {
                return None;
            }
            let value = |a: u8, b: u8| i64::from(a - b'0') * 10 + i64::from(b - b'0');
            let (hours, minutes) = (value(*h1, *h2), value(*m1, *m2));
            if hours > 23 || minutes > 59 {
                return None;
            }
            let offset = hours * 3600 + minutes * 60;
            if *sign == b'-' { -offset } else { offset }
        }
        _ => return None,
    };
    let days = days_from_civil(year, month, day);
    Some(days * 86_400 + hour * 3600 + minute * 60 + second.min(59) - offset)
}

fn leap(year: i64) -> bool {
    year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
}

/// Reads `--since`: RFC 3339, or a whole number of `s`, `m`, `h` or `d`
/// back from `now`.
pub fn parse_since(text: &str, now: i64) -> Option<i64> {
    if let Some(at) = parse_rfc3339(text) {
        return Some(at);
    }
    let unit_at = text.len().checked_sub(1)?;
    let (count, unit) = (text.get(..unit_at)?, text.get(unit_at..)?);
    if count.is_empty() || !count.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let count: i64 = count.parse().ok()?;
    let unit = match unit {
        "s" => 1,
        "m" => 60,
        "h" => 3600,
        "d" => 86_400,
        _ => return None,
    };
    now.checked_sub(count.checked_mul(unit)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_read_back_as_written() {
        assert_eq!(format(0), "1970-01-01T00:00:00Z");
        assert_eq!(format(951_782_400), "2000-02-29T00:00:00Z");
        let at = parse_rfc3339("2026-12-02T10:00:00Z").unwrap();
        assert_eq!(format(at), "2026-12-02T10:00:00Z");
        for seconds in [-86_401, 0, 68_169_600, 1_796_212_345, 4_102_444_800] {
            assert_eq!(parse_rfc3339(&format(seconds)), Some(seconds));
        }
    }

    #[test]
    fn offsets_and_fractions_are_read_and_nonsense_is_not() {
        let utc = parse_rfc3339("2026-12-02T10:00:00Z").unwrap();
        assert_eq!(parse_rfc3339("2026-12-02T11:30:00+01:30"), Some(utc));
        assert_eq!(parse_rfc3339("2026-12-02 05:00:00.123456-05:00"), Some(utc));
        for bad in [
            "",
            "2026-12-02",
            "2026-12-02T10:00:00",
            "2026-13-02T10:00:00Z",
            "2026-02-29T10:00:00Z",
            "2026-12-02T24:00:00Z",
            "2026-12-02T10:00:00.Z",
            "2026-12-02T10:00:00+1:00",
            "2026-12-02T10:00:00Zjunk",
            "+026-12-02T10:00:00Z",
        ] {
            assert_eq!(parse_rfc3339(bad), None, "{bad}");
        }
        assert!(parse_rfc3339("2024-02-29T00:00:00Z").is_some());
    }

    #[test]
    fn a_duration_counts_back_from_now() {
        let now = 1_000_000;
        assert_eq!(parse_since("2h", now), Some(now - 7200));
        assert_eq!(parse_since("90s", now), Some(now - 90));
        assert_eq!(parse_since("15m", now), Some(now - 900));
        assert_eq!(parse_since("7d", now), Some(now - 604_800));
        for bad in [
            "h",
            "2",
            "-2h",
            "2w",
            "2.5h",
            "99999999999999999999d",
            "2 h",
        ] {
            assert_eq!(parse_since(bad, now), None, "{bad}");
        }
    }
}
