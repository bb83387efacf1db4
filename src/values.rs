//! Values as the command line gives them, validated where they are parsed: sizes, counts,
//! shares, durations and worker counts become typed values, so no workload re-reads a string.
//! A leaf module: it knows nothing of workloads or commands.

use std::time::Duration;

/// Most workers in one level, even with --force: each is a thread with its own stack.
pub(crate) const MAX_WORKERS: usize = 4096;
/// Range of --array-size: a few pages, up to 1 TiB per array.
const ARRAY_BYTES: std::ops::RangeInclusive<u64> = 4096..=(1 << 40);
/// Range of --block-size: the block sizes databases use.
const BLOCK_BYTES: std::ops::RangeInclusive<u64> = 512..=(64 << 10);
/// Longest duration any option takes: a week, far from overflowing a clock.
const LONGEST: Duration = Duration::from_secs(7 * 24 * 3600);

/// A worker count: 1 to [`MAX_WORKERS`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Workers(pub usize);

/// A block size: a power of two from 512 bytes to 64 KiB.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BlockSize(pub u64);

impl Default for BlockSize {
    fn default() -> Self {
        Self(8192)
    }
}

/// A share of statements (or a percentage), 0 to 1.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Share(pub f64);

/// A table's size: a row count, or bytes that become rows of the block size in use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scale {
    Rows(u64),
    Bytes(u64),
}

impl Scale {
    /// Rows (one-row blocks) of `block_bytes` each.
    pub fn rows(self, block_bytes: u64) -> u64 {
        match self {
            Self::Rows(rows) => rows,
            Self::Bytes(bytes) => bytes / block_bytes.max(1),
        }
    }
}

/// "8" as 8 workers, at least 1 and at most [`MAX_WORKERS`].
pub(crate) fn parse_workers(text: &str) -> Result<Workers, String> {
    let workers: usize = text
        .trim()
        .parse()
        .map_err(|_| format!("'{text}' is not a worker count: use a whole number such as 8"))?;
    match workers {
        0 => Err("a load level needs at least 1 worker".to_string()),
        1..=MAX_WORKERS => Ok(Workers(workers)),
        _ => Err(format!(
            "{workers} workers is more than corescale runs in one level (at most {MAX_WORKERS})"
        )),
    }
}

/// "8K" as a block size.
pub(crate) fn parse_block_size(text: &str) -> Result<BlockSize, String> {
    let bytes = parse_size(text)?;
    if BLOCK_BYTES.contains(&bytes) && bytes.is_power_of_two() {
        Ok(BlockSize(bytes))
    } else {
        Err(format!(
            "'{text}' is not a block size: use a power of two from 512 to 64K, e.g. 8K"
        ))
    }
}

/// "20%" or "20" as a share in 0..=1.
pub(crate) fn parse_share(text: &str) -> Result<Share, String> {
    percentage(text)
        .map(Share)
        .ok_or_else(|| format!("'{text}' is not a percentage between 0 and 100, e.g. 20%"))
}

/// "8192" as rows, "64M" as bytes.
pub(crate) fn parse_scale(text: &str) -> Result<Scale, String> {
    let trimmed = text.trim();
    if !trimmed.is_empty() && trimmed.chars().all(|c| c.is_ascii_digit()) {
        trimmed
            .parse()
            .map(Scale::Rows)
            .map_err(|_| format!("--scale '{text}' is not a row count"))
    } else {
        parse_size(trimmed).map(Scale::Bytes)
    }
}

/// "2%", "2" or "0.5%" as a fraction (0.02, 0.02, 0.005), strictly between 0 and 1: a CV target.
pub(crate) fn parse_percent(text: &str) -> Result<f64, String> {
    percentage(text)
        .filter(|value| *value > 0.0 && *value < 1.0)
        .ok_or_else(|| format!("'{text}' is not a percentage strictly between 0 and 100, e.g. 2%"))
}

/// A percentage as a fraction, when it is a number in 0..=100 with or without '%'.
fn percentage(text: &str) -> Option<f64> {
    let value: f64 = text.trim().trim_end_matches('%').parse().ok()?;
    (0.0..=100.0).contains(&value).then_some(value / 100.0)
}

/// A whole number of at least 1, refused in words (clap's own range check would name the
/// type's limit, 18446744073709551615).
pub(crate) fn parse_positive(text: &str) -> Result<u64, String> {
    match text.trim().parse::<u64>() {
        Ok(0) => Err("must be at least 1 (got 0)".to_string()),
        Ok(value) => Ok(value),
        Err(_) if text.trim().starts_with('-') => {
            Err(format!("must be a whole number of at least 1 (got {text})"))
        }
        Err(_) => Err(format!(
            "'{text}' is not a whole number: give a count of at least 1"
        )),
    }
}

/// A count with decimal suffixes: 500M = 500,000,000; at least 1.
pub(crate) fn parse_count(text: &str) -> Result<u64, String> {
    parse_with_suffix(text, 1000).and_then(|value| {
        if value == 0 {
            Err("the job size must be at least 1".to_string())
        } else {
            Ok(value)
        }
    })
}

/// A byte size with binary suffixes: 64M = 64 MiB.
pub(crate) fn parse_size(text: &str) -> Result<u64, String> {
    parse_with_suffix(text, 1024)
}

/// An array size, 4K to 1T.
pub(crate) fn parse_array_size(text: &str) -> Result<u64, String> {
    let bytes = parse_size(text)?;
    if ARRAY_BYTES.contains(&bytes) {
        Ok(bytes)
    } else {
        Err(format!(
            "'{text}' is outside the array sizes corescale allocates: use 4K to 1T"
        ))
    }
}

fn parse_with_suffix(text: &str, base: u64) -> Result<u64, String> {
    let trimmed = text.trim().trim_end_matches(['B', 'b', 'i']);
    let (digits, power) = match trimmed.chars().last() {
        Some('K' | 'k') => (&trimmed[..trimmed.len() - 1], 1),
        Some('M' | 'm') => (&trimmed[..trimmed.len() - 1], 2),
        Some('G' | 'g') => (&trimmed[..trimmed.len() - 1], 3),
        Some('T' | 't') => (&trimmed[..trimmed.len() - 1], 4),
        _ => (trimmed, 0),
    };
    digits
        .parse::<u64>()
        .ok()
        .and_then(|value| value.checked_mul(base.pow(power)))
        .ok_or_else(|| format!("'{text}' is not a number with an optional K, M or G suffix"))
}

/// A duration from 10 ms to a week, e.g. 10s or 1m.
pub(crate) fn parse_duration(text: &str) -> Result<Duration, String> {
    bounded_duration(text, Duration::from_millis(10))
}

/// A duration a test sets in the environment to shorten a wait (`CORESCALE_TEST_*`), at
/// least `shortest`; None when unset or unreadable. Only tests set these: they are in no
/// help text.
pub(crate) fn test_setting(variable: &str, shortest: Duration) -> Option<Duration> {
    let text = std::env::var(variable).ok()?;
    humantime::parse_duration(&text)
        .ok()
        .map(|duration| duration.max(shortest))
}

/// A pause of any length up to a week (a think time may be shorter than 10 ms).
pub(crate) fn parse_pause(text: &str) -> Result<Duration, String> {
    bounded_duration(text, Duration::ZERO)
}

/// A latency limit: a positive duration such as 50ms.
pub(crate) fn parse_latency_limit(text: &str) -> Result<Duration, String> {
    bounded_duration(text, Duration::from_nanos(1))
}

fn bounded_duration(text: &str, shortest: Duration) -> Result<Duration, String> {
    match humantime::parse_duration(text) {
        Ok(duration) if duration > LONGEST => Err(format!("'{text}' is too long: at most 7 days")),
        Ok(duration) if duration >= shortest => Ok(duration),
        Ok(_) => Err(format!(
            "'{text}' is too short: use at least {}",
            humantime::format_duration(shortest)
        )),
        // humantime's own words list every unit it knows "(and few variations)".
        Err(_) => Err(format!(
            "'{text}' is not a duration: give a number and a unit, such as 500ms, 10s, 2m or 1h"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bad_duration_is_explained_in_our_words() {
        let error = parse_duration("5x").unwrap_err();
        assert!(error.contains("such as 500ms, 10s, 2m or 1h"), "{error}");
        assert!(!error.contains("variations"), "{error}");
    }

    #[test]
    fn latency_limits_are_positive_durations() {
        assert!(parse_latency_limit("50ms").is_ok());
        assert!(parse_latency_limit("0s").is_err());
    }

    #[test]
    fn sizes_counts_and_percentages_parse() {
        assert_eq!(parse_size("64M"), Ok(64 << 20));
        assert_eq!(parse_size("1GiB"), Ok(1 << 30));
        assert_eq!(parse_count("500M"), Ok(500_000_000));
        assert_eq!(parse_count("12"), Ok(12));
        assert!(parse_count("0").is_err());
        assert!(parse_size("lots").is_err());
        assert_eq!(parse_percent("2%"), Ok(0.02));
        assert!(parse_percent("0").is_err());
        assert_eq!(parse_share("20%"), Ok(Share(0.2)));
        assert!(parse_share("101%").is_err());
        assert_eq!(parse_duration("10s"), Ok(Duration::from_secs(10)));
        assert!(parse_duration("1ms").is_err());
        assert!(parse_duration("18446744073709551615s").is_err());
        assert!(parse_duration("8days").is_err());
        assert_eq!(parse_pause("1ms"), Ok(Duration::from_millis(1)));
        assert!(parse_pause("8days").is_err());
        assert_eq!(parse_block_size("8K"), Ok(BlockSize(8192)));
        for bad in [
            "0",
            "8",
            "16",
            "24",
            "100",
            "511",
            "128K",
            "18446744073709551615",
        ] {
            assert!(parse_block_size(bad).is_err(), "{bad}");
        }
        assert_eq!(parse_array_size("1G"), Ok(1 << 30));
        for bad in ["1", "4095", "2T", "18446744073709551615", "99999999999T"] {
            assert!(parse_array_size(bad).is_err(), "{bad}");
        }
        assert_eq!(parse_workers("4096"), Ok(Workers(4096)));
        assert_eq!(
            parse_workers("0"),
            Err("a load level needs at least 1 worker".to_string())
        );
        assert!(parse_workers("4097").is_err());
        assert!(parse_workers("18446744073709551615").is_err());
    }

    #[test]
    fn a_scale_is_rows_or_bytes() {
        assert_eq!(parse_scale("8192"), Ok(Scale::Rows(8192)));
        assert_eq!(parse_scale("64M"), Ok(Scale::Bytes(64 << 20)));
        assert_eq!(parse_scale("64M").unwrap().rows(8192), 8192);
        assert_eq!(Scale::Rows(10).rows(4096), 10);
        assert!(parse_scale("").is_err());
        assert!(parse_scale("99999999999999999999999").is_err());
        assert!(parse_scale("many").is_err());
    }
}
