//! Units for humans: rates, response times, sizes.

/// A rate with a k/M suffix: `950`, `12.3k`, `1.25M`.
pub fn rate(v: f64) -> String {
    if v >= 999_500.0 {
        format!("{:.2}M", v / 1e6)
    } else if v >= 9_995.0 {
        format!("{:.1}k", v / 1e3)
    } else if v >= 1_000.0 {
        format!("{:.2}k", v / 1e3)
    } else if v >= 100.0 || v == 0.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.1}")
    }
}

/// A response time given in microseconds: `87us`, `1.24ms`, `3.5s`.
pub fn micros(us: u64) -> String {
    if us < 1_000 {
        format!("{us}us")
    } else if us < 10_000 {
        format!("{:.2}ms", us as f64 / 1e3)
    } else if us < 1_000_000 {
        format!("{:.1}ms", us as f64 / 1e3)
    } else {
        format!("{:.2}s", us as f64 / 1e6)
    }
}

/// Seconds with one decimal: `12.3s`.
pub fn seconds(s: f64) -> String {
    format!("{s:.1}s")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units() {
        assert_eq!(rate(0.0), "0");
        assert_eq!(rate(42.0), "42.0");
        assert_eq!(rate(950.0), "950");
        assert_eq!(rate(1234.0), "1.23k");
        assert_eq!(rate(12_345.0), "12.3k");
        assert_eq!(rate(2_500_000.0), "2.50M");
        assert_eq!(micros(87), "87us");
        assert_eq!(micros(1_240), "1.24ms");
        assert_eq!(micros(35_000), "35.0ms");
        assert_eq!(micros(3_500_000), "3.50s");
    }
}
