//! What `gable trigger` makes for each event type: a recipe is a short list of steps
//! (records to create, actions to take, the sandbox clock to advance), and every record
//! brings the records it needs first (a unit its property, a signature its lease), so the
//! records a recipe shares with others are declared once, in [`Role::needs`].

use chrono::{DateTime, Duration, NaiveDate, SecondsFormat, Utc};
use serde_json::{json, Value};

/// A record a recipe makes, with the body trigger gives it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    Property,
    Unit,
    Listing,
    Lead,
    Viewing,
    Application,
    Screening,
    /// A lease of a year from today.
    Lease,
    /// A lease that ends 61 days from today: its 60-day notice falls due tomorrow.
    EndingLease,
    Signature,
    Tenancy,
    /// A rent charge due tomorrow.
    Charge,
    /// A test payment with this `scenario`.
    Payment(&'static str),
    Booking,
    Guest,
    WorkOrder,
    Inspection,
    /// A document that expires in 31 days: its 30-day notice falls due tomorrow.
    Document,
    /// An import of one owner (an NDJSON file of one line, uploaded; its body is the line's).
    Import,
}

impl Role {
    /// The collection the record is created in.
    pub fn collection(self) -> &'static str {
        match self {
            Role::Property => "properties",
            Role::Unit => "units",
            Role::Listing => "listings",
            Role::Lead => "leads",
            Role::Viewing => "viewings",
            Role::Application => "applications",
            Role::Screening => "screening",
            Role::Lease | Role::EndingLease => "leases",
            Role::Signature => "signatures",
            Role::Tenancy => "tenancies",
            Role::Charge => "charges",
            Role::Payment(_) => "payments",
            Role::Booking => "bookings",
            Role::Guest => "guests",
            Role::WorkOrder => "workorders",
            Role::Inspection => "inspections",
            Role::Document => "documents",
            Role::Import => "imports",
        }
    }

    /// The record this one refers to, made first when the recipe has none of its kind yet.
    pub fn needs(self) -> Option<Role> {
        match self {
            Role::Unit | Role::WorkOrder => Some(Role::Property),
            Role::Listing | Role::Application | Role::Lease | Role::EndingLease | Role::Booking | Role::Inspection => Some(Role::Unit),
            Role::Viewing => Some(Role::Listing),
            Role::Screening => Some(Role::Application),
            Role::Signature | Role::Tenancy | Role::Charge => Some(Role::Lease),
            Role::Property | Role::Lead | Role::Guest | Role::Payment(_) | Role::Document | Role::Import => None,
        }
    }

    /// The record's name in words (the API's `object`), for messages.
    pub fn noun(self) -> &'static str {
        crate::domain::collections::collection(self.collection()).map_or(self.collection(), |c| c.object)
    }

    /// The body of the create: recognisable values (what a developer looking at their
    /// sandbox would take for trigger's), dated from the sandbox's today, referring to the
    /// records made before it (`id` of a collection's).
    pub fn body(self, w: &World, id: impl Fn(&'static str) -> anyhow::Result<String>) -> anyhow::Result<Value> {
        let person = |name: &str| json!([{ "name": name, "email": w.email }]);
        let mut body = match self {
            Role::Property => json!({
                "name": "Trigger Court",
                "kind": "residential",
                "address": { "line1": "1 Trigger Street", "city": "Portland", "region": "OR", "postal_code": "97201", "country": "US" },
            }),
            Role::Unit => json!({
                "property_id": id("properties")?, "number": "T1", "bedrooms": 1, "market_rent": "1200.00", "currency": "USD",
            }),
            Role::Listing => json!({
                "unit_id": id("units")?, "title": "Trigger Court, unit T1", "rent": "1200.00", "deposit": "1200.00",
                "currency": "USD", "available_on": w.date(14),
            }),
            Role::Lead => json!({
                "name": "Trigger Lead", "email": w.email, "source": "website", "message": "Is unit T1 still available?",
            }),
            Role::Viewing => json!({
                "listing_id": id("listings")?, "starts_at": w.at(1, 10), "ends_at": w.at_minutes(1, 10, 30),
            }),
            Role::Application => json!({
                "unit_id": id("units")?, "applicants": person("Trigger Applicant"), "monthly_income": "4000.00",
                "currency": "USD", "desired_move_in": w.date(30), "adults": 1,
            }),
            Role::Screening => json!({ "application_id": id("applications")?, "provider": "gable trigger" }),
            Role::Lease | Role::EndingLease => {
                let end = if self == Role::EndingLease { w.date(61) } else { w.date(364) };
                json!({
                    "unit_id": id("units")?, "start_date": w.date(0), "end_date": end, "rent": "1200.00",
                    "deposit": "1200.00", "currency": "USD", "rent_due_day": 1,
                })
            }
            Role::Signature => json!({
                "lease_id": id("leases")?, "signer_name": "Trigger Tenant", "signer_email": w.email, "role": "tenant",
            }),
            Role::Tenancy => json!({
                "lease_id": id("leases")?, "unit_id": id("units")?, "occupants": person("Trigger Tenant"),
            }),
            Role::Charge => json!({
                "lease_id": id("leases")?, "kind": "rent", "amount": "1200.00", "currency": "USD", "due_date": w.date(1),
                "description": "Rent of unit T1",
            }),
            Role::Payment(scenario) => json!({
                "scenario": scenario, "amount": "1200.00", "currency": "USD", "description": "Test payment",
            }),
            Role::Booking => json!({
                "unit_id": id("units")?, "check_in": w.date(7), "check_out": w.date(10), "guests_count": 2,
                "total": "450.00", "currency": "USD",
            }),
            Role::Guest => json!({ "name": "Trigger Guest", "email": w.email }),
            Role::WorkOrder => json!({
                "property_id": id("properties")?, "title": "Leaking kitchen tap", "category": "plumbing", "priority": "normal",
            }),
            Role::Inspection => json!({ "unit_id": id("units")?, "kind": "routine", "scheduled_for": w.at(1, 9) }),
            Role::Document => json!({
                "title": "Insurance certificate", "kind": "insurance", "expires_at": w.at(31, 0),
            }),
            // The file's one row: an owner, known by an external id of this run.
            Role::Import => json!({ "name": "Trigger Owner", "external_id": format!("trigger-{}", w.tag) }),
        };
        body["metadata"] = json!({ "made_by": "gable trigger" });
        Ok(body)
    }
}

/// What a recipe's records are dated from and named with.
pub struct World {
    /// The sandbox's time when trigger started.
    pub now: DateTime<Utc>,
    /// `trigger+<random>@example.com`.
    pub email: String,
    /// The random part of `email`: what this run's external ids end with.
    pub tag: String,
}

impl World {
    pub fn new(now: DateTime<Utc>) -> World {
        let tag = uuid::Uuid::new_v4().simple().to_string();
        let tag = tag[..8].to_string();
        World { now, email: format!("trigger+{tag}@example.com"), tag }
    }

    fn today(&self) -> NaiveDate {
        self.now.date_naive()
    }

    /// The sandbox's today plus `days`, as a date.
    fn date(&self, days: i64) -> String {
        (self.today() + Duration::days(days)).format("%Y-%m-%d").to_string()
    }

    /// `days` from today at `hour`:00 UTC.
    fn at(&self, days: i64, hour: u32) -> String {
        self.at_minutes(days, hour, 0)
    }

    fn at_minutes(&self, days: i64, hour: u32, minute: u32) -> String {
        let day = self.today() + Duration::days(days);
        day.and_hms_opt(hour, minute, 0).map(|t| t.and_utc().to_rfc3339_opts(SecondsFormat::Secs, true)).unwrap_or_default()
    }
}

/// One step of a recipe.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// Create the record (after the records it needs, when none of their kind is made yet).
    Make(Role),
    /// `POST /v1/{collection}/{id}/{action}` on the record of the role's collection made
    /// before, with this JSON body if any.
    Act(Role, &'static str, Option<&'static str>),
    /// Advance the sandbox clock to when the event's record falls due: its `field` (a date
    /// or date-time) less `days_before` days; at least a moment, when it is due already.
    Advance { field: &'static str, days_before: i64 },
}

#[derive(Debug)]
pub struct Recipe {
    pub event: &'static str,
    pub steps: &'static [Step],
}

use Role::*;
use Step::{Act, Advance, Make};

const fn act(role: Role, action: &'static str) -> Step {
    Act(role, action, None)
}

#[rustfmt::skip] // a table: one recipe per line
pub static RECIPES: &[Recipe] = &[
    Recipe { event: "listing.published", steps: &[Make(Listing), act(Listing, "publish")] },
    Recipe { event: "lead.created", steps: &[Make(Lead)] },
    Recipe { event: "viewing.booked", steps: &[Make(Viewing)] },
    Recipe { event: "application.submitted", steps: &[Make(Application), act(Application, "submit")] },
    Recipe { event: "application.status_changed", steps: &[Make(Application), act(Application, "submit"), act(Application, "approve")] },
    Recipe { event: "screening.completed", steps: &[Make(Screening), Act(Screening, "complete", Some(r#"{"result": "clear"}"#))] },
    Recipe { event: "lease.sent", steps: &[Make(Lease), act(Lease, "send")] },
    Recipe { event: "lease.signed", steps: &[Make(Signature), act(Lease, "send"), act(Signature, "sign")] },
    Recipe { event: "tenancy.started", steps: &[Make(Tenancy), act(Tenancy, "start")] },
    Recipe { event: "rent.due", steps: &[Make(Charge), Advance { field: "due_date", days_before: 0 }] },
    Recipe { event: "payment.succeeded", steps: &[Make(Payment("succeeded"))] },
    Recipe { event: "payment.failed", steps: &[Make(Payment("failed"))] },
    Recipe { event: "payment.reversed", steps: &[Make(Payment("reversed"))] },
    Recipe { event: "booking.created", steps: &[Make(Booking)] },
    Recipe { event: "booking.cancelled", steps: &[Make(Booking), act(Booking, "cancel")] },
    Recipe { event: "guest.checked_in", steps: &[Make(Guest), act(Guest, "check_in")] },
    Recipe { event: "guest.checked_out", steps: &[Make(Guest), act(Guest, "check_in"), act(Guest, "check_out")] },
    Recipe { event: "workorder.created", steps: &[Make(WorkOrder)] },
    Recipe { event: "workorder.completed", steps: &[Make(WorkOrder), act(WorkOrder, "start"), act(WorkOrder, "complete")] },
    Recipe { event: "inspection.completed", steps: &[Make(Inspection), act(Inspection, "complete")] },
    Recipe { event: "document.expiring", steps: &[Make(Document), Advance { field: "expires_at", days_before: 30 }] },
    Recipe { event: "lease.expiring", steps: &[
        Make(EndingLease), Make(Signature), act(Lease, "send"), act(Signature, "sign"), act(Lease, "activate"),
        Advance { field: "end_date", days_before: 60 },
    ] },
    Recipe { event: "tenant.moved_out", steps: &[Make(Tenancy), act(Tenancy, "start"), act(Tenancy, "move_out")] },
    Recipe { event: "import.completed", steps: &[Make(Import), Act(Import, "commit", Some("{}"))] },
];

pub fn recipe(event: &str) -> Option<&'static Recipe> {
    RECIPES.iter().find(|r| r.event == event)
}

impl Recipe {
    /// Every step in order, the records each record needs made before it.
    pub fn plan(&self) -> Vec<Step> {
        let mut plan: Vec<Step> = vec![];
        for step in self.steps {
            if let Make(role) = step {
                // The chain of what it needs that the plan does not hold yet, nearest last.
                let mut chain = vec![];
                let mut need = role.needs();
                while let Some(r) = need.filter(|r| !makes(&plan, r.collection())) {
                    chain.push(r);
                    need = r.needs();
                }
                plan.extend(chain.into_iter().rev().map(Make));
            }
            plan.push(*step);
        }
        plan
    }

    /// What trigger makes, in a phrase: "property, unit, listing, then publish the listing".
    pub fn phrase(&self) -> String {
        let plan = self.plan();
        let made: Vec<&str> = plan.iter().filter_map(|s| if let Make(r) = s { Some(r.noun()) } else { None }).collect();
        let then: Vec<String> = plan
            .iter()
            .filter_map(|s| match s {
                Act(r, action, _) => Some(format!("{} the {}", words(action).0, r.noun())),
                Advance { field, days_before: 0 } => Some(format!("advance the sandbox clock to its {field}")),
                Advance { field, days_before } => Some(format!("advance the sandbox clock to {days_before} days before its {field}")),
                Make(_) => None,
            })
            .collect();
        match then.is_empty() {
            true => made.join(", "),
            false => format!("{}, then {}", made.join(", "), then.join(", ")),
        }
    }
}

fn makes(plan: &[Step], collection: &str) -> bool {
    plan.iter().any(|s| matches!(s, Make(r) if r.collection() == collection))
}

/// An action in words: its verb ("check in the guest"), its past ("checked in guest …")
/// and its gerund ("checking in the guest: …").
pub fn words(action: &str) -> (&str, &str, &str) {
    const WORDS: &[(&str, &str, &str, &str)] = &[
        ("publish", "publish", "published", "publishing"),
        ("submit", "submit", "submitted", "submitting"),
        ("approve", "approve", "approved", "approving"),
        ("complete", "complete", "completed", "completing"),
        ("send", "send", "sent", "sending"),
        ("sign", "sign", "signed", "signing"),
        ("activate", "activate", "activated", "activating"),
        ("start", "start", "started", "starting"),
        ("cancel", "cancel", "cancelled", "cancelling"),
        ("check_in", "check in", "checked in", "checking in"),
        ("check_out", "check out", "checked out", "checking out"),
        ("move_out", "move out", "moved out", "moving out"),
        ("commit", "commit", "committed", "committing"),
    ];
    WORDS.iter().find(|w| w.0 == action).map_or((action, action, action), |w| (w.1, w.2, w.3))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::events::EVENT_TYPES;

    #[test]
    fn every_event_type_has_one_recipe_that_makes_its_record_once() {
        for t in EVENT_TYPES {
            let r = recipe(t.name).unwrap_or_else(|| panic!("{}: no recipe", t.name));
            let plan = r.plan();
            let subjects = plan.iter().filter(|s| matches!(s, Make(role) if role.collection() == t.collection)).count();
            assert_eq!(subjects, 1, "{}: the recipe makes one {} record", t.name, t.collection);
        }
        assert_eq!(RECIPES.len(), EVENT_TYPES.len(), "a recipe for each type, none for another");
    }

    #[test]
    fn a_plan_makes_what_each_record_needs_first_and_once() {
        let plan = recipe("lease.signed").unwrap().plan();
        assert_eq!(plan, vec![Make(Property), Make(Unit), Make(Lease), Make(Signature), act(Lease, "send"), act(Signature, "sign")]);
        let plan = recipe("lease.expiring").unwrap().plan();
        assert_eq!(plan.iter().filter(|s| matches!(s, Make(r) if r.collection() == "leases")).count(), 1);
        for r in RECIPES {
            let plan = r.plan();
            for (i, step) in plan.iter().enumerate() {
                let needs = match step {
                    Make(role) => role.needs(),
                    Act(role, action, _) => {
                        assert_ne!(words(action).1, *action, "{}: `{action}` has its words", r.event);
                        Some(*role)
                    }
                    Advance { .. } => None,
                };
                if let Some(n) = needs {
                    assert!(makes(&plan[..i], n.collection()), "{}: {step:?} comes after a {}", r.event, n.collection());
                }
            }
        }
        assert_eq!(recipe("listing.published").unwrap().phrase(), "property, unit, listing, then publish the listing");
        assert_eq!(recipe("guest.checked_in").unwrap().phrase(), "guest, then check in the guest");
    }

    #[test]
    fn bodies_are_dated_from_the_sandbox_and_refer_to_what_was_made() {
        let now = DateTime::parse_from_rfc3339("2027-01-31T23:30:00Z").unwrap().with_timezone(&Utc);
        let w = World::new(now);
        let id = |c: &'static str| anyhow::Ok(format!("{c}-id"));
        let charge = Charge.body(&w, id).unwrap();
        assert_eq!((charge["lease_id"].as_str(), charge["due_date"].as_str()), (Some("leases-id"), Some("2027-02-01")));
        assert_eq!(Document.body(&w, id).unwrap()["expires_at"], "2027-03-03T00:00:00Z");
        assert_eq!(EndingLease.body(&w, id).unwrap()["end_date"], "2027-04-02");
        assert!(w.email.starts_with("trigger+") && w.email.ends_with("@example.com"), "{}", w.email);
        let missing = Unit.body(&w, |c| anyhow::bail!("no {c}")).unwrap_err().to_string();
        assert_eq!(missing, "no properties");
    }
}
