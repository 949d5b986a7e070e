//! The four embeddable flows (`docs/embed.md`): what each serves, what its
//! token may do, and the small rules they share. Plain Rust: no HTTP, no SQL.

use chrono::{DateTime, NaiveDate, Utc};
use uuid::Uuid;

use super::record::Record;

/// The longest a flow token lives.
pub const LIFETIME_MINUTES: i64 = 30;
/// Every flow token starts with this.
pub const TOKEN_PREFIX: &str = "gft_";
/// The fields of a flow token that can name its subject.
pub const SUBJECT_FIELDS: &[&str] = &["listing_id", "unit_id", "invoice_id", "lease_id"];
/// Why the flow API refuses a revoked token (`401 unauthenticated`).
pub const REVOKED: &str = "the flow token has been revoked; ask the page for a new one";
/// The lease states the tenant portal serves: a resident exists from the lease's sending on.
pub const PORTAL_LEASE_STATES: &[&str] = &["sent", "signed", "active", "ended"];
/// The most invoices the tenant portal lists (newest due date first).
pub const PORTAL_INVOICES: u64 = 24;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flow {
    RentalApplication,
    Booking,
    Payment,
    TenantPortal,
}

/// What a flow's page does through the flow API, beside reading its session.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FlowWrite {
    /// `POST /v1/flow/applications`: create and submit an application.
    Application,
    /// `POST /v1/flow/bookings`: a guest and a confirmed booking.
    Booking,
    /// `POST /v1/flow/payments`: a payment of an invoice's remaining amount.
    Payment,
    /// `POST /v1/flow/workorders`: a maintenance request.
    Workorder,
}

impl Flow {
    pub const ALL: [Flow; 4] = [Flow::RentalApplication, Flow::Booking, Flow::Payment, Flow::TenantPortal];

    pub fn parse(name: &str) -> Option<Flow> {
        Flow::ALL.into_iter().find(|f| f.name() == name)
    }

    pub fn name(self) -> &'static str {
        match self {
            Flow::RentalApplication => "rental-application",
            Flow::Booking => "booking",
            Flow::Payment => "payment",
            Flow::TenantPortal => "tenant-portal",
        }
    }

    /// The page's title (and the iframe's, in the loader).
    pub fn title(self) -> &'static str {
        match self {
            Flow::RentalApplication => "Rental application",
            Flow::Booking => "Booking",
            Flow::Payment => "Payment",
            Flow::TenantPortal => "Tenant portal",
        }
    }

    /// The token fields that may name the flow's subject; a token names exactly one.
    pub fn subjects(self) -> &'static [&'static str] {
        match self {
            Flow::RentalApplication => &["listing_id"],
            Flow::Booking => &["listing_id", "unit_id"],
            Flow::Payment => &["invoice_id"],
            Flow::TenantPortal => &["lease_id"],
        }
    }

    /// The scopes a credential needs, besides `flow-tokens:write`, to mint the flow's
    /// token: the read scope of every collection whose records the flow's page shows, and
    /// the write scope of every collection it writes (which also reads it). A token must
    /// never reach what its creator cannot. Keep in step with `ops::flows` (what the
    /// session reads and each write makes) and the table in docs/embed.md.
    pub fn scopes(self) -> &'static [&'static str] {
        match self {
            // The listing, its unit and property; an application created and submitted.
            Flow::RentalApplication => &["listings:read", "units:read", "properties:read", "applications:write"],
            // The listing (or unit), its property, the nights other bookings hold; a guest
            // and a confirmed booking created.
            Flow::Booking => &["listings:read", "units:read", "properties:read", "guests:write", "bookings:write"],
            // The invoice, its charges as lines, its unit and property (payment
            // instructions), its payments; a payment created.
            Flow::Payment => &["invoices:read", "charges:read", "units:read", "properties:read", "payments:write"],
            // The lease, its unit and property, its residents (tenant signers, else the
            // tenancies' occupants), invoices with their lines, payments and work orders;
            // payments and work orders created.
            Flow::TenantPortal => &[
                "leases:read",
                "units:read",
                "properties:read",
                "signatures:read",
                "tenancies:read",
                "invoices:read",
                "charges:read",
                "payments:write",
                "workorders:write",
            ],
        }
    }

    /// Whether the flow's token may make this write.
    pub fn allows(self, write: FlowWrite) -> bool {
        matches!(
            (self, write),
            (Flow::RentalApplication, FlowWrite::Application)
                | (Flow::Booking, FlowWrite::Booking)
                | (Flow::Payment | Flow::TenantPortal, FlowWrite::Payment)
                | (Flow::TenantPortal, FlowWrite::Workorder)
        )
    }

    /// Whether the flow is done once it has made its record (one application or booking
    /// per token, like a checkout session); payments and the portal are not.
    pub fn completes_once(self) -> bool {
        matches!(self, Flow::RentalApplication | Flow::Booking)
    }
}

impl FlowWrite {
    pub const ALL: [FlowWrite; 4] = [FlowWrite::Application, FlowWrite::Booking, FlowWrite::Payment, FlowWrite::Workorder];

    /// The write a path segment under `/v1/flow/` names.
    pub fn parse(segment: &str) -> Option<FlowWrite> {
        FlowWrite::ALL.into_iter().find(|w| w.collection() == segment)
    }

    /// The path segment under `/v1/flow/` and the collection written.
    pub fn collection(self) -> &'static str {
        match self {
            FlowWrite::Application => "applications",
            FlowWrite::Booking => "bookings",
            FlowWrite::Payment => "payments",
            FlowWrite::Workorder => "workorders",
        }
    }

    /// The only scopes the write acts with (`ops::flows::begin`): the token's creator must
    /// hold them too, so every flow's [`Flow::scopes`] covers its writes' grants.
    pub fn grants(self) -> &'static [&'static str] {
        match self {
            FlowWrite::Application => &["applications:write"],
            FlowWrite::Booking => &["guests:write", "bookings:write"],
            FlowWrite::Payment => &["payments:write"],
            FlowWrite::Workorder => &["workorders:write"],
        }
    }

    /// The flows that may make this write, in words, for a refusal.
    pub fn scope(self) -> String {
        format!("flow:{}", self.collection())
    }
}

/// What a flow token grants: one flow, on one subject, for pages of one origin, until it
/// expires (in its environment's time).
#[derive(Debug, Clone)]
pub struct Grant {
    pub token_id: Uuid,
    pub flow: Flow,
    pub origin: String,
    /// The field naming the subject (`listing_id` …) and the subject's id.
    pub subject: (&'static str, Uuid),
    pub property_id: Option<Uuid>,
    pub expires_at: DateTime<Utc>,
}

impl Grant {
    /// The grant of a stored flow token; None for a row that does not make sense (which
    /// validation never lets in).
    pub fn of(token: &Record) -> Option<Grant> {
        let flow = Flow::parse(token.get("flow").as_str()?)?;
        let subject = flow.subjects().iter().find_map(|f| token.get(f).as_uuid().map(|id| (*f, id)))?;
        Some(Grant {
            token_id: token.id,
            flow,
            origin: token.get("origin").as_str()?.to_string(),
            subject,
            property_id: token.get("property_id").as_uuid(),
            expires_at: token.get("expires_at").as_datetime()?,
        })
    }
}

/// Nights booked, as half-open ranges `[start, end)` of dates.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stay {
    pub start: NaiveDate,
    pub end: NaiveDate,
}

impl Stay {
    pub fn nights(&self) -> i64 {
        (self.end - self.start).num_days()
    }

    /// Whether two stays share a night (a check-out day may be the next check-in day).
    pub fn overlaps(&self, other: &Stay) -> bool {
        self.start < other.end && other.start < self.end
    }
}

/// The longest stay the booking flow takes.
pub const MAX_NIGHTS: i64 = 365;

/// Checks a stay asked for on `today`: at least one night, not in the past, at most a year.
pub fn check_stay(stay: &Stay, today: NaiveDate) -> Result<(), (&'static str, String)> {
    if stay.start < today {
        return Err(("check_in", format!("must be today ({today}) or later")));
    }
    if stay.end <= stay.start {
        return Err(("check_out", "must be after check_in".into()));
    }
    if stay.nights() > MAX_NIGHTS {
        return Err(("check_out", format!("a stay is at most {MAX_NIGHTS} nights")));
    }
    Ok(())
}

/// The price of a stay in minor units, or None when it does not fit.
pub fn stay_total(nights: i64, nightly_rate_minor: i64) -> Option<i64> {
    nights.checked_mul(nightly_rate_minor)
}

/// Whether `origin` is what a flow token's `origin` field holds: `scheme://host[:port]`.
/// The flow page uses it for the `origin` the loader passes with an unknown token.
pub fn is_origin(origin: &str) -> bool {
    let Ok(u) = url::Url::parse(origin) else { return false };
    matches!(u.scheme(), "http" | "https")
        && u.host_str().is_some()
        && u.username().is_empty()
        && u.password().is_none()
        && u.origin().ascii_serialization() == origin
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(s: &str) -> NaiveDate {
        s.parse().unwrap()
    }

    #[test]
    fn stays_share_nights_not_turnover_days() {
        let a = Stay { start: d("2027-01-01"), end: d("2027-01-04") };
        assert!(a.overlaps(&Stay { start: d("2027-01-03"), end: d("2027-01-05") }));
        assert!(a.overlaps(&Stay { start: d("2026-12-30"), end: d("2027-01-02") }));
        assert!(a.overlaps(&Stay { start: d("2027-01-02"), end: d("2027-01-03") }));
        assert!(!a.overlaps(&Stay { start: d("2027-01-04"), end: d("2027-01-06") }));
        assert!(!a.overlaps(&Stay { start: d("2026-12-28"), end: d("2027-01-01") }));
        assert_eq!(a.nights(), 3);
    }

    #[test]
    fn stays_are_checked() {
        let today = d("2027-01-01");
        assert!(check_stay(&Stay { start: d("2027-01-01"), end: d("2027-01-02") }, today).is_ok());
        assert_eq!(check_stay(&Stay { start: d("2026-12-31"), end: d("2027-01-02") }, today).unwrap_err().0, "check_in");
        assert_eq!(check_stay(&Stay { start: d("2027-01-02"), end: d("2027-01-02") }, today).unwrap_err().0, "check_out");
        assert_eq!(check_stay(&Stay { start: d("2027-01-02"), end: d("2028-01-03") }, today).unwrap_err().0, "check_out");
    }

    #[test]
    fn each_flow_makes_only_its_own_writes() {
        use FlowWrite::*;
        let all = [Application, Booking, Payment, Workorder];
        let allowed = |f: Flow| all.into_iter().filter(|w| f.allows(*w)).collect::<Vec<_>>();
        assert_eq!(allowed(Flow::RentalApplication), vec![Application]);
        assert_eq!(allowed(Flow::Booking), vec![Booking]);
        assert_eq!(allowed(Flow::Payment), vec![Payment]);
        assert_eq!(allowed(Flow::TenantPortal), vec![Payment, Workorder]);
        for f in Flow::ALL {
            assert_eq!(Flow::parse(f.name()), Some(f));
        }
    }

    #[test]
    fn minting_needs_every_scope_a_flow_exercises() {
        for f in Flow::ALL {
            let held: Vec<String> = f.scopes().iter().map(|s| s.to_string()).collect();
            for s in &held {
                assert!(crate::domain::scopes::is_valid(s), "{}: {s} is not a scope", f.name());
            }
            // What the flow's writes act with is within what its creator must hold.
            for w in FlowWrite::ALL.into_iter().filter(|w| f.allows(*w)) {
                let grants: Vec<String> = w.grants().iter().map(|s| s.to_string()).collect();
                assert_eq!(crate::domain::scopes::missing(&held, &grants), None, "{} {}", f.name(), w.collection());
            }
            // And no flow token is minted on `flow-tokens:write` alone.
            assert!(!held.is_empty() && !held.iter().any(|s| s.starts_with("flow-tokens:") || s.starts_with('*')), "{}", f.name());
        }
        assert!(Flow::TenantPortal.scopes().contains(&"leases:read") && Flow::Payment.scopes().contains(&"invoices:read"));
    }

    #[test]
    fn origins_are_scheme_host_port_only() {
        assert!(is_origin("https://www.example.com"));
        assert!(is_origin("http://127.0.0.1:5555"));
        for bad in ["https://www.example.com/", "https://a.com/x", "ftp://a.com", "https://u@a.com", "null", "", "https://A.com"] {
            assert!(!is_origin(bad), "{bad}");
        }
    }

    #[test]
    fn totals_do_not_overflow() {
        assert_eq!(stay_total(3, 18000), Some(54000));
        assert_eq!(stay_total(i64::MAX, 2), None);
    }
}
