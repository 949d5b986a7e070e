//! The books.
//!
//! - `postings`: what each operation posts, the checks on payments, refunds, charges and
//!   manual entries, and a property test that random operations keep the books balanced.
//! - `rent`: recurring rent over a year of a lease, one scheduler round per day.

mod postings;
mod rent;
