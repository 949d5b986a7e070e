//! Tenancies: starting one fills its move-in date, moving out its move-out date, when
//! they are still empty (also when a lease's activation starts it).

use async_trait::async_trait;
use serde_json::{Map, Value as Json};

use super::Behaviour;
use crate::domain::record::Record;
use crate::domain::registry::Collection;
use crate::domain::validate::Changes;
use crate::domain::value::Val;
use crate::domain::workflow::Action;
use crate::error::Result;
use crate::ops::Work;

pub(super) struct Tenancies;

#[async_trait]
impl Behaviour for Tenancies {
    async fn prepare(
        &self,
        w: &mut Work,
        _c: &'static Collection,
        a: &Action,
        current: &Record,
        _body: &Map<String, Json>,
        ch: &mut Changes,
    ) -> Result<()> {
        let fill = match a.name {
            "start" => "move_in_date",
            "move_out" => "move_out_date",
            _ => return Ok(()),
        };
        if current.get(fill).is_null() {
            ch.values.insert(fill, Val::Date(w.now.date_naive()));
        }
        Ok(())
    }
}
