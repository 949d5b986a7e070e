//! The ledger over HTTP: what each operation posts (accounts, amounts, dates, sources),
//! the checks on payments, refunds, charges and manual entries (a refusal changes
//! nothing), and a property test: random sequences of operations keep every entry and
//! every tenant's sums balanced, and the sums equal what a model of the rules expects.

use std::collections::{BTreeMap, BTreeSet};

use gable::domain::reach::Scope;
use gable_tests::{both, Backend, Res, Tenant, TestApp};
use proptest::prelude::*;
use proptest::test_runner::{Config, RngAlgorithm, TestCaseError, TestRng, TestRunner};
use serde_json::{json, Value};

const ACCOUNTS: [&str; 7] = ["cash", "accounts_receivable", "deposits_held", "rent_income", "fee_income", "utility_income", "refunds"];

fn exp(currency: &str) -> u32 {
    match currency {
        "JPY" => 0,
        _ => 2,
    }
}

/// An amount in its API form (major units) in minor units.
fn minor(v: &Value, currency: &str) -> i64 {
    let f = v.as_f64().unwrap_or_else(|| panic!("not an amount: {v}"));
    (f * 10f64.powi(exp(currency) as i32)).round() as i64
}

/// Minor units as the API's exact decimal string.
fn major(m: i64, currency: &str) -> String {
    match exp(currency) {
        0 => m.to_string(),
        e => format!("{}.{:0w$}", m / 10i64.pow(e), m % 10i64.pow(e), w = e as usize),
    }
}

type Line = (String, i64, i64);

fn l(account: &str, debit: i64, credit: i64) -> Line {
    (account.to_string(), debit, credit)
}

/// An entry's lines in minor units.
fn lines(entry: &Value) -> Vec<Line> {
    let cur = entry["currency"].as_str().expect("entry currency");
    entry["lines"]
        .as_array()
        .expect("lines")
        .iter()
        .map(|x| (x["account"].as_str().unwrap().to_string(), minor(&x["debit"], cur), minor(&x["credit"], cur)))
        .collect()
}

fn swapped(lines: &[Line]) -> Vec<Line> {
    lines.iter().map(|(a, d, c)| (a.clone(), *c, *d)).collect()
}

/// Lines in the API form.
fn lines_json(lines: &[Line], currency: &str) -> Value {
    Value::Array(
        lines.iter().map(|(a, d, c)| json!({ "account": a, "debit": major(*d, currency), "credit": major(*c, currency) })).collect(),
    )
}

/// (currency, account) → (debit, credit), in minor units.
type Sums = BTreeMap<(String, String), (i64, i64)>;

fn add(sums: &mut Sums, currency: &str, lines: &[Line]) {
    for (a, d, c) in lines {
        let e = sums.entry((currency.to_string(), a.clone())).or_default();
        e.0 += d;
        e.1 += c;
    }
}

/// The sandbox's sums of a tenant.
async fn sums(app: &TestApp, t: &Tenant) -> Sums {
    sums_in(app, t, false).await
}

/// The sums of a tenant's sandbox or live mode.
async fn sums_in(app: &TestApp, t: &Tenant, livemode: bool) -> Sums {
    let scope = Scope { tenant: t.id, livemode, properties: None };
    let rows = app.store.account_sums(&scope, None, None).await.expect("account sums");
    rows.into_iter().map(|s| ((s.currency, s.account), (s.debit, s.credit))).collect()
}

/// Debits minus credits of an account.
fn balance(s: &Sums, currency: &str, account: &str) -> i64 {
    s.get(&(currency.to_string(), account.to_string())).map_or(0, |(d, c)| d - c)
}

/// Per currency: total debits and total credits.
fn totals(s: &Sums) -> BTreeMap<String, (i64, i64)> {
    let mut t: BTreeMap<String, (i64, i64)> = BTreeMap::new();
    for ((cur, _), (d, c)) in s {
        let e = t.entry(cur.clone()).or_default();
        e.0 += d;
        e.1 += c;
    }
    t
}

fn assert_sums_balance(s: &Sums) {
    for (cur, (d, c)) in totals(s) {
        assert_eq!(d, c, "{cur}: debits equal credits in the tenant's sums: {s:?}");
    }
}

/// Whether a key is a live one (`gbl_live_…`): the helpers here send its requests to
/// production, a test key's to the sandbox. Live mode is where a payment stays `pending`
/// until staff `succeed` or `fail` it; the sandbox runs a test payment's `scenario` at once.
fn is_live(key: &str) -> bool {
    key.starts_with("gbl_live_")
}

/// A request in the key's environment.
async fn call(app: &TestApp, key: &str, method: &str, path: &str, body: Option<Value>) -> Res {
    app.call_on(is_live(key), key, method, path, body).await
}

/// Creates a record in the key's environment; returns it.
async fn create(app: &TestApp, key: &str, resource: &str, body: Value) -> Value {
    let r = call(app, key, "POST", &format!("/v1/{resource}"), Some(body.clone())).await;
    assert_eq!(r.status, 201, "creating {resource} with {body}: {}", r.text);
    r.body["data"].clone()
}

/// A sandbox test payment whose scenario ran at once.
async fn test_payment(app: &TestApp, key: &str, mut body: Value, scenario: &str) -> String {
    body["scenario"] = json!(scenario);
    let p = create(app, key, "payments", body).await;
    assert_eq!(p["status"], scenario, "the scenario ran at once: {p}");
    id(&p)
}

/// A live payment, pending until staff confirm it.
async fn live_payment(app: &TestApp, key: &str, mut body: Value) -> String {
    body["method"] = json!("cash");
    let p = create(app, key, "payments", body).await;
    assert_eq!(p["status"], "pending", "{p}");
    id(&p)
}

async fn act(app: &TestApp, key: &str, resource: &str, id: &str, action: &str) -> Res {
    call(app, key, "POST", &format!("/v1/{resource}/{id}/{action}"), None).await
}

async fn ok_act(app: &TestApp, key: &str, resource: &str, id: &str, action: &str) -> Value {
    let r = act(app, key, resource, id, action).await;
    assert_eq!(r.status, 200, "{resource}/{id}/{action}: {}", r.text);
    r.body["data"].clone()
}

async fn get(app: &TestApp, key: &str, resource: &str, id: &str) -> Value {
    let r = call(app, key, "GET", &format!("/v1/{resource}/{id}"), None).await;
    assert_eq!(r.status, 200, "GET {resource}/{id}: {}", r.text);
    r.body["data"].clone()
}

fn id(v: &Value) -> String {
    v["id"].as_str().unwrap_or_else(|| panic!("no id in {v}")).to_string()
}

/// Every record of a list, oldest first, following cursors.
async fn list_all(app: &TestApp, key: &str, path: &str) -> Vec<Value> {
    let sep = if path.contains('?') { '&' } else { '?' };
    let path = format!("{path}{sep}limit=100&sort=created_at");
    app.all_pages(key, &path).await
}

/// The entries a record caused, oldest first.
async fn entries_for(app: &TestApp, key: &str, source_id: &str) -> Vec<Value> {
    list_all(app, key, &format!("/v1/accounting-entries?filter[source_id]={source_id}")).await
}

/// A property, a unit and a draft lease of it in the currency.
struct Setup {
    property: String,
    lease: String,
}

/// A [`Setup`] in the key's environment.
async fn setup(app: &TestApp, key: &str, currency: &str) -> Setup {
    let p = create(
        app,
        key,
        "properties",
        json!({ "name": "Maple Court", "kind": "residential", "address": { "line1": "1 Maple St", "city": "Portland", "country": "US" } }),
    )
    .await;
    let u = create(app, key, "units", json!({ "property_id": id(&p), "number": "1A" })).await;
    let rent = if currency == "JPY" { json!(120000) } else { json!(1450) };
    let lease =
        create(app, key, "leases", json!({ "unit_id": id(&u), "start_date": "2027-01-01", "rent": rent, "currency": currency })).await;
    Setup { property: id(&p), lease: id(&lease) }
}

fn tenant_cond(t: &Tenant) -> String {
    format!("tenant_id = '{}'", t.id)
}

// ---------------------------------------------------------------------------------------
// 1. What each operation posts.

async fn operations_post_exactly_their_entries(app: &TestApp) {
    let t = app.tenant("A").await;
    let k = &t.test_key;
    let s = setup(app, k, "USD").await;
    let today = app.clock.today().to_string();
    let mut expected = Sums::new();

    // One charge of each kind: receivable against the kind's account, on the due date.
    let mut charge_entry = BTreeMap::new();
    let kinds = [
        ("rent", 1450.0, "rent_income", "2027-01-01"),
        ("deposit", 2900.0, "deposits_held", "2026-12-15"),
        ("fee", 35.5, "fee_income", "2027-01-05"),
        ("utility", 80.25, "utility_income", "2027-01-31"),
    ];
    for (kind, amount, account, due) in kinds {
        let c = app
            .create(k, "charges", json!({ "lease_id": s.lease, "kind": kind, "amount": amount, "currency": "USD", "due_date": due }))
            .await;
        assert_eq!(c["property_id"], json!(s.property), "a charge's property is its lease's");
        assert_eq!(c["status"], "posted");
        let es = entries_for(app, k, &id(&c)).await;
        assert_eq!(es.len(), 1, "{kind} posts one entry: {es:?}");
        let e = &es[0];
        let m = (amount * 100.0_f64).round() as i64;
        assert_eq!(lines(e), vec![l("accounts_receivable", m, 0), l(account, 0, m)], "{kind}: {e}");
        assert_eq!(e["object"], "accounting_entry");
        assert_eq!(e["currency"], "USD");
        assert_eq!(e["posted_on"], due, "{kind} is posted on its due date");
        assert_eq!(e["source_type"], "charge");
        assert_eq!(e["source_id"], json!(id(&c)));
        assert_eq!(e["property_id"], json!(s.property));
        assert!(e["reverses_id"].is_null());
        add(&mut expected, "USD", &lines(e));
        charge_entry.insert(kind, (id(&c), id(e), lines(e)));
        assert_eq!(sums(app, &t).await, expected, "after the {kind} charge");
    }
    // Receivables: the four charges.
    assert_eq!(balance(&expected, "USD", "accounts_receivable"), 145000 + 290000 + 3550 + 8025);

    // A test payment posts as its scenario runs, at once: `succeeded` posts Dr cash /
    // Cr receivable, today. (A live payment posts nothing while pending: see the end.)
    let (rent_charge, _, _) = &charge_entry["rent"];
    let inv = app
        .create(
            k,
            "invoices",
            json!({ "lease_id": s.lease, "charge_ids": [rent_charge], "amount_due": 1450, "currency": "USD", "due_date": "2027-01-01" }),
        )
        .await;
    let inv = id(&inv);
    ok_act(app, k, "invoices", &inv, "open").await;
    let p = create(app, k, "payments", json!({ "amount": 1450, "currency": "USD", "invoice_id": inv, "scenario": "succeeded" })).await;
    assert_eq!(p["status"], "succeeded");
    assert!(p["succeeded_at"].is_string());
    assert_eq!(p["lease_id"], json!(s.lease), "a payment of an invoice pays the invoice's lease");
    let pay = id(&p);
    let es = entries_for(app, k, &pay).await;
    assert_eq!(es.len(), 1);
    let pay_entry = es[0].clone();
    assert_eq!(lines(&pay_entry), vec![l("cash", 145000, 0), l("accounts_receivable", 0, 145000)]);
    assert_eq!(pay_entry["posted_on"], json!(today), "a payment is posted on the day it succeeds");
    assert_eq!(pay_entry["source_type"], "payment");
    assert_eq!(pay_entry["property_id"], json!(s.property), "a payment's property is its invoice's");
    assert!(pay_entry["reverses_id"].is_null());
    add(&mut expected, "USD", &lines(&pay_entry));
    assert_eq!(sums(app, &t).await, expected);
    let i = get(app, k, "invoices", &inv).await;
    assert_eq!((i["status"].clone(), i["amount_paid"].clone()), (json!("paid"), json!(1450)));

    // Reversal: the mirror of the payment's entry, pointing at it; the invoice reopens.
    let p = ok_act(app, k, "payments", &pay, "reverse").await;
    assert!(p["reversed_at"].is_string());
    let es = entries_for(app, k, &pay).await;
    assert_eq!(es.len(), 2, "{es:?}");
    let rev = es.iter().find(|e| !e["reverses_id"].is_null()).expect("a reversing entry");
    assert_eq!(rev["reverses_id"], pay_entry["id"]);
    assert_eq!(lines(rev), swapped(&lines(&pay_entry)));
    assert_eq!(rev["posted_on"], json!(today));
    assert_eq!(rev["source_type"], "payment");
    assert_eq!(rev["currency"], "USD");
    assert_eq!(rev["property_id"], json!(s.property));
    add(&mut expected, "USD", &lines(rev));
    let now = sums(app, &t).await;
    assert_eq!(now, expected);
    assert_eq!(balance(&now, "USD", "cash"), 0, "a reversed payment leaves no cash");
    assert_eq!(balance(&now, "USD", "accounts_receivable"), 446575, "charge + payment + reversal: the whole charge is owed again");
    let i = get(app, k, "invoices", &inv).await;
    assert_eq!((i["status"].clone(), i["amount_paid"].clone()), (json!("open"), json!(0)));

    // A failed payment (a declined card) posts nothing.
    let failed = create(app, k, "payments", json!({ "amount": 100, "currency": "USD", "invoice_id": inv, "scenario": "failed" })).await;
    assert_eq!((&failed["status"], &failed["failure_code"]), (&json!("failed"), &json!("card_declined")), "{failed}");
    assert!(failed["failure_message"].as_str().is_some_and(|m| !m.is_empty()), "{failed}");
    assert!(entries_for(app, k, &id(&failed)).await.is_empty(), "a failed payment posts nothing");
    assert_eq!(sums(app, &t).await, expected);

    // The `reversed` scenario posts the payment and its mirror at once; the invoice ends as it was.
    let rv = test_payment(app, k, json!({ "amount": 1450, "currency": "USD", "invoice_id": inv }), "reversed").await;
    let es = entries_for(app, k, &rv).await;
    assert_eq!(es.len(), 2, "{es:?}");
    let posting = es.iter().find(|e| e["reverses_id"].is_null()).expect("the payment's posting");
    let mirror = es.iter().find(|e| e["reverses_id"] == posting["id"]).expect("its reversal");
    assert_eq!(lines(posting), vec![l("cash", 145000, 0), l("accounts_receivable", 0, 145000)]);
    assert_eq!(lines(mirror), swapped(&lines(posting)));
    for e in [posting, mirror] {
        assert_eq!((&e["posted_on"], &e["source_type"], &e["property_id"]), (&json!(today), &json!("payment"), &json!(s.property)));
        add(&mut expected, "USD", &lines(e));
    }
    assert_eq!(sums(app, &t).await, expected);
    let i = get(app, k, "invoices", &inv).await;
    assert_eq!((i["status"].clone(), i["amount_paid"].clone()), (json!("open"), json!(0)));

    // A part payment, a refund (Dr refunds / Cr cash) and a failed refund (nothing).
    let pay2 = test_payment(app, k, json!({ "amount": 500, "currency": "USD", "invoice_id": inv }), "succeeded").await;
    let e2 = entries_for(app, k, &pay2).await;
    assert_eq!(e2.len(), 1);
    add(&mut expected, "USD", &lines(&e2[0]));
    let i = get(app, k, "invoices", &inv).await;
    assert_eq!((i["status"].clone(), i["amount_paid"].clone()), (json!("open"), json!(500)), "part-paid stays open");
    let refund = id(&app.create(k, "refunds", json!({ "payment_id": pay2, "amount": 200, "currency": "USD" })).await);
    assert!(entries_for(app, k, &refund).await.is_empty(), "a pending refund posts nothing");
    let rf = ok_act(app, k, "refunds", &refund, "succeed").await;
    assert!(rf["succeeded_at"].is_string());
    let er = entries_for(app, k, &refund).await;
    assert_eq!(er.len(), 1);
    assert_eq!(lines(&er[0]), vec![l("refunds", 20000, 0), l("cash", 0, 20000)]);
    assert_eq!(er[0]["source_type"], "refund");
    assert_eq!(er[0]["posted_on"], json!(today));
    assert_eq!(er[0]["property_id"], json!(s.property), "a refund's property is its payment's");
    add(&mut expected, "USD", &lines(&er[0]));
    let refund2 = id(&app.create(k, "refunds", json!({ "payment_id": pay2, "amount": 50, "currency": "USD" })).await);
    ok_act(app, k, "refunds", &refund2, "fail").await;
    assert!(entries_for(app, k, &refund2).await.is_empty(), "a failed refund posts nothing");

    // Voiding a charge posts the reversing entry of its posting, today.
    let (fee, fee_entry, fee_lines) = charge_entry["fee"].clone();
    let c = ok_act(app, k, "charges", &fee, "void").await;
    assert_eq!(c["status"], "void");
    assert!(c["voided_at"].is_string());
    let es = entries_for(app, k, &fee).await;
    assert_eq!(es.len(), 2);
    let rev = es.iter().find(|e| !e["reverses_id"].is_null()).expect("the void's entry");
    assert_eq!(rev["reverses_id"], json!(fee_entry));
    assert_eq!(lines(rev), swapped(&fee_lines));
    assert_eq!(rev["posted_on"], json!(today), "a void is posted on the day it happens, not the charge's due date");
    assert_eq!(rev["source_type"], "charge");
    add(&mut expected, "USD", &lines(rev));

    // A second currency keeps its own sums, in its own minor units.
    let jpy = setup(app, k, "JPY").await;
    let c = app
        .create(
            k,
            "charges",
            json!({ "lease_id": jpy.lease, "kind": "rent", "amount": 120000, "currency": "JPY", "due_date": "2027-01-01" }),
        )
        .await;
    let ej = entries_for(app, k, &id(&c)).await;
    assert_eq!(
        ej[0]["lines"],
        json!([{ "account": "accounts_receivable", "debit": 120000, "credit": 0 }, { "account": "rent_income", "debit": 0, "credit": 120000 }])
    );
    add(&mut expected, "JPY", &lines(&ej[0]));

    let now = sums(app, &t).await;
    assert_eq!(now, expected);
    assert_sums_balance(&now);
    assert_eq!(balance(&now, "USD", "cash"), 50000 - 20000, "cash: the succeeded payment less the refund");
    assert_eq!(balance(&now, "USD", "accounts_receivable"), 145000 + 290000 + 8025 - 50000, "receivable: live charges less net payments");
    assert_eq!(balance(&now, "USD", "rent_income"), -145000);
    assert_eq!(balance(&now, "USD", "deposits_held"), -290000);
    assert_eq!(balance(&now, "USD", "fee_income"), 0, "the voided fee nets to zero");
    assert_eq!(now[&("USD".to_string(), "fee_income".to_string())], (3550, 3550));
    assert_eq!(balance(&now, "USD", "utility_income"), -8025);
    assert_eq!(balance(&now, "USD", "refunds"), 20000);
    assert_eq!(balance(&now, "JPY", "accounts_receivable"), 120000);
    // 5 charges, payment + reversal, the reversed test payment's two, payment, refund, void:
    // 12 entries of two lines each.
    assert_eq!(app.count_where("accounting_entries", &tenant_cond(&t)).await, 12);
    assert_eq!(app.count_where("ledger_lines", &tenant_cond(&t)).await, 24);
    assert_eq!(list_all(app, k, "/v1/accounting-entries").await.len(), 12);
    // Other tenants and the other environment see none of it.
    let other = app.tenant("B").await;
    assert!(sums(app, &other).await.is_empty());
    assert!(list_all(app, &other.test_key, "/v1/accounting-entries").await.is_empty());
    let live = app.store.account_sums(&Scope { tenant: t.id, livemode: true, properties: None }, None, None).await.unwrap();
    assert!(live.is_empty(), "sandbox postings are not live: {live:?}");
    assert!(list_all(app, &t.live_key, "/v1/accounting-entries").await.is_empty());

    // Live mode: a payment posts nothing while pending; staff confirming it (`succeed`)
    // posts Dr cash / Cr receivable, today, in live mode's books; a failed one posts
    // nothing and keeps why it failed.
    let lk = &t.live_key;
    let cash = live_payment(app, lk, json!({ "amount": 250, "currency": "USD" })).await;
    assert!(entries_for(app, lk, &cash).await.is_empty(), "a pending payment posts nothing");
    assert!(sums_in(app, &t, true).await.is_empty());
    let p = ok_act(app, lk, "payments", &cash, "succeed").await;
    assert!(p["succeeded_at"].is_string());
    let es = entries_for(app, lk, &cash).await;
    assert_eq!(es.len(), 1, "{es:?}");
    assert_eq!(lines(&es[0]), vec![l("cash", 25000, 0), l("accounts_receivable", 0, 25000)]);
    assert_eq!((&es[0]["posted_on"], &es[0]["source_type"], &es[0]["livemode"]), (&json!(today), &json!("payment"), &json!(true)));
    let cheque = live_payment(app, lk, json!({ "amount": 100, "currency": "USD" })).await;
    let why = json!({ "failure_code": "insufficient_funds", "failure_message": "The cheque bounced." });
    let r = call(app, lk, "POST", &format!("/v1/payments/{cheque}/fail"), Some(why)).await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(
        (&r.body["data"]["failure_code"], &r.body["data"]["failure_message"]),
        (&json!("insufficient_funds"), &json!("The cheque bounced."))
    );
    assert!(entries_for(app, lk, &cheque).await.is_empty(), "a failed payment posts nothing");
    let mut live_expected = Sums::new();
    add(&mut live_expected, "USD", &lines(&es[0]));
    assert_eq!(sums_in(app, &t, true).await, live_expected);
    assert_eq!(sums(app, &t).await, expected, "live postings are not the sandbox's");
}
both!(operations_post_exactly_their_entries);

// ---------------------------------------------------------------------------------------
// 2. Checks: refused writes, and nothing changes after a refusal.

/// What a refusal must leave alone: entries, lines, sums, payments and refunds.
#[derive(Debug, PartialEq)]
struct Snapshot {
    entries: i64,
    lines: i64,
    payments: i64,
    refunds: i64,
    sums: Sums,
}

async fn snapshot(app: &TestApp, t: &Tenant) -> Snapshot {
    let cond = tenant_cond(t);
    Snapshot {
        entries: app.count_where("accounting_entries", &cond).await,
        lines: app.count_where("ledger_lines", &cond).await,
        payments: app.count_where("payments", &cond).await,
        refunds: app.count_where("refunds", &cond).await,
        sums: sums(app, t).await,
    }
}

fn refused(r: &Res, status: u16, code: &str, param: &str) {
    r.assert_error(status, code);
    if !param.is_empty() {
        assert_eq!(r.param(), param, "{}", r.text);
    }
}

async fn refusals_are_checked_and_change_nothing(app: &TestApp) {
    let t = app.tenant("A").await;
    let k = &t.test_key;
    let s = setup(app, k, "USD").await;
    let charge = id(&app
        .create(k, "charges", json!({ "lease_id": s.lease, "kind": "rent", "amount": 1450, "currency": "USD", "due_date": "2027-01-01" }))
        .await);
    let invoice = |status: &'static str| {
        let k = k.clone();
        let lease = s.lease.clone();
        async move {
            let i = id(&app
                .create(&k, "invoices", json!({ "lease_id": lease, "amount_due": 1450, "currency": "USD", "due_date": "2027-01-01" }))
                .await);
            match status {
                "open" => drop(ok_act(app, &k, "invoices", &i, "open").await),
                "void" => drop(ok_act(app, &k, "invoices", &i, "void").await),
                _ => {}
            }
            i
        }
    };
    let (draft, void, open) = (invoice("draft").await, invoice("void").await, invoice("open").await);
    let paid = invoice("open").await;
    test_payment(app, k, json!({ "amount": 1450, "currency": "USD", "invoice_id": paid }), "succeeded").await;
    assert_eq!(get(app, k, "invoices", &paid).await["status"], "paid");

    let before = snapshot(app, &t).await;
    let pay = |mut body: Value| {
        body["scenario"] = json!("succeeded");
        app.call(k, "POST", "/v1/payments", Some(body))
    };
    // Payments against invoices: only an open one, only in its currency.
    for (inv, state) in [(&draft, "draft"), (&void, "void"), (&paid, "paid")] {
        let r = pay(json!({ "amount": 10, "currency": "USD", "invoice_id": inv })).await;
        refused(&r, 400, "validation_failed", "invoice_id");
        assert!(r.body["error"]["message"].as_str().unwrap().contains(state), "names the invoice's state: {}", r.text);
    }
    refused(&pay(json!({ "amount": 10, "currency": "EUR", "invoice_id": open })).await, 400, "validation_failed", "currency");
    refused(&pay(json!({ "amount": 10, "currency": "USD", "invoice_id": uuid::Uuid::now_v7() })).await, 404, "not_found", "invoice_id");
    // A test payment says how it ends.
    let r = app.call(k, "POST", "/v1/payments", Some(json!({ "amount": 10, "currency": "USD", "invoice_id": open }))).await;
    refused(&r, 400, "validation_failed", "scenario");
    let foreign = app.tenant("B").await;
    let fs = setup(app, &foreign.test_key, "USD").await;
    let fi = id(&app
        .create(
            &foreign.test_key,
            "invoices",
            json!({ "lease_id": fs.lease, "amount_due": 5, "currency": "USD", "due_date": "2027-01-01" }),
        )
        .await);
    ok_act(app, &foreign.test_key, "invoices", &fi, "open").await;
    refused(&pay(json!({ "amount": 10, "currency": "USD", "invoice_id": fi })).await, 404, "not_found", "invoice_id");
    assert_eq!(snapshot(app, &t).await, before, "refused payments change nothing");

    // Refunds: of a succeeded payment only, in its currency, up to what is left. A
    // pending payment is a live one (the sandbox settles a test payment at once).
    let lk = &t.live_key;
    let pending = live_payment(app, lk, json!({ "amount": 1000, "currency": "USD" })).await;
    let failed = test_payment(app, k, json!({ "amount": 1000, "currency": "USD" }), "failed").await;
    let refund = |payment: &str, amount: Value, currency: &str| {
        app.call(k, "POST", "/v1/refunds", Some(json!({ "payment_id": payment, "amount": amount, "currency": currency })))
    };
    let before = snapshot(app, &t).await;
    let r = call(app, lk, "POST", "/v1/refunds", Some(json!({ "payment_id": pending, "amount": 10, "currency": "USD" }))).await;
    refused(&r, 400, "validation_failed", "payment_id");
    refused(&refund(&failed, json!(10), "USD").await, 400, "validation_failed", "payment_id");
    refused(&refund(&uuid::Uuid::now_v7().to_string(), json!(10), "USD").await, 404, "not_found", "payment_id");
    let paid_1000 = test_payment(app, k, json!({ "amount": 1000, "currency": "USD", "invoice_id": open }), "succeeded").await;
    let before = Snapshot {
        sums: sums(app, &t).await,
        entries: before.entries + 1,
        lines: before.lines + 2,
        payments: before.payments + 1,
        ..before
    };
    assert_eq!(snapshot(app, &t).await, before, "the refused refunds changed nothing; the payment posted once");
    refused(&refund(&paid_1000, json!(10), "EUR").await, 400, "validation_failed", "currency");
    refused(&refund(&paid_1000, json!(1000.01), "USD").await, 400, "validation_failed", "amount");
    assert_eq!(snapshot(app, &t).await, before, "refused refunds change nothing");
    let r1 = id(&app.create(k, "refunds", json!({ "payment_id": paid_1000, "amount": 600, "currency": "USD" })).await);
    // A pending refund holds its amount: 400 are left.
    let r = refund(&paid_1000, json!(400.01), "USD").await;
    refused(&r, 400, "validation_failed", "amount");
    assert!(r.body["error"]["message"].as_str().unwrap().contains("400"), "says what is left: {}", r.text);
    let r2 = id(&app.create(k, "refunds", json!({ "payment_id": paid_1000, "amount": 400, "currency": "USD" })).await);
    refused(&refund(&paid_1000, json!(0.01), "USD").await, 400, "validation_failed", "amount");
    // A failed refund frees its amount; a succeeded one keeps holding it.
    ok_act(app, k, "refunds", &r1, "fail").await;
    ok_act(app, k, "refunds", &r2, "succeed").await;
    refused(&refund(&paid_1000, json!(600.01), "USD").await, 400, "validation_failed", "amount");
    let r3 = id(&app.create(k, "refunds", json!({ "payment_id": paid_1000, "amount": 600, "currency": "USD" })).await);
    refused(&refund(&paid_1000, json!(0.01), "USD").await, 400, "validation_failed", "amount");

    // A payment with pending or succeeded refunds cannot be reversed.
    let before = snapshot(app, &t).await;
    let r = act(app, k, "payments", &paid_1000, "reverse").await;
    refused(&r, 409, "invalid_state_transition", "");
    assert_eq!(r.body["error"]["details"]["current_status"], "succeeded");
    assert!(!r.body["error"]["details"]["allowed_actions"].as_array().unwrap().contains(&json!("reverse")), "{}", r.text);
    ok_act(app, k, "refunds", &r3, "fail").await;
    refused(&act(app, k, "payments", &paid_1000, "reverse").await, 409, "invalid_state_transition", "");
    assert_eq!(snapshot(app, &t).await, before, "refused reversals change nothing");
    assert_eq!(get(app, k, "payments", &paid_1000).await["status"], "succeeded");
    // Only failed refunds: the reversal goes through.
    let only_failed = test_payment(app, k, json!({ "amount": 30, "currency": "USD" }), "succeeded").await;
    let rf = id(&app.create(k, "refunds", json!({ "payment_id": only_failed, "amount": 30, "currency": "USD" })).await);
    ok_act(app, k, "refunds", &rf, "fail").await;
    ok_act(app, k, "payments", &only_failed, "reverse").await;
    // Refunds of a reversed payment are refused.
    refused(&refund(&only_failed, json!(1), "USD").await, 400, "validation_failed", "payment_id");

    // An invoice with a pending or succeeded payment cannot be voided; failed and
    // reversed payments do not hold it.
    let inv = invoice("open").await;
    let pp = test_payment(app, k, json!({ "amount": 10, "currency": "USD", "invoice_id": inv }), "succeeded").await;
    let before = snapshot(app, &t).await;
    let r = act(app, k, "invoices", &inv, "void").await;
    refused(&r, 409, "invalid_state_transition", "");
    assert!(r.body["error"]["message"].as_str().unwrap().contains(&pp), "names the blocking payment: {}", r.text);
    ok_act(app, k, "payments", &pp, "reverse").await;
    test_payment(app, k, json!({ "amount": 10, "currency": "USD", "invoice_id": inv }), "failed").await;
    test_payment(app, k, json!({ "amount": 10, "currency": "USD", "invoice_id": inv }), "reversed").await;
    assert_eq!(ok_act(app, k, "invoices", &inv, "void").await["status"], "void");
    assert_eq!(
        snapshot(app, &t).await.entries,
        before.entries + 3,
        "the reversal, and the reversed test payment's posting and reversal; the void posts nothing"
    );
    // A pending payment (a live one) holds its invoice until it fails.
    let ls = setup(app, lk, "USD").await;
    let linv =
        id(&create(app, lk, "invoices", json!({ "lease_id": ls.lease, "amount_due": 1450, "currency": "USD", "due_date": "2027-01-01" }))
            .await);
    ok_act(app, lk, "invoices", &linv, "open").await;
    let lp = live_payment(app, lk, json!({ "amount": 10, "currency": "USD", "invoice_id": linv })).await;
    let r = act(app, lk, "invoices", &linv, "void").await;
    refused(&r, 409, "invalid_state_transition", "");
    assert!(r.body["error"]["message"].as_str().unwrap().contains(&lp), "names the blocking payment: {}", r.text);
    ok_act(app, lk, "payments", &lp, "fail").await;
    assert_eq!(ok_act(app, lk, "invoices", &linv, "void").await["status"], "void");

    // Charges: kind, amount, currency and due date are fixed once posted.
    let before = snapshot(app, &t).await;
    for (field, value) in [("amount", json!(1)), ("kind", json!("fee")), ("currency", json!("EUR")), ("due_date", json!("2027-02-01"))] {
        let r = app.call(k, "PATCH", &format!("/v1/charges/{charge}"), Some(json!({ field: value }))).await;
        refused(&r, 400, "validation_failed", field);
    }
    let r = app.call(k, "PATCH", &format!("/v1/charges/{charge}"), Some(json!({ "description": "January rent" }))).await;
    assert_eq!(r.status, 200, "other fields may change: {}", r.text);
    // Financial records are never deleted.
    let entry = id(&entries_for(app, k, &charge).await[0]);
    for (resource, rid) in [("charges", &charge), ("payments", &paid_1000), ("refunds", &r2), ("accounting-entries", &entry)] {
        refused(&app.call(k, "DELETE", &format!("/v1/{resource}/{rid}"), None).await, 409, "immutable_resource", "");
    }
    refused(
        &app.call(k, "PATCH", &format!("/v1/accounting-entries/{entry}"), Some(json!({ "memo": "x" }))).await,
        409,
        "immutable_resource",
        "",
    );
    // Actions from the wrong state.
    refused(&act(app, k, "refunds", &r2, "fail").await, 409, "invalid_state_transition", "");
    refused(&act(app, k, "payments", &failed, "succeed").await, 409, "invalid_state_transition", "");
    refused(&act(app, lk, "payments", &lp, "succeed").await, 409, "invalid_state_transition", "");
    ok_act(app, k, "charges", &charge, "void").await;
    let after_void = snapshot(app, &t).await;
    refused(&act(app, k, "charges", &charge, "void").await, 409, "invalid_state_transition", "");
    assert_eq!(after_void.entries, before.entries + 1, "the void alone posted");
    assert_eq!(snapshot(app, &t).await, after_void, "a second void changes nothing");
    assert_eq!(entries_for(app, k, &charge).await.len(), 2);
    assert_sums_balance(&after_void.sums);
}
both!(refusals_are_checked_and_change_nothing);

// ---------------------------------------------------------------------------------------
// 3. Manual entries.

async fn manual_entries_balance_and_reverse_once(app: &TestApp) {
    let t = app.tenant("A").await;
    let k = &t.test_key;
    let s = setup(app, k, "USD").await;
    let post = |body: Value| app.call(k, "POST", "/v1/accounting-entries", Some(body));
    let base = sums(app, &t).await;
    assert!(base.is_empty());

    // Balanced, over three lines, amounts as numbers and as strings.
    let r = post(json!({ "lines": [{ "account": "cash", "debit": "100.50", "credit": 0 }, { "account": "fee_income", "debit": "0", "credit": 40 }, { "account": "utility_income", "credit": 60.5, "debit": 0 }],
        "currency": "USD", "posted_on": "2027-01-10", "memo": "cash sale", "property_id": s.property })).await;
    assert_eq!(r.status, 201, "{}", r.text);
    let e1 = r.body["data"].clone();
    assert_eq!(lines(&e1), vec![l("cash", 10050, 0), l("fee_income", 0, 4000), l("utility_income", 0, 6050)]);
    assert_eq!(e1["lines"][0], json!({ "account": "cash", "debit": 100.5, "credit": 0 }), "lines are rewritten in their exact form");
    assert!(e1["source_type"].is_null() && e1["reverses_id"].is_null());
    let mut expected = Sums::new();
    add(&mut expected, "USD", &lines(&e1));
    assert_eq!(sums(app, &t).await, expected, "a manual entry's lines join the sums");
    assert_eq!(app.count_where("ledger_lines", &format!("entry_id = '{}'", id(&e1))).await, 3);

    // Refused: unbalanced, a single line, a line with both or neither side, unknown accounts.
    let before = snapshot(app, &t).await;
    let bad = [
        (json!([{ "account": "cash", "debit": 100, "credit": 0 }, { "account": "rent_income", "debit": 0, "credit": 99.99 }]), "lines"),
        (json!([{ "account": "cash", "debit": 100, "credit": 0 }]), "lines"),
        (json!([{ "account": "cash", "debit": 100, "credit": 100 }, { "account": "rent_income", "debit": 0, "credit": 0 }]), "lines[0]"),
        (json!([{ "account": "cash", "debit": 0, "credit": 0 }, { "account": "rent_income", "debit": 0, "credit": 0 }]), "lines[0]"),
        (json!([{ "account": "cash", "debit": 100 }, { "account": "rent_income", "debit": 0, "credit": 100 }]), "lines[0].credit"),
        (
            json!([{ "account": "bank", "debit": 1, "credit": 0 }, { "account": "rent_income", "debit": 0, "credit": 1 }]),
            "lines[0].account",
        ),
        (
            json!([{ "account": "cash", "debit": 1.001, "credit": 0 }, { "account": "rent_income", "debit": 0, "credit": 1.001 }]),
            "lines[0].debit",
        ),
        (
            json!([{ "account": "cash", "debit": -1, "credit": 0 }, { "account": "rent_income", "debit": 0, "credit": -1 }]),
            "lines[0].debit",
        ),
        (json!([]), "lines"),
    ];
    for (lines, param) in bad {
        let r = post(json!({ "lines": lines, "currency": "USD", "posted_on": "2027-01-10" })).await;
        refused(&r, 400, "validation_failed", param);
    }
    assert_eq!(snapshot(app, &t).await, before, "refused entries change nothing");

    // A reversal must mirror the original exactly: accounts, amounts, order, currency.
    let mirror = swapped(&lines(&e1));
    let rev = |lines: Value, currency: &str| {
        post(json!({ "lines": lines, "currency": currency, "posted_on": "2027-01-11", "reverses_id": id(&e1) }))
    };
    let mut off_by_one = mirror.clone();
    off_by_one[1].1 += 1;
    off_by_one[0].2 += 1;
    let mut other_account = mirror.clone();
    other_account[2].0 = "rent_income".into();
    for wrong in [lines(&e1), off_by_one, other_account] {
        let r = rev(lines_json(&wrong, "USD"), "USD").await;
        refused(&r, 400, "validation_failed", "lines");
    }
    refused(&rev(lines_json(&mirror, "EUR"), "EUR").await, 400, "validation_failed", "currency");
    refused(&post(json!({ "lines": lines_json(&mirror, "USD"), "currency": "USD", "posted_on": "2027-01-11", "reverses_id": uuid::Uuid::now_v7() })).await, 404, "not_found", "");
    assert_eq!(snapshot(app, &t).await, before, "refused reversals change nothing");
    let r = rev(lines_json(&mirror, "USD"), "USD").await;
    assert_eq!(r.status, 201, "{}", r.text);
    let e2 = r.body["data"].clone();
    assert_eq!(e2["reverses_id"], e1["id"]);
    add(&mut expected, "USD", &lines(&e2));
    let now = sums(app, &t).await;
    assert_eq!(now, expected);
    for a in ["cash", "fee_income", "utility_income"] {
        assert_eq!(balance(&now, "USD", a), 0, "{a} nets to zero after the reversal");
    }
    // Once only.
    let before = snapshot(app, &t).await;
    refused(&rev(lines_json(&mirror, "USD"), "USD").await, 409, "conflict", "");
    // The reversal itself can be reversed (once), which restores the original's effect.
    let r = post(json!({ "lines": lines_json(&lines(&e1), "USD"), "currency": "USD", "posted_on": "2027-01-12", "reverses_id": id(&e2) }))
        .await;
    assert_eq!(r.status, 201, "{}", r.text);
    add(&mut expected, "USD", &lines(&r.body["data"]));
    assert_eq!(snapshot(app, &t).await.entries, before.entries + 1);
    // A Gable posting is corrected by its record's action, never by hand (see
    // `a_posting_reversed_by_hand_is_not_reversed_again`).
    let c = id(&app
        .create(k, "charges", json!({ "lease_id": s.lease, "kind": "fee", "amount": 25, "currency": "USD", "due_date": "2027-01-03" }))
        .await);
    ok_act(app, k, "charges", &c, "void").await;
    let posting = entries_for(app, k, &c).await.into_iter().find(|e| e["reverses_id"].is_null()).unwrap();
    let r = post(json!({ "lines": lines_json(&swapped(&lines(&posting)), "USD"), "currency": "USD", "posted_on": "2027-01-12", "reverses_id": id(&posting) })).await;
    refused(&r, 400, "validation_failed", "reverses_id");

    // Entries are immutable: PATCH and DELETE are 409 immutable_resource.
    let before = snapshot(app, &t).await;
    for body in [json!({ "memo": "fixed" }), json!({ "posted_on": "2027-02-01" }), json!({ "lines": [] })] {
        let r = app.call(k, "PATCH", &format!("/v1/accounting-entries/{}", id(&e1)), Some(body)).await;
        refused(&r, 409, "immutable_resource", "");
    }
    refused(&app.call(k, "DELETE", &format!("/v1/accounting-entries/{}", id(&e1)), None).await, 409, "immutable_resource", "");
    assert_eq!(get(app, k, "accounting-entries", &id(&e1)).await, e1, "the entry is as it was");
    assert_eq!(snapshot(app, &t).await, before);
    assert_sums_balance(&before.sums);
}
both!(manual_entries_balance_and_reverse_once);

// ---------------------------------------------------------------------------------------
// Concurrency: the checks hold when requests race (each write locks what it checks).

async fn racing_writes_never_overdraw_or_double_post(app: &TestApp) {
    let t = app.tenant("A").await;
    let k = &t.test_key;
    // Eight refunds of 40% of one payment at once: at most two fit.
    let p = test_payment(app, k, json!({ "amount": 100, "currency": "USD" }), "succeeded").await;
    let body = json!({ "payment_id": p, "amount": 40, "currency": "USD" });
    let rs = futures::future::join_all((0..8).map(|_| app.call(k, "POST", "/v1/refunds", Some(body.clone())))).await;
    let ok = rs.iter().filter(|r| r.status == 201).count();
    assert_eq!(ok, 2, "{:?}", rs.iter().map(|r| (r.status, r.param().to_string())).collect::<Vec<_>>());
    for r in rs.iter().filter(|r| r.status != 201) {
        refused(r, 400, "validation_failed", "amount");
    }
    // Eight successes of one (live, pending) payment at once: one succeeds and posts once.
    let lk = &t.live_key;
    let q = live_payment(app, lk, json!({ "amount": 70, "currency": "USD" })).await;
    let rs = futures::future::join_all((0..8).map(|_| act(app, lk, "payments", &q, "succeed"))).await;
    assert_eq!(rs.iter().filter(|r| r.status == 200).count(), 1);
    assert!(rs.iter().all(|r| r.status == 200 || r.status == 409), "{:?}", rs.iter().map(|r| r.status).collect::<Vec<_>>());
    assert_eq!(entries_for(app, lk, &q).await.len(), 1);
    let live = sums_in(app, &t, true).await;
    assert_eq!((balance(&live, "USD", "cash"), balance(&live, "USD", "accounts_receivable")), (7000, -7000), "{live:?}");
    // Eight reversals of one manual entry at once: one is accepted.
    let e = app.create(k, "accounting-entries", json!({ "lines": lines_json(&[l("cash", 500, 0), l("fee_income", 0, 500)], "USD"), "currency": "USD", "posted_on": "2027-01-01" })).await;
    let body = json!({ "lines": lines_json(&[l("cash", 0, 500), l("fee_income", 500, 0)], "USD"), "currency": "USD", "posted_on": "2027-01-02", "reverses_id": id(&e) });
    let rs = futures::future::join_all((0..8).map(|_| app.call(k, "POST", "/v1/accounting-entries", Some(body.clone())))).await;
    assert_eq!(rs.iter().filter(|r| r.status == 201).count(), 1, "{:?}", rs.iter().map(|r| r.status).collect::<Vec<_>>());
    for r in rs.iter().filter(|r| r.status != 201) {
        refused(r, 409, "conflict", "");
    }
    // A reversal racing refunds: either the reversal or the refunds win, never both.
    let x = test_payment(app, k, json!({ "amount": 100, "currency": "USD" }), "succeeded").await;
    let refund_body = json!({ "payment_id": x, "amount": 10, "currency": "USD" });
    let (rev, refunds) = tokio::join!(
        act(app, k, "payments", &x, "reverse"),
        futures::future::join_all((0..4).map(|_| app.call(k, "POST", "/v1/refunds", Some(refund_body.clone()))))
    );
    let made = refunds.iter().filter(|r| r.status == 201).count();
    assert!(rev.status != 200 || made == 0, "payment reversed ({}) and {made} refunds created", rev.status);
    let s = sums(app, &t).await;
    assert_sums_balance(&s);
    // Cash: p succeeded (refunds pending post nothing; q is live), the manual pair nets to zero, x unless reversed.
    assert_eq!(balance(&s, "USD", "cash"), 10000 + 10000 - if rev.status == 200 { 10000 } else { 0 });
}
both!(racing_writes_never_overdraw_or_double_post);

// ---------------------------------------------------------------------------------------
// Gable's own postings are corrected through their record's action, never by hand, so a
// posting is reversed at most once (a manual reversal followed by a void reversed twice).

async fn a_posting_reversed_by_hand_is_not_reversed_again(app: &TestApp) {
    let t = app.tenant("A").await;
    let k = &t.test_key;
    let s = setup(app, k, "USD").await;
    let c = id(&app
        .create(k, "charges", json!({ "lease_id": s.lease, "kind": "rent", "amount": 1450, "currency": "USD", "due_date": "2027-01-01" }))
        .await);
    let posting = entries_for(app, k, &c).await.remove(0);
    let r = app.call(k, "POST", "/v1/accounting-entries", Some(json!({ "lines": lines_json(&swapped(&lines(&posting)), "USD"), "currency": "USD", "posted_on": "2027-01-02", "reverses_id": id(&posting) }))).await;
    refused(&r, 400, "validation_failed", "reverses_id");
    let v = act(app, k, "charges", &c, "void").await;
    assert_eq!(v.status, 200, "{}", v.text);
    let all = list_all(app, k, "/v1/accounting-entries").await;
    let reversals = all.iter().filter(|e| e["reverses_id"] == posting["id"]).count();
    assert_eq!(reversals, 1, "the charge's posting is reversed at most once (void answered {}): {all:#?}", v.status);
    assert_eq!(balance(&sums(app, &t).await, "USD", "accounts_receivable"), 0, "the charge is owed at most zero times");

    // The same for a payment's posting and its reversal.
    let p = test_payment(app, k, json!({ "amount": 100, "currency": "USD" }), "succeeded").await;
    let posting = entries_for(app, k, &p).await.remove(0);
    let r = app.call(k, "POST", "/v1/accounting-entries", Some(json!({ "lines": lines_json(&swapped(&lines(&posting)), "USD"), "currency": "USD", "posted_on": "2027-01-02", "reverses_id": id(&posting) }))).await;
    refused(&r, 400, "validation_failed", "reverses_id");
    // Nor may a manual entry pass itself off as one of Gable's.
    let r = app
        .call(k, "POST", "/v1/accounting-entries", Some(json!({ "lines": lines_json(&lines(&posting), "USD"), "currency": "USD", "posted_on": "2027-01-02", "source_type": "payment", "source_id": p })))
        .await;
    refused(&r, 400, "validation_failed", "source_type");
    let v = act(app, k, "payments", &p, "reverse").await;
    assert_eq!(v.status, 200, "{}", v.text);
    let all = list_all(app, k, "/v1/accounting-entries").await;
    let reversals = all.iter().filter(|e| e["reverses_id"] == posting["id"]).count();
    assert_eq!(reversals, 1, "the payment's posting is reversed at most once (reverse answered {})", v.status);
}
both!(a_posting_reversed_by_hand_is_not_reversed_again);

// ---------------------------------------------------------------------------------------
// Found while writing these tests: the create-time checks on payments and refunds can
// be sidestepped with PATCH, and posted amounts can be changed afterwards.

async fn patch_cannot_sidestep_payment_and_refund_checks(app: &TestApp) {
    let t = app.tenant("A").await;
    let k = &t.test_key;
    let s = setup(app, k, "USD").await;
    let inv = id(&app
        .create(k, "invoices", json!({ "lease_id": s.lease, "amount_due": 1000, "currency": "USD", "due_date": "2027-01-01" }))
        .await);
    ok_act(app, k, "invoices", &inv, "open").await;
    let mut problems = vec![];

    // A pending payment against a USD invoice moved to EUR: the currency check at create.
    // (Pending payments are live ones; the sandbox settles a test payment at once.)
    let lk = &t.live_key;
    let ls = setup(app, lk, "USD").await;
    let linv =
        id(&create(app, lk, "invoices", json!({ "lease_id": ls.lease, "amount_due": 1000, "currency": "USD", "due_date": "2027-01-01" }))
            .await);
    ok_act(app, lk, "invoices", &linv, "open").await;
    let p = live_payment(app, lk, json!({ "amount": 100, "currency": "USD", "invoice_id": linv })).await;
    let r = call(app, lk, "PATCH", &format!("/v1/payments/{p}"), Some(json!({ "currency": "EUR", "amount": 100 }))).await;
    if r.status != 400 {
        problems.push(format!("PATCH payment currency to EUR against a USD invoice: {} {}", r.status, r.text));
    }

    // A succeeded payment's amount: its posting and the invoice's amount_paid are fixed.
    let p2 = test_payment(app, k, json!({ "amount": 200, "currency": "USD", "invoice_id": inv }), "succeeded").await;
    let r = app.call(k, "PATCH", &format!("/v1/payments/{p2}"), Some(json!({ "amount": 5000 }))).await;
    if r.status != 400 {
        problems.push(format!("PATCH a succeeded payment's amount 200 → 5000: {} (its entry still says 200)", r.status));
    }

    // A pending refund raised above what is left on the payment.
    let rf = id(&app.create(k, "refunds", json!({ "payment_id": p2, "amount": 10, "currency": "USD" })).await);
    let r = app.call(k, "PATCH", &format!("/v1/refunds/{rf}"), Some(json!({ "amount": 100000 }))).await;
    if r.status != 400 {
        problems.push(format!("PATCH a pending refund's amount 10 → 100000 on a 200 payment: {}", r.status));
        let r = act(app, k, "refunds", &rf, "succeed").await;
        let cash = balance(&sums(app, &t).await, "USD", "cash");
        problems.push(format!("  … then succeed: {}; cash balance now {cash} (minor units)", r.status));
    }
    // An open invoice with a payment moved to another currency: amount_paid keeps its
    // minor units and now reads in yen.
    let inv2 = id(&app
        .create(k, "invoices", json!({ "lease_id": s.lease, "amount_due": 1000, "currency": "USD", "due_date": "2027-01-01" }))
        .await);
    ok_act(app, k, "invoices", &inv2, "open").await;
    test_payment(app, k, json!({ "amount": 500, "currency": "USD", "invoice_id": inv2 }), "succeeded").await;
    let r = app.call(k, "PATCH", &format!("/v1/invoices/{inv2}"), Some(json!({ "currency": "JPY", "amount_due": 1000 }))).await;
    if r.status != 400 {
        problems.push(format!(
            "PATCH an invoice with a USD 500 payment to JPY: {} amount_paid now {} {}",
            r.status, r.body["data"]["amount_paid"], r.body["data"]["currency"]
        ));
    }
    assert!(problems.is_empty(), "checks sidestepped by PATCH:\n{}", problems.join("\n"));
}
both!(patch_cannot_sidestep_payment_and_refund_checks);

/// A reference to a missing record is `404 not_found` naming the field (docs/api.md).
async fn a_reversal_of_a_missing_entry_names_reverses_id(app: &TestApp) {
    let t = app.tenant("A").await;
    let other = app.tenant("B").await;
    let body = |reverses: &str| json!({ "lines": lines_json(&[l("cash", 0, 100), l("rent_income", 100, 0)], "USD"), "currency": "USD", "posted_on": "2027-01-11", "reverses_id": reverses });
    let theirs = app.create(&other.test_key, "accounting-entries", json!({ "lines": lines_json(&[l("cash", 100, 0), l("rent_income", 0, 100)], "USD"), "currency": "USD", "posted_on": "2027-01-10" })).await;
    for missing in [uuid::Uuid::now_v7().to_string(), id(&theirs)] {
        let r = app.call(&t.test_key, "POST", "/v1/accounting-entries", Some(body(&missing))).await;
        refused(&r, 404, "not_found", "reverses_id");
    }
    assert!(sums(app, &t).await.is_empty());
}
both!(a_reversal_of_a_missing_entry_names_reverses_id);

/// A zero amount is valid money, but a zero posting is not a valid entry: a zero charge,
/// payment or refund must be refused naming `amount` (or accepted, posting nothing),
/// never refused naming `lines[0]`, a field the request does not have.
async fn zero_amounts_are_refused_naming_amount(app: &TestApp) {
    let t = app.tenant("A").await;
    let k = &t.test_key;
    let s = setup(app, k, "USD").await;
    let mut problems = vec![];
    let mut check = |what: &str, r: &Res| {
        if !(r.status < 300 || (r.status == 400 && r.param() == "amount")) {
            problems.push(format!("{what}: {} {}", r.status, r.text));
        }
    };
    let r = app
        .call(
            k,
            "POST",
            "/v1/charges",
            Some(json!({ "lease_id": s.lease, "kind": "rent", "amount": 0, "currency": "USD", "due_date": "2027-01-01" })),
        )
        .await;
    check("POST /v1/charges amount 0", &r);
    // A test payment succeeds as it is created; a live one when staff confirm it.
    let r = app.call(k, "POST", "/v1/payments", Some(json!({ "amount": 0, "currency": "USD", "scenario": "succeeded" }))).await;
    check("POST /v1/payments amount 0 (scenario succeeded)", &r);
    let lk = &t.live_key;
    let r = call(app, lk, "POST", "/v1/payments", Some(json!({ "amount": 0, "currency": "USD", "method": "cash" }))).await;
    check("POST /v1/payments amount 0 (live)", &r);
    if r.status == 201 {
        let zero = id(&r.body["data"]);
        check("POST /v1/payments/{id}/succeed of the zero live payment", &act(app, lk, "payments", &zero, "succeed").await);
    }
    let p = test_payment(app, k, json!({ "amount": 10, "currency": "USD" }), "succeeded").await;
    let r = app.call(k, "POST", "/v1/refunds", Some(json!({ "payment_id": p, "amount": 0, "currency": "USD" }))).await;
    check("POST /v1/refunds amount 0", &r);
    if r.status == 201 {
        let zero = id(&r.body["data"]);
        check("POST /v1/refunds/{id}/succeed of the zero refund", &act(app, k, "refunds", &zero, "succeed").await);
    }
    assert!(problems.is_empty(), "zero amounts:\n{}", problems.join("\n"));
    assert_sums_balance(&sums(app, &t).await);
    assert_sums_balance(&sums_in(app, &t, true).await);
}
both!(zero_amounts_are_refused_naming_amount);

// ---------------------------------------------------------------------------------------
// 4. Property test: random sequences of operations, checked against a model after every
// step: the answer (accepted or refused as the rules say), the new entries, the sums.

const KINDS: [(&str, &str); 4] =
    [("rent", "rent_income"), ("deposit", "deposits_held"), ("fee", "fee_income"), ("utility", "utility_income")];
const CURRENCIES: [&str; 2] = ["USD", "JPY"];

/// How an amount is picked: what is left (due, or refundable), half of it, or any.
#[derive(Debug, Clone, Copy)]
enum Amount {
    Rest,
    Half,
    Any(i64),
}

#[derive(Debug, Clone)]
enum Op {
    Charge {
        lease: usize,
        kind: usize,
        amount: i64,
    },
    Invoice {
        lease: usize,
        amount: i64,
        open: bool,
    },
    VoidInvoice(Ix),
    /// A payment: in the sandbox a test payment whose scenario runs at once; in live mode a
    /// pending one, which staff confirm (`succeed`) at once when the scenario is
    /// `succeeded` and which is otherwise left pending for the actions.
    Payment {
        invoice: Option<Ix>,
        lease: usize,
        amount: Amount,
        wrong_currency: bool,
        scenario: &'static str,
    },
    PaymentAct(Ix, &'static str),
    Refund {
        payment: Ix,
        amount: Amount,
    },
    RefundAct(Ix, &'static str),
    VoidCharge(Ix),
    Manual {
        lease: usize,
        debits: Vec<(usize, i64)>,
        credits: Vec<usize>,
    },
    Reverse {
        entry: Ix,
        mirror: bool,
    },
}

fn amount() -> impl Strategy<Value = Amount> {
    prop_oneof![2 => Just(Amount::Rest), 1 => Just(Amount::Half), 2 => (1i64..300_000).prop_map(Amount::Any)]
}

/// An index into what exists: mostly the latest, else any.
#[derive(Debug, Clone, Copy)]
enum Ix {
    Last,
    Any(usize),
}

fn ix() -> impl Strategy<Value = Ix> + Clone {
    prop_oneof![3 => Just(Ix::Last), 2 => (0usize..64).prop_map(Ix::Any)]
}

fn at(ix: Ix, len: usize) -> usize {
    match ix {
        Ix::Last => len - 1,
        Ix::Any(i) => i % len,
    }
}

fn op() -> impl Strategy<Value = Op> {
    let ix = ix();
    let scenario = prop::sample::select(vec!["succeeded", "succeeded", "failed", "reversed"]);
    prop_oneof![
        3 => (0usize..2, 0usize..4, 1i64..300_000).prop_map(|(lease, kind, amount)| Op::Charge { lease, kind, amount }),
        2 => (0usize..2, 1i64..300_000, prop::bool::weighted(0.8)).prop_map(|(lease, amount, open)| Op::Invoice { lease, amount, open }),
        1 => ix.clone().prop_map(Op::VoidInvoice),
        4 => (prop::option::weighted(0.8, ix.clone()), 0usize..2, amount(), prop::bool::weighted(0.1), scenario)
            .prop_map(|(invoice, lease, amount, wrong_currency, scenario)| Op::Payment { invoice, lease, amount, wrong_currency, scenario }),
        6 => (ix.clone(), prop::sample::select(vec!["succeed", "succeed", "succeed", "fail", "reverse"])).prop_map(|(i, a)| Op::PaymentAct(i, a)),
        4 => (ix.clone(), amount()).prop_map(|(payment, amount)| Op::Refund { payment, amount }),
        4 => (ix.clone(), prop::sample::select(vec!["succeed", "succeed", "fail"])).prop_map(|(i, a)| Op::RefundAct(i, a)),
        1 => ix.clone().prop_map(Op::VoidCharge),
        2 => (0usize..2, prop::collection::vec((0usize..7, 1i64..100_000), 1..=3), prop::collection::vec(0usize..7, 1..=2))
            .prop_map(|(lease, debits, credits)| Op::Manual { lease, debits, credits }),
        2 => (ix, prop::bool::weighted(0.8)).prop_map(|(entry, mirror)| Op::Reverse { entry, mirror }),
    ]
}

fn ops() -> impl Strategy<Value = Vec<Op>> {
    prop::collection::vec(op(), 10..=30)
}

struct MCharge {
    id: String,
    posted: bool,
    entry: String,
}
struct MInvoice {
    id: String,
    currency: &'static str,
    due: i64,
    paid: i64,
    status: &'static str,
}
struct MPayment {
    id: String,
    currency: &'static str,
    amount: i64,
    invoice: Option<usize>,
    status: &'static str,
    entry: Option<String>,
}
struct MRefund {
    id: String,
    payment: usize,
    amount: i64,
    status: &'static str,
}
struct MEntry {
    id: String,
    currency: String,
    lines: Vec<Line>,
    reversed: bool,
    /// Posted by Gable for a charge, payment or refund (corrected by their actions only).
    gable: bool,
}

/// What the model knows of one tenant's books.
#[derive(Default)]
struct Model {
    sums: Sums,
    charges: Vec<MCharge>,
    invoices: Vec<MInvoice>,
    payments: Vec<MPayment>,
    refunds: Vec<MRefund>,
    entries: Vec<MEntry>,
    refusals: usize,
}

/// An entry the step must have posted (none when the step posts nothing).
struct Expect {
    currency: String,
    lines: Vec<Line>,
    source_id: Option<String>,
    reverses: Option<usize>,
    /// The payment whose posting this is.
    posts_payment: Option<usize>,
}

impl Model {
    /// A payment succeeds: its posting, and its invoice settled by it.
    fn succeed(&mut self, p: usize) -> Expect {
        let (amt, cur, inv) = (self.payments[p].amount, self.payments[p].currency, self.payments[p].invoice);
        self.payments[p].status = "succeeded";
        if let Some(i) = inv {
            let inv = &mut self.invoices[i];
            inv.paid += amt;
            if inv.status == "open" && inv.paid >= inv.due {
                inv.status = "paid";
            }
        }
        Expect {
            currency: cur.into(),
            lines: vec![l("cash", amt, 0), l("accounts_receivable", 0, amt)],
            source_id: Some(self.payments[p].id.clone()),
            reverses: None,
            posts_payment: Some(p),
        }
    }

    /// A succeeded payment is reversed: the mirror of its posting (`posting`, an index of
    /// `entries`, with its lines; no entry when a manual entry reversed it already), its
    /// invoice unsettled.
    fn reverse(&mut self, p: usize, posting: usize, posted: &[Line], by_hand: bool) -> Option<Expect> {
        let (amt, inv) = (self.payments[p].amount, self.payments[p].invoice);
        self.payments[p].status = "reversed";
        if let Some(i) = inv {
            let inv = &mut self.invoices[i];
            inv.paid -= amt;
            if inv.status == "paid" && inv.paid < inv.due {
                inv.status = "open";
            }
        }
        (!by_hand).then(|| Expect {
            currency: self.payments[p].currency.into(),
            lines: swapped(posted),
            source_id: Some(self.payments[p].id.clone()),
            reverses: Some(posting),
            posts_payment: None,
        })
    }

    fn left_to_refund(&self, p: usize) -> i64 {
        self.payments[p].amount - self.refunds.iter().filter(|r| r.payment == p && r.status != "failed").map(|r| r.amount).sum::<i64>()
    }
    fn entry_ix(&self, id: &str) -> usize {
        self.entries.iter().position(|e| e.id == id).expect("the model knows the entry")
    }
}

fn pick(amount: Amount, rest: i64) -> i64 {
    match amount {
        Amount::Rest => rest.max(1),
        Amount::Half => (rest / 2).max(1),
        Amount::Any(n) => n,
    }
}

/// Checks an answer against the model's verdict: accepted (`ok` is 200 or 201) or
/// refused with the status, code and param.
fn verdict(r: &Res, ok: u16, refusal: Option<(u16, &str, &str)>, what: &str, refusals: &mut usize) -> Result<bool, TestCaseError> {
    *refusals += usize::from(refusal.is_some());
    match refusal {
        None => {
            prop_assert_eq!(r.status, ok, "{} should be accepted: {}", what, r.text);
            Ok(true)
        }
        Some((status, code, param)) => {
            prop_assert_eq!(r.status, status, "{} should be refused with {} {}: {}", what, status, code, r.text);
            prop_assert_eq!(r.body["error"]["code"].as_str(), Some(code), "{}: {}", what, r.text);
            if !param.is_empty() {
                prop_assert_eq!(r.param(), param, "{}: {}", what, r.text);
            }
            Ok(false)
        }
    }
}

/// What the cases did, summed: that the generator reaches every rule.
type Stats = std::cell::RefCell<BTreeMap<String, usize>>;

/// One case, in the sandbox (test payments, whose scenarios run at once) or in live mode
/// (pending payments, settled by their actions).
async fn run_ops(app: &TestApp, live: bool, n: usize, ops: Vec<Op>, stats: &Stats) -> Result<(), TestCaseError> {
    let t = app.tenant(&format!("prop{n}")).await;
    let k = if live { &t.live_key } else { &t.test_key };
    let usd = setup(app, k, "USD").await;
    let jpy = setup(app, k, "JPY").await;
    let leases = [usd.lease.clone(), jpy.lease.clone()];
    let mut m = Model::default();
    for (step, op) in ops.iter().enumerate() {
        let what = format!("step {step} {op:?}");
        let mut expect: Vec<Expect> = vec![];
        // Reversals of postings already reversed by hand: the contract allows a refusal
        // or an action that posts nothing, never a second reversal.
        let mut reversed_by_hand = false;
        match op {
            Op::Charge { lease, kind, amount } => {
                let cur = CURRENCIES[*lease];
                let (kind, account) = KINDS[*kind];
                let r = call(app, k, "POST", "/v1/charges", Some(json!({ "lease_id": leases[*lease], "kind": kind, "amount": major(*amount, cur), "currency": cur, "due_date": "2027-01-01" }))).await;
                verdict(&r, 201, None, &what, &mut m.refusals)?;
                let cid = id(&r.body["data"]);
                m.charges.push(MCharge { id: cid.clone(), posted: true, entry: String::new() });
                expect.push(Expect {
                    currency: cur.into(),
                    lines: vec![l("accounts_receivable", *amount, 0), l(account, 0, *amount)],
                    source_id: Some(cid),
                    reverses: None,
                    posts_payment: None,
                });
            }
            Op::Invoice { lease, amount, open } => {
                let cur = CURRENCIES[*lease];
                let r = call(
                    app,
                    k,
                    "POST",
                    "/v1/invoices",
                    Some(
                        json!({ "lease_id": leases[*lease], "amount_due": major(*amount, cur), "currency": cur, "due_date": "2027-01-01" }),
                    ),
                )
                .await;
                verdict(&r, 201, None, &what, &mut m.refusals)?;
                let iid = id(&r.body["data"]);
                let mut status = "draft";
                if *open {
                    verdict(&act(app, k, "invoices", &iid, "open").await, 200, None, &what, &mut m.refusals)?;
                    status = "open";
                }
                m.invoices.push(MInvoice { id: iid, currency: cur, due: *amount, paid: 0, status });
            }
            Op::VoidInvoice(i) => {
                if m.invoices.is_empty() {
                    continue;
                }
                let i = at(*i, m.invoices.len());
                // Only a draft or open invoice, and none with a pending or succeeded payment.
                let live_payment = m.payments.iter().any(|p| p.invoice == Some(i) && matches!(p.status, "pending" | "succeeded"));
                let inv = &mut m.invoices[i];
                let refusal = (!matches!(inv.status, "draft" | "open") || live_payment).then_some((409, "invalid_state_transition", ""));
                if verdict(&act(app, k, "invoices", &inv.id, "void").await, 200, refusal, &what, &mut m.refusals)? {
                    inv.status = "void";
                }
            }
            Op::Payment { invoice, lease, amount, wrong_currency, scenario } => {
                let invoice = invoice.filter(|_| !m.invoices.is_empty()).map(|i| at(i, m.invoices.len()));
                let (mut cur, rest) = match invoice {
                    Some(i) => (m.invoices[i].currency, m.invoices[i].due - m.invoices[i].paid),
                    None => (CURRENCIES[*lease], 100_000),
                };
                if *wrong_currency {
                    cur = if cur == "USD" { "JPY" } else { "USD" };
                }
                let amt = pick(*amount, rest);
                let refusal = match invoice {
                    Some(i) if m.invoices[i].status != "open" => Some((400, "validation_failed", "invoice_id")),
                    Some(i) if m.invoices[i].currency != cur => Some((400, "validation_failed", "currency")),
                    _ => None,
                };
                let mut body = json!({ "amount": major(amt, cur), "currency": cur });
                if live {
                    body["method"] = json!("cash");
                } else {
                    body["scenario"] = json!(scenario);
                }
                if let Some(i) = invoice {
                    body["invoice_id"] = json!(m.invoices[i].id);
                }
                let r = call(app, k, "POST", "/v1/payments", Some(body)).await;
                if verdict(&r, 201, refusal, &what, &mut m.refusals)? {
                    m.payments.push(MPayment {
                        id: id(&r.body["data"]),
                        currency: cur,
                        amount: amt,
                        invoice,
                        status: "pending",
                        entry: None,
                    });
                    // A test payment's scenario runs at once, through the same actions.
                    let p = m.payments.len() - 1;
                    prop_assert_eq!(r.body["data"]["status"].as_str(), Some(if live { "pending" } else { scenario }), "{}", what);
                    match (live, *scenario) {
                        (true, "succeeded") => {
                            verdict(&act(app, k, "payments", &m.payments[p].id, "succeed").await, 200, None, &what, &mut m.refusals)?;
                            expect.push(m.succeed(p));
                        }
                        (true, _) => {}
                        (false, "failed") => m.payments[p].status = "failed",
                        (false, outcome) => {
                            let posting = m.succeed(p);
                            let posted = posting.lines.clone();
                            expect.push(posting);
                            if outcome == "reversed" {
                                // The posting is the next entry the model will know.
                                expect.extend(m.reverse(p, m.entries.len(), &posted, false));
                            }
                        }
                    }
                }
            }
            Op::PaymentAct(p, action) => {
                if m.payments.is_empty() {
                    continue;
                }
                let p = at(*p, m.payments.len());
                let has_refunds = m.refunds.iter().any(|r| r.payment == p && r.status != "failed");
                let status = m.payments[p].status;
                let refusal = match (*action, status) {
                    ("succeed" | "fail", "pending") => None,
                    ("reverse", "succeeded") if !has_refunds => None,
                    _ => Some((409, "invalid_state_transition", "")),
                };
                if *action == "reverse" && refusal.is_none() {
                    let e = m.entry_ix(m.payments[p].entry.as_deref().unwrap());
                    reversed_by_hand = m.entries[e].reversed;
                }
                let r = act(app, k, "payments", &m.payments[p].id, action).await;
                let accepted = if reversed_by_hand { r.status == 200 } else { verdict(&r, 200, refusal, &what, &mut m.refusals)? };
                if accepted {
                    match *action {
                        "succeed" => expect.push(m.succeed(p)),
                        "fail" => m.payments[p].status = "failed",
                        _ => {
                            let e = m.entry_ix(m.payments[p].entry.as_deref().unwrap());
                            let posted = m.entries[e].lines.clone();
                            expect.extend(m.reverse(p, e, &posted, reversed_by_hand));
                        }
                    }
                }
            }
            Op::Refund { payment, amount } => {
                if m.payments.is_empty() {
                    continue;
                }
                let p = at(*payment, m.payments.len());
                let left = m.left_to_refund(p);
                let amt = pick(*amount, left);
                let refusal = if m.payments[p].status != "succeeded" {
                    Some((400, "validation_failed", "payment_id"))
                } else if amt > left {
                    Some((400, "validation_failed", "amount"))
                } else {
                    None
                };
                let cur = m.payments[p].currency;
                let r = call(
                    app,
                    k,
                    "POST",
                    "/v1/refunds",
                    Some(json!({ "payment_id": m.payments[p].id, "amount": major(amt, cur), "currency": cur })),
                )
                .await;
                if verdict(&r, 201, refusal, &what, &mut m.refusals)? {
                    m.refunds.push(MRefund { id: id(&r.body["data"]), payment: p, amount: amt, status: "pending" });
                }
            }
            Op::RefundAct(i, action) => {
                if m.refunds.is_empty() {
                    continue;
                }
                let i = at(*i, m.refunds.len());
                let refusal = (m.refunds[i].status != "pending").then_some((409, "invalid_state_transition", ""));
                if verdict(&act(app, k, "refunds", &m.refunds[i].id, action).await, 200, refusal, &what, &mut m.refusals)? {
                    if *action == "succeed" {
                        m.refunds[i].status = "succeeded";
                        let (amt, cur) = (m.refunds[i].amount, m.payments[m.refunds[i].payment].currency);
                        expect.push(Expect {
                            currency: cur.into(),
                            lines: vec![l("refunds", amt, 0), l("cash", 0, amt)],
                            source_id: Some(m.refunds[i].id.clone()),
                            reverses: None,
                            posts_payment: None,
                        });
                    } else {
                        m.refunds[i].status = "failed";
                    }
                }
            }
            Op::VoidCharge(c) => {
                if m.charges.is_empty() {
                    continue;
                }
                let c = at(*c, m.charges.len());
                let refusal = (!m.charges[c].posted).then_some((409, "invalid_state_transition", ""));
                let e = m.entry_ix(&m.charges[c].entry);
                reversed_by_hand = refusal.is_none() && m.entries[e].reversed;
                let r = act(app, k, "charges", &m.charges[c].id, "void").await;
                let accepted = if reversed_by_hand { r.status == 200 } else { verdict(&r, 200, refusal, &what, &mut m.refusals)? };
                if accepted {
                    m.charges[c].posted = false;
                    if !reversed_by_hand {
                        let cur = m.entries[e].currency.clone();
                        expect.push(Expect {
                            currency: cur,
                            lines: swapped(&m.entries[e].lines),
                            source_id: Some(m.charges[c].id.clone()),
                            reverses: Some(e),
                            posts_payment: None,
                        });
                    }
                }
            }
            Op::Manual { lease, debits, credits } => {
                let cur = CURRENCIES[*lease];
                let total: i64 = debits.iter().map(|d| d.1).sum();
                let mut ls: Vec<Line> = debits.iter().map(|(a, amt)| l(ACCOUNTS[*a], *amt, 0)).collect();
                if credits.len() == 2 && total >= 2 {
                    ls.push(l(ACCOUNTS[credits[0]], 0, total / 2));
                    ls.push(l(ACCOUNTS[credits[1]], 0, total - total / 2));
                } else {
                    ls.push(l(ACCOUNTS[credits[0]], 0, total));
                }
                let r = call(
                    app,
                    k,
                    "POST",
                    "/v1/accounting-entries",
                    Some(json!({ "lines": lines_json(&ls, cur), "currency": cur, "posted_on": "2027-01-15" })),
                )
                .await;
                verdict(&r, 201, None, &what, &mut m.refusals)?;
                expect.push(Expect { currency: cur.into(), lines: ls, source_id: None, reverses: None, posts_payment: None });
            }
            Op::Reverse { entry, mirror } => {
                if m.entries.is_empty() {
                    continue;
                }
                let e = at(*entry, m.entries.len());
                let mut ls = swapped(&m.entries[e].lines);
                if !mirror {
                    ls.extend([l("cash", 1, 0), l("cash", 0, 1)]);
                }
                let refusal = if m.entries[e].gable {
                    Some((400, "validation_failed", "reverses_id"))
                } else if m.entries[e].reversed {
                    Some((409, "conflict", ""))
                } else if !mirror {
                    Some((400, "validation_failed", "lines"))
                } else {
                    None
                };
                let cur = m.entries[e].currency.clone();
                let body =
                    json!({ "lines": lines_json(&ls, &cur), "currency": cur, "posted_on": "2027-01-20", "reverses_id": m.entries[e].id });
                let r = call(app, k, "POST", "/v1/accounting-entries", Some(body)).await;
                if verdict(&r, 201, refusal, &what, &mut m.refusals)? {
                    expect.push(Expect { currency: cur, lines: ls, source_id: None, reverses: Some(e), posts_payment: None });
                }
            }
        }

        // The entries on the server: exactly the model's, plus what this step posted (a
        // reversed test payment posts two at once: its posting, then the reversal of it).
        let all = list_all(app, k, "/v1/accounting-entries").await;
        let known: BTreeSet<&str> = m.entries.iter().map(|e| e.id.as_str()).collect();
        let mut new: Vec<&Value> = all.iter().filter(|e| !known.contains(e["id"].as_str().unwrap())).collect();
        let new_ids: BTreeSet<&str> = new.iter().map(|e| e["id"].as_str().unwrap()).collect();
        new.sort_by_key(|e| e["reverses_id"].as_str().is_some_and(|r| new_ids.contains(r)));
        prop_assert_eq!(all.len() - new.len(), m.entries.len(), "{}: entries disappeared", what);
        let why = if reversed_by_hand { " (its posting was already reversed by a manual entry: no second reversal)" } else { "" };
        prop_assert_eq!(new.len(), expect.len(), "{}{}: new entries {:?}", what, why, new);
        for (x, e) in expect.into_iter().zip(new) {
            prop_assert_eq!(lines(e), x.lines.clone(), "{}: {}", what, e);
            prop_assert_eq!(e["currency"].as_str(), Some(x.currency.as_str()), "{}", what);
            prop_assert_eq!(e["source_id"].as_str(), x.source_id.as_deref(), "{}", what);
            let rev = x.reverses.map(|i| m.entries[i].id.clone());
            prop_assert_eq!(e["reverses_id"].as_str(), rev.as_deref(), "{}", what);
            if let Some(i) = x.reverses {
                m.entries[i].reversed = true;
            }
            add(&mut m.sums, &x.currency, &x.lines);
            let eid = id(e);
            if let Op::Charge { .. } = op {
                m.charges.last_mut().unwrap().entry = eid.clone();
            }
            if let Some(p) = x.posts_payment {
                m.payments[p].entry = Some(eid.clone());
            }
            let gable = x.source_id.is_some();
            m.entries.push(MEntry { id: eid, currency: x.currency, lines: x.lines, reversed: false, gable });
        }
        // Every entry balances; an entry is reversed at most once, by its mirror.
        let mut reversed: BTreeMap<&str, usize> = BTreeMap::new();
        for e in &all {
            let ls = lines(e);
            prop_assert!(ls.len() >= 2, "{}: {}", what, e);
            prop_assert!(ls.iter().all(|(_, d, c)| (*d > 0) != (*c > 0)), "{}: a line has exactly one side: {}", what, e);
            prop_assert_eq!(ls.iter().map(|x| x.1).sum::<i64>(), ls.iter().map(|x| x.2).sum::<i64>(), "{}: unbalanced {}", what, e);
            if let Some(r) = e["reverses_id"].as_str() {
                *reversed.entry(r).or_default() += 1;
                let orig = all.iter().find(|o| o["id"].as_str() == Some(r)).expect("the reversed entry exists");
                prop_assert_eq!(swapped(&lines(orig)), ls, "{}: a reversal mirrors its entry", what);
                prop_assert_eq!(&orig["currency"], &e["currency"]);
            }
        }
        if let Some((r, n)) = reversed.iter().find(|(_, n)| **n > 1) {
            prop_assert!(false, "{}: entry {} is reversed {} times", what, r, n);
        }
        // The tenant's sums: the model's, and balanced per currency.
        let now = sums_in(app, &t, live).await;
        prop_assert_eq!(&now, &m.sums, "{}", what);
        for (cur, (d, c)) in totals(&now) {
            prop_assert_eq!(d, c, "{}: {} debits equal credits", what, cur);
        }
    }

    // At the end, the accounts follow from the records alone: succeeded payments and
    // refunds, posted charges, and the manual entries.
    let charges = list_all(app, k, "/v1/charges").await;
    let payments = list_all(app, k, "/v1/payments").await;
    let refunds = list_all(app, k, "/v1/refunds").await;
    let entries = list_all(app, k, "/v1/accounting-entries").await;
    let mut derived: BTreeMap<(String, String), i64> = BTreeMap::new();
    let mut put = |cur: &str, account: &str, v: i64| *derived.entry((cur.to_string(), account.to_string())).or_default() += v;
    for c in charges.iter().filter(|c| c["status"] == "posted") {
        let cur = c["currency"].as_str().unwrap();
        let amt = minor(&c["amount"], cur);
        put(cur, "accounts_receivable", amt);
        put(cur, KINDS.iter().find(|k| c["kind"] == k.0).unwrap().1, -amt);
    }
    for p in payments.iter().filter(|p| p["status"] == "succeeded") {
        let cur = p["currency"].as_str().unwrap();
        put(cur, "cash", minor(&p["amount"], cur));
        put(cur, "accounts_receivable", -minor(&p["amount"], cur));
    }
    for r in refunds.iter().filter(|r| r["status"] == "succeeded") {
        let cur = r["currency"].as_str().unwrap();
        put(cur, "refunds", minor(&r["amount"], cur));
        put(cur, "cash", -minor(&r["amount"], cur));
    }
    for e in entries.iter().filter(|e| e["source_type"].is_null()) {
        for (a, d, c) in lines(e) {
            put(e["currency"].as_str().unwrap(), &a, d - c);
        }
    }
    let now = sums_in(app, &t, live).await;
    for cur in CURRENCIES {
        for a in ACCOUNTS {
            let want = derived.get(&(cur.to_string(), a.to_string())).copied().unwrap_or(0);
            prop_assert_eq!(balance(&now, cur, a), want, "{} {} from the records", cur, a);
        }
    }
    // Invoices: amount_paid is what succeeded against them; open/paid follows from it.
    for inv in &m.invoices {
        let got = get(app, k, "invoices", &inv.id).await;
        let paid: i64 = payments
            .iter()
            .filter(|p| p["invoice_id"] == json!(inv.id) && p["status"] == "succeeded")
            .map(|p| minor(&p["amount"], inv.currency))
            .sum();
        prop_assert_eq!(minor(&got["amount_paid"], inv.currency), paid, "invoice {}", inv.id);
        prop_assert_eq!(paid, inv.paid);
        prop_assert_eq!(got["status"].as_str(), Some(inv.status), "invoice {}", inv.id);
    }
    for r in &m.refunds {
        prop_assert_eq!(&get(app, k, "refunds", &r.id).await["status"], r.status);
    }
    for p in &m.payments {
        prop_assert_eq!(&get(app, k, "payments", &p.id).await["status"], p.status);
    }
    {
        let mut st = stats.borrow_mut();
        let mut count = |k: String| *st.entry(k).or_default() += 1;
        m.payments.iter().for_each(|p| count(format!("payments {}", p.status)));
        m.refunds.iter().for_each(|r| count(format!("refunds {}", r.status)));
        m.invoices.iter().for_each(|i| count(format!("invoices {}", i.status)));
        m.charges.iter().filter(|c| !c.posted).for_each(|_| count("charges void".into()));
        entries
            .iter()
            .filter(|e| e["source_type"].is_null())
            .for_each(|e| count(format!("manual entries{}", if e["reverses_id"].is_null() { "" } else { " reversing" })));
        (0..m.refusals).for_each(|_| count("refusals".into()));
        count("cases".into());
    }
    // One ledger line per entry line, nothing else.
    let line_count: usize = entries.iter().map(|e| lines(e).len()).sum();
    prop_assert_eq!(app.count_where("ledger_lines", &tenant_cond(&t)).await, line_count as i64);
    Ok(())
}

/// The property on a backend: in the sandbox, payments are test payments whose scenario
/// runs at once (and `succeed`/`fail` always find them settled); in live mode they are
/// pending until the actions settle them.
fn property_run(backend: Backend, live: bool) {
    let rt = gable_tests::runtime();
    let Some(app) = rt.block_on(TestApp::builder(backend).try_spawn()) else { return };
    let config = Config { cases: 24, failure_persistence: None, max_shrink_iters: 200, max_shrink_time: 60_000, ..Config::default() };
    let mut runner = TestRunner::new_with_rng(config, TestRng::deterministic_rng(RngAlgorithm::ChaCha));
    let n = std::cell::Cell::new(0);
    let stats = Stats::default();
    let result = runner.run(&ops(), |ops| {
        n.set(n.get() + 1);
        rt.block_on(run_ops(&app, live, n.get(), ops, &stats))
    });
    rt.block_on(app.stop());
    if let Err(e) = result {
        panic!("{e}");
    }
    let stats = stats.into_inner();
    eprintln!("{backend:?} (live: {live}): {stats:#?}");
    for k in [
        "payments succeeded",
        "payments failed",
        "payments reversed",
        "refunds succeeded",
        "refunds failed",
        "invoices paid",
        "invoices void",
        "charges void",
        "manual entries",
        "manual entries reversing",
    ] {
        assert!(stats.get(k).is_some_and(|n| *n > 0), "no case reached {k}: {stats:?}");
    }
    assert!(stats["refusals"] >= 10, "{stats:?}");
}

#[test]
fn random_operations_keep_the_books_balanced_on_sqlite() {
    property_run(Backend::Sqlite, false);
}

#[test]
fn random_operations_keep_the_books_balanced_on_postgres() {
    property_run(Backend::Postgres, false);
}

#[test]
fn random_live_operations_keep_the_books_balanced_on_sqlite() {
    property_run(Backend::Sqlite, true);
}

#[test]
fn random_live_operations_keep_the_books_balanced_on_postgres() {
    property_run(Backend::Postgres, true);
}
