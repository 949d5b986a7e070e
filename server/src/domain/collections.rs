//! Every collection. Each entry is the one place its fields, relations, list options,
//! property path and write rules are declared; see `registry` for what each part means.
//!
//! Statuses that belong to a state machine are read-only here: records move between
//! states through actions (`POST /v1/{resource}/{id}/{action}`), never by PATCH.

use super::registry::{
    Access, Collection, Default as D, EnvRule, Field, JsonShape, PropertyPath as P, Rule, Secret, SecretStore, Ty::*, Writes,
};

const fn f(name: &'static str, ty: super::registry::Ty) -> Field {
    Field::new(name, ty)
}
const fn name() -> Field {
    f("name", Str { max: 200 }).required().sort().doc("Display name.")
}
const fn email() -> Field {
    f("email", Email).filter()
}
const fn phone() -> Field {
    f("phone", Str { max: 40 })
}
const fn currency() -> Field {
    f("currency", Currency).required().filter().doc("ISO 4217 code of every amount on this record.")
}
const fn property_ref() -> Field {
    f("property_id", Ref("properties")).required().create_only().filter()
}
/// The derived property of a record whose property comes through its parents.
const fn derived_property() -> Field {
    Field { access: Access::ReadOnly, ..f("property_id", Ref("properties")).filter() }
        .doc("The property this record belongs to, derived from its parent records.")
}
const fn status(states: &'static [&'static str], initial: &'static str) -> Field {
    f("status", Enum(states)).read_only().default(D::Str(initial)).sort().doc("Current state; changed by actions only.")
}
/// The record's id in the system it came from (or any id of the client's own): how an
/// import's rows refer to each other and how a rerun finds what it made.
const fn external_id() -> Field {
    f("external_id", Str { max: 255 }).unique().filter().doc(
        "Your own id for the record (its id in another system): unique among the collection's records of the tenant and \
         environment (a write giving one another record holds is `409 conflict`); `filter[external_id]` finds it; imports \
         match rows by it. 1 to 255 characters, not padded.",
    )
}
const fn address() -> Field {
    f("address", Json(JsonShape::Address))
}

/// What a live payment can record: money received outside Gable (see `ops::behaviour::payments`).
pub const LIVE_PAYMENT_METHODS: &[&str] = &["bank_transfer", "cash", "check", "other"];

#[rustfmt::skip] // a table: one compact entry per collection reads better than rustfmt's layout
pub static COLLECTIONS: &[Collection] = &[
    Collection {
        name: "organizations", object: "organization", table: "organizations",
        doc: "Units of the tenant's business: brands, regions, divisions.",
        fields: &[
            name(),
            f("kind", Enum(&["brand", "region", "division", "other"])).default(D::Str("other")).sort(),
            f("parent_id", Ref("organizations")).filter(),
            external_id(),
        ],
        property: P::None, writes: Writes::Full, metadata: true, rules: &[], indexes: &[], secret: None,
    },
    Collection {
        name: "companies", object: "company", table: "companies",
        doc: "Legal entities: owner LLCs, management companies.",
        fields: &[
            name(),
            f("kind", Enum(&["owner_entity", "management_company", "service_company", "other"])).default(D::Str("other")).sort(),
            f("registration_number", Str { max: 100 }).filter(),
            f("tax_id", Str { max: 100 }),
            email(),
            phone(),
            address(),
            external_id(),
        ],
        property: P::None, writes: Writes::Full, metadata: true, rules: &[], indexes: &[], secret: None,
    },
    Collection {
        name: "users", object: "user", table: "users",
        doc: "Console staff of the tenant.",
        fields: &[
            f("email", Email).required().sort(),
            name(),
            f("role_id", Ref("roles")).filter(),
            f("status", Enum(&["invited", "active", "disabled"])).default(D::Str("active")).sort(),
            f("last_sign_in_at", DateTime).read_only(),
        ],
        property: P::None, writes: Writes::Full, metadata: true, rules: &[], indexes: &[], secret: None,
    },
    Collection {
        name: "roles", object: "role", table: "roles",
        doc: "Named sets of permissions (scopes) given to users.",
        fields: &[
            name(),
            f("description", Str { max: 500 }),
            f("permissions", StrList { max_items: 100 }).required().doc("Scopes: `{collection}:read`, `{collection}:write`, `*:read` or `*`."),
        ],
        property: P::None, writes: Writes::Full, metadata: true, rules: &[], indexes: &[], secret: None,
    },
    Collection {
        name: "owners", object: "owner", table: "owners",
        doc: "People or companies that own properties.",
        fields: &[
            name(),
            f("kind", Enum(&["person", "company"])).default(D::Str("person")).sort(),
            email(),
            phone(),
            f("company_id", Ref("companies")).filter(),
            address(),
            external_id(),
        ],
        property: P::None, writes: Writes::Full, metadata: true, rules: &[], indexes: &[], secret: None,
    },
    Collection {
        name: "properties", object: "property", table: "properties",
        doc: "A managed property: a building complex, a house, a student residence.",
        fields: &[
            name(),
            f("kind", Enum(&["residential", "commercial", "student", "short_term", "mixed"])).required().sort(),
            f("address", Json(JsonShape::Address)).required(),
            f("owner_id", Ref("owners")).filter(),
            f("company_id", Ref("companies")).filter(),
            f("organization_id", Ref("organizations")).filter(),
            f("timezone", Str { max: 64 }).default(D::Str("UTC")).doc("IANA time zone of the property."),
            f("status", Enum(&["active", "archived"])).default(D::Str("active")).sort(),
            f("payment_instructions", Text)
                .doc("How residents and guests pay in live mode (bank details, where to send a check); the payment flow and the tenant portal show it."),
            external_id(),
        ],
        property: P::SelfId, writes: Writes::Full, metadata: true, rules: &[], indexes: &[], secret: None,
    },
    Collection {
        name: "buildings", object: "building", table: "buildings",
        doc: "A building of a property.",
        fields: &[
            property_ref(),
            name(),
            address(),
            f("floors", Int { min: 0, max: 300 }),
            external_id(),
        ],
        property: P::Direct, writes: Writes::Full, metadata: true, rules: &[], indexes: &[], secret: None,
    },
    Collection {
        name: "units", object: "unit", table: "units",
        doc: "A rentable unit: an apartment, a house, a commercial space.",
        fields: &[
            property_ref(),
            f("building_id", Ref("buildings")).create_only().filter(),
            f("number", Str { max: 50 }).required().sort().doc("Unit number or name, e.g. `4B`."),
            f("floor", Int { min: -10, max: 300 }),
            f("bedrooms", Int { min: 0, max: 50 }).filter(),
            f("bathrooms", Num { min: 0.0, max: 50.0 }).filter(),
            f("area", Num { min: 0.0, max: 1.0e7 }),
            f("area_unit", Enum(&["sqft", "sqm"])).default(D::Str("sqm")),
            f("market_rent", Money).filter(),
            f("nightly_rate", Money).doc("The price of a night for short stays (the booking flow of a unit)."),
            f("currency", Currency).filter(),
            external_id(),
        ],
        property: P::Direct, writes: Writes::Full, metadata: true,
        rules: &[Rule::SameProperty("building_id")], indexes: &[], secret: None,
    },
    Collection {
        name: "rooms", object: "room", table: "rooms",
        doc: "A room of a unit, let on its own in co-living and student housing.",
        fields: &[
            f("unit_id", Ref("units")).required().create_only().filter(),
            derived_property(),
            name(),
            f("kind", Enum(&["bedroom", "studio", "shared", "other"])).default(D::Str("bedroom")),
            f("area", Num { min: 0.0, max: 1.0e6 }),
            f("market_rent", Money),
            f("currency", Currency),
            external_id(),
        ],
        property: P::Via(&["unit_id"]), writes: Writes::Full, metadata: true, rules: &[], indexes: &[], secret: None,
    },
    Collection {
        name: "beds", object: "bed", table: "beds",
        doc: "A bed in a shared room.",
        fields: &[
            f("room_id", Ref("rooms")).required().create_only().filter(),
            derived_property(),
            f("label", Str { max: 50 }).required().sort(),
            f("kind", Enum(&["single", "double", "bunk_upper", "bunk_lower"])).default(D::Str("single")),
            f("market_rent", Money),
            f("currency", Currency),
            external_id(),
        ],
        property: P::Via(&["room_id"]), writes: Writes::Full, metadata: true, rules: &[], indexes: &[], secret: None,
    },
    Collection {
        name: "listings", object: "listing", table: "listings",
        doc: "A unit advertised for rent.",
        fields: &[
            f("unit_id", Ref("units")).required().create_only().filter(),
            derived_property(),
            f("title", Str { max: 200 }).required().filter(),
            f("description", Text),
            f("rent", Money).required().filter(),
            f("deposit", Money),
            f("nightly_rate", Money).doc("The price of a night for short stays (the booking flow of the listing)."),
            currency(),
            f("available_on", Date).filter(),
            status(&["draft", "published", "unlisted"], "draft"),
            f("published_at", DateTime).read_only(),
            external_id(),
        ],
        property: P::Via(&["unit_id"]), writes: Writes::Full, metadata: true, rules: &[], indexes: &[], secret: None,
    },
    Collection {
        name: "leads", object: "lead", table: "leads",
        doc: "A prospective resident's enquiry.",
        fields: &[
            f("listing_id", Ref("listings")).create_only().filter(),
            derived_property(),
            name(),
            email(),
            phone(),
            f("source", Enum(&["website", "portal", "referral", "walk_in", "phone", "other"])).default(D::Str("website")).sort(),
            f("message", Text),
            status(&["new", "contacted", "qualified", "converted", "lost"], "new"),
            external_id(),
        ],
        property: P::Via(&["listing_id"]), writes: Writes::Full, metadata: true, rules: &[], indexes: &[], secret: None,
    },
    Collection {
        name: "viewings", object: "viewing", table: "viewings",
        doc: "A scheduled showing of a listing to a lead.",
        fields: &[
            f("listing_id", Ref("listings")).required().create_only().filter(),
            f("lead_id", Ref("leads")).filter(),
            derived_property(),
            f("starts_at", DateTime).required().sort(),
            f("ends_at", DateTime),
            f("notes", Text),
            status(&["booked", "completed", "cancelled", "no_show"], "booked"),
            external_id(),
        ],
        property: P::Via(&["listing_id"]), writes: Writes::Full, metadata: true,
        rules: &[Rule::After { earlier: "starts_at", later: "ends_at" }], indexes: &[], secret: None,
    },
    Collection {
        name: "applications", object: "application", table: "applications",
        doc: "A rental application for a listing or unit.",
        fields: &[
            f("listing_id", Ref("listings")).create_only().filter(),
            f("unit_id", Ref("units")).create_only().filter(),
            derived_property(),
            f("applicants", Json(JsonShape::People)).required(),
            f("monthly_income", Money),
            f("currency", Currency),
            f("desired_move_in", Date).filter(),
            f("adults", Int { min: 1, max: 20 }).doc("Adults who will live in the unit, applicants included."),
            f("children", Int { min: 0, max: 20 }).doc("Children who will live in the unit."),
            f("pets", Str { max: 200 }).doc("Pets, in the applicant's words; absent for none."),
            f("employment_status", Enum(&["employed", "self_employed", "student", "retired", "unemployed", "other"])),
            f("employer", Str { max: 200 }),
            f("job_title", Str { max: 200 }),
            f("employed_since", Date),
            f("reference_contacts", Json(JsonShape::References)).doc("People who can vouch for the applicants: landlords, employers."),
            f("consent_signature", Str { max: 200 }).doc("The full name the applicant typed to consent to screening and the terms."),
            f("consented_at", DateTime).doc("When the applicant consented to screening and the terms."),
            status(&["draft", "submitted", "screening", "approved", "denied", "withdrawn", "converted"], "draft"),
            f("submitted_at", DateTime).read_only(),
            f("lease_id", Ref("leases")).read_only().filter().doc("The draft lease the `convert` action made."),
            external_id(),
        ],
        property: P::Via(&["unit_id", "listing_id"]), writes: Writes::Full, metadata: true,
        rules: &[Rule::OneOf(&["listing_id", "unit_id"])], indexes: &[], secret: None,
    },
    Collection {
        name: "screening", object: "screening", table: "screenings",
        doc: "A background and credit screening of an application.",
        fields: &[
            f("application_id", Ref("applications")).required().create_only().filter(),
            derived_property(),
            f("provider", Str { max: 100 }),
            status(&["pending", "completed"], "pending"),
            f("result", Enum(&["clear", "consider", "fail"])).read_only().filter(),
            f("completed_at", DateTime).read_only(),
            external_id(),
        ],
        property: P::Via(&["application_id"]), writes: Writes::Full, metadata: true, rules: &[], indexes: &[], secret: None,
    },
    Collection {
        name: "leases", object: "lease", table: "leases",
        doc: "A residential or commercial lease of a unit.",
        fields: &[
            f("unit_id", Ref("units")).required().create_only().filter(),
            derived_property(),
            f("application_id", Ref("applications")).create_only().filter(),
            f("start_date", Date).required().sort(),
            f("end_date", Date).filter().doc("Last day of the lease; absent for a periodic lease."),
            f("rent", Money).required().filter(),
            f("deposit", Money),
            currency(),
            f("rent_due_day", Int { min: 1, max: 28 }).default(D::Int(1)).doc("Day of the month rent falls due."),
            status(&["draft", "sent", "signed", "active", "ended", "terminated", "cancelled"], "draft"),
            f("ended_at", DateTime).read_only().doc("When the lease was ended or terminated."),
            f("rent_billed_through", Date).read_only().doc("The due date of the last rent period Gable billed (recurring rent)."),
            f("rent_next_due", Date).read_only().doc("The due date of the next rent period Gable bills, 7 days before it; absent when none is left."),
            external_id(),
        ],
        property: P::Via(&["unit_id"]), writes: Writes::Full, metadata: true,
        rules: &[Rule::After { earlier: "start_date", later: "end_date" }],
        indexes: &[&["status", "created_at", "id"], &["status", "start_date", "id"]], secret: None,
    },
    Collection {
        name: "signatures", object: "signature", table: "signatures",
        doc: "One signer's signature on a lease.",
        fields: &[
            f("lease_id", Ref("leases")).required().create_only().filter(),
            derived_property(),
            f("signer_name", Str { max: 200 }).required(),
            f("signer_email", Email).required().filter(),
            f("role", Enum(&["tenant", "guarantor", "landlord"])).default(D::Str("tenant")).sort(),
            status(&["pending", "signed", "declined"], "pending"),
            f("signed_at", DateTime).read_only(),
            external_id(),
        ],
        property: P::Via(&["lease_id"]), writes: Writes::Full, metadata: true, rules: &[], indexes: &[], secret: None,
    },
    Collection {
        name: "tenancies", object: "tenancy", table: "tenancies",
        doc: "The occupation of a unit under a lease.",
        fields: &[
            f("lease_id", Ref("leases")).required().create_only().filter(),
            f("unit_id", Ref("units")).required().create_only().filter(),
            derived_property(),
            f("occupants", Json(JsonShape::People)),
            f("move_in_date", Date).filter(),
            f("move_out_date", Date).filter(),
            status(&["upcoming", "current", "moved_out"], "upcoming"),
            external_id(),
        ],
        property: P::Via(&["unit_id"]), writes: Writes::Full, metadata: true,
        rules: &[Rule::After { earlier: "move_in_date", later: "move_out_date" }, Rule::SameProperty("lease_id")],
        indexes: &[], secret: None,
    },
    Collection {
        name: "bookings", object: "booking", table: "bookings",
        doc: "A short stay in a unit.",
        fields: &[
            f("unit_id", Ref("units")).required().create_only().filter(),
            f("listing_id", Ref("listings")).create_only().filter(),
            f("guest_id", Ref("guests")).filter(),
            derived_property(),
            f("check_in", Date).required().sort(),
            f("check_out", Date).required().sort(),
            f("guests_count", Int { min: 1, max: 50 }).default(D::Int(1)),
            f("total", Money),
            f("currency", Currency),
            status(&["inquiry", "confirmed", "checked_in", "checked_out", "cancelled"], "inquiry"),
            external_id(),
        ],
        property: P::Via(&["unit_id"]), writes: Writes::Full, metadata: true,
        rules: &[Rule::After { earlier: "check_in", later: "check_out" }, Rule::SameProperty("listing_id")],
        indexes: &[], secret: None,
    },
    Collection {
        name: "guests", object: "guest", table: "guests",
        doc: "A short-stay guest.",
        fields: &[
            name(),
            email(),
            phone(),
            status(&["expected", "checked_in", "checked_out"], "expected"),
            external_id(),
        ],
        property: P::None, writes: Writes::Full, metadata: true, rules: &[], indexes: &[], secret: None,
    },
    Collection {
        name: "charges", object: "charge", table: "charges",
        doc: "An amount owed under a lease or booking.",
        fields: &[
            f("lease_id", Ref("leases")).create_only().filter(),
            f("booking_id", Ref("bookings")).create_only().filter(),
            derived_property(),
            f("kind", Enum(&["rent", "deposit", "fee", "utility"])).required().create_only().sort(),
            f("amount", Money).required().create_only().filter(),
            currency().create_only(),
            f("due_date", Date).required().create_only().sort(),
            f("description", Str { max: 500 }),
            f("period", Str { max: 7 }).read_only().filter()
                .doc("The rent period (`YYYY-MM`) of a charge Gable billed from its lease; absent on charges made by hand."),
            status(&["posted", "void"], "posted"),
            f("voided_at", DateTime).read_only(),
            external_id(),
        ],
        // Posted to the ledger when created: a mistaken charge is voided, never deleted.
        property: P::Via(&["lease_id", "booking_id"]), writes: Writes::NoDelete, metadata: true,
        rules: &[Rule::OneOf(&["lease_id", "booking_id"])], indexes: &[&["due_date", "id"]], secret: None,
    },
    Collection {
        name: "invoices", object: "invoice", table: "invoices",
        doc: "A bill grouping charges. `overdue` is derived: open and past its due date.",
        fields: &[
            f("lease_id", Ref("leases")).create_only().filter(),
            f("booking_id", Ref("bookings")).create_only().filter(),
            derived_property(),
            f("charge_ids", RefList("charges")).doc("The charges this invoice bills."),
            f("amount_due", Money).required().filter().doc("Changes only while the invoice is a draft."),
            f("amount_paid", Money).read_only().default(D::Zero),
            currency().create_only(),
            f("due_date", Date).required().sort(),
            status(&["draft", "open", "paid", "void"], "draft"),
            external_id(),
        ],
        property: P::Via(&["lease_id", "booking_id"]), writes: Writes::Full, metadata: true,
        rules: &[Rule::OneOf(&["lease_id", "booking_id"])], indexes: &[], secret: None,
    },
    Collection {
        name: "payments", object: "payment", table: "payments",
        doc: "Money received. Never deleted: a mistaken payment is reversed.",
        fields: &[
            f("amount", Money).required().create_only().filter(),
            currency().create_only(),
            f("invoice_id", Ref("invoices")).create_only().filter(),
            derived_property(),
            f("method", Enum(&["card", "bank_transfer", "ach", "cash", "check", "other"])).default(D::Str("card")).sort()
                .env(EnvRule::LiveValues(LIVE_PAYMENT_METHODS))
                .doc("How the money came. A live payment records money received outside Gable, which processes no cards or ACH debits itself."),
            f("lease_id", Ref("leases")).create_only().filter().doc("The lease the payment pays, if any."),
            f("description", Str { max: 500 }).create_only(),
            f("scenario", Enum(&["succeeded", "failed", "reversed"])).create_only().filter().env(EnvRule::SandboxRequired)
                .doc("The outcome the test payment simulates: `succeeded` settles it, `failed` declines it, `reversed` settles it and then reverses it."),
            status(&["pending", "succeeded", "failed", "reversed"], "pending"),
            f("failure_code", Str { max: 100 }).read_only().doc("Why the payment failed, as a code (e.g. `card_declined`)."),
            f("failure_message", Str { max: 500 }).read_only().doc("Why the payment failed, in words."),
            f("succeeded_at", DateTime).read_only(),
            f("reversed_at", DateTime).read_only(),
            external_id(),
        ],
        property: P::Via(&["invoice_id", "lease_id"]), writes: Writes::NoDelete, metadata: true, rules: &[], indexes: &[], secret: None,
    },
    Collection {
        name: "refunds", object: "refund", table: "refunds",
        doc: "Money returned against a payment.",
        fields: &[
            f("payment_id", Ref("payments")).required().create_only().filter(),
            derived_property(),
            f("amount", Money).required().create_only().filter(),
            currency().create_only(),
            f("reason", Str { max: 500 }),
            status(&["pending", "succeeded", "failed"], "pending"),
            f("succeeded_at", DateTime).read_only(),
            external_id(),
        ],
        property: P::Via(&["payment_id"]), writes: Writes::NoDelete, metadata: true, rules: &[], indexes: &[], secret: None,
    },
    Collection {
        name: "accounting-entries", object: "accounting_entry", table: "accounting_entries",
        doc: "An immutable, balanced double-entry journal entry. Corrections are reversing entries.",
        fields: &[
            f("lines", Json(JsonShape::LedgerLines)).required().create_only()
                .doc("Debit and credit lines; debits equal credits."),
            currency(),
            f("posted_on", Date).required().sort(),
            f("memo", Str { max: 500 }),
            f("source_type", Str { max: 64 }).create_only().filter().doc("The kind of record that caused the entry."),
            f("source_id", Uuid).create_only().filter(),
            f("property_id", Ref("properties")).create_only().filter(),
            f("reverses_id", Ref("accounting-entries")).create_only().filter(),
            external_id(),
        ],
        property: P::Direct, writes: Writes::CreateOnly, metadata: false,
        rules: &[Rule::Balanced("lines")], indexes: &[], secret: None,
    },
    Collection {
        name: "workorders", object: "workorder", table: "workorders",
        doc: "A maintenance job.",
        fields: &[
            property_ref(),
            f("unit_id", Ref("units")).filter(),
            f("title", Str { max: 200 }).required().filter(),
            f("description", Text),
            f("category", Enum(&["plumbing", "electrical", "hvac", "appliance", "structural", "pest", "cleaning", "other"])).default(D::Str("other")).sort(),
            f("priority", Enum(&["low", "normal", "high", "emergency"])).default(D::Str("normal")).sort(),
            f("sla_due_at", DateTime).filter(),
            f("vendor_id", Ref("vendors")).filter(),
            f("lease_id", Ref("leases")).create_only().filter().doc("The lease whose resident asked for the work (a tenant-portal request)."),
            status(&["open", "assigned", "in_progress", "on_hold", "completed", "cancelled"], "open"),
            f("completed_at", DateTime).read_only(),
            external_id(),
        ],
        property: P::Direct, writes: Writes::Full, metadata: true,
        rules: &[Rule::SameProperty("unit_id"), Rule::SameProperty("lease_id")], indexes: &[], secret: None,
    },
    Collection {
        name: "inspections", object: "inspection", table: "inspections",
        doc: "A move-in, move-out or routine inspection of a unit.",
        fields: &[
            f("unit_id", Ref("units")).required().create_only().filter(),
            derived_property(),
            f("kind", Enum(&["move_in", "move_out", "routine"])).required().sort(),
            f("scheduled_for", DateTime).filter(),
            f("items", Json(JsonShape::InspectionItems)),
            status(&["scheduled", "completed"], "scheduled"),
            f("completed_at", DateTime).read_only(),
            external_id(),
        ],
        property: P::Via(&["unit_id"]), writes: Writes::Full, metadata: true, rules: &[], indexes: &[], secret: None,
    },
    Collection {
        name: "assets", object: "asset", table: "assets",
        doc: "Equipment of a property or unit: appliances, systems.",
        fields: &[
            property_ref(),
            f("unit_id", Ref("units")).filter(),
            name(),
            f("kind", Enum(&["appliance", "system", "fixture", "vehicle", "other"])).default(D::Str("other")).sort(),
            f("manufacturer", Str { max: 100 }),
            f("model", Str { max: 100 }),
            f("serial_number", Str { max: 100 }).filter(),
            f("installed_on", Date),
            f("warranty_expires_on", Date).filter(),
            external_id(),
        ],
        property: P::Direct, writes: Writes::Full, metadata: true,
        rules: &[Rule::SameProperty("unit_id")], indexes: &[], secret: None,
    },
    Collection {
        name: "vendors", object: "vendor", table: "vendors",
        doc: "A contractor or supplier.",
        fields: &[
            name(),
            f("trade", Str { max: 100 }).filter(),
            email(),
            phone(),
            f("status", Enum(&["active", "inactive"])).default(D::Str("active")).sort(),
            external_id(),
        ],
        property: P::None, writes: Writes::Full, metadata: true, rules: &[], indexes: &[], secret: None,
    },
    Collection {
        name: "purchase-orders", object: "purchase_order", table: "purchase_orders",
        doc: "An order to a vendor, usually for a work order.",
        fields: &[
            f("vendor_id", Ref("vendors")).required().filter(),
            f("workorder_id", Ref("workorders")).create_only().filter(),
            derived_property(),
            f("lines", Json(JsonShape::OrderLines)).required(),
            currency(),
            status(&["draft", "approved", "sent", "received", "closed"], "draft"),
            external_id(),
        ],
        property: P::Via(&["workorder_id"]), writes: Writes::Full, metadata: true, rules: &[], indexes: &[], secret: None,
    },
    Collection {
        name: "documents", object: "document", table: "documents",
        doc: "A file kept for a record: a lease PDF, an insurance certificate.",
        fields: &[
            f("title", Str { max: 200 }).required().sort(),
            f("kind", Enum(&["lease", "identity", "insurance", "certificate", "inspection_report", "invoice", "other"])).required().sort(),
            f("url", Url),
            f("related_type", Str { max: 64 }).filter().doc("The collection of the record this document belongs to."),
            f("related_id", Uuid).filter(),
            f("property_id", Ref("properties")).create_only().filter(),
            f("expires_at", DateTime).filter(),
            external_id(),
        ],
        property: P::Direct, writes: Writes::Full, metadata: true, rules: &[], indexes: &[], secret: None,
    },
    Collection {
        name: "tasks", object: "task", table: "tasks",
        doc: "A to-do for staff.",
        fields: &[
            f("title", Str { max: 200 }).required().filter(),
            f("description", Text),
            f("assignee_id", Ref("users")).filter(),
            f("property_id", Ref("properties")).create_only().filter(),
            f("due_at", DateTime).filter(),
            status(&["open", "in_progress", "done", "cancelled"], "open"),
            external_id(),
        ],
        property: P::Direct, writes: Writes::Full, metadata: true, rules: &[], indexes: &[], secret: None,
    },
    Collection {
        name: "messages", object: "message", table: "messages",
        doc: "A message in a thread between staff and residents, guests or applicants.",
        fields: &[
            f("thread_id", Uuid).filter().doc("Groups the messages of one conversation."),
            f("channel", Enum(&["email", "sms", "portal", "internal"])).default(D::Str("portal")).sort(),
            f("direction", Enum(&["inbound", "outbound"])).required().sort(),
            f("sender_name", Str { max: 200 }),
            f("recipient", Str { max: 320 }),
            f("subject", Str { max: 300 }).filter(),
            f("body", Text).required(),
            f("property_id", Ref("properties")).create_only().filter(),
            external_id(),
        ],
        property: P::Direct, writes: Writes::Full, metadata: true, rules: &[], indexes: &[], secret: None,
    },
    Collection {
        name: "events", object: "event", table: "events",
        doc: "Something that happened, kept 30 days. Written by Gable only.",
        fields: &[
            f("type", Str { max: 64 }).required().sort(),
            f("api_version", Str { max: 10 }).required(),
            f("data", Json(JsonShape::Object)).required(),
            f("related_object_id", Uuid).filter(),
            f("property_id", Ref("properties")).filter(),
            f("request_id", Uuid).filter()
                .doc("The request that caused the event (its `Request-Id`; an API call's is in the request log, `GET /v1/request-logs/{id}`); \
                      null for what the scheduler caused on its own (`rent.due`, `lease.expiring`, `document.expiring` as time passes)."),
        ],
        property: P::Direct, writes: Writes::None, metadata: false, rules: &[], indexes: &[], secret: None,
    },
    Collection {
        name: "reports", object: "report", table: "reports",
        doc: "A requested report run.",
        fields: &[
            f("kind", Enum(&["rent_roll", "occupancy", "delinquency", "ledger"])).required().create_only().sort()
                .doc("What the report shows. Requesting or reading one needs the reads of what it aggregates: `rent_roll` units, \
                      leases, charges, invoices and payments; `occupancy` units, tenancies and bookings; `delinquency` invoices; \
                      `ledger` accounting entries (`403 insufficient_scope` otherwise; lists leave those kinds out)."),
            f("parameters", Json(JsonShape::ReportParameters)).create_only(),
            status(&["queued", "completed", "failed"], "queued"),
            f("result", Json(JsonShape::Object)).read_only(),
            f("completed_at", DateTime).read_only(),
        ],
        property: P::None, writes: Writes::NoDelete, metadata: true, rules: &[], indexes: &[], secret: None,
    },
    Collection {
        name: "webhooks", object: "webhook", table: "webhooks",
        doc: "A webhook subscription: where Gable POSTs the events it takes, signed with its secret.",
        fields: &[
            f("url", Url).required().env(EnvRule::HttpsInLive)
                .doc("Where deliveries are POSTed. Checked against private and reserved addresses when set and before every attempt."),
            f("events", StrList { max_items: 50 }).required().doc("Event types, or `[\"*\"]` for all."),
            f("description", Str { max: 500 }),
            f("status", Enum(&["enabled", "disabled"])).default(D::Str("enabled")).sort()
                .doc("`disabled` stops deliveries; Gable disables a subscription itself on a `410 Gone` or after 5 days of failures only."),
            f("disabled_reason", Str { max: 500 }).read_only().doc("Why Gable disabled the subscription, when it did."),
            f("failing_since", DateTime).read_only().doc("Since when every delivery has failed (null while deliveries succeed)."),
        ],
        property: P::None, writes: Writes::Full, metadata: true, rules: &[], indexes: &[],
        secret: Some(Secret {
            field: "secret", column: "secret_sealed", stored: SecretStore::Sealed,
            doc: "The signing secret (`whsec_…`); returned by this response and by `rotate_secret` only. Gable keeps it sealed under the master key.",
        }),
    },
    Collection {
        name: "webhook-deliveries", object: "webhook_delivery", table: "webhook_deliveries",
        doc: "The delivery register: one record per attempt to deliver an event. Written by Gable only; kept 30 days.",
        fields: &[
            f("webhook_id", Ref("webhooks")).required().filter(),
            f("event_id", Ref("events")).filter().doc("The event delivered (null for a test send)."),
            f("event_type", Str { max: 100 }).required().filter(),
            f("event_created_at", DateTime).required().filter().doc("When the event happened: receivers order by it (delivery order is not promised)."),
            f("url", Url).required(),
            f("attempt", Int { min: 1, max: 100 }).required().doc("1 for the first attempt; retries, replays and recoveries count on."),
            f("trigger", Enum(&["event", "retry", "replay", "recovery", "test"])).required().filter(),
            f("status", Enum(&["pending", "succeeded", "retrying", "failed"])).required().sort()
                .doc("`pending`: to be made; `retrying`: failed, another attempt follows; `failed`: the last attempt failed."),
            f("request_headers", Json(JsonShape::Object)).doc("The headers sent, signature included."),
            f("response_status", Int { min: 0, max: 999 }).filter(),
            f("response_headers", Json(JsonShape::Object)),
            f("response_excerpt", Text)
                .doc("The first 4 KB of the response body; `null` for a reader who cannot read the collection of the event's \
                      record, since a receiver may echo what it was sent."),
            f("latency_ms", Int { min: 0, max: i64::MAX }),
            f("error", Text).doc("Why the attempt failed without a response: timeout, connection refused, address refused."),
            f("next_attempt_at", DateTime).filter().doc("When this attempt is due (pending), or when the retry after it is (retrying)."),
        ],
        property: P::None, writes: Writes::None, metadata: false, rules: &[], indexes: &[], secret: None,
    },
    Collection {
        name: "flow-tokens", object: "flow_token", table: "flow_tokens",
        doc: "A short-lived token for an embeddable flow, bound to one origin and subject.",
        fields: &[
            f("flow", Enum(&["rental-application", "booking", "payment", "tenant-portal"])).required().create_only().sort(),
            f("origin", Origin).required().create_only().env(EnvRule::HttpsInLive).doc("The only origin allowed to frame the flow."),
            f("listing_id", Ref("listings")).create_only().filter(),
            f("unit_id", Ref("units")).create_only().filter(),
            f("invoice_id", Ref("invoices")).create_only().filter(),
            f("lease_id", Ref("leases")).create_only().filter(),
            derived_property(),
            f("expires_at", DateTime).read_only(),
            f("completed_at", DateTime).read_only().doc("When the flow reached its goal (a rental application or booking completes once)."),
            f("result_object", Str { max: 50 }).read_only().doc("The kind of record the flow made: `application` or `booking`."),
            f("result_id", Uuid).read_only().doc("The record the flow made."),
            status(&["active", "revoked"], "active")
                .doc("`active`, or `revoked` by the `revoke` action: the flow API refuses a revoked token (`401`) from its next request on."),
            f("revoked_at", DateTime).read_only().doc("When the token was revoked."),
        ],
        // Its fields never change (PATCH and DELETE are refused); `revoke` is its one action.
        property: P::Via(&["unit_id", "listing_id", "lease_id", "invoice_id"]), writes: Writes::CreateOnly,
        metadata: false, rules: &[], indexes: &[],
        secret: Some(Secret {
            field: "token", column: "token_hash", stored: SecretStore::Hashed,
            doc: "The token (`gft_…`) to give the embedding page; returned by this response only. Gable keeps its hash.",
        }),
    },
    Collection {
        name: "request-logs", object: "request_log", table: "request_logs",
        doc: "One call of the API (`/v1`) in this environment, as Gable received and answered it: the request log. Its `id` is the \
              request's `Request-Id`. Written by Gable only, off the request path; kept 7 days (a setting). Secrets (API keys, \
              tokens, codes, client and webhook secrets, passwords) are redacted before it is written. A property-limited \
              credential cannot hold `request-logs:read`.",
        fields: &[
            f("method", Enum(&["GET", "HEAD", "POST", "PATCH", "PUT", "DELETE", "OPTIONS", "OTHER"])).required().filter(),
            f("path", Str { max: 2048 }).required().filter().doc("The path as sent, e.g. `/v1/leases/0190…`."),
            f("route", Str { max: 200 }).filter().doc("The route's template, e.g. `/v1/{resource}/{id}` (null when no route matched)."),
            f("query", Str { max: 8192 }).doc("The query string as sent, without its `?`; secrets redacted. Null without one."),
            f("status", Int { min: 100, max: 599 }).required().sort().doc("The response's status."),
            f("status_class", Enum(&["1xx", "2xx", "3xx", "4xx", "5xx"])).required().filter().doc("The status's class: `filter[status_class]=4xx`."),
            f("error_code", Str { max: 64 }).filter().doc("The `error.code` of an error answer, e.g. `validation_failed`; null for a success."),
            f("duration_ms", Num { min: 0.0, max: 1.0e9 }).required().doc("From the credential's check to the response's head, in milliseconds."),
            f("credential_type", Enum(&["api_key", "oauth", "flow_token"])).required().filter(),
            f("credential_id", Uuid).required().filter()
                .doc("The API key's id, the OAuth authorization's (one per app and user) or the flow token's."),
            f("key_prefix", Str { max: 20 }).doc("An API key's first characters, as the console lists keys (`gbl_test_AbCd`)."),
            f("oauth_client_id", Uuid).doc("The OAuth app's id, for an OAuth access token."),
            f("user_id", Uuid).doc("The user an OAuth app acts for."),
            f("idempotency_key", Str { max: 200 }).filter().doc("The request's `Idempotency-Key`, if it sent one."),
            f("idempotent_replayed", Bool).default(D::Bool(false)).filter()
                .doc("Whether the answer was the stored answer of an earlier request with the same key (`Idempotent-Replayed: true`)."),
            f("api_version", Str { max: 10 }).doc("The API version the request was served at (`Gable-Version`)."),
            f("client_ip", Str { max: 64 }).filter().doc("The client's address (behind trusted proxies, the forwarded one)."),
            f("user_agent", Str { max: 500 }),
            f("request_headers", Json(JsonShape::Object))
                .doc("The request's headers by lower-case name; `authorization`, `cookie` and secrets in any other are redacted."),
            f("request_body", Str { max: 65_536 }).doc("The body as sent (the first 64 KiB), secrets redacted; null without one."),
            f("request_body_truncated", Bool).default(D::Bool(false)).doc("Whether `request_body` was cut at 64 KiB."),
            f("response_body", Str { max: 65_536 }).doc("The answer's body (the first 64 KiB), secrets redacted."),
            f("response_body_truncated", Bool).default(D::Bool(false)).doc("Whether `response_body` was cut at 64 KiB."),
            f("event_ids", RefList("events")).doc("The events the request caused (at most 100), in the order they happened."),
        ],
        // Tenant-wide: the traffic of every property; `scopes::TENANT_WIDE_ONLY` keeps property-limited credentials off it.
        property: P::None, writes: Writes::None, metadata: false, rules: &[], indexes: &[], secret: None,
    },
    Collection {
        name: "imports", object: "import", table: "imports",
        doc: "A file of records brought in at once (CSV or NDJSON; `POST /v1/imports` with the file as the body): checked row by \
              row when it is uploaded, which writes no record (a dry run), then written by the `commit` action in batches. \
              Rows are matched to records by `external_id`, so importing a file again creates nothing new. Kept 30 days.",
        fields: &[
            f("collection", Str { max: 64 }).create_only().filter()
                .doc("The collection the file's rows are for (the `collection` query parameter); null for a bundle whose lines name theirs."),
            f("format", Enum(&["csv", "ndjson"])).read_only().filter().doc("The file's form, from its `Content-Type`."),
            f("file_name", Str { max: 255 }).create_only().doc("The file's name as the uploader gave it (the `file_name` query parameter)."),
            status(&["validating", "validated", "importing", "completed", "failed", "cancelled"], "validating")
                .doc("`validating` while the file is read and checked; `validated` once every row is checked (see `invalid_rows`); \
                      `importing` from `commit` until its last batch; `completed`, `failed` (see `failure`) or `cancelled` at its end."),
            f("collections", StrList { max_items: 64 }).read_only().doc("The collections the file's rows are for."),
            f("total_rows", Int { min: 0, max: i64::MAX }).read_only().default(D::Int(0)).doc("Rows in the file."),
            f("valid_rows", Int { min: 0, max: i64::MAX }).read_only().default(D::Int(0)).doc("Rows without errors."),
            f("invalid_rows", Int { min: 0, max: i64::MAX }).read_only().default(D::Int(0))
                .doc("Rows with errors (`GET /v1/imports/{id}/errors` lists them); a commit skips them only if asked to (`skip_invalid`)."),
            f("processed_rows", Int { min: 0, max: i64::MAX }).read_only().default(D::Int(0)).doc("Rows the commit has written or skipped so far: its progress."),
            f("next_line", Int { min: 0, max: i64::MAX }).read_only().default(D::Int(0))
                .doc("The first line the commit has not written yet: where it goes on after an interruption (every batch before it is in)."),
            f("created", Int { min: 0, max: i64::MAX }).read_only().default(D::Int(0)).doc("Records the commit created."),
            f("updated", Int { min: 0, max: i64::MAX }).read_only().default(D::Int(0)).doc("Records the commit changed (a row whose `external_id` a record had, with different values)."),
            f("unchanged", Int { min: 0, max: i64::MAX }).read_only().default(D::Int(0)).doc("Rows whose record was already as the row says."),
            f("skipped", Int { min: 0, max: i64::MAX }).read_only().default(D::Int(0)).doc("Rows with errors that the commit left out (`skip_invalid`)."),
            f("skip_invalid", Bool).read_only().default(D::Bool(false)).doc("Set by `commit`: whether rows with errors are left out (otherwise a commit needs every row valid)."),
            f("failure", Json(JsonShape::Object)).read_only()
                .doc("Why a `failed` import stopped: `{line, field, code, message}` of the row a batch could not write (earlier batches are in)."),
            f("committed_at", DateTime).read_only().doc("When `commit` was asked for."),
            f("completed_at", DateTime).read_only().doc("When the import ended (completed, failed or cancelled)."),
            f("expires_at", DateTime).read_only().doc("When Gable deletes the import and its rows (the records it wrote stay)."),
        ],
        // Made by an upload (`http::api::imports`), changed by its actions and the import worker only.
        property: P::None, writes: Writes::CreateOnly, metadata: false, rules: &[], indexes: &[], secret: None,
    },
];

/// Looks a collection up by its path segment.
pub fn collection(name: &str) -> Option<&'static Collection> {
    COLLECTIONS.iter().find(|c| c.name == name)
}

/// A collection Gable's own code names (not a request's path): one that is missing is
/// Gable's bug, answered as an internal error rather than a panic.
pub fn named(name: &str) -> crate::error::Result<&'static Collection> {
    collection(name).ok_or_else(|| crate::error::Error::internal(anyhow::anyhow!("{name} is not a collection")))
}
