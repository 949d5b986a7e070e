//! Bulk import: the imports list, the upload form (the collection, its columns and
//! template, the file, and with WebAssembly the file's columns mapped to fields before it
//! is sent), and an import's page (its counts, the rows with errors by line, commit with
//! progress, cancel).
//!
//! Everything reads and works before the WebAssembly loads: the upload is a plain
//! multipart form (its columns then matched by their names on the server), commit and
//! cancel are `ActionForm`s, and an import at work has a link to look again; with it,
//! the page follows the import by itself.

use leptos::prelude::*;
use leptos_router::components::A;
use leptos_router::hooks::{use_params_map, use_query_map};

use super::components::{err_text, field_error, me, Badge};
use super::records::encode;
use crate::api::*;
use crate::service::{ImportErrorLine, ImportSummary, ImportTarget, ImportView};

/// What the collection choice says for a file whose lines name their collections.
const BUNDLE: &str = "bundle";
/// How often a page with an import at work looks again (with WebAssembly).
#[cfg(feature = "hydrate")]
const FOLLOW_EVERY_MS: u64 = 1_000;

fn count(n: i64) -> String {
    let digits = n.abs().to_string();
    let mut out = String::new();
    for (i, ch) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(ch);
    }
    if n < 0 {
        format!("-{out}")
    } else {
        out
    }
}

fn rows(n: i64) -> String {
    format!("{} row{}", count(n), if n == 1 { "" } else { "s" })
}

/// `/console/imports`: the latest imports, and the way to a new one.
#[component]
pub fn ImportsPage() -> impl IntoView {
    let list = Resource::new(|| (), |_| list_imports());
    view! {
        <div class="page-head">
            <h1>"Imports"</h1>
            <A href="/console/imports/new" attr:class="button primary" attr:id="new-import">"Import a file"</A>
        </div>
        <p class="lede">
            "Bring records in from spreadsheets or another system's export. Each file is checked row by row first, "
            "and nothing is written until you import it; rows are matched by their external id, so importing a file again "
            "creates nothing twice."
        </p>
        <Transition fallback=|| view! { <p aria-busy="true">"Loading…"</p> }>
            {move || Suspend::new(async move {
                match list.await {
                    Ok(v) if v.imports.is_empty() => view! {
                        <div class="empty"><h2>"No imports yet"</h2><p>"Imports of the last 30 days are listed here."</p></div>
                    }.into_any(),
                    Ok(v) => view! { <ImportsTable imports=v.imports/> }.into_any(),
                    Err(e) => view! { <p class="form-error" role="alert" id="imports-error">{err_text(&e)}</p> }.into_any(),
                }
            })}
        </Transition>
    }
}

#[component]
fn ImportsTable(imports: Vec<ImportSummary>) -> impl IntoView {
    view! {
        <div class="table-wrap">
            <table class="records" id="imports">
                <thead><tr>
                    <th scope="col">"File"</th><th scope="col">"Records"</th><th scope="col">"Status"</th>
                    <th scope="col">"Rows"</th><th scope="col">"With errors"</th><th scope="col">"Uploaded"</th>
                </tr></thead>
                <tbody>
                    {imports.into_iter().map(|i| view! {
                        <tr>
                            <th scope="row"><A href=format!("/console/imports/{}", i.id)>{i.file_name.clone()}</A></th>
                            <td>{i.what.clone()}</td>
                            <td><Badge value=i.status.clone()/></td>
                            <td class="money">{count(i.total_rows)}</td>
                            <td class="money">{count(i.invalid_rows)}</td>
                            <td>{i.created_at.clone()}</td>
                        </tr>
                    }).collect_view()}
                </tbody>
            </table>
        </div>
    }
}

/// `/console/imports/new?collection=units`: choose what the file holds, see its columns
/// and template, choose the file (and map its columns), send it to be checked.
#[component]
pub fn NewImportPage() -> impl IntoView {
    let query = use_query_map();
    let chosen = move || query.read().get("collection").unwrap_or_default();
    let refused = move || query.read().get("refused").filter(|r| !r.is_empty());
    let targets = Resource::new(|| (), |_| list_imports());
    let target = Resource::new(chosen, |c| async move {
        match c.as_str() {
            "" | BUNDLE => None,
            name => Some(describe_import(name.to_string()).await),
        }
    });
    view! {
        <p><A href="/console/imports">"← Imports"</A></p>
        <h1>"Import a file"</h1>
        <p class="lede">
            "Upload a CSV file of one kind of record, or an NDJSON file whose lines name their own. Every row is checked as the "
            "API would check it; nothing is written until you look at the result and import it."
        </p>
        {move || refused().map(|why| view! {
            <p class="form-error" role="alert" id="upload-error">{format!("The file was not accepted: {why}")}</p>
        })}
        <Transition fallback=|| view! { <p aria-busy="true">"Loading…"</p> }>
            {move || Suspend::new(async move {
                let targets = match targets.await {
                    Ok(v) => v.targets,
                    Err(e) => return view! { <p class="form-error" role="alert" id="imports-error">{err_text(&e)}</p> }.into_any(),
                };
                if targets.is_empty() {
                    return view! {
                        <p class="notice" id="cannot-import">"Your role cannot import records (it needs the permission `imports:write` and the write of the records' collection)."</p>
                    }.into_any();
                }
                let current = chosen();
                view! {
                    <form method="get" action="/console/imports/new" class="card form" id="choose-collection">
                        <h2>"1. What the file holds"</h2>
                        <label for="import-collection">"Records"</label>
                        <div class="inline">
                            <select id="import-collection" name="collection">
                                <option value="" selected=current.is_empty()>"Choose…"</option>
                                {targets.into_iter().map(|t| {
                                    let selected = t.name == current;
                                    view! { <option value=t.name.clone() selected=selected>{t.label.clone()}</option> }
                                }).collect_view()}
                                <option value=BUNDLE selected=current == BUNDLE>"Several kinds (an NDJSON bundle)"</option>
                            </select>
                            <button type="submit">"Continue"</button>
                        </div>
                    </form>
                }.into_any()
            })}
        </Transition>
        <Transition fallback=|| ()>
            {move || Suspend::new(async move {
                match (chosen().as_str(), target.await) {
                    (BUNDLE, _) => view! { <UploadForm target=None/> }.into_any(),
                    (_, Some(Ok(t))) => view! { <Columns target=t.clone()/><UploadForm target=Some(t)/> }.into_any(),
                    (_, Some(Err(e))) => view! { <p class="form-error" role="alert" id="target-error">{err_text(&e)}</p> }.into_any(),
                    (_, None) => ().into_any(),
                }
            })}
        </Transition>
    }
}

/// The columns a file of the target can have, and its template.
#[component]
fn Columns(target: ImportTarget) -> impl IntoView {
    let file = format!("{}-template.csv", target.name);
    let href = format!("data:text/csv;charset=utf-8,{}", encode(&target.template));
    view! {
        <section class="card" aria-labelledby="columns-title" id="import-columns">
            <h2 id="columns-title">{format!("2. The columns of a file of {}", target.label.to_lowercase())}</h2>
            <p>
                "A CSV file has a header row naming its columns. Columns named as below are taken as they are; others are "
                "matched by their names when you choose the file, and you can change what each one fills. A reference to "
                "another record names it by its external id (its id in your old system), in this file or imported before."
            </p>
            <p><a href=href download=file id="template-download" class="button">"Download the template (CSV)"</a></p>
            <details>
                <summary>{format!("All {} columns", target.columns.len())}</summary>
                <div class="table-wrap">
                    <table class="records compact" id="column-list">
                        <thead><tr><th scope="col">"Column"</th><th scope="col">"Fills"</th><th scope="col">"Required"</th></tr></thead>
                        <tbody>
                            {target.columns.iter().map(|c| view! {
                                <tr><td><code>{c.name.clone()}</code></td><td>{c.label.clone()}</td><td>{if c.required { "Yes" } else { "" }}</td></tr>
                            }).collect_view()}
                        </tbody>
                    </table>
                </div>
            </details>
        </section>
    }
}

/// The upload form: a plain multipart post (`IMPORT_UPLOAD`), the file last so the
/// server reads the other fields first. With WebAssembly, choosing a CSV file reads its
/// header here and offers, for each column, what it fills (matched by the server).
#[component]
fn UploadForm(target: Option<ImportTarget>) -> impl IntoView {
    let csrf = me().csrf;
    let collection = target.as_ref().map(|t| t.name.clone()).unwrap_or_default();
    let headers = RwSignal::new(Vec::<String>::new());
    let choices = RwSignal::new(Vec::<Option<String>>::new());
    let matched = RwSignal::new(Vec::<Option<String>>::new());
    let busy = RwSignal::new(false);
    let mapping = move || {
        let pairs: Vec<(usize, Option<String>)> = choices.get().into_iter().enumerate().collect();
        if pairs.is_empty() {
            String::new()
        } else {
            serde_json::to_string(&pairs).unwrap_or_default()
        }
    };
    let on_file = {
        let collection = collection.clone();
        move |ev: leptos::ev::Event| read_header(&ev, collection.clone(), headers, choices, matched)
    };
    let accept = if target.is_some() { ".csv,.ndjson,.jsonl,text/csv,application/x-ndjson" } else { ".ndjson,.jsonl,application/x-ndjson" };
    let step = if target.is_some() { "3." } else { "2." };
    let what = target.as_ref().map_or_else(|| "several kinds of records".to_string(), |t| t.label.to_lowercase());
    view! {
        <form method="post" action=IMPORT_UPLOAD enctype="multipart/form-data" class="card form" id="upload-form"
            on:submit=move |_| busy.set(true)>
            <h2>{format!("{step} The file")}</h2>
            <input type="hidden" name="csrf" value=csrf/>
            <input type="hidden" name="collection" value=collection/>
            <input type="hidden" name="columns" prop:value=mapping/>
            {target.is_none().then(|| view! {
                <p>
                    "An NDJSON file has one JSON object per line, the body the API's create takes, with "
                    <code>"\"collection\": \"units\""</code>" naming the kind of each. A line may refer to a record of an "
                    "earlier line by its external id: "<code>"\"property_id\": {\"external_id\": \"P-1\"}"</code>"."
                </p>
            })}
            <label for="import-file">{format!("A file of {what}")}</label>
            <input type="file" id="import-file" name="file" required=true accept=accept aria-describedby="import-file-hint" on:change=on_file/>
            <span class="hint" id="import-file-hint">"CSV (UTF-8, with a header row) or NDJSON, up to 100 MB."</span>
            <ColumnMapping target=target.clone() headers choices matched/>
            <div class="action-row">
                <button type="submit" class="primary" id="upload-import" disabled=move || busy.get()>"Upload and check"</button>
            </div>
            <p role="status" class="muted" id="upload-status">
                {move || if busy.get() { "Uploading and checking every row… A large file takes a little while." } else { "" }}
            </p>
        </form>
    }
}

/// For each column of the chosen CSV file: what it fills, or left out. Shown once the
/// file's header is read (with WebAssembly).
#[component]
fn ColumnMapping(
    target: Option<ImportTarget>,
    headers: RwSignal<Vec<String>>,
    choices: RwSignal<Vec<Option<String>>>,
    matched: RwSignal<Vec<Option<String>>>,
) -> impl IntoView {
    let Some(target) = target else { return ().into_any() };
    view! {
        {move || {
            let names = headers.get();
            if names.is_empty() {
                return ().into_any();
            }
            let target = target.clone();
            view! {
                <fieldset class="mapping" id="column-mapping">
                    <legend>"What each column of the file fills"</legend>
                    <p class="hint">"Matched by the columns' names; change any that is wrong. A column left out is not imported."</p>
                    <div class="table-wrap">
                        <table class="records compact">
                            <thead><tr><th scope="col">"Column of the file"</th><th scope="col">"Fills"</th></tr></thead>
                            <tbody>
                                {names.into_iter().enumerate().map(|(at, header)| {
                                    let id = format!("map-{at}");
                                    let unmatched = move || matched.with(|m| m.get(at).cloned().flatten().is_none());
                                    let current = move || choices.with(|c| c.get(at).cloned().flatten().unwrap_or_default());
                                    let on_change = move |ev: leptos::ev::Event| {
                                        let value = event_target_value(&ev);
                                        choices.update(|c| if let Some(slot) = c.get_mut(at) { *slot = (!value.is_empty()).then_some(value) });
                                    };
                                    let metadata = target.metadata.then(|| {
                                        let key: String = header.chars().take(40).collect();
                                        let value = format!("metadata.{key}");
                                        view! { <option value=value.clone() selected=move || current() == value>{format!("Metadata: {key}")}</option> }
                                    });
                                    view! {
                                        <tr data-column=header.clone()>
                                            <th scope="row"><label for=id.clone()>{header.clone()}</label>
                                                {move || unmatched().then(|| view! { " "<span class="badge pending">"not matched"</span> })}</th>
                                            <td>
                                                <select id=id on:change=on_change>
                                                    <option value="" selected=move || current().is_empty()>"Leave out"</option>
                                                    {target.columns.iter().map(|c| {
                                                        let value = c.name.clone();
                                                        let label = format!("{} ({})", c.label, c.name);
                                                        view! { <option value=value.clone() selected=move || current() == value>{label}</option> }
                                                    }).collect_view()}
                                                    {metadata}
                                                </select>
                                            </td>
                                        </tr>
                                    }
                                }).collect_view()}
                            </tbody>
                        </table>
                    </div>
                </fieldset>
            }
            .into_any()
        }}
    }
    .into_any()
}

/// Reads the chosen file's header (its first 64 KiB, in the browser) and asks the server
/// what each column most likely fills. An NDJSON file has no columns to map.
#[cfg(feature = "hydrate")]
fn read_header(
    ev: &leptos::ev::Event,
    collection: String,
    headers: RwSignal<Vec<String>>,
    choices: RwSignal<Vec<Option<String>>>,
    matched: RwSignal<Vec<Option<String>>>,
) {
    use wasm_bindgen::JsCast;
    headers.set(vec![]);
    choices.set(vec![]);
    if collection.is_empty() {
        return;
    }
    let Some(input) = ev.target().and_then(|t| t.dyn_into::<web_sys::HtmlInputElement>().ok()) else { return };
    let Some(file) = input.files().and_then(|f| f.get(0)) else { return };
    let name = file.name().to_ascii_lowercase();
    if name.ends_with(".ndjson") || name.ends_with(".jsonl") {
        return;
    }
    let Ok(start) = file.slice_with_i32_and_i32(0, 64 * 1024) else { return };
    let text = send_wrapper::SendWrapper::new(wasm_bindgen_futures::JsFuture::from(start.text()));
    leptos::task::spawn_local(async move {
        let Ok(text) = text.await else { return };
        let names = header_of(&text.as_string().unwrap_or_default());
        if names.is_empty() {
            return;
        }
        let guesses = match_import_columns(collection, names.clone()).await.unwrap_or_else(|_| vec![None; names.len()]);
        choices.set(guesses.clone());
        matched.set(guesses);
        headers.set(names);
    });
}

#[cfg(not(feature = "hydrate"))]
fn read_header(
    _: &leptos::ev::Event,
    _: String,
    _: RwSignal<Vec<String>>,
    _: RwSignal<Vec<Option<String>>>,
    _: RwSignal<Vec<Option<String>>>,
) {
}

/// The names of a CSV text's first record (its header), read by `csv_core`.
#[cfg_attr(not(feature = "hydrate"), allow(dead_code))] // used in the browser, tested everywhere
pub(crate) fn header_of(text: &str) -> Vec<String> {
    use csv_core::{ReadFieldResult, Reader};
    let mut reader = Reader::new();
    let mut input = text.trim_start_matches('\u{feff}').as_bytes();
    let mut out = [0u8; 1024];
    let mut field = Vec::new();
    let mut names = vec![];
    while names.len() < 500 {
        let (result, read, written) = reader.read_field(input, &mut out);
        input = &input[read..];
        field.extend_from_slice(&out[..written]);
        match result {
            ReadFieldResult::InputEmpty | ReadFieldResult::OutputFull => continue,
            ReadFieldResult::Field { record_end } => {
                names.push(String::from_utf8_lossy(&field).trim().to_string());
                field.clear();
                if record_end {
                    break;
                }
            }
            ReadFieldResult::End => break,
        }
    }
    if names.iter().all(String::is_empty) {
        vec![]
    } else {
        names
    }
}

/// `/console/imports/:id`: the import's counts, its rows with errors, commit and cancel;
/// followed while the server is at work on it.
#[component]
pub fn ImportPage() -> impl IntoView {
    let params = use_params_map();
    let query = use_query_map();
    let id = move || params.read().get("id").unwrap_or_default();
    let after = move || query.read().get("errors_after").and_then(|a| a.parse::<u64>().ok()).unwrap_or(0);
    let commit = ServerAction::<CommitImport>::new();
    let cancel = ServerAction::<CancelImport>::new();
    let tick = RwSignal::new(0u32);
    let working = RwSignal::new(false);
    let import = Resource::new(
        move || (id(), after(), tick.get(), commit.version().get(), cancel.version().get()),
        |(id, after, _, _, _)| get_import(id, after),
    );
    Effect::new(move |_| {
        if let Some(Ok(v)) = import.get() {
            working.set(v.summary.working());
        }
    });
    follow(tick, working);
    view! {
        <p><A href="/console/imports">"← Imports"</A></p>
        <Transition fallback=|| view! { <p aria-busy="true">"Loading…"</p> }>
            {move || Suspend::new(async move {
                match import.await {
                    Ok(view) => view! { <ImportBody view commit cancel/> }.into_any(),
                    Err(e) => view! {
                        <h1>"This import cannot be shown"</h1>
                        <p class="form-error" role="alert" id="import-error">{err_text(&e)}</p>
                    }.into_any(),
                }
            })}
        </Transition>
    }
}

/// Looks at the import again every second while the server is at work on it (in the
/// browser only; without WebAssembly the page has a link to look again).
#[cfg(feature = "hydrate")]
fn follow(tick: RwSignal<u32>, working: RwSignal<bool>) {
    Effect::new(move |_| {
        let every = std::time::Duration::from_millis(FOLLOW_EVERY_MS);
        if let Ok(handle) = set_interval_with_handle(
            move || {
                if working.get_untracked() {
                    tick.update(|t| *t += 1)
                }
            },
            every,
        ) {
            on_cleanup(move || handle.clear());
        }
    });
}

#[cfg(not(feature = "hydrate"))]
fn follow(_: RwSignal<u32>, _: RwSignal<bool>) {}

#[component]
fn ImportBody(view: ImportView, commit: ServerAction<CommitImport>, cancel: ServerAction<CancelImport>) -> impl IntoView {
    let ImportView { summary: s, errors, errors_after, more_errors_after, can_commit, once } = view;
    let csrf = me().csrf;
    let here = format!("/console/imports/{}", s.id);
    let status = s.status.clone();
    let can_cancel = can_commit && matches!(status.as_str(), "validating" | "validated" | "importing");
    view! {
        <div class="page-head">
            <h1 id="import-title"><span id="import-file">{s.file_name.clone()}</span>" "<Badge value=s.status.clone() id="import-status"/></h1>
        </div>
        <section class="card" aria-labelledby="summary-title">
            <h2 id="summary-title">"The file"</h2>
            <dl class="facts" id="import-facts">
                <dt>"Records"</dt><dd>{s.what.clone()}</dd>
                <dt>"Rows"</dt><dd data-count="total">{count(s.total_rows)}</dd>
                <dt>"Ready to import"</dt><dd data-count="valid">{count(s.valid_rows)}</dd>
                <dt>"With errors"</dt><dd data-count="invalid">{count(s.invalid_rows)}</dd>
                <dt>"Uploaded"</dt><dd>{s.created_at.clone()}</dd>
                {s.completed_at.clone().map(|t| view! { <dt>"Ended"</dt><dd>{t}</dd> })}
            </dl>
        </section>
        <Progress s=s.clone() here=here.clone() can_commit csrf=csrf.clone() once=once.clone() commit/>
        {can_cancel.then(|| {
            let (csrf, id, key) = (csrf.clone(), s.id.clone(), format!("{once}-cancel"));
            let importing = status == "importing";
            view! {
                <details class="confirm-step">
                    <summary id="cancel-import">{if importing { "Stop this import…" } else { "Cancel this import…" }}</summary>
                    <div class="confirm">
                        <p class="warning">{if importing {
                            "Stop writing? The rows written so far stay; importing the file again later carries on without duplicates."
                        } else {
                            "Cancel this import? Nothing of it has been written; upload the file again to start over."
                        }}</p>
                        <ActionForm action=cancel>
                            <input type="hidden" name="csrf" value=csrf/>
                            <input type="hidden" name="id" value=id/>
                            <input type="hidden" name="once" value=key/>
                            <button type="submit" class="danger solid" id="confirm-cancel">{if importing { "Yes, stop" } else { "Yes, cancel" }}</button>
                        </ActionForm>
                        {move || cancel.value().get().and_then(|r| r.err()).map(|e| view! { <p class="form-error" role="alert">{err_text(&e)}</p> })}
                    </div>
                </details>
            }
        })}
        <ErrorRows errors invalid=s.invalid_rows here errors_after more_errors_after/>
    }
}

/// Where the import is: checking, ready (with the commit form), writing (with its
/// progress), or at its end.
#[component]
fn Progress(
    s: ImportSummary,
    here: String,
    can_commit: bool,
    csrf: String,
    once: String,
    commit: ServerAction<CommitImport>,
) -> impl IntoView {
    let look_again = move || view! { " "<a href=here.clone() id="look-again">"Look again"</a> };
    match s.status.as_str() {
        "validating" => view! {
            <p role="status" class="notice" id="import-progress">"Checking the file…"{look_again()}</p>
        }
        .into_any(),
        "validated" if can_commit => {
            let writable = if s.invalid_rows > 0 { s.valid_rows } else { s.total_rows };
            let error = Signal::derive(move || commit.value().get().and_then(|r| r.err()));
            view! {
                <section class="card" aria-labelledby="commit-title" id="commit">
                    <h2 id="commit-title">"Import"</h2>
                    <p>{if s.invalid_rows == 0 {
                        format!("Every row is ready. Importing writes {}: new records are created, records with the same external id are updated.", rows(writable))
                    } else {
                        format!("{} ready, {} with errors (listed below). Fix the file and upload it again, or import the rest now.", rows(s.valid_rows), rows(s.invalid_rows))
                    }}</p>
                    <ActionForm action=commit attr:class="form">
                        <input type="hidden" name="csrf" value=csrf/>
                        <input type="hidden" name="id" value=s.id.clone()/>
                        <input type="hidden" name="once" value=format!("{once}-commit")/>
                        {(s.invalid_rows > 0).then(|| view! {
                            <label class="check" for="skip-invalid">
                                <input type="checkbox" id="skip-invalid" name="skip_invalid"
                                    aria-invalid=move || error.get().and_then(|e| field_error(&e)).map(|_| "true")/>
                                {format!(" Leave out the {} with errors", rows(s.invalid_rows))}
                            </label>
                        })}
                        <div class="action-row">
                            <button type="submit" class="primary" id="commit-import" disabled=move || commit.pending().get()>
                                {format!("Import {}", rows(writable))}
                            </button>
                        </div>
                    </ActionForm>
                    {move || error.get().map(|e| view! { <p class="form-error" role="alert" id="commit-error">{err_text(&e)}</p> })}
                </section>
            }
            .into_any()
        }
        "validated" => view! {
            <p class="notice" id="read-only-note">"Your role can look at this import but not import it (it needs the write of imports and of its records)."</p>
        }
        .into_any(),
        "importing" => {
            let total = if s.skip_invalid { s.total_rows } else { s.valid_rows }.max(1);
            view! {
                <section class="card" aria-labelledby="progress-title">
                    <h2 id="progress-title">"Writing"</h2>
                    <label for="import-progress-bar">{format!("{} of {} written", count(s.processed_rows), rows(total))}</label>
                    <progress id="import-progress-bar" max=total value=s.processed_rows></progress>
                    <p role="status" class="muted" id="import-progress">
                        {format!("Created {}, updated {}, unchanged {} so far.", count(s.created), count(s.updated), count(s.unchanged))}
                        {look_again()}
                    </p>
                </section>
            }
            .into_any()
        }
        "completed" => view! {
            <section class="card" aria-labelledby="done-title" id="import-result">
                <h2 id="done-title">"Imported"</h2>
                <dl class="facts">
                    <dt>"Created"</dt><dd data-count="created">{count(s.created)}</dd>
                    <dt>"Updated"</dt><dd data-count="updated">{count(s.updated)}</dd>
                    <dt>"Already as the file says"</dt><dd data-count="unchanged">{count(s.unchanged)}</dd>
                    <dt>"Left out (errors)"</dt><dd data-count="skipped">{count(s.skipped)}</dd>
                </dl>
                <p class="inline">{s.collections.into_iter().map(|c| view! {
                    <A href=format!("/console/{}", c.name) attr:class="button">{format!("See {}", c.label.to_lowercase())}</A>" "
                }).collect_view()}</p>
            </section>
        }
        .into_any(),
        "failed" => view! {
            <section class="card" aria-labelledby="failed-title">
                <h2 id="failed-title">"The import stopped"</h2>
                <p class="form-error" id="import-failure">{s.failure.clone().unwrap_or_else(|| "It could not be written.".into())}</p>
                <p>{format!("{} were written before it stopped; importing the file again carries on without duplicates.", rows(s.processed_rows))}</p>
            </section>
        }
        .into_any(),
        _ => view! { <p class="notice" id="import-progress">"This import was cancelled."</p> }.into_any(),
    }
}

/// The rows with errors, a page at a time, by line.
#[component]
fn ErrorRows(errors: Vec<ImportErrorLine>, invalid: i64, here: String, errors_after: u64, more_errors_after: Option<u64>) -> impl IntoView {
    if errors.is_empty() && errors_after == 0 {
        return ().into_any();
    }
    view! {
        <section class="card" aria-labelledby="errors-title" id="import-errors">
            <h2 id="errors-title">{format!("Rows with errors ({})", count(invalid))}</h2>
            <div class="table-wrap">
                <table class="records compact">
                    <thead><tr>
                        <th scope="col">"Line"</th><th scope="col">"External id"</th><th scope="col">"Column"</th><th scope="col">"Problem"</th>
                    </tr></thead>
                    <tbody>
                        {errors.into_iter().map(|e| view! {
                            <tr data-line=e.line>
                                <th scope="row">{e.line}</th>
                                <td>{e.external_id.unwrap_or_default()}</td>
                                <td>{e.field.map(|f| view! { <code>{f}</code> })}</td>
                                <td>{e.message}" "<span class="muted small">{format!("({})", e.code)}</span></td>
                            </tr>
                        }).collect_view()}
                    </tbody>
                </table>
            </div>
            <p class="pager">
                {(errors_after > 0).then(|| view! { <A href=here.clone()>"First errors"</A>" " })}
                {more_errors_after.map(|line| view! { <A href=format!("{here}?errors_after={line}") attr:id="more-errors">"Next errors"</A> })}
            </p>
        </section>
    }
    .into_any()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_header_is_the_first_record_with_quotes_read() {
        assert_eq!(header_of("\u{feff}Unit No,\"Rent, monthly\",Beds\n1A,\"1,200\",2\n"), ["Unit No", "Rent, monthly", "Beds"]);
        assert_eq!(header_of("number"), ["number"]);
        assert!(header_of("").is_empty());
    }

    #[test]
    fn counts_have_thousands_separators() {
        assert_eq!(count(1_234_567), "1,234,567");
        assert_eq!(count(999), "999");
        assert_eq!(rows(1), "1 row");
        assert_eq!(rows(20_000), "20,000 rows");
    }
}
