//! `gable import`: bringing a portfolio in from files (`docs/cli.md`, "gable import").
//! `gable import template COLLECTION` prints a collection's CSV template, from the
//! registry this binary was built with: the header a file needs and an example row.

use clap::{Args, Subcommand};

use super::say;
use crate::domain::collections::{collection, COLLECTIONS};
use crate::domain::import::{importable, template};

#[derive(Subcommand)]
pub enum ImportCommand {
    /// Prints a collection's CSV template: its columns (the record's external_id first,
    /// then what is required) and an example row.
    Template(TemplateArgs),
}

#[derive(Args)]
pub struct TemplateArgs {
    /// The collection, e.g. `units` (`gable collections` lists them).
    collection: String,
    /// The header row only, without the example row.
    #[arg(long)]
    no_example: bool,
}

pub async fn run(command: ImportCommand) -> anyhow::Result<()> {
    let ImportCommand::Template(args) = command;
    let c = collection(&args.collection).filter(|c| importable(c)).ok_or_else(|| {
        let names: Vec<&str> = COLLECTIONS.iter().filter(|c| importable(c)).map(|c| c.name).collect();
        anyhow::anyhow!("`{}` cannot be imported; these can: {}", args.collection, names.join(", "))
    })?;
    let columns = template(c).ok_or_else(|| anyhow::anyhow!("{} has no template", c.name))?;
    let mut out = csv::Writer::from_writer(vec![]);
    out.write_record(columns.iter().map(|(header, _)| header.as_str()))?;
    if !args.no_example {
        out.write_record(columns.iter().map(|(_, example)| example.as_str()))?;
    }
    let text = String::from_utf8(out.into_inner()?)?;
    crate::cli::print_out(&text)?;
    say(&format!(
        "The columns of {} ({} of them). A reference is another record's external id (`*.external_id`); an empty cell leaves a field out.",
        c.name,
        columns.len()
    ));
    Ok(())
}
