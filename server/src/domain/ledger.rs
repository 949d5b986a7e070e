//! The ledger's rules, in plain Rust: the chart of accounts, what each financial event
//! posts, reversals, and the balance rule every journal entry obeys. `crate::ops`
//! writes the entries; amounts here are integer minor units.

use serde_json::{json, Value as Json};

use super::value::{money_json, parse_money};
use crate::error::{Error, Result};

/// The chart of accounts every tenant books against.
pub const ACCOUNTS: &[&str] = &["cash", "accounts_receivable", "deposits_held", "rent_income", "fee_income", "utility_income", "refunds"];

/// One line of a journal entry: exactly one of `debit` and `credit` is above zero.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Line {
    pub account: &'static str,
    pub debit: i64,
    pub credit: i64,
}

const fn dr(account: &'static str, amount: i64) -> Line {
    Line { account, debit: amount, credit: 0 }
}
const fn cr(account: &'static str, amount: i64) -> Line {
    Line { account, debit: 0, credit: amount }
}

/// A charge makes the payer owe: receivables up, against income (or, for a deposit,
/// the deposit held on the payer's behalf, which is a liability and not income).
pub fn charge(kind: &str, amount: i64) -> Vec<Line> {
    let against = match kind {
        "rent" => "rent_income",
        "deposit" => "deposits_held",
        "utility" => "utility_income",
        _ => "fee_income",
    };
    vec![dr("accounts_receivable", amount), cr(against, amount)]
}

/// A succeeded payment: cash received, receivables settled.
pub fn payment(amount: i64) -> Vec<Line> {
    vec![dr("cash", amount), cr("accounts_receivable", amount)]
}

/// A succeeded refund: money paid back out.
pub fn refund(amount: i64) -> Vec<Line> {
    vec![dr("refunds", amount), cr("cash", amount)]
}

/// The reversing entry's lines: every debit becomes a credit and the other way round.
pub fn reversal(lines: &[Line]) -> Vec<Line> {
    lines.iter().map(|l| Line { account: l.account, debit: l.credit, credit: l.debit }).collect()
}

pub fn is_balanced(lines: &[Line]) -> bool {
    let sum = |f: fn(&Line) -> i64| lines.iter().map(|l| f(l) as i128).sum::<i128>();
    lines.len() >= 2 && sum(|l| l.debit) == sum(|l| l.credit)
}

/// Lines in their API form (amounts in major units of the currency).
pub fn to_json(lines: &[Line], currency: &str) -> Json {
    let one = |l: &Line| json!({"account": l.account, "debit": money_json(l.debit, Some(currency)), "credit": money_json(l.credit, Some(currency))});
    Json::Array(lines.iter().map(one).collect())
}

/// Parses lines in the API form, checking accounts and amounts.
pub fn parse(param: &str, lines: &Json, currency: &str) -> Result<Vec<Line>> {
    let items = lines.as_array().ok_or_else(|| Error::validation(param, "must be an array"))?;
    let mut out = Vec::with_capacity(items.len());
    for (i, line) in items.iter().enumerate() {
        let p = format!("{param}[{i}]");
        let obj = line.as_object().ok_or_else(|| Error::validation(&p, "must be an object"))?;
        if let Some(extra) = obj.keys().find(|k| !["account", "debit", "credit"].contains(&k.as_str())) {
            return Err(Error::validation(format!("{p}.{extra}"), "is not a field of a ledger line"));
        }
        let name = obj.get("account").and_then(Json::as_str).unwrap_or_default();
        let account = ACCOUNTS
            .iter()
            .find(|a| **a == name)
            .ok_or_else(|| Error::validation(format!("{p}.account"), format!("must be one of {}", ACCOUNTS.join(", "))))?;
        let amount = |k: &str| match obj.get(k) {
            None | Some(Json::Null) => Ok(0),
            Some(v) => parse_money(&format!("{p}.{k}"), v, currency),
        };
        let (debit, credit) = (amount("debit")?, amount("credit")?);
        if (debit == 0) == (credit == 0) {
            return Err(Error::validation(&p, "must have exactly one of debit or credit above zero"));
        }
        out.push(Line { account, debit, credit });
    }
    Ok(out)
}

/// Checks lines given by a client and rewrites them in the currency's exact form.
pub fn normalise_lines(param: &str, lines: &mut Json, currency: &str) -> Result<()> {
    let parsed = parse(param, lines, currency)?;
    *lines = to_json(&parsed, currency);
    Ok(())
}

/// Debits must equal credits, over at least two lines.
pub fn check_balanced(param: &str, lines: &Json, currency: &str) -> Result<()> {
    let parsed = parse(param, lines, currency)?;
    if parsed.len() < 2 {
        return Err(Error::validation(param, "needs at least two lines"));
    }
    if !is_balanced(&parsed) {
        let sum = |f: fn(&Line) -> i64| money_json(parsed.iter().map(f).sum(), Some(currency));
        return Err(Error::validation(param, format!("debits ({}) must equal credits ({})", sum(|l| l.debit), sum(|l| l.credit))));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_posting_balances_and_reverses_to_zero() {
        for kind in ["rent", "deposit", "fee", "utility"] {
            let l = charge(kind, 120_000);
            assert!(is_balanced(&l));
            let both: Vec<_> = l.iter().chain(reversal(&l).iter()).copied().collect();
            for a in ACCOUNTS {
                let net: i64 = both.iter().filter(|x| x.account == *a).map(|x| x.debit - x.credit).sum();
                assert_eq!(net, 0, "{kind}/{a}");
            }
        }
        assert!(is_balanced(&payment(1)) && is_balanced(&refund(1)));
        assert!(!is_balanced(&[dr("cash", 1)]));
    }

    #[test]
    fn lines_round_trip_through_json() {
        let l = charge("rent", 123_456);
        assert_eq!(parse("lines", &to_json(&l, "USD"), "USD").unwrap(), l);
        assert_eq!(to_json(&l, "JPY")[0]["debit"], json!(123456));
        assert!(parse("lines", &json!([{"account": "cash", "debit": 1, "credit": 1}]), "USD").is_err());
        assert!(parse("lines", &json!([{"account": "bank", "debit": 1}]), "USD").is_err());
    }
}
