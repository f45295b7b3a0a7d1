//! The RFC 6265 §5.1.1 cookie-date algorithm: the lenient `Expires` parser browsers use,
//! accepting RFC 1123, RFC 850 and asctime dates and their common variants.

use time::{Date, Month, PrimitiveDateTime, Time};

/// Parse a cookie date into Unix seconds (UTC); `None` when §5.1.1 says to fail.
pub fn parse_cookie_date(input: &str) -> Option<i64> {
    let mut time: Option<(u8, u8, u8)> = None;
    let mut day: Option<u8> = None;
    let mut month: Option<Month> = None;
    let mut year: Option<u32> = None;
    for token in input.as_bytes().split(|&b| is_delimiter(b)) {
        if token.is_empty() {
            continue;
        }
        if time.is_none() {
            if let Some(t) = parse_time(token) {
                time = Some(t);
                continue;
            }
        }
        if day.is_none() {
            if let Some(d) = leading_digits(token, 1, 2) {
                day = u8::try_from(d).ok();
                continue;
            }
        }
        if month.is_none() {
            if let Some(m) = parse_month(token) {
                month = Some(m);
                continue;
            }
        }
        if year.is_none() {
            if let Some(y) = leading_digits(token, 2, 4) {
                year = Some(y);
                continue;
            }
        }
    }
    let (hour, minute, second) = time?;
    let mut year = year?;
    // Two-digit years: 70–99 are 19xx, 00–69 are 20xx (§5.1.1 steps 3–4).
    if (70..=99).contains(&year) {
        year += 1900;
    } else if year <= 69 {
        year += 2000;
    }
    let day = day?;
    if !(1..=31).contains(&day) || year < 1601 || hour > 23 || minute > 59 || second > 59 {
        return None;
    }
    // Date::from_calendar_date refuses days that do not exist, e.g. 30 February.
    let date = Date::from_calendar_date(i32::try_from(year).ok()?, month?, day).ok()?;
    let clock = Time::from_hms(hour, minute, second).ok()?;
    Some(
        PrimitiveDateTime::new(date, clock)
            .assume_utc()
            .unix_timestamp(),
    )
}

/// §5.1.1 delimiter: %x09 / %x20-2F / %x3B-40 / %x5B-60 / %x7B-7E.
fn is_delimiter(b: u8) -> bool {
    matches!(b, 0x09 | 0x20..=0x2F | 0x3B..=0x40 | 0x5B..=0x60 | 0x7B..=0x7E)
}

/// `min*max DIGIT ( non-digit *OCTET )`: the leading digits as a number.
fn leading_digits(token: &[u8], min: usize, max: usize) -> Option<u32> {
    let n = token.iter().take_while(|b| b.is_ascii_digit()).count();
    if n < min || n > max {
        return None;
    }
    token[..n]
        .iter()
        .try_fold(0u32, |acc, &b| Some(acc * 10 + u32::from(b - b'0')))
}

/// `hms-time ( non-digit *OCTET )` where hms-time is `time-field ":" time-field ":" time-field`.
fn parse_time(token: &[u8]) -> Option<(u8, u8, u8)> {
    let mut fields = [0u8; 3];
    let mut rest = token;
    for (i, field) in fields.iter_mut().enumerate() {
        let n = rest.iter().take_while(|b| b.is_ascii_digit()).count();
        if n == 0 || n > 2 {
            return None;
        }
        *field = rest[..n].iter().fold(0u8, |acc, &b| acc * 10 + (b - b'0'));
        rest = &rest[n..];
        if i < 2 {
            rest = rest.strip_prefix(b":")?;
        }
    }
    // Anything may follow the seconds as long as it does not start with a digit (n <= 2 above).
    Some((fields[0], fields[1], fields[2]))
}

/// A month token: its first three octets name the month, case-insensitively.
fn parse_month(token: &[u8]) -> Option<Month> {
    const NAMES: [(&[u8; 3], Month); 12] = [
        (b"jan", Month::January),
        (b"feb", Month::February),
        (b"mar", Month::March),
        (b"apr", Month::April),
        (b"may", Month::May),
        (b"jun", Month::June),
        (b"jul", Month::July),
        (b"aug", Month::August),
        (b"sep", Month::September),
        (b"oct", Month::October),
        (b"nov", Month::November),
        (b"dec", Month::December),
    ];
    let head = token.get(..3)?;
    NAMES
        .iter()
        .find(|(name, _)| head.eq_ignore_ascii_case(&name[..]))
        .map(|&(_, m)| m)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    // 2015-10-21T07:28:00Z
    const T: i64 = 1_445_412_480;

    #[test]
    fn the_three_http_formats() {
        assert_eq!(parse_cookie_date("Wed, 21 Oct 2015 07:28:00 GMT"), Some(T));
        assert_eq!(
            parse_cookie_date("Wednesday, 21-Oct-15 07:28:00 GMT"),
            Some(T)
        );
        assert_eq!(parse_cookie_date("Wed Oct 21 07:28:00 2015"), Some(T));
    }

    #[test]
    fn lenient_variants() {
        assert_eq!(parse_cookie_date("21 october 2015 07:28:00"), Some(T));
        assert_eq!(parse_cookie_date("Wed, 21-Oct-2015 07:28:00 UTC"), Some(T));
        assert_eq!(parse_cookie_date("2015 Oct 21 7:28:0"), Some(T));
        assert_eq!(parse_cookie_date("Thu, 01 Jan 1970 00:00:00 GMT"), Some(0));
        assert_eq!(parse_cookie_date("Thu, 01 Jan 70 00:00:01 GMT"), Some(1));
        assert_eq!(
            parse_cookie_date("Fri, 01 Jan 2038 00:00:00 GMT"),
            Some(2_145_916_800)
        );
    }

    #[test]
    fn refusals() {
        assert_eq!(parse_cookie_date(""), None);
        assert_eq!(parse_cookie_date("tomorrow"), None);
        assert_eq!(parse_cookie_date("Wed, 21 Oct 2015"), None);
        assert_eq!(parse_cookie_date("Wed, 32 Oct 2015 07:28:00 GMT"), None);
        assert_eq!(parse_cookie_date("Wed, 30 Feb 2015 07:28:00 GMT"), None);
        assert_eq!(parse_cookie_date("Wed, 21 Oct 2015 24:00:00 GMT"), None);
        assert_eq!(parse_cookie_date("Wed, 21 Oct 1600 07:28:00 GMT"), None);
        assert_eq!(parse_cookie_date("Wed, 21 Foo 2015 07:28:00 GMT"), None);
        assert_eq!(parse_cookie_date("1445412480"), None);
    }

    proptest! {
        #[test]
        fn never_panics(s in "\\PC{0,40}") {
            let _ = parse_cookie_date(&s);
        }

        #[test]
        fn never_panics_on_date_like(s in "[0-9: ,a-zA-Z-]{0,40}") {
            let _ = parse_cookie_date(&s);
        }
    }
}
