//! The instance's secrets (`instance_secrets`), shared through the database by every
//! process of a deployment.

use super::work::Intent;
use super::Store;
use crate::error::{Error, Result};

impl Store {
    /// The instance's secret of the given name, created on first use. Shared through the
    /// database, so every process of a deployment signs cursors alike.
    pub async fn instance_secret(&self, name: &str) -> Result<Vec<u8>> {
        let fresh = hex::encode(rand::random::<[u8; 32]>());
        self.in_system(Intent::Write, async |tx| {
            let table = sea_query::Alias::new("instance_secrets");
            let (name_col, value_col) = (sea_query::Alias::new("name"), sea_query::Alias::new("value"));
            tx.execute(
                sea_query::Query::insert()
                    .into_table(table.clone())
                    .columns([name_col.clone(), value_col.clone()])
                    .values_panic([name.into(), fresh.into()])
                    .on_conflict(sea_query::OnConflict::column(name_col.clone()).do_nothing().to_owned()),
            )
            .await?;
            let row = tx
                .fetch_optional(sea_query::Query::select().column(value_col).from(table).and_where(sea_query::Expr::col(name_col).eq(name)))
                .await?;
            let value = row
                .map(|r| r.opt_string("value"))
                .transpose()?
                .flatten()
                .ok_or_else(|| Error::internal(anyhow::anyhow!("instance secret {name} missing")))?;
            hex::decode(value).map_err(Error::internal)
        })
        .await
    }
}
