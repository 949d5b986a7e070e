//! The migrations make the schema the registry describes, on SQLite and PostgreSQL.
//!
//! `migrations/{sqlite,postgres}/` are hand-kept history; the registry
//! (`domain::collections`) describes the tables as `gable schema --dialect …`
//! (`store::schema::init_ddl`) prints them. Each test makes two fresh databases of one
//! kind, one by the migrations and one by the registry's DDL (or `gable migration
//! <collection>`), reads both back the same way (`gable_tests::schema`) and compares them
//! table by table: columns (type, `NOT NULL`, a default the registry states), indexes, the
//! primary key and `UNIQUE` constraints, foreign keys and, on PostgreSQL, row-level
//! security, the policies and `gable_app`'s grants. A difference names its table and
//! column or index.
//!
//! Where the migrations differ on purpose (Gable's own bookkeeping columns and the indexes
//! of its background scans, which no field of the registry describes), the difference is
//! in [`BEYOND_THE_REGISTRY`] with its reason; one listed there that no longer occurs
//! fails too, so the list stays true. Tables outside the registry (console credentials,
//! OAuth, the ledger's lines, idempotency keys, sandbox clocks) are not compared.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Display;

use gable::domain::collections::COLLECTIONS;
use gable::store::{schema, Dialect};
use gable_tests::schema::{Column, Database, Table};
use gable_tests::Backend;

/// Differences between the migrated schema and the registry's that are meant: which
/// database (`None`: both), the difference as [`differences`] names it, and why.
const BEYOND_THE_REGISTRY: &[(Option<Backend>, &str, &str)] = &[
    // Gable's own bookkeeping, in columns no field describes.
    (None, "service_accounts: column deleted_at", "service accounts are deleted softly (20261122000002_console)"),
    (None, "service_accounts: index service_accounts_name", "a name is unique among the accounts not deleted"),
    (None, "api_keys: index api_keys_service_account", "the console lists a service account's keys"),
    (None, "events: column occurrence", "a scheduled event names its occurrence, so it fires once (20261122000003_workflows)"),
    (None, "events: index events_occurrence", "the one-firing guarantee of scheduled events"),
    (None, "events: column stream_xid", "the event stream's commit order (20261207000001_event_stream)"),
    (None, "events: index events_stream", "the event stream reads in commit order"),
    (None, "webhooks: column previous_secret_sealed", "the secret before a rotation, still signing for a while (20261123000002_webhooks)"),
    (None, "webhooks: column previous_secret_expires_at", "when the previous secret stops signing"),
    (None, "webhook_deliveries: column claimed_until", "the delivery worker's claim on an attempt"),
    (None, "webhook_deliveries: column payload", "the body an attempt sends, kept for replays"),
    // Deliveries go with their subscription and their event.
    (
        None,
        "webhook_deliveries: foreign key (tenant_id, livemode, webhook_id)",
        "ON DELETE CASCADE: deleting a subscription deletes its delivery register",
    ),
    (
        None,
        "webhook_deliveries: foreign key (tenant_id, livemode, event_id)",
        "ON DELETE CASCADE: an event's deliveries are deleted with it (retention)",
    ),
    // The indexes of what scans across tenants or reads in Gable's own order.
    (None, "charges: index charges_rent_due", "the scheduler's rent.due scan"),
    (None, "charges: index charges_rent_period", "each rent period is billed once"),
    (None, "leases: index leases_ending", "the scheduler's lease.expiring and lease-end scans"),
    (None, "leases: index leases_rent_next_due", "recurring rent's scan"),
    (None, "documents: index documents_expiring", "the scheduler's document.expiring scan"),
    (None, "events: index events_retention", "events are deleted after 30 days"),
    (None, "request_logs: index request_logs_retention", "the request log is purged after its retention (7 days by default)"),
    (None, "imports: index imports_expires", "imports and their rows are deleted after 30 days"),
    (None, "reports: index reports_queue", "the report worker's queue"),
    (None, "payments: index payments_scenario", "the sandbox's test payments by scenario"),
    (None, "webhooks: index webhooks_enabled", "an event's fan-out to the enabled subscriptions"),
    (None, "webhook_deliveries: index webhook_deliveries_due", "the delivery worker's queue"),
    (None, "webhook_deliveries: index webhook_deliveries_retention", "deliveries are deleted after 30 days"),
    (None, "webhook_deliveries: index webhook_deliveries_event_type", "the register's filter[event_type]"),
    (None, "webhook_deliveries: index webhook_deliveries_next_attempt_at", "the register's filter[next_attempt_at]"),
    (None, "webhook_deliveries: index webhook_deliveries_response_status", "the register's filter[response_status]"),
    (
        None,
        "webhook_deliveries: index webhook_deliveries_webhook_id",
        "also in creation order: a subscription's register pages by created_at",
    ),
    // SQLite cannot add a foreign key to a table that exists (ALTER TABLE adds columns
    // only); rebuilding the tables would change what deleting a lease does there.
    (Some(Backend::Sqlite), "applications: foreign key (tenant_id, livemode, lease_id)", "added by ALTER TABLE (20261122000003_workflows)"),
    (Some(Backend::Sqlite), "payments: foreign key (tenant_id, livemode, lease_id)", "added by ALTER TABLE (20261123000003_sandbox)"),
    (Some(Backend::Sqlite), "workorders: foreign key (tenant_id, livemode, lease_id)", "added by ALTER TABLE (20261125000001_flows)"),
    (
        Some(Backend::Sqlite),
        "request_logs: foreign key (tenant_id)",
        "the request log is a file of its own, which a key cannot reach out of (20261206000002_request_log_own_file)",
    ),
];

fn dialect(backend: Backend) -> Dialect {
    match backend {
        Backend::Sqlite => Dialect::Sqlite,
        Backend::Postgres => Dialect::Postgres,
    }
}

/// Every way `migrated` differs from `registry` in the tables `registry` has: difference
/// (`<table>: column <name>`, `<table>: index <name>`, `<table>: foreign key (<columns>)`,
/// `<table>: walls`, `<table>: table`) → what differs.
///
/// A default the migrations give a column the registry gives none is no difference: a
/// `NOT NULL` column added to a table with rows needs one (`ALTER TABLE charges ADD COLUMN
/// status TEXT NOT NULL DEFAULT 'posted'`), and Gable writes every column of a row itself.
fn differences(registry: &BTreeMap<String, Table>, migrated: &BTreeMap<String, Table>) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for (name, want) in registry {
        let Some(got) = migrated.get(name) else {
            out.insert(format!("{name}: table"), "missing from the migrations".into());
            continue;
        };
        let column_alike =
            |w: &Column, g: &Column| w.ty == g.ty && w.not_null == g.not_null && (w.default.is_none() || w.default == g.default);
        compare(&mut out, name, "column", &want.columns, &got.columns, column_alike);
        compare(&mut out, name, "index", &want.indexes, &got.indexes, |w, g| w == g);
        compare(&mut out, name, "foreign key", &want.foreign_keys, &got.foreign_keys, |w, g| w == g);
        if want.walls != got.walls {
            out.insert(format!("{name}: walls"), format!("the registry: {:?}; the migrations: {:?}", want.walls, got.walls));
        }
    }
    out
}

fn compare<V: Display>(
    out: &mut BTreeMap<String, String>,
    table: &str,
    what: &str,
    want: &BTreeMap<String, V>,
    got: &BTreeMap<String, V>,
    alike: impl Fn(&V, &V) -> bool,
) {
    for key in want.keys().chain(got.keys()).collect::<BTreeSet<_>>() {
        let detail = match (want.get(key), got.get(key)) {
            (Some(w), None) => format!("missing from the migrations (the registry: {w})"),
            (None, Some(g)) => format!("only in the migrations: {g}"),
            (Some(w), Some(g)) if !alike(w, g) => format!("the registry: {w}; the migrations: {g}"),
            _ => continue,
        };
        out.insert(format!("{table}: {what} {key}"), detail);
    }
}

/// Fails unless `found` is exactly the differences [`BEYOND_THE_REGISTRY`] lists for this
/// database (and for `tables`, when given).
fn check(backend: Backend, found: &BTreeMap<String, String>, tables: Option<&BTreeSet<&str>>) {
    let accepted: BTreeMap<&str, &str> = BEYOND_THE_REGISTRY
        .iter()
        .filter(|(only, _, _)| only.is_none_or(|b| b == backend))
        .filter(|(_, key, _)| tables.is_none_or(|t| t.contains(key.split(':').next().unwrap())))
        .map(|(_, key, why)| (*key, *why))
        .collect();
    let unexplained: Vec<String> =
        found.iter().filter(|(key, _)| !accepted.contains_key(key.as_str())).map(|(key, detail)| format!("  {key}: {detail}")).collect();
    let gone: Vec<&str> = accepted.keys().filter(|key| !found.contains_key(**key)).copied().collect();
    assert!(
        unexplained.is_empty() && gone.is_empty(),
        "{backend:?}: the migrations do not make the schema the registry describes (`gable schema`):\n{}\n\
         Fix it with a new migration on both databases (`gable migration <collection>` for a new collection) or in the \
         registry; a difference on purpose goes into BEYOND_THE_REGISTRY with its reason.\n\
         Listed in BEYOND_THE_REGISTRY but no longer different (remove them): {gone:?}",
        unexplained.join("\n"),
    );
}

/// A fresh database migrated, beside one made by the registry's DDL: alike, but for what
/// [`BEYOND_THE_REGISTRY`] lists.
async fn the_migrations_make_the_registry_schema(backend: Backend) {
    let Some(migrated) = Database::migrated(backend).await else { return };
    let Some(registry) = Database::empty(backend).await else { return };
    let mut by_registry = registry.connect().await;
    by_registry.run_script(&schema::init_ddl(dialect(backend))).await.expect("`gable schema` applies to an empty database");
    let want = by_registry.tables().await;
    for c in COLLECTIONS {
        let table = want.get(c.table).unwrap_or_else(|| panic!("{}: the registry's DDL makes no table {}", c.name, c.table));
        if backend == Backend::Postgres {
            // What is compared is there to compare: the wall, its policy and the grant.
            let walls: Vec<&str> = table.walls.iter().map(|w| w.split(' ').next().unwrap()).collect();
            assert_eq!(walls, ["gable_app", "policy", "row-level"], "{}: {:?}", c.table, table.walls);
        }
    }
    let got = migrated.connect().await.tables().await;
    check(backend, &differences(&want, &got), None);
}

/// `gable migration <collection>` for each existing collection, applied where the
/// migrations made its table (dropped first), makes the table again as the migrations
/// made it: alike, but for what [`BEYOND_THE_REGISTRY`] lists of its table (the command
/// prints what the registry describes). On PostgreSQL that includes the foreign keys,
/// the `tenant_wall` policy and the grant to `gable_app`.
async fn a_collection_migration_makes_its_table_as_the_migrations_did(backend: Backend) {
    let Some(pristine) = Database::migrated(backend).await else { return };
    let Some(remade) = Database::migrated(backend).await else { return };
    let migrated = pristine.connect().await.tables().await;
    let mut db = remade.connect().await;
    let mut by_command = BTreeMap::new();
    for c in COLLECTIONS {
        let drop = format!("DROP TABLE {}{}", c.table, if backend == Backend::Postgres { " CASCADE" } else { "" });
        db.run_script(&drop).await.unwrap_or_else(|e| panic!("dropping {}: {e}", c.table));
        let migration = schema::collection_migration(c, dialect(backend));
        db.run_script(&migration).await.unwrap_or_else(|e| panic!("`gable migration {}` on {backend:?}: {e}\n{migration}", c.name));
        // Read now: on PostgreSQL, dropping a later table drops this one's keys to it.
        by_command.insert(c.table.to_string(), db.table(c.table).await.expect("the table made again"));
    }
    let tables: BTreeSet<&str> = COLLECTIONS.iter().map(|c| c.table).collect();
    check(backend, &differences(&by_command, &migrated), Some(&tables));
}

macro_rules! on_both {
    ($test:ident) => {
        mod $test {
            use super::*;
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn sqlite() {
                super::$test(Backend::Sqlite).await;
            }
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn postgres() {
                super::$test(Backend::Postgres).await;
            }
        }
    };
}
on_both!(the_migrations_make_the_registry_schema);
on_both!(a_collection_migration_makes_its_table_as_the_migrations_did);

/// The comparison itself: it finds a column, an index and a foreign key that differ, by
/// their table and name, and lets a default the registry does not state pass.
#[test]
fn a_difference_names_its_table_and_what() {
    let column = |ty: &str, not_null: bool, default: Option<&str>| Column { ty: ty.into(), not_null, default: default.map(Into::into) };
    let mut want = Table::default();
    want.columns.insert("status".into(), column("TEXT", true, None));
    want.columns.insert("rent".into(), column("INTEGER", true, None));
    want.indexes.insert("leases_status".into(), "(tenant_id, livemode, status, id)".into());
    want.foreign_keys.insert("(unit_id)".into(), "FOREIGN KEY (unit_id) REFERENCES units (id)".into());
    let mut got = want.clone();
    got.columns.insert("status".into(), column("TEXT", true, Some("'draft'")));
    got.columns.insert("rent".into(), column("INTEGER", false, None));
    got.columns.insert("extra".into(), column("TEXT", false, None));
    got.indexes.clear();
    got.foreign_keys.insert("(unit_id)".into(), "FOREIGN KEY (unit_id) REFERENCES units (id) ON DELETE CASCADE".into());
    let found = differences(&BTreeMap::from([("leases".to_string(), want.clone())]), &BTreeMap::from([("leases".to_string(), got)]));
    let keys: Vec<&str> = found.keys().map(String::as_str).collect();
    assert_eq!(keys, ["leases: column extra", "leases: column rent", "leases: foreign key (unit_id)", "leases: index leases_status"]);
    assert_eq!(found["leases: column rent"], "the registry: INTEGER NOT NULL; the migrations: INTEGER");
    assert_eq!(found["leases: index leases_status"], "missing from the migrations (the registry: (tenant_id, livemode, status, id))");
    let missing = differences(&BTreeMap::from([("leases".to_string(), want)]), &BTreeMap::new());
    assert_eq!(missing.into_iter().collect::<Vec<_>>(), [("leases: table".to_string(), "missing from the migrations".to_string())]);
}
