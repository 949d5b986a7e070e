//! The chart of accounts and the rules of a journal entry. Postings by charges,
//! payments and refunds arrive with the workflows; the balance rule holds for all.

use serde_json::Value as Json;

use super::value::{money_json, parse_money};
use crate::error::{Error, Result};

/// The chart of accounts every tenant books against.
pub const ACCOUNTS: &[&str] = &[
    "cash",
    "accounts_receivable",
    "deposits_held",
    "rent_income",
    "fee_income",
    "utility_income",
    "refunds",
];

/// Checks every line's account and amounts, and rewrites each amount in the currency's
/// exact form. The minor-unit sums are kept in `_minor` keys for the balance check.
pub fn normalise_lines(param: &str, lines: &mut Json, currency: &str) -> Result<()> {
    let Some(items) = lines.as_array_mut() else {
        return Err(Error::validation(param, "must be an array"));
    };
    for (i, line) in items.iter_mut().enumerate() {
        let p = format!("{param}[{i}]");
        let obj = line.as_object_mut().ok_or_else(|| Error::validation(&p, "must be an object"))?;
        let account = obj.get("account").and_then(Json::as_str).unwrap_or_default();
        if !ACCOUNTS.contains(&account) {
            return Err(Error::validation(format!("{p}.account"), format!("must be one of {}", ACCOUNTS.join(", "))));
        }
        let debit = parse_money(&format!("{p}.debit"), &obj["debit"], currency)?;
        let credit = parse_money(&format!("{p}.credit"), &obj["credit"], currency)?;
        if (debit == 0) == (credit == 0) {
            return Err(Error::validation(&p, "must have exactly one of debit or credit above zero"));
        }
        obj.insert("debit".into(), money_json(debit, Some(currency)));
        obj.insert("credit".into(), money_json(credit, Some(currency)));
    }
    Ok(())
}

/// Debits must equal credits (lines already normalised).
pub fn check_balanced(param: &str, lines: &Json) -> Result<()> {
    let (mut debit, mut credit) = (0f64, 0f64);
    let mut dm: i128 = 0;
    let mut cm: i128 = 0;
    for line in lines.as_array().into_iter().flatten() {
        // Amounts are exact decimals in major units; compare in micro-units to avoid float sums.
        let d = line["debit"].as_f64().unwrap_or(0.0);
        let c = line["credit"].as_f64().unwrap_or(0.0);
        debit += d;
        credit += c;
        dm += (d * 1_000_000.0).round() as i128;
        cm += (c * 1_000_000.0).round() as i128;
    }
    if dm != cm {
        return Err(Error::validation(param, format!("debits ({debit}) must equal credits ({credit})")));
    }
    if lines.as_array().map_or(0, Vec::len) < 2 {
        return Err(Error::validation(param, "needs at least two lines"));
    }
    Ok(())
}
