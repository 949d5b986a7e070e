//! Idempotency keys' storage (`idempotency_keys`): one row per key of a tenant's
//! environment and credential.
//!
//! A request with a key first reserves it in a short transaction of its own
//! (`reserve`): the row holds the request's fingerprint and a reservation (a token and
//! `locked_until`) that marks it in flight. The answer is written by `answer`, in the
//! transaction of the write it belongs to, and only while the reservation is still the
//! caller's; so a write and its stored answer commit together or not at all, and a
//! request whose reservation was taken over (it ran past `locked_until`) cannot commit.
//! An answer without a write (a refused request) is stored the same way, in its own
//! transaction. Answers are sealed under the master key by the caller.

use chrono::{DateTime, Duration, Utc};
use sea_query::{Cond, Expr, OnConflict, Query, SimpleExpr, Value};
use uuid::Uuid;

use super::sql::{a, col};
use super::{Dialect, Tx};
use crate::error::{Error, Result};

/// How long keys are kept.
pub const KEEP: Duration = Duration::hours(24);

/// Whose key it is: keys are separate per tenant, environment and credential.
#[derive(Debug, Clone)]
pub struct Owner {
    pub tenant: Uuid,
    pub livemode: bool,
    pub credential: Uuid,
}

/// The request a key is used for.
#[derive(Debug, Clone)]
pub struct Request {
    pub key: String,
    pub fingerprint: String,
    pub method: String,
    pub path: String,
}

/// What a key says about a request.
#[derive(Debug)]
pub enum Reservation {
    /// The request is the key's to run; its answer is stored with `token`.
    Reserved { token: Uuid },
    /// The key answered this request before: the stored status and sealed body.
    Answered { status: u16, sealed: String },
    /// A request with this key is running now; its hold lapses at `until`.
    InUse { until: DateTime<Utc> },
    /// The key was used for another request (method, path or body differ).
    Reused { method: String, path: String },
}

/// What a key's stored answer is sealed to (the associated data of its sealing): the
/// owner and the key, so an answer copied into another row does not open.
pub fn sealing_context(owner: &Owner, key: &str) -> String {
    format!("idempotency:{}:{}:{}:{key}", owner.tenant, owner.livemode, owner.credential)
}

fn key_cond(owner: &Owner, key: &str) -> Cond {
    Cond::all()
        .add(col("tenant_id").eq(owner.tenant))
        .add(col("livemode").eq(owner.livemode))
        .add(col("credential_id").eq(owner.credential))
        .add(col("key").eq(key))
}

/// Reserves `req.key` for the request until `now + lease`, or says why not. A key older
/// than `keep` counts as unused; so does a reservation that lapsed without an answer
/// (its request died or failed), which is taken over.
pub async fn reserve(
    tx: &mut Tx,
    owner: &Owner,
    req: &Request,
    now: DateTime<Utc>,
    lease: Duration,
    keep: Duration,
) -> Result<Reservation> {
    let d = tx.dialect();
    let token = Uuid::new_v4();
    let cols = ["tenant_id", "livemode", "credential_id", "key", "fingerprint", "method", "path", "created_at", "token", "locked_until"];
    let vals: Vec<SimpleExpr> = vec![
        Expr::val(owner.tenant).into(),
        owner.livemode.into(),
        Expr::val(owner.credential).into(),
        req.key.clone().into(),
        req.fingerprint.clone().into(),
        req.method.clone().into(),
        req.path.clone().into(),
        Expr::val(now).into(),
        Expr::val(token).into(),
        Expr::val(now + lease).into(),
    ];
    let mut ins = Query::insert();
    ins.into_table(a("idempotency_keys"))
        .columns(cols.map(a))
        .values(vals)
        .map_err(Error::internal)?
        .on_conflict(OnConflict::columns(["tenant_id", "livemode", "credential_id", "key"].map(a)).do_nothing().to_owned());
    if tx.execute(&ins).await? == 1 {
        return Ok(Reservation::Reserved { token });
    }
    let mut sel = Query::select();
    sel.columns(["fingerprint", "method", "path", "created_at", "locked_until", "response_status", "response_sealed"].map(a))
        .from(a("idempotency_keys"))
        .cond_where(key_cond(owner, &req.key));
    if d == Dialect::Postgres {
        sel.lock(sea_query::LockType::Update);
    }
    let Some(row) = tx.fetch_optional(&sel).await? else {
        // Purged between the two statements: the next attempt inserts.
        return Err(Error::Conflict("the idempotency key changed while this request read it; retry the request".into()));
    };
    let created = row.opt_datetime("created_at")?.unwrap_or(now);
    let expired = created + keep <= now;
    let answered = row.opt_i64("response_status")?.zip(row.opt_string("response_sealed")?);
    let in_flight = row.opt_datetime("locked_until")?.filter(|until| *until > now);
    if !expired {
        if row.opt_string("fingerprint")?.as_deref() != Some(req.fingerprint.as_str()) {
            return Ok(Reservation::Reused {
                method: row.opt_string("method")?.unwrap_or_default(),
                path: row.opt_string("path")?.unwrap_or_default(),
            });
        }
        if let Some((status, sealed)) = answered {
            return Ok(Reservation::Answered { status: u16::try_from(status).unwrap_or(500), sealed });
        }
        if let Some(until) = in_flight {
            return Ok(Reservation::InUse { until });
        }
    }
    // Expired, or a lapsed reservation without an answer: the key starts over.
    let up = Query::update()
        .table(a("idempotency_keys"))
        .value(a("fingerprint"), req.fingerprint.clone())
        .value(a("method"), req.method.clone())
        .value(a("path"), req.path.clone())
        .value(a("created_at"), if expired { now } else { created })
        .value(a("token"), token)
        .value(a("locked_until"), now + lease)
        .value(a("response_status"), None::<i64>)
        .value(a("response_sealed"), None::<String>)
        .cond_where(key_cond(owner, &req.key))
        .to_owned();
    tx.execute(&up).await?;
    Ok(Reservation::Reserved { token })
}

/// Stores the answer of a reserved key, in the caller's transaction. Fails (and the
/// caller's transaction must roll back) when the reservation is no longer `token`'s.
pub async fn answer(tx: &mut Tx, owner: &Owner, key: &str, token: Uuid, status: u16, sealed: String) -> Result<()> {
    let up = Query::update()
        .table(a("idempotency_keys"))
        .value(a("response_status"), i64::from(status))
        .value(a("response_sealed"), sealed)
        .value(a("locked_until"), Value::ChronoDateTimeUtc(None))
        .cond_where(key_cond(owner, key))
        .and_where(col("token").eq(token))
        .and_where(col("response_status").is_null())
        .to_owned();
    if tx.execute(&up).await? != 1 {
        // Its hold lapsed and another request took the key over.
        return Err(Error::IdempotencyKeyInUse { retry_after_secs: 1 });
    }
    Ok(())
}

/// Gives a reserved key up (the request failed on the server's side): the next request
/// with it runs anew.
pub async fn release(tx: &mut Tx, owner: &Owner, key: &str, token: Uuid) -> Result<()> {
    let del = Query::delete()
        .from_table(a("idempotency_keys"))
        .cond_where(key_cond(owner, key))
        .and_where(col("token").eq(token))
        .and_where(col("response_status").is_null())
        .to_owned();
    tx.execute(&del).await?;
    Ok(())
}

/// Deletes at most `limit` keys created before `before` (keys are kept 24 hours).
pub async fn delete_before(tx: &mut Tx, before: DateTime<Utc>, limit: u64) -> Result<u64> {
    let key = ["tenant_id", "livemode", "credential_id", "key"];
    super::sql::delete_some(tx, "idempotency_keys", &key, col("created_at").lt(Expr::val(before)), limit).await
}
