//! One line in the runtime's log, where the shims and engines read what a
//! runtime said: runc's `--log FILE` in its `--log-format` (logrus's
//! `json` or `text`). Said nowhere without `--log`: the runtime's own
//! stderr may be the container's (`runc run` in the foreground), and the
//! container's output must stay its own.

use std::fs::OpenOptions;
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::time::{SystemTime, UNIX_EPOCH};

use serde_json::json;

use super::verbs::Log;

/// The levels we write.
#[derive(Clone, Copy)]
pub enum Level {
    Info,
    Error,
}

impl Level {
    fn name(self) -> &'static str {
        match self {
            Level::Info => "info",
            Level::Error => "error",
        }
    }
}

/// `seconds` since the epoch as RFC 3339 in UTC, `2006-01-02T15:04:05Z`.
pub fn rfc3339(seconds: u64) -> String {
    let (days, rest) = (seconds / 86_400, seconds % 86_400);
    // Howard Hinnant's civil_from_days, for days since 1970-01-01.
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    let (h, m, s) = (rest / 3_600, rest / 60 % 60, rest % 60);
    format!("{year:04}-{month:02}-{day:02}T{h:02}:{m:02}:{s:02}Z")
}

/// The line for `message`, in the log's format, with its newline.
pub fn line(json: bool, level: Level, message: &str, time: &str) -> String {
    if json {
        let line = json!({ "level": level.name(), "msg": message, "time": time });
        format!("{line}\n")
    } else {
        let quoted = quote(message);
        format!("time=\"{time}\" level={} msg={quoted}\n", level.name())
    }
}

/// `text` quoted as Go's `%q` (`strconv.Quote`) quotes it, as logrus's
/// text format writes a value: no byte of it can end or split the line.
/// Go leaves printable Unicode as it is and escapes the rest; here every
/// control character and the line and paragraph separators are escaped,
/// the rest kept.
pub fn quote(text: &str) -> String {
    let mut quoted = String::with_capacity(text.len() + 2);
    quoted.push('"');
    for c in text.chars() {
        match c {
            '"' => quoted.push_str("\\\""),
            '\\' => quoted.push_str("\\\\"),
            '\x07' => quoted.push_str("\\a"),
            '\x08' => quoted.push_str("\\b"),
            '\x0c' => quoted.push_str("\\f"),
            '\n' => quoted.push_str("\\n"),
            '\r' => quoted.push_str("\\r"),
            '\t' => quoted.push_str("\\t"),
            '\x0b' => quoted.push_str("\\v"),
            c if u32::from(c) < 0x80 && c.is_control() => {
                quoted.push_str(&format!("\\x{:02x}", u32::from(c)));
            }
            c if c.is_control() || c == '\u{2028}' || c == '\u{2029}' => {
                quoted.push_str(&format!("\\u{:04x}", u32::from(c)));
            }
            c => quoted.push(c),
        }
    }
    quoted.push('"');
    quoted
}

/// Appends `message` to the log, if there is one; a log that cannot be
/// written is no reason to fail the container.
pub fn say(log: &Log, level: Level, message: &str) {
    let Some(file) = &log.file else {
        return;
    };
    let now = SystemTime::now().duration_since(UNIX_EPOCH);
    let time = rfc3339(now.map(|d| d.as_secs()).unwrap_or_default());
    let line = line(log.json, level, message, &time);
    let file = OpenOptions::new()
        .append(true)
        .create(true)
        .mode(0o644)
        .open(file);
    // One write: a line whole among the runtime's own appends.
    if let Ok(mut file) = file {
        let _ = file.write_all(line.as_bytes());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_are_rfc3339() {
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00Z");
        assert_eq!(rfc3339(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(rfc3339(1_798_761_599), "2026-12-31T23:59:59Z");
    }

    #[test]
    fn lines_are_well_formed() {
        let json = line(true, Level::Info, "eatmydata: a \"b\"", "T");
        let parsed: serde_json::Value = serde_json::from_str(&json).unwrap();
        assert_eq!(parsed["level"], "info");
        assert_eq!(parsed["msg"], "eatmydata: a \"b\"");
        assert!(json.ends_with("\"}\n"));
        assert_eq!(
            line(false, Level::Error, "eatmydata: a \"b\"", "T"),
            "time=\"T\" level=error msg=\"eatmydata: a \\\"b\\\"\"\n"
        );
    }

    /// As Go's `strconv.Quote` writes them.
    #[test]
    fn text_lines_never_split() {
        for (text, go) in [
            ("a\nb", r#""a\nb""#),
            ("a\tb\rc", r#""a\tb\rc""#),
            ("\x07\x08\x0b\x0c", r#""\a\b\v\f""#),
            ("\x00\x1b[1m\x7f", r#""\x00\x1b[1m\x7f""#),
            ("\u{85}\u{2028}", r#""\u0085\u2028""#),
            ("é \\ \"", r#""é \\ \"""#),
        ] {
            assert_eq!(quote(text), go, "{text:?}");
        }
        let id = "evil\ntime=\"0\" level=error msg=\"forged\"";
        let written = line(false, Level::Info, &format!("eatmydata: {id}: off"), "T");
        assert_eq!(written.matches('\n').count(), 1, "{written}");
        assert!(written.ends_with("off\"\n"), "{written}");
        let json = line(true, Level::Info, id, "T");
        assert_eq!(json.matches('\n').count(), 1, "{json}");
    }
}
