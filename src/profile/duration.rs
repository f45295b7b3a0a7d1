//! Age strings for `profile prune --older-than`: `<digits><unit>` with unit s, m, h, d or w.

use std::time::Duration;

use crate::error::AfError;

/// Parse an age such as `30d`, `12h`, `90m` (also `s` and `w`); `invalid_argument` for an empty
/// string, a sign, a fraction, a missing or unknown unit, or a value that overflows.
pub fn parse_age(raw: &str) -> Result<Duration, AfError> {
    let invalid = |why: &str| {
        AfError::invalid(format!("invalid age {raw:?}: {why}"))
            .with_hint("use a whole number and a unit: 90m, 12h, 30d (also s, w)")
    };
    let s = raw.trim();
    if s.is_empty() {
        return Err(invalid("it is empty"));
    }
    let split = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
    let (digits, unit) = s.split_at(split);
    if digits.is_empty() {
        return Err(invalid("it must start with a whole number"));
    }
    let per_unit: u64 = match unit {
        "s" => 1,
        "m" => 60,
        "h" => 60 * 60,
        "d" => 24 * 60 * 60,
        "w" => 7 * 24 * 60 * 60,
        "" => return Err(invalid("the unit is missing")),
        _ => return Err(invalid("unknown unit")),
    };
    let n: u64 = digits
        .parse()
        .map_err(|_| invalid("the number is too large"))?;
    let secs = n
        .checked_mul(per_unit)
        .ok_or_else(|| invalid("the number is too large"))?;
    // Keep ages representable as a signed `time::Duration` so cutoffs can be computed.
    if secs > i64::MAX as u64 {
        return Err(invalid("the number is too large"));
    }
    Ok(Duration::from_secs(secs))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units() {
        assert_eq!(parse_age("30d").unwrap(), Duration::from_secs(30 * 86400));
        assert_eq!(parse_age("12h").unwrap(), Duration::from_secs(12 * 3600));
        assert_eq!(parse_age("90m").unwrap(), Duration::from_secs(90 * 60));
        assert_eq!(parse_age("45s").unwrap(), Duration::from_secs(45));
        assert_eq!(parse_age("2w").unwrap(), Duration::from_secs(14 * 86400));
        assert_eq!(parse_age("0d").unwrap(), Duration::ZERO);
    }

    #[test]
    fn rejects_bad_ages() {
        for raw in [
            "",
            " ",
            "30",
            "d",
            "-1d",
            "+1d",
            "1.5d",
            "1y",
            "1D",
            "1dd",
            "1 d",
            "99999999999999999999d",
            "106751991167301d",
            "18446744073709551615s",
        ] {
            assert!(parse_age(raw).is_err(), "{raw:?}");
        }
    }
}
