//! The shaped-SQL cache: a statement whose SQL depends only on its [`Shape`] is built once
//! per shape and dialect, and kept.

use sea_query::QueryStatementWriter;

use super::rows::Row;
use super::work::{Built, Tx};
use super::Dialect;
use crate::error::{Error, Result};

/// What makes two statements the same SQL: which statement, of which table, in which
/// variant (how many values a list in it has, say).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Shape {
    pub statement: &'static str,
    pub table: &'static str,
    pub variant: usize,
}

/// The SQL of each shape run so far ([`Tx::fetch_optional_shaped`]); shapes are few (a
/// statement per table and variant), so it is never pruned.
fn shapes() -> &'static std::sync::RwLock<ShapedSql> {
    static SHAPES: std::sync::LazyLock<std::sync::RwLock<ShapedSql>> = std::sync::LazyLock::new(Default::default);
    &SHAPES
}

type ShapedSql = std::collections::HashMap<(Shape, Dialect), std::sync::Arc<str>>;

impl Tx {
    /// [`Tx::fetch_optional`] of a statement whose SQL depends only on its `shape`: built
    /// by `build` the first time the shape is run in this dialect and kept (building SQL
    /// was a tenth of a single-record read's time); each run binds `values`, which must
    /// be the values `build` binds, in its order (checked when the shape is first built).
    pub async fn fetch_optional_shaped<S: QueryStatementWriter>(
        &mut self,
        shape: Shape,
        values: Vec<sea_query::Value>,
        build: impl FnOnce() -> S,
    ) -> Result<Option<Row>> {
        let d = self.dialect();
        let sql = match shapes().read().ok().and_then(|m| m.get(&(shape, d)).cloned()) {
            Some(sql) => sql,
            None => {
                let b = self.build(&build());
                if b.values.0 != values {
                    return Err(Error::internal(anyhow::anyhow!("the statement {shape:?} binds its values in another order")));
                }
                if let Ok(mut m) = shapes().write() {
                    m.insert((shape, d), b.sql.clone());
                }
                b.sql
            }
        };
        Ok(self.rows(Built { sql, values: sea_query::Values(values) }, true).await?.into_iter().next())
    }
}
