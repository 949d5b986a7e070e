//! The portfolio's pages, one set for every collection of the console's areas, drawn
//! from the collection's description (`CollectionInfo`): the list (filters as removable
//! chips, sorting by column, cursor paging, chosen columns, a quick search, the whole
//! state in the address), and a record's page (its fields for people, its workflow
//! actions, related records both ways, its history and its ledger). The forms are in
//! `record_form`.
//!
//! Everything reads before the WebAssembly loads: links and GET forms carry the state;
//! writes are `ActionForm`s, which post without it too.

use leptos::prelude::*;
use leptos_router::components::A;
use leptos_router::hooks::{use_location, use_params_map};

use super::components::{err_text, field_error, me, Badge, Deliveries, FormError};
use super::developers::{CallPanel, DevelopersNav, EventResend};
use super::record_form::{FormFields, FormProblem};
use crate::api::*;
use crate::service::{
    ActionInfo, ActivityItem, CallView, Chip, CollectionInfo, HistoryItem, LedgerLine, ListView, RecordView, RelatedList, Row, Shown,
};

/// Operators of the add-a-filter form, as the API names them, in words.
const OPERATORS: &[(&str, &str)] = &[
    ("eq", "is"),
    ("ne", "is not"),
    ("contains", "contains"),
    ("in", "is one of (a, b)"),
    ("gt", "is after / more than"),
    ("gte", "is from / at least"),
    ("lt", "is before / less than"),
    ("lte", "is up to / at most"),
    ("exists", "is set (true / false)"),
];

fn collection_param() -> impl Fn() -> String + Copy + Send + Sync + 'static {
    let params = use_params_map();
    move || params.read().get("collection").unwrap_or_default()
}

/// A value for people.
#[component]
pub(crate) fn ShownValue(shown: Shown) -> impl IntoView {
    match shown {
        Shown::Empty => view! { <span class="muted">"—"</span> }.into_any(),
        Shown::Text(t) => view! { <span class="text">{t}</span> }.into_any(),
        Shown::Badge(b) => view! { <Badge value=b/> }.into_any(),
        Shown::Link { text, href } => view! { <A href=href>{text}</A> }.into_any(),
        Shown::Links(links) => view! {
            <span class="links">{links.into_iter().map(|(text, href)| view! { <A href=href>{text}</A>" " }).collect_view()}</span>
        }
        .into_any(),
        Shown::Money(m) => view! { <span class="money">{m}</span> }.into_any(),
        Shown::Code(c) => view! { <pre class="body">{c}</pre> }.into_any(),
    }
}

/// Hidden inputs carrying a list's query into a GET form, except the keys it sets itself.
fn hidden_query(query: &[(String, String)], except: impl Fn(&str) -> bool) -> impl IntoView {
    query.iter().filter(|(k, _)| !except(k)).map(|(k, v)| view! { <input type="hidden" name=k.clone() value=v.clone()/> }).collect_view()
}

/// The list's address with its query, `sort` set to `sort`.
fn sorted_href(name: &str, query: &[(String, String)], sort: &str) -> String {
    let mut parts: Vec<String> = query.iter().filter(|(k, _)| k != "sort").map(|(k, v)| format!("{}={}", encode(k), encode(v))).collect();
    parts.push(format!("sort={}", encode(sort)));
    format!("/console/{name}?{}", parts.join("&"))
}

/// Percent-encodes a query component (everything but unreserved characters).
pub(crate) fn encode(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}

#[component]
pub fn ListPage() -> impl IntoView {
    let name = collection_param();
    let location = use_location();
    let list = Resource::new(move || (name(), location.search.get()), |(c, q)| list_records(c, q));
    view! {
        <Transition fallback=|| view! { <p aria-busy="true">"Loading…"</p> }>
            {move || Suspend::new(async move {
                match list.await {
                    Ok(view) => view! { <ListBody view/> }.into_any(),
                    Err(e) => view! {
                        <h1>"This list cannot be shown"</h1>
                        <p class="form-error" role="alert" id="list-error">{err_text(&e)}</p>
                    }.into_any(),
                }
            })}
        </Transition>
    }
}

#[component]
fn ListBody(view: ListView) -> impl IntoView {
    let ListView { info, columns, rows, chips, sort, query, next_href, first_href, problem } = view;
    let name = info.name.clone();
    let search_key = info.search.as_ref().map(|f| format!("filter[{f}][contains]"));
    let searched = search_key.as_ref().and_then(|k| query.iter().find(|(q, _)| q == k)).map(|(_, v)| v.clone()).unwrap_or_default();
    let filtered = !chips.is_empty();
    let empty_text = if filtered {
        format!("No {} match these filters.", info.label.to_lowercase())
    } else {
        format!("There are no {} here yet.", info.label.to_lowercase())
    };
    let new_href = format!("/console/{name}/new");
    let label = info.label.clone();
    let developers = match info.name.as_str() {
        "request-logs" => Some("logs"),
        "events" => Some("events"),
        "webhook-deliveries" => Some("deliveries"),
        _ => None,
    };
    view! {
        {developers.map(|current| view! { <DevelopersNav current/> })}
        <div class="page-head">
            <h1 id="list-title">{info.label.clone()}</h1>
            <div class="inline">
                {info.can_import.then(|| view! {
                    <A href=format!("/console/imports/new?collection={}", info.name) attr:class="button" attr:id="import-records">"Import a file"</A>
                })}
                {info.can_create.then(|| view! { <A href=new_href.clone() attr:class="button primary" attr:id="new-record">{format!("New {}", info.singular)}</A> })}
            </div>
        </div>
        <p class="lede">{info.doc.clone()}</p>
        <section class="toolbar" aria-label="Search and filters">
            {search_key.clone().map(|key| {
                let query = query.clone();
                view! {
                    <form method="get" class="row-form quick-search" role="search" id="quick-search">
                        {hidden_query(&query, move |k| k == key || k == "q")}
                        <label>{format!("Search {}", label.to_lowercase())}
                            <input type="search" name="q" value=searched.clone() maxlength="100" placeholder=format!("{} contains…", info.field(info.search.as_deref().unwrap_or_default()).map(|f| f.label.clone()).unwrap_or_default())/>
                        </label>
                        <button type="submit">"Search"</button>
                    </form>
                }
            })}
            <AddFilter info=info.clone() query=query.clone()/>
            <Columns info=info.clone() query=query.clone() columns=columns.clone()/>
        </section>
        <Chips chips/>
        {problem.map(|p| view! { <p class="form-error" role="alert" id="list-problem">{p}</p> })}
        {if rows.is_empty() {
            view! {
                <div class="empty" id="empty-list">
                    <h2>{empty_text}</h2>
                    {info.can_create.then(|| view! { <A href=new_href attr:class="button">{format!("New {}", info.singular)}</A> })}
                </div>
            }.into_any()
        } else {
            view! { <RecordTable info=info.clone() columns sort query rows id="records"/> }.into_any()
        }}
        <nav class="pager" aria-label="Pages">
            {first_href.map(|h| view! { <A href=h attr:id="first-page">"← First page"</A> })}
            {next_href.map(|h| view! { <A href=h attr:id="next-page" attr:rel="next">"Next page →"</A> })}
        </nav>
    }
}

/// The filters in force, each removable.
#[component]
fn Chips(chips: Vec<Chip>) -> impl IntoView {
    (!chips.is_empty()).then(|| {
        view! {
            <ul class="chips" id="filter-chips" aria-label="Filters in force">
                {chips.into_iter().map(|c| {
                    let label = format!("Remove the filter: {}", c.text);
                    view! {
                        <li class="chip" data-param=c.param.clone()>
                            <span>{c.text.clone()}</span>
                            <A href=c.remove_href attr:class="chip-remove" attr:aria-label=label attr:title="Remove">"×"</A>
                        </li>
                    }
                }).collect_view()}
            </ul>
        }
    })
}

/// Adds a filter: field, operator, value (the API's `filter[field][op]=value`).
#[component]
fn AddFilter(info: CollectionInfo, query: Vec<(String, String)>) -> impl IntoView {
    let fields: Vec<_> = info.fields.iter().filter(|f| f.filterable).cloned().collect();
    (!fields.is_empty()).then(|| {
        view! {
            <details class="add-filter">
                <summary>"Add a filter"</summary>
                <form method="get" class="row-form" id="add-filter">
                    {hidden_query(&query, |k| k == "add_field" || k == "add_op" || k == "add_value")}
                    <label>"Field"<select name="add_field" id="add-field">
                        {fields.into_iter().map(|f| view! { <option value=f.name.clone()>{f.label.clone()}</option> }).collect_view()}
                    </select></label>
                    <label>"Condition"<select name="add_op" id="add-op">
                        {OPERATORS.iter().map(|(op, words)| view! { <option value=*op>{*words}</option> }).collect_view()}
                    </select></label>
                    <label>"Value"<input type="text" name="add_value" id="add-value" required/></label>
                    <button type="submit">"Apply"</button>
                </form>
            </details>
        }
    })
}

/// Chooses the columns the list shows.
#[component]
fn Columns(info: CollectionInfo, query: Vec<(String, String)>, columns: Vec<String>) -> impl IntoView {
    view! {
        <details class="columns-picker">
            <summary>"Columns"</summary>
            <form method="get" id="choose-columns">
                {hidden_query(&query, |k| k == "columns")}
                <fieldset><legend>"Show these columns"</legend>
                    {info.fields.iter().filter(|f| f.name != "id").map(|f| {
                        let on = columns.contains(&f.name);
                        view! { <label class="check"><input type="checkbox" name="columns" value=f.name.clone() checked=on/>" "{f.label.clone()}</label> }
                    }).collect_view()}
                </fieldset>
                <button type="submit">"Show"</button>
            </form>
        </details>
    }
}

/// Records as a table: the name first, then the columns; sortable headers link to the
/// list sorted by them (again: the other way).
#[component]
fn RecordTable(
    info: CollectionInfo,
    columns: Vec<String>,
    #[prop(default = String::new())] sort: String,
    #[prop(default = vec![])] query: Vec<(String, String)>,
    rows: Vec<Row>,
    id: &'static str,
) -> impl IntoView {
    let name = info.name.clone();
    // The record's name is the first column: sortable as its field is.
    let name_field = info.search.as_ref().and_then(|f| info.field(f)).cloned();
    let first = match name_field {
        Some(f) if f.sortable => {
            view! { <SortHeader name=name.clone() query=query.clone() sort=sort.clone() col=f.name label=f.label/> }.into_any()
        }
        Some(f) => view! { <th scope="col">{f.label}</th> }.into_any(),
        None => view! { <th scope="col">{super::record_form::label_of(&info.singular)}</th> }.into_any(),
    };
    let headers = columns
        .iter()
        .map(|col| {
            let field = info.field(col).cloned();
            let label = field.as_ref().map(|f| f.label.clone()).unwrap_or_else(|| col.clone());
            if field.as_ref().is_some_and(|f| f.sortable) {
                view! { <SortHeader name=name.clone() query=query.clone() sort=sort.clone() col=col.clone() label/> }.into_any()
            } else {
                view! { <th scope="col">{label}</th> }.into_any()
            }
        })
        .collect_view();
    view! {
        <div class="table-wrap">
            <table class="records" id=id>
                <thead><tr>{first}{headers}</tr></thead>
                <RowsBody rows/>
            </table>
        </div>
    }
}

/// Records as table rows: the name, a link to the record, then its cells (a list's table
/// and a record's related lists alike).
#[component]
fn RowsBody(rows: Vec<Row>) -> impl IntoView {
    view! {
        <tbody>
            {rows.into_iter().map(|r| view! {
                <tr data-id=r.id.clone()>
                    <th scope="row"><A href=r.href.clone()>{r.title.clone()}</A></th>
                    {r.cells.into_iter().map(|c| view! { <td><ShownValue shown=c/></td> }).collect_view()}
                </tr>
            }).collect_view()}
        </tbody>
    }
}

/// A column's header that sorts the list by it, and the other way when it already does.
#[component]
fn SortHeader(name: String, query: Vec<(String, String)>, sort: String, col: String, label: String) -> impl IntoView {
    let (asc, desc) = (sort == col, sort == format!("-{col}"));
    let aria = if asc {
        "ascending"
    } else if desc {
        "descending"
    } else {
        "none"
    };
    let next = if asc { format!("-{col}") } else { col.clone() };
    let arrow = if asc {
        " ↑"
    } else if desc {
        " ↓"
    } else {
        ""
    };
    let href = sorted_href(&name, &query, &next);
    view! {
        <th scope="col" aria-sort=aria>
            <A href=href attr:class="sort" attr:data-column=col>{label}{arrow}</A>
        </th>
    }
}

#[component]
pub fn RecordPage() -> impl IntoView {
    let name = collection_param();
    let params = use_params_map();
    let id = move || params.read().get("id").unwrap_or_default();
    let act = ServerAction::<ActOnRecord>::new();
    // A call of the request log is read with its page's record, by one server function.
    let record = Resource::new(
        move || (name(), id(), act.version().get()),
        |(c, id, _)| async move {
            if c == "request-logs" {
                match api_call_page(id).await {
                    Ok((record, call)) => (Ok(record), Some(Ok(call))),
                    Err(e) => (Err(e), None),
                }
            } else {
                (get_record(c, id).await, None)
            }
        },
    );
    view! {
        <Transition fallback=|| view! { <p aria-busy="true">"Loading…"</p> }>
            {move || Suspend::new(async move {
                let (record, call) = record.await;
                match record {
                    Ok(view) => view! { <RecordBody view act call/> }.into_any(),
                    Err(e) => view! {
                        <p><A href=format!("/console/{}", name())>"← Back to the list"</A></p>
                        <h1>"This record cannot be shown"</h1>
                        <p class="form-error" role="alert" id="record-error">{err_text(&e)}</p>
                    }.into_any(),
                }
            })}
        </Transition>
    }
}

#[component]
fn RecordBody(view: RecordView, act: ServerAction<ActOnRecord>, call: Option<Result<CallView, ServerFnError>>) -> impl IntoView {
    let RecordView { info, id, title, status, fields, actions, related, history, history_note, activity, ledger, once, .. } = view;
    let csrf = me().csrf;
    let list_href = format!("/console/{}", info.name);
    let edit_href = format!("/console/{}/{id}/edit", info.name);
    let delete = ServerAction::<DeleteRecord>::new();
    view! {
        <p><A href=list_href.clone()>{format!("← {}", info.label)}</A></p>
        <div class="page-head">
            <h1 id="record-title"><span id="record-name">{title.clone()}</span>" "{status.clone().map(|s| view! { <Badge value=s id="record-status"/> })}</h1>
            <div class="inline">
                {info.can_edit.then(|| view! { <A href=edit_href attr:class="button" attr:id="edit-record">"Edit"</A> })}
            </div>
        </div>
        <p class="muted small">{format!("{} · {}", info.area, info.singular)}</p>
        {call.map(|c| match c {
            Ok(c) => view! { <CallPanel c/> }.into_any(),
            Err(e) => view! { <p class="form-error" role="alert" id="call-error">{err_text(&e)}</p> }.into_any(),
        })}
        {(!actions.is_empty()).then(|| view! {
            <section class="card" aria-labelledby="actions-title" id="record-actions">
                <h2 id="actions-title">"Actions"</h2>
                <FormProblem value=act.value() fields=vec![]/>
                <div class="action-row">
                    {actions.into_iter().map(|a| view! {
                        <ActionButton a info=info.clone() id=id.clone() once=once.clone() csrf=csrf.clone() act/>
                    }).collect_view()}
                </div>
            </section>
        })}
        {(!info.can_act && status.is_some() && !info.can_create).then(|| view! {
            <p class="notice" id="read-only-note">{format!("Your role can look at {} but not change them.", info.label.to_lowercase())}</p>
        })}
        <section class="card" aria-labelledby="details-title">
            <h2 id="details-title">"Details"</h2>
            <dl class="facts" id="record-fields">
                {fields.into_iter().map(|f| view! {
                    <dt>{f.label}</dt>
                    <dd data-field=f.name><ShownValue shown=f.shown/></dd>
                }).collect_view()}
            </dl>
        </section>
        {(!ledger.is_empty()).then(|| view! { <Ledger lines=ledger/> })}
        {(info.name == "events").then(|| view! { <EventResend id=id.clone()/> })}
        {related.into_iter().map(|r| view! { <RelatedSection r/> }).collect_view()}
        <History items=history note=history_note activity/>
        {info.can_delete.then(|| {
            let (csrf, name, id) = (csrf.clone(), info.name.clone(), id.clone());
            view! {
                <section class="card" aria-labelledby="danger-title">
                    <h2 id="danger-title">"Delete"</h2>
                    <details class="confirm-step">
                        <summary id="delete-record">{format!("Delete this {}…", info.singular)}</summary>
                        <div class="confirm">
                            <p class="warning">{format!("Deleting this {} cannot be undone. Records that refer to it may stop you.", info.singular)}</p>
                            <ActionForm action=delete>
                                <input type="hidden" name="csrf" value=csrf/>
                                <input type="hidden" name="collection" value=name/>
                                <input type="hidden" name="id" value=id/>
                                <button type="submit" class="danger solid" id="confirm-delete">"Delete for good"</button>
                            </ActionForm>
                            <FormError value=delete.value()/>
                        </div>
                    </details>
                </section>
            }
        })}
    }
}

/// One workflow action: a button, or (destructive, or taking input) a step that opens
/// first, so nothing irreversible happens on one click.
#[component]
fn ActionButton(
    a: ActionInfo,
    info: CollectionInfo,
    id: String,
    once: String,
    csrf: String,
    act: ServerAction<ActOnRecord>,
) -> impl IntoView {
    let key = format!("{once}-{}", a.name);
    let button_id = format!("action-{}", a.name);
    let hidden = view! {
        <input type="hidden" name="csrf" value=csrf/>
        <input type="hidden" name="collection" value=info.name.clone()/>
        <input type="hidden" name="id" value=id/>
        <input type="hidden" name="action" value=a.name.clone()/>
        <input type="hidden" name="once" value=key/>
    };
    if !a.destructive && a.inputs.is_empty() {
        return view! {
            <ActionForm action=act attr:class="inline">
                {hidden}
                <button type="submit" class="primary" id=button_id disabled=move || act.pending().get()>{a.label.clone()}</button>
            </ActionForm>
        }
        .into_any();
    }
    let question = if a.destructive {
        format!("{} this {}? This cannot be undone.", a.label, info.singular)
    } else if let Some(m) = &a.makes {
        format!("{}: this makes a new record in {m}.", a.label)
    } else {
        format!("{} this {}.", a.label, info.singular)
    };
    let class = if a.destructive { "confirm" } else { "card inset" };
    view! {
        <details class="confirm-step">
            <summary id=button_id.clone()>{format!("{}…", a.label)}</summary>
            <div class=class>
                <p class="warning">{question}</p>
                <ActionForm action=act attr:class="form">
                    {hidden}
                    <FormFields fields=a.inputs.clone() values=vec![]
                        error=Signal::derive(move || act.value().get().and_then(|r| r.err()).and_then(|e| field_error(&e)))/>
                    <button type="submit" class=if a.destructive { "danger solid" } else { "primary" } id=format!("confirm-{}", a.name)
                        disabled=move || act.pending().get()>{format!("Yes, {}", a.label.to_lowercase())}</button>
                </ActionForm>
            </div>
        </details>
    }
    .into_any()
}

#[component]
fn RelatedSection(r: RelatedList) -> impl IntoView {
    let RelatedList { collection, label, headers, rows, has_more, href, new_href, .. } = r;
    let section_id = format!("related-{collection}");
    let heading_id = format!("{section_id}-title");
    let empty = rows.is_empty();
    view! {
        <section class="card related" id=section_id aria-labelledby=heading_id.clone()>
            <div class="page-head">
                <h2 id=heading_id.clone()>{label.clone()}</h2>
                <div class="inline">
                    {new_href.map(|h| view! { <A href=h attr:class="button small">"New"</A> })}
                    {(!empty).then(|| view! { <A href=href.clone()>{if has_more { "See all →" } else { "Open as a list →" }}</A> })}
                </div>
            </div>
            {if empty {
                view! { <p class="muted small">"None yet."</p> }.into_any()
            } else {
                view! { <RelatedTable headers rows/> }.into_any()
            }}
        </section>
    }
}

#[component]
fn RelatedTable(headers: Vec<String>, rows: Vec<Row>) -> impl IntoView {
    view! {
        <div class="table-wrap">
            <table class="records compact">
                <thead><tr><th scope="col">"Record"</th>{headers.into_iter().map(|h| view! { <th scope="col">{h}</th> }).collect_view()}</tr></thead>
                <RowsBody rows/>
            </table>
        </div>
    }
}

#[component]
fn Ledger(lines: Vec<LedgerLine>) -> impl IntoView {
    view! {
        <section class="card" aria-labelledby="ledger-title" id="record-ledger">
            <h2 id="ledger-title">"Ledger"</h2>
            <p class="muted small">"The journal lines this record posted. Entries never change; a correction is a reversing entry."</p>
            <div class="table-wrap">
                <table class="records compact">
                    <thead><tr><th scope="col">"Posted"</th><th scope="col">"Account"</th><th scope="col">"Debit"</th><th scope="col">"Credit"</th><th scope="col">"Memo"</th></tr></thead>
                    <tbody>
                        {lines.into_iter().map(|l| view! {
                            <tr>
                                <td><A href=format!("/console/accounting-entries/{}", l.entry_id)>{l.posted_on}</A></td>
                                <td><code>{l.account}</code></td>
                                <td class="money">{l.debit}</td>
                                <td class="money">{l.credit}</td>
                                <td>{l.memo}</td>
                            </tr>
                        }).collect_view()}
                    </tbody>
                </table>
            </div>
        </section>
    }
}

#[component]
fn History(items: Vec<HistoryItem>, note: Option<String>, activity: Vec<ActivityItem>) -> impl IntoView {
    view! {
        <section class="card" aria-labelledby="history-title" id="record-history">
            <h2 id="history-title">"History"</h2>
            {(!activity.is_empty()).then(|| view! {
                <h3>"Changes in the console"</h3>
                <ol class="history" id="record-activity">
                    {activity.into_iter().map(|a| view! {
                        <li><strong>{a.who}</strong>" "{a.what}" "<span class="muted">{a.at}</span></li>
                    }).collect_view()}
                </ol>
                <h3>"Events"</h3>
            })}
            {note.map(|n| view! { <p class="muted">{n}</p> })}
            {if items.is_empty() {
                view! { <p class="muted small">"No events about this record are kept (events are kept 30 days)."</p> }.into_any()
            } else {
                view! {
                    <ol class="history">
                        {items.into_iter().map(|i| view! {
                            <li data-event=i.event_id.clone()>
                                <code>{i.event_type.clone()}</code>" "<span class="muted">{i.at.clone()}</span>
                                {(!i.deliveries.is_empty()).then(|| view! { <Deliveries list=i.deliveries/> })}
                            </li>
                        }).collect_view()}
                    </ol>
                }.into_any()
            }}
        </section>
    }
}
