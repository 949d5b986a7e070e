//! Bookings: checking in checks the guest in, checking out checks them out, when the
//! guest's own state allows it (a guest checked in by another booking stays so).

use async_trait::async_trait;

use super::{col, related, step, Behaviour};
use crate::domain::record::Record;
use crate::domain::registry::Collection;
use crate::domain::workflow::{machine, Action};
use crate::error::Result;
use crate::ops::Work;

pub(super) struct Bookings;

#[async_trait]
impl Behaviour for Bookings {
    async fn follow(&self, w: &mut Work, _c: &'static Collection, a: &Action, _before: &Record, after: &Record) -> Result<()> {
        if matches!(a.name, "check_in" | "check_out") {
            move_guest(w, after, a.name).await?;
        }
        Ok(())
    }
}

async fn move_guest(w: &mut Work, booking: &Record, action: &str) -> Result<()> {
    let Some(guest_id) = booking.get("guest_id").as_uuid() else { return Ok(()) };
    let guests = col("guests");
    let guest = related(w, guests, guest_id).await?;
    if machine("guests").is_some_and(|m| m.allowed(guest.status()).contains(&action)) {
        step(w, guests, action, guest.id, booking.get("property_id").as_uuid()).await?;
    }
    Ok(())
}
