//! Money as the flow API writes it: decimal strings with the currency's decimals
//! (`"1450.00"`). Shown as `USD 1,450.00`; never passed through a float.

/// How many decimals an amount the API wrote has (`"1450.00"` → 2, `"1500"` → 0).
pub fn decimals_of(amount: &str) -> u32 {
    amount.split_once('.').map_or(0, |(_, f)| f.len() as u32)
}

/// `"1450.00"` → `"1,450.00"`; text that is not a plain decimal is left as it is.
pub fn group(amount: &str) -> String {
    let (sign, rest) = match amount.strip_prefix('-') {
        Some(r) => ("-", r),
        None => ("", amount),
    };
    let (int, frac) = match rest.split_once('.') {
        Some((i, f)) => (i, Some(f)),
        None => (rest, None),
    };
    if int.is_empty() || !int.bytes().all(|b| b.is_ascii_digit()) {
        return amount.to_string();
    }
    let mut out = String::with_capacity(amount.len() + int.len() / 3);
    out.push_str(sign);
    for (i, c) in int.chars().enumerate() {
        if i > 0 && (int.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    if let Some(f) = frac {
        out.push('.');
        out.push_str(f);
    }
    out
}

/// `"1450.00", "USD"` → `"USD 1,450.00"`.
pub fn display(amount: &str, currency: &str) -> String {
    if currency.is_empty() {
        group(amount)
    } else {
        format!("{currency} {}", group(amount))
    }
}

/// A decimal amount in minor units, `decimals` places (None if it has more, or is not one).
pub fn to_minor(amount: &str, decimals: u32) -> Option<i64> {
    let (neg, rest) = match amount.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, amount),
    };
    let (int, frac) = rest.split_once('.').unwrap_or((rest, ""));
    if int.is_empty() && frac.is_empty()
        || frac.len() as u32 > decimals
        || !int.bytes().chain(frac.bytes()).all(|b| b.is_ascii_digit())
        || int.len() + decimals as usize > 18
    {
        return None;
    }
    let mut v: i64 = 0;
    for b in int.bytes().chain(frac.bytes().chain(std::iter::repeat(b'0')).take(decimals as usize)) {
        v = v * 10 + i64::from(b - b'0');
    }
    Some(if neg { -v } else { v })
}

/// Minor units as a decimal amount with `decimals` places.
pub fn from_minor(minor: i64, decimals: u32) -> String {
    let sign = if minor < 0 { "-" } else { "" };
    let abs = minor.unsigned_abs();
    if decimals == 0 {
        return format!("{sign}{abs}");
    }
    let scale = 10u64.pow(decimals);
    format!("{sign}{}.{:0width$}", abs / scale, abs % scale, width = decimals as usize)
}

/// An amount with all of the currency's decimals: `"5200"`, 2 → `"5200.00"`.
pub fn pad(amount: &str, decimals: u32) -> String {
    let have = decimals_of(amount);
    if have >= decimals {
        return amount.to_string();
    }
    let mut out = amount.to_string();
    if have == 0 {
        out.push('.');
    }
    out.extend(std::iter::repeat_n('0', (decimals - have) as usize));
    out
}

/// `n` times an amount, with the amount's decimals (a stay's price: nights × rate).
pub fn times(amount: &str, n: i64) -> Option<String> {
    let d = decimals_of(amount);
    to_minor(amount, d).and_then(|m| m.checked_mul(n)).map(|m| from_minor(m, d))
}

/// Whether an amount the API wrote is above zero.
pub fn is_positive(amount: &str) -> bool {
    to_minor(amount, decimals_of(amount)).is_some_and(|m| m > 0)
}

/// What a person typed as an amount (`"2,500"`, `" 2500.5 "`) as the decimal string the API
/// takes (`"2500.5"`), or why it is not one.
pub fn parse_input(input: &str, decimals: u32) -> Result<String, String> {
    let clean: String = input.chars().filter(|c| !c.is_whitespace() && *c != ',').collect();
    if clean.is_empty() {
        return Err("Enter an amount.".into());
    }
    if clean.starts_with('-') {
        return Err("Enter an amount of zero or more.".into());
    }
    let (int, frac) = clean.split_once('.').unwrap_or((&clean, ""));
    if int.is_empty() && frac.is_empty() || !int.bytes().chain(frac.bytes()).all(|b| b.is_ascii_digit()) {
        return Err(if decimals == 0 {
            "Enter a whole amount, like 2500.".into()
        } else {
            "Enter an amount in numbers, like 2500 or 2500.00.".into()
        });
    }
    if frac.len() as u32 > decimals {
        return Err(match decimals {
            0 => "Enter a whole amount, without decimals.".into(),
            1 => "Enter an amount with at most 1 decimal.".into(),
            n => format!("Enter an amount with at most {n} decimals."),
        });
    }
    let int = int.trim_start_matches('0');
    if int.len() > 12 {
        return Err("Enter a smaller amount.".into());
    }
    let int = if int.is_empty() { "0" } else { int };
    Ok(if frac.is_empty() { int.to_string() } else { format!("{int}.{frac}") })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_thousands() {
        assert_eq!(group("1450.00"), "1,450.00");
        assert_eq!(group("999.99"), "999.99");
        assert_eq!(group("1000"), "1,000");
        assert_eq!(group("1234567.891"), "1,234,567.891");
        assert_eq!(group("-1450.00"), "-1,450.00");
        assert_eq!(group("0.00"), "0.00");
        assert_eq!(group("n/a"), "n/a");
        assert_eq!(display("1450.00", "USD"), "USD 1,450.00");
        assert_eq!(display("1500", "JPY"), "JPY 1,500");
    }

    #[test]
    fn exact_arithmetic() {
        assert_eq!(decimals_of("180.00"), 2);
        assert_eq!(decimals_of("1500"), 0);
        assert_eq!(to_minor("180.00", 2), Some(18000));
        assert_eq!(to_minor("180.5", 2), Some(18050));
        assert_eq!(to_minor("1.005", 2), None);
        assert_eq!(to_minor("-0.05", 2), Some(-5));
        assert_eq!(from_minor(18050, 2), "180.50");
        assert_eq!(from_minor(-5, 2), "-0.05");
        assert_eq!(from_minor(1234, 3), "1.234");
        assert_eq!(from_minor(1500, 0), "1500");
        assert_eq!(times("180.00", 3).as_deref(), Some("540.00"));
        assert_eq!(times("0.10", 3).as_deref(), Some("0.30"));
        assert_eq!(times("1500", 2).as_deref(), Some("3000"));
        assert_eq!(pad("5200", 2), "5200.00");
        assert_eq!(pad("5200.5", 2), "5200.50");
        assert_eq!(pad("5200.50", 2), "5200.50");
        assert_eq!(pad("5200", 0), "5200");
        assert!(is_positive("0.01"));
        assert!(!is_positive("0.00"));
        assert!(!is_positive("x"));
    }

    #[test]
    fn reads_what_people_type() {
        assert_eq!(parse_input(" 2,500 ", 2).as_deref(), Ok("2500"));
        assert_eq!(parse_input("2500.5", 2).as_deref(), Ok("2500.5"));
        assert_eq!(parse_input("0042.00", 2).as_deref(), Ok("42.00"));
        assert_eq!(parse_input(".5", 2).as_deref(), Ok("0.5"));
        assert!(parse_input("", 2).is_err());
        assert!(parse_input("12.345", 2).is_err());
        assert!(parse_input("12.5", 0).is_err());
        assert!(parse_input("-3", 2).is_err());
        assert!(parse_input("1e3", 2).is_err());
        assert!(parse_input("abc", 2).is_err());
        assert!(parse_input(".", 2).is_err());
        assert!(parse_input("1000000000000", 2).is_err());
    }
}
