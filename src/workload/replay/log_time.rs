//! A log line's time, placed on UTC where its zone says how: a log that crosses a change of
//! daylight saving time (CET to CEST) or joins files written in two zones keeps its true
//! gaps, and one whose zone cannot be placed is refused where it changes, never read an hour
//! off.

use chrono::NaiveDateTime;

/// Where a time stands.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Zone {
    /// On UTC: the log gave an offset, `Z`, or a zone name with one meaning.
    #[default]
    Utc,
    /// A wall clock corescale cannot place: the zone name as written ("" when none is).
    Wall(Box<str>),
}

/// As a message names it: "'CET'", "local time without a zone".
impl std::fmt::Display for Zone {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Utc => formatter.write_str("an offset from UTC"),
            Self::Wall(name) if name.is_empty() => formatter.write_str("local time without a zone"),
            Self::Wall(name) => write!(formatter, "'{name}'"),
        }
    }
}

/// A time as a log wrote it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stamp {
    /// Microseconds since the epoch: UTC's when the zone is placed, else the wall clock's.
    pub at_us: i64,
    /// Whether it had a fraction of a second.
    pub precise: bool,
    pub zone: Zone,
}

/// Zone names whose offset from UTC (in minutes) is one the world agrees on, or whose
/// daylight-saving pair differs by the same hour in every place that uses it.
const ZONES: &[(&str, i32)] = &[
    ("UTC", 0),
    ("GMT", 0),
    ("UT", 0),
    ("Z", 0),
    ("WET", 0),
    ("WEST", 60),
    ("BST", 60),
    ("CET", 60),
    ("CEST", 120),
    ("MET", 60),
    ("MEST", 120),
    ("EET", 120),
    ("EEST", 180),
    ("MSK", 180),
    ("SAST", 120),
    ("EST", -300),
    ("EDT", -240),
    ("CST", -360),
    ("CDT", -300),
    ("MST", -420),
    ("MDT", -360),
    ("PST", -480),
    ("PDT", -420),
    ("AKST", -540),
    ("AKDT", -480),
    ("HST", -600),
    ("JST", 540),
    ("KST", 540),
    ("HKT", 480),
    ("AWST", 480),
    ("ACST", 570),
    ("ACDT", 630),
    ("AEST", 600),
    ("AEDT", 660),
    ("NZST", 720),
    ("NZDT", 780),
];

/// "2026-11-29 08:45:19.404 UTC", "2026-11-29 08:45:19 CET", "2026-11-29T08:45:19.404+01",
/// "2026-11-29T08:45:19.404123Z", "2026-11-29T09:45:19.404123+01:00".
pub fn parse_time(text: &str) -> Option<Stamp> {
    let text = text.trim();
    let stamp = text.get(..19)?;
    let time = NaiveDateTime::parse_from_str(&stamp.replace('T', " "), "%Y-%m-%d %H:%M:%S").ok()?;
    let mut at_us = time.and_utc().timestamp_micros();
    let mut rest = &text[19..];
    let mut precise = false;
    if let Some(after) = rest.strip_prefix('.') {
        let digits = after.bytes().take_while(u8::is_ascii_digit).count();
        if digits > 0 {
            let value: i64 = after[..digits.min(6)].parse().ok()?;
            at_us += value * 10_i64.pow(6 - digits.min(6) as u32);
            precise = true;
        }
        rest = &after[digits..];
    }
    let written = rest.trim();
    let zone = match offset_minutes(written) {
        Some(minutes) => {
            at_us -= i64::from(minutes) * 60_000_000;
            Zone::Utc
        }
        None => Zone::Wall(written.into()),
    };
    Some(Stamp {
        at_us,
        precise,
        zone,
    })
}

/// "+01", "-0330", "+05:30", "Z", "CET": minutes east of UTC; None for no zone or a name
/// with more than one meaning (IST is India's, Israel's or Ireland's).
fn offset_minutes(zone: &str) -> Option<i32> {
    if let Some((_, minutes)) = ZONES.iter().find(|(name, _)| *name == zone) {
        return Some(*minutes);
    }
    let sign = match zone.as_bytes().first()? {
        b'+' => 1,
        b'-' => -1,
        _ => return None,
    };
    let written = &zone[1..];
    let (hours, minutes) = match (written.len(), written.split_once(':')) {
        (2, None) => (written, "0"),
        (4, None) => written.split_at(2),
        (5, Some((hours, minutes))) if hours.len() == 2 => (hours, minutes),
        _ => return None,
    };
    if !hours
        .bytes()
        .chain(minutes.bytes())
        .all(|byte| byte.is_ascii_digit())
    {
        return None;
    }
    let (hours, minutes): (i32, i32) = (hours.parse().ok()?, minutes.parse().ok()?);
    (hours <= 15 && minutes < 60).then_some(sign * (hours * 60 + minutes))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(text: &str) -> i64 {
        parse_time(text).expect(text).at_us
    }

    #[test]
    fn times_keep_their_fraction() {
        let stamp = parse_time("2026-11-29 08:45:19.404 UTC").unwrap();
        assert_eq!((stamp.at_us % 1_000_000, stamp.precise), (404_000, true));
        assert!(!parse_time("2026-11-29 08:45:19 CET").unwrap().precise);
        assert!(parse_time("yesterday").is_none());
        assert!(parse_time("2026-11-29 08:45:19.").is_some());
    }

    #[test]
    fn every_way_of_writing_one_instant_reads_as_that_instant() {
        let utc = at("2026-11-29 08:45:19.404 UTC");
        for same in [
            "2026-11-29 09:45:19.404 CET",
            "2026-11-29T09:45:19.404+01",
            "2026-11-29T09:45:19.404+01:00",
            "2026-11-29T08:45:19.404000Z",
            "2026-11-29 03:45:19.404 EST",
            "2026-11-29 14:15:19.404 +0530",
            "2026-11-29 05:15:19.404 -03:30",
        ] {
            assert_eq!(at(same), utc, "{same}");
            assert_eq!(parse_time(same).unwrap().zone, Zone::Utc, "{same}");
        }
    }

    #[test]
    fn daylight_saving_keeps_the_true_gap() {
        // Europe's clocks go back at 01:00 UTC on 2026-10-25: 02:59:59 CEST, then 02:00:00 CET.
        let before = at("2026-10-25 02:59:59.500 CEST");
        let after = at("2026-10-25 02:00:00.500 CET");
        assert_eq!(after - before, 1_000_000);
    }

    #[test]
    fn a_zone_that_cannot_be_placed_is_kept_as_written() {
        for (text, zone) in [
            ("2026-11-29 08:45:19.404 IST", "IST"),
            ("2026-11-29 08:45:19.404", ""),
            ("2026-11-29 08:45:19.404 +25", "+25"),
            ("2026-11-29 08:45:19.404 +1:0", "+1:0"),
        ] {
            let stamp = parse_time(text).unwrap();
            assert_eq!(stamp.zone, Zone::Wall(zone.into()), "{text}");
            assert_eq!(stamp.at_us % 1_000_000, 404_000, "{text}");
        }
    }
}
