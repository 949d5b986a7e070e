//! Tenancies: starting one fills its move-in date, moving out its move-out date, when
//! they are still empty (also when a lease's activation starts it).

use async_trait::async_trait;

use super::{Behaviour, Step};
use crate::domain::validate::Changes;
use crate::domain::value::Val;
use crate::error::Result;
use crate::ops::Work;

pub(super) struct Tenancies;

#[async_trait]
impl Behaviour for Tenancies {
    async fn prepare(&self, w: &mut Work, s: &Step<'_>, ch: &mut Changes) -> Result<()> {
        let fill = match s.a.name {
            "start" => "move_in_date",
            "move_out" => "move_out_date",
            _ => return Ok(()),
        };
        if s.current.get(fill).is_null() {
            ch.values.insert(fill, Val::Date(w.now.date_naive()));
        }
        Ok(())
    }
}
