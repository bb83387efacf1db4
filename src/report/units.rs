//! Human-readable numbers with units.

use crate::analysis::findings::si_prefix;

/// Formats an operations-per-second figure in the workload's unit: GB/s for bytes; otherwise
/// with the SI prefix that fits, so a pio run's thousands do not show as "0.0 M".
pub fn rate(value: f64, unit: &str) -> String {
    if unit == "bytes" {
        return format!("{:.2} GB/s", value / 1e9);
    }
    let (scaled, prefix) = si_prefix(value);
    format!("{scaled:.1} {prefix}{unit}/s")
}

pub fn bytes(value: u64) -> String {
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

pub fn optional(value: Option<f64>, decimals: usize) -> String {
    value.map_or_else(|| "-".to_string(), |value| format!("{value:.decimals$}"))
}

#[cfg(test)]
mod tests {
    use super::*;

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
