//! Numbers and units in words, for every place that prints them (the run's table and
//! progress, the report's tables and findings): one SI scaler, one byte scaler, and rate
//! units that are typed, so bandwidth is formatted as bytes by its kind, not by string
//! comparison scattered over the renderers. A leaf module.

/// What a rate counts: bytes get GB/s, anything else its own name with an SI prefix.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RateUnit<'a> {
    Bytes,
    Items(&'a str),
}

impl<'a> RateUnit<'a> {
    /// The unit a workload records ("bytes", "LIO", "iterations", ...).
    pub(crate) fn of(unit: &'a str) -> Self {
        match unit {
            "bytes" => Self::Bytes,
            other => Self::Items(other),
        }
    }
}

/// Text from outside (a file, a server, another role's object names) as a message may show
/// it: control characters and the bidirectional controls that reorder what a terminal shows
/// (U+202A-U+202E, U+2066-U+2069, U+200E, U+200F, U+061C) escaped as `\u{...}`, everything
/// else kept, so no escape sequence reaches the terminal and no line reads other than it is.
pub(crate) fn printable(text: &str) -> String {
    let mut shown = String::with_capacity(text.len());
    for c in text.chars() {
        if c.is_control() || is_bidi_control(c) {
            shown.extend(c.escape_default());
        } else {
            shown.push(c);
        }
    }
    shown
}

/// The characters that change the direction text is shown in.
fn is_bidi_control(c: char) -> bool {
    matches!(c, '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}' | '\u{200E}' | '\u{200F}' | '\u{061C}')
}

/// `text` wrapped at word boundaries to `width` columns, later lines indented two spaces;
/// never at a hyphen ("single-threaded" and "-22%" stay whole). No trailing line end.
pub(crate) fn wrap_to(text: &str, width: usize) -> String {
    let options = textwrap::Options::new(width)
        .subsequent_indent("  ")
        .word_splitter(textwrap::WordSplitter::NoHyphenation);
    textwrap::fill(text, options)
}

/// A message for standard error: wrapped to the terminal's width when standard error is a
/// terminal (at most 80 columns where that width is unknown), whole when it goes to a file
/// or a pipe, where one line per message keeps logs searchable.
pub(crate) fn for_terminal(text: &str) -> String {
    use std::io::IsTerminal;
    if !std::io::stderr().is_terminal() {
        return text.to_string();
    }
    let width = match stderr_columns() {
        Some(width) if width >= 20 => width,
        _ => 80,
    };
    wrap_to(text, width)
}

/// The width of the terminal standard error is on, where it can be told: what the messages
/// and the progress bar written there must fit (standard output may go elsewhere).
pub(crate) fn stderr_columns() -> Option<usize> {
    terminal_size::terminal_size_of(std::io::stderr())
        .map(|(terminal_size::Width(columns), _)| usize::from(columns))
}

/// "1 worker", "2 workers".
pub(crate) fn workers_text(workers: usize) -> String {
    counted(workers, "worker")
}

/// A count and its noun, plural unless one: "1 session", "3 statements".
pub(crate) fn counted<N>(count: N, noun: &str) -> String
where
    N: std::fmt::Display + PartialEq + From<u8>,
{
    let plural = if count == N::from(1) { "" } else { "s" };
    format!("{count} {noun}{plural}")
}

/// "2.1 ± 0.3", with as many decimals as the uncertainty needs: never "± 0.0" (an
/// uncertainty under 0.0001 reads "± <0.0001"), and the bare value when it is unknown.
pub(crate) fn with_uncertainty(value: f64, uncertainty: Option<f64>) -> String {
    let Some(uncertainty) = uncertainty.filter(|u| u.is_finite() && *u >= 0.0) else {
        return format!("{value:.1}");
    };
    if uncertainty < 0.000_05 {
        return format!("{value:.4} ± <0.0001");
    }
    let decimals = (-uncertainty.log10().floor()).clamp(1.0, 4.0) as usize;
    format!("{value:.decimals$} ± {uncertainty:.decimals$}")
}

/// A hit ratio as a percentage with the decimals that tell misses apart (99.9871%), and a
/// plain "100%" when nothing missed.
pub(crate) fn hit_ratio(ratio: f64) -> String {
    if ratio >= 1.0 {
        return "100%".to_string();
    }
    let text = format!("{:.4}", 100.0 * ratio);
    format!("{}%", text.trim_end_matches('0').trim_end_matches('.'))
}

/// A band or share as a percentage: whole percents from 1%, one decimal below ("0.4%"), so
/// a small band never reads "0%".
pub(crate) fn percent(fraction: f64) -> String {
    let pct = 100.0 * fraction;
    if pct.abs() >= 0.95 {
        format!("{pct:.0}%")
    } else {
        format!("{pct:.1}%")
    }
}

/// A value scaled to the SI prefix that fits it: (50.3, "M") for 50,298,278.
pub(crate) fn si_prefix(value: f64) -> (f64, &'static str) {
    match value.abs() {
        v if v >= 1e9 => (value / 1e9, "G"),
        v if v >= 1e6 => (value / 1e6, "M"),
        v if v >= 1e3 => (value / 1e3, "K"),
        _ => (value, ""),
    }
}

/// Three significant digits, without scientific notation: 61.2, 0.0123, and from a thousand
/// up with an SI prefix (50.3 M rather than 50298278), as rates of LIO/s run into millions.
pub(crate) fn significant(value: f64) -> String {
    let (scaled, prefix) = si_prefix(value);
    let magnitude = if scaled == 0.0 {
        0
    } else {
        scaled.abs().log10().floor() as i32
    };
    let decimals = (2 - magnitude).clamp(0, 6) as usize;
    let space = if prefix.is_empty() { "" } else { " " };
    format!("{scaled:.decimals$}{space}{prefix}")
}

/// Bytes as lower-case hexadecimal: the start of a SHA-256 that names a file's content.
pub(crate) fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|byte| format!("{byte:02x}")).collect()
}

/// A speed over a captured pace as users write it: 1x, 1.5x, 0.25x, 16x (three significant
/// digits, no trailing zeros).
pub(crate) fn times(speed: f64) -> String {
    let text = significant(speed);
    let text = if text.contains('.') && !text.contains(' ') {
        text.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        text
    };
    format!("{text}x")
}

/// The unit a column of times in milliseconds reads best in, with the factor from ms: its
/// largest value shown with 1 to 4 digits before the point (0.09 ms is 90 us, 1,600 ms stays
/// 1600 ms, 16,000 ms is 16.0 s).
pub(crate) fn time_unit(largest_ms: f64) -> (&'static str, f64) {
    match largest_ms {
        ms if ms < 1.0 => ("us", 1000.0),
        ms if ms < 10_000.0 => ("ms", 1.0),
        _ => ("s", 0.001),
    }
}

/// A time in its column's unit: three significant digits, never an SI prefix.
pub(crate) fn time_in_unit(value: f64) -> String {
    match value.abs() {
        v if v >= 100.0 => format!("{value:.0}"),
        v if v >= 10.0 => format!("{value:.1}"),
        v if v >= 1.0 => format!("{value:.2}"),
        _ => format!("{value:.3}"),
    }
}

/// One time in milliseconds in words with its own unit: "90.0 us", "7.90 ms", "1.35 s".
pub(crate) fn duration_ms(value_ms: f64) -> String {
    let (unit, factor) = time_unit(value_ms);
    format!("{} {unit}", time_in_unit(value_ms * factor))
}

/// A span of time as a person says it: "850 ms", "42.5 s", "12 min 5 s", "3 h 20 min".
pub(crate) fn span(seconds: f64) -> String {
    let whole = seconds.round() as u64;
    match seconds {
        s if s < 1.0 => format!("{:.0} ms", s * 1e3),
        s if s < 120.0 => format!("{s:.1} s"),
        s if s < 7200.0 => format!("{} min {} s", whole / 60, whole % 60),
        _ => format!("{} h {} min", whole / 3600, whole % 3600 / 60),
    }
}

/// A fitted coefficient with its confidence half-width: fixed decimals, or scientific
/// notation where those decimals would show a nonzero figure as zero (kappa 1.0e-8 ±
/// 3.0e-9, never "0.000000 ± 0.000000").
pub(crate) fn coefficient(value: f64, ci: Option<f64>, decimals: usize) -> String {
    let tiny = |x: f64| x != 0.0 && x.abs() < 0.5 * 10f64.powi(-(decimals as i32));
    let scientific = tiny(value) || ci.is_some_and(tiny);
    let one = |x: f64| {
        if scientific {
            format!("{x:.1e}")
        } else {
            format!("{x:.decimals$}")
        }
    };
    match ci {
        Some(ci) => format!("{} ± {}", one(value), one(ci)),
        None => one(value),
    }
}

/// An operations-per-second figure in the workload's unit: GB/s for bytes; otherwise with the
/// SI prefix that fits, so a pio run's thousands do not show as "0.0 M".
pub(crate) fn rate(value: f64, unit: &str) -> String {
    match RateUnit::of(unit) {
        RateUnit::Bytes => format!("{:.2} GB/s", value / 1e9),
        RateUnit::Items(name) => {
            let (scaled, prefix) = si_prefix(value);
            format!("{scaled:.1} {prefix}{name}/s")
        }
    }
}

pub(crate) fn bytes(value: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut scaled = value as f64;
    let mut unit = 0;
    while scaled >= 1024.0 && unit < UNITS.len() - 1 {
        scaled /= 1024.0;
        unit += 1;
    }
    if scaled.fract() == 0.0 {
        format!("{scaled:.0} {}", UNITS[unit])
    } else {
        format!("{scaled:.1} {}", UNITS[unit])
    }
}

pub(crate) fn optional(value: Option<f64>, decimals: usize) -> String {
    value.map_or_else(|| "-".to_string(), |value| format!("{value:.decimals$}"))
}

#[cfg(test)]
mod tests {
    use super::span;

    #[test]
    fn spans_read_as_a_person_says_them() {
        assert_eq!(span(0.85), "850 ms");
        assert_eq!(span(42.54), "42.5 s");
        assert_eq!(span(725.0), "12 min 5 s");
        assert_eq!(span(12_000.0), "3 h 20 min");
    }

    use super::*;

    #[test]
    fn an_uncertainty_is_shown_with_the_decimals_it_needs() {
        assert_eq!(with_uncertainty(2.14, Some(0.31)), "2.1 ± 0.3");
        assert_eq!(with_uncertainty(2.137, Some(0.04)), "2.14 ± 0.04");
        assert_eq!(with_uncertainty(2.1374, Some(0.004)), "2.137 ± 0.004");
        assert_eq!(with_uncertainty(2.1, Some(1.5)), "2.1 ± 1.5");
        assert_eq!(with_uncertainty(2.0, Some(0.0)), "2.0000 ± <0.0001");
        assert_eq!(with_uncertainty(1.5, None), "1.5");
    }

    #[test]
    fn small_shares_and_full_hit_ratios_read_as_they_are() {
        assert_eq!(percent(0.004), "0.4%");
        assert_eq!(percent(0.27), "27%");
        assert_eq!(hit_ratio(1.0), "100%");
        assert_eq!(hit_ratio(0.999871), "99.9871%");
        assert_eq!(hit_ratio(0.9999), "99.99%");
    }

    #[test]
    fn printable_text_escapes_controls_and_direction_marks() {
        assert_eq!(printable("t\u{1b}[2Jx"), "t\\u{1b}[2Jx");
        assert_eq!(printable("a\u{202E}b\u{2066}c"), "a\\u{202e}b\\u{2066}c");
        assert_eq!(printable("corescale_t0 é"), "corescale_t0 é");
        assert_eq!(printable("line\nnext"), "line\\nnext");
    }

    #[test]
    fn times_read_in_one_to_four_digits() {
        assert_eq!(duration_ms(0.09), "90.0 us");
        assert_eq!(duration_ms(7.9), "7.90 ms");
        assert_eq!(duration_ms(1600.0), "1600 ms");
        assert_eq!(duration_ms(1350.0), "1350 ms");
        assert_eq!(duration_ms(16_000.0), "16.0 s");
        assert_eq!(coefficient(1.0e-8, Some(3.0e-9), 6), "1.0e-8 ± 3.0e-9");
        assert_eq!(coefficient(0.0123, Some(0.002), 4), "0.0123 ± 0.0020");
        assert_eq!(coefficient(0.0026, Some(0.0008), 4), "0.0026 ± 0.0008");
        assert_eq!(coefficient(0.02, Some(0.00001), 4), "2.0e-2 ± 1.0e-5");
    }

    #[test]
    fn messages_wrap_at_words_and_never_at_a_hyphen() {
        let text = "corescale: warning: 16 workers: single-threaded speed fell -22% against the level before it";
        let wrapped = wrap_to(text, 40);
        assert!(
            wrapped.lines().all(|line| line.chars().count() <= 40),
            "{wrapped}"
        );
        assert!(
            wrapped.lines().skip(1).all(|line| line.starts_with("  ")),
            "{wrapped}"
        );
        assert!(
            wrapped.contains("single-threaded") && wrapped.contains("-22%"),
            "{wrapped}"
        );
        assert_eq!(
            wrapped.split_whitespace().collect::<Vec<_>>(),
            text.split_whitespace().collect::<Vec<_>>()
        );
    }

    #[test]
    fn speeds_read_as_written() {
        assert_eq!(times(1.0), "1x");
        assert_eq!(times(1.5), "1.5x");
        assert_eq!(times(0.25), "0.25x");
        assert_eq!(times(16.0), "16x");
        assert_eq!(times(100.0), "100x");
    }

    #[test]
    fn significant_keeps_three_digits_at_every_magnitude() {
        assert_eq!(significant(61.234), "61.2");
        assert_eq!(significant(0.012345), "0.0123");
        assert_eq!(significant(0.0), "0.00");
        assert_eq!(significant(432.1), "432");
        assert_eq!(significant(4321.0), "4.32 K");
        assert_eq!(significant(14_565.0), "14.6 K");
        assert_eq!(significant(50_298_278.0), "50.3 M");
        assert_eq!(significant(2.5e9), "2.50 G");
        assert_eq!(workers_text(1), "1 worker");
        assert_eq!(workers_text(2), "2 workers");
        assert_eq!(counted(1_u64, "session"), "1 session");
        assert_eq!(counted(0_u64, "statement"), "0 statements");
    }

    #[test]
    fn units_scale() {
        assert_eq!(bytes(32 * 1024), "32 KiB");
        assert_eq!(bytes(105 << 20), "105 MiB");
        assert_eq!(rate(12.345e9, "bytes"), "12.35 GB/s");
        assert_eq!(rate(4.5e8, "iterations"), "450.0 Miterations/s");
        assert_eq!(rate(14_565.0, "LIO"), "14.6 KLIO/s");
        assert_eq!(rate(2.5e9, "LIO"), "2.5 GLIO/s");
        assert_eq!(rate(12.0, "statements"), "12.0 statements/s");
        assert_eq!(optional(None, 2), "-");
    }
}
