//! `gable import`: bringing a portfolio in from files (`docs/cli.md`, "gable import").
//! `gable import FILE --collection units` uploads a file (the API checks every row and
//! writes nothing), writes the rows with errors to a CSV report, and, unless told
//! `--dry-run` or there are errors it may not skip, commits the import and follows it to
//! its end with a progress bar. `gable import template COLLECTION` prints a collection's
//! CSV template, from the registry this binary was built with.

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::Context;
use clap::{Args, Subcommand};
use futures_util::StreamExt;
use indicatif::{ProgressBar, ProgressStyle};
use serde_json::{json, Value};

use super::profiles::{self, Profiles};
use super::{say, Client, Format, Target};
use crate::domain::collections::{collection, COLLECTIONS};
use crate::domain::import::{importable, template};

#[derive(Args)]
#[command(args_conflicts_with_subcommands = true, subcommand_negates_reqs = true)]
pub struct ImportArgs {
    #[command(subcommand)]
    command: Option<ImportCommand>,
    #[command(flatten)]
    file: FileArgs,
}

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

#[derive(Args)]
pub struct FileArgs {
    #[command(flatten)]
    target: Target,
    /// The file: CSV (`.csv`, with a header row) or NDJSON (`.ndjson`, `.jsonl`: one create
    /// body per line).
    #[arg(value_name = "FILE", required = true)]
    file: Option<PathBuf>,
    /// The collection of the file's rows, e.g. `units` (a CSV file needs it; an NDJSON file
    /// without it is a bundle whose lines name theirs).
    #[arg(long)]
    collection: Option<String>,
    /// Check the file and report its errors; write nothing.
    #[arg(long)]
    dry_run: bool,
    /// Write the valid rows and leave out those with errors (otherwise a file with errors
    /// is not written).
    #[arg(long)]
    skip_invalid: bool,
    /// Where the error report goes (CSV: line, collection, external_id, field, code,
    /// message). [default: FILE's name with `.errors.csv`]
    #[arg(long, value_name = "PATH")]
    errors: Option<PathBuf>,
    /// `text`: progress and a summary for people; `json`: the import as the API shows it at
    /// its end, on standard output.
    #[arg(long, value_enum, default_value = "text")]
    format: Format,
}

pub async fn run(args: ImportArgs) -> anyhow::Result<()> {
    match args.command {
        Some(command) => run_template(command).await,
        None => import_file(args.file).await,
    }
}

async fn run_template(command: ImportCommand) -> anyhow::Result<()> {
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

/// How often the commit's progress is read.
const LOOK_EVERY: Duration = Duration::from_millis(250);

async fn import_file(args: FileArgs) -> anyhow::Result<()> {
    let path = args.file.clone().context("name the file to import")?;
    let content_type = content_type_of(&path)?;
    if let Some(name) = &args.collection {
        collection(name).filter(|c| importable(c)).ok_or_else(|| {
            let names: Vec<&str> = COLLECTIONS.iter().filter(|c| importable(c)).map(|c| c.name).collect();
            anyhow::anyhow!("`{name}` cannot be imported; these can: {}", names.join(", "))
        })?;
    } else if content_type == "text/csv" {
        anyhow::bail!("a CSV file holds rows of one collection: name it, e.g. `--collection units`");
    }
    let file = tokio::fs::File::open(&path).await.with_context(|| format!("cannot open {}", path.display()))?;
    let size = file.metadata().await.map(|m| m.len()).unwrap_or(0);
    let client = Client::new(profiles::resolve(&args.target, &Profiles::load()?)?)?;
    let file_name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    say(&format!("Importing {} ({}) into {}.", path.display(), bytes(size), client.target.describe()));

    // The server checks each row as it reads it: the upload's progress is the check's.
    let bar = progress(args.format, size, "checking  [{bar:40}] {bytes}/{total_bytes} ({bytes_per_sec}, eta {eta})")?;
    let counted = bar.clone();
    let stream = tokio_util::io::ReaderStream::new(file).inspect(move |chunk| {
        if let Ok(c) = chunk {
            counted.inc(c.len() as u64);
        }
    });
    let mut query = url::form_urlencoded::Serializer::new(String::new());
    if let Some(c) = &args.collection {
        query.append_pair("collection", c);
    }
    query.append_pair("file_name", &file_name);
    let uploaded = client.upload(&format!("/imports?{}", query.finish()), content_type, reqwest::Body::wrap_stream(stream)).await;
    bar.finish_and_clear();
    let import = uploaded.context("uploading the file")?["data"].clone();
    let id = import["id"].as_str().context("the answer has no import id")?.to_string();
    let (total, invalid) = (count(&import, "total_rows"), count(&import, "invalid_rows"));
    say(&format!("Checked {total} rows: {} valid, {invalid} with errors (import {id}).", total - invalid));
    let report = args.errors.clone().unwrap_or_else(|| report_path(&path));
    if invalid > 0 {
        let written = write_report(&client, &id, &report).await?;
        say(&format!("Wrote {written} errors to {}.", report.display()));
    }
    if args.dry_run {
        say("Nothing was written (--dry-run). Import the file again without it to write it.");
        return finish(args.format, &import);
    }
    if invalid > 0 && !args.skip_invalid {
        finish(args.format, &import)?;
        anyhow::bail!(
            "{invalid} rows have errors (see {}): nothing was written. Fix them and import the file again, or add --skip-invalid to \
             write the other rows",
            report.display()
        );
    }
    let committed = client.post(&format!("/imports/{id}/commit"), &json!({ "skip_invalid": args.skip_invalid })).await;
    committed.context("committing the import")?;
    let bar = progress(args.format, total, "writing   [{bar:40}] {pos}/{len} rows ({per_sec}, eta {eta})")?;
    let done = loop {
        let now = client.get(&format!("/imports/{id}")).await.context("reading the import's progress")?["data"].clone();
        bar.set_position(count(&now, "processed_rows"));
        if now["status"] != "importing" {
            break now;
        }
        tokio::time::sleep(LOOK_EVERY).await;
    };
    bar.finish_and_clear();
    match done["status"].as_str() {
        Some("completed") => {
            say(&format!(
                "Imported: {} created, {} updated, {} unchanged, {} skipped (import {id}).",
                count(&done, "created"),
                count(&done, "updated"),
                count(&done, "unchanged"),
                count(&done, "skipped")
            ));
            finish(args.format, &done)
        }
        status => {
            let written = write_report(&client, &id, &report).await?;
            finish(args.format, &done)?;
            let why = &done["failure"];
            anyhow::bail!(
                "the import ended {}{}; the batches before it are written ({} rows). {written} errors are in {}",
                status.unwrap_or("unknown"),
                why["message"].as_str().map(|m| format!(" at line {}: {m}", why["line"])).unwrap_or_default(),
                count(&done, "processed_rows"),
                report.display()
            )
        }
    }
}

/// The content type of a file, by its name.
fn content_type_of(path: &Path) -> anyhow::Result<&'static str> {
    match path.extension().and_then(|e| e.to_str()).map(str::to_ascii_lowercase).as_deref() {
        Some("csv") => Ok("text/csv"),
        Some("ndjson" | "jsonl") => Ok("application/x-ndjson"),
        _ => anyhow::bail!("{}: name a CSV file `.csv` and an NDJSON file `.ndjson` or `.jsonl`", path.display()),
    }
}

/// `units.csv` → `units.errors.csv`, beside it.
fn report_path(path: &Path) -> PathBuf {
    let stem = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_else(|| "import".into());
    path.with_file_name(format!("{stem}.errors.csv"))
}

fn count(import: &Value, field: &str) -> u64 {
    import[field].as_u64().unwrap_or(0)
}

fn bytes(n: u64) -> String {
    indicatif::HumanBytes(n).to_string()
}

/// A progress bar on standard error, for people (`--format text` on a terminal).
fn progress(format: Format, len: u64, template: &str) -> anyhow::Result<ProgressBar> {
    if format == Format::Json {
        return Ok(ProgressBar::hidden());
    }
    let b = ProgressBar::new(len);
    b.set_style(ProgressStyle::with_template(&format!("{{spinner}} {template}"))?.progress_chars("=> "));
    Ok(b)
}

/// Writes every row error of the import to `path` as CSV; returns how many.
async fn write_report(client: &Client, id: &str, path: &Path) -> anyhow::Result<usize> {
    let mut out = csv::Writer::from_path(path).with_context(|| format!("cannot write the error report {}", path.display()))?;
    out.write_record(["line", "collection", "external_id", "field", "code", "message"])?;
    let (mut after, mut written) = (0u64, 0);
    loop {
        let page = client.get(&format!("/imports/{id}/errors?limit=1000&after_line={after}")).await.context("reading the errors")?;
        let rows = page["data"].as_array().cloned().unwrap_or_default();
        for e in &rows {
            let text = |k: &str| match &e[k] {
                Value::String(s) => s.clone(),
                Value::Null => String::new(),
                v => v.to_string(),
            };
            out.write_record([text("line"), text("collection"), text("external_id"), text("field"), text("code"), text("message")])?;
            written += 1;
            after = after.max(count(e, "line"));
        }
        if page["meta"]["has_more"] != true || rows.is_empty() {
            break;
        }
    }
    out.flush()?;
    Ok(written)
}

/// `--format json`: the import, on standard output.
fn finish(format: Format, import: &Value) -> anyhow::Result<()> {
    if format == Format::Json {
        crate::cli::print_out(&format!("{import}\n"))?;
    }
    Ok(())
}
