//! Durations as the spec and the command line write them (`45s`, `1m30s`).
//!
//! Hand-written rather than `humantime` (issue 34 item 5), because that crate
//! accepts what this parser refuses (a bare `0`, weeks, months and years, and
//! up to 2^64 seconds where this stops at 2^64 nanoseconds, so the refusal
//! of `99999999999999h` that `spec_refusals` pins would pass) and refuses
//! `micros`, which this one accepts.

use std::time::Duration;

/// A duration that does not parse (see [`parse_duration`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BadDuration {
    /// Not one or more numbers each with a known unit.
    #[error("expected a number with a unit, like `45s`, `2m` or `1m30s`")]
    Unparsable,
    /// Well formed, but beyond what a duration holds (2^64 nanoseconds).
    #[error("too large: a duration is at most 213503d (about 584 years)")]
    TooLarge,
}

/// Parse a duration like `45s`, `2m`, `1m30s`, `1h 5m`, `500ms`: one or more
/// whole numbers, each followed by a unit (`ns`, `us`, `ms`, `s`, `m`, `h`,
/// `d`, or their long forms such as `sec`, `mins`, `hours`).
pub fn parse_duration(s: &str) -> Result<Duration, BadDuration> {
    let mut rest = s.trim();
    if rest.is_empty() {
        return Err(BadDuration::Unparsable);
    }
    let mut total: u64 = 0;
    while !rest.is_empty() {
        let digits = rest
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(rest.len());
        let n: u64 = match rest[..digits].parse() {
            Ok(n) => n,
            Err(e) if *e.kind() == std::num::IntErrorKind::PosOverflow => {
                return Err(BadDuration::TooLarge)
            }
            Err(_) => return Err(BadDuration::Unparsable),
        };
        rest = rest[digits..].trim_start();
        let unit_len = rest
            .find(|c: char| !c.is_alphabetic())
            .unwrap_or(rest.len());
        let nanos_per: u64 = match &rest[..unit_len] {
            "ns" | "nsec" | "nanos" => 1,
            "us" | "µs" | "usec" | "micros" => 1_000,
            "ms" | "msec" | "millis" => 1_000_000,
            "s" | "sec" | "secs" | "second" | "seconds" => 1_000_000_000,
            "m" | "min" | "mins" | "minute" | "minutes" => 60_000_000_000,
            "h" | "hr" | "hrs" | "hour" | "hours" => 3_600_000_000_000,
            "d" | "day" | "days" => 86_400_000_000_000,
            _ => return Err(BadDuration::Unparsable),
        };
        let part = n.checked_mul(nanos_per).ok_or(BadDuration::TooLarge)?;
        total = total.checked_add(part).ok_or(BadDuration::TooLarge)?;
        rest = rest[unit_len..].trim_start();
    }
    Ok(Duration::from_nanos(total))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        let secs = |s: &str| parse_duration(s).map(|d| d.as_secs_f64());
        assert_eq!(secs("45s"), Ok(45.0));
        assert_eq!(secs(" 2m "), Ok(120.0));
        assert_eq!(secs("1m30s"), Ok(90.0));
        assert_eq!(secs("1h 5m"), Ok(3900.0));
        assert_eq!(secs("500ms"), Ok(0.5));
        assert_eq!(secs("2 minutes"), Ok(120.0));
        for bad in ["", "45", "s", "45 seconds please", "1.5s", "-3s"] {
            assert_eq!(parse_duration(bad), Err(BadDuration::Unparsable), "{bad:?}");
        }
        for huge in [
            "99999999999999999999d",
            "99999999999999h",
            "213504d",
            "213503d 1d",
        ] {
            assert_eq!(parse_duration(huge), Err(BadDuration::TooLarge), "{huge:?}");
        }
        assert!(parse_duration("213503d").is_ok());
    }
}
