//! `booking`: the listing or unit, an availability calendar (a month at a time; booked
//! nights and past days disabled), the guest's details, the price, and the confirmation
//! (`POST /v1/flow/bookings`, instant-booked).

use leptos::ev::KeyboardEvent;
use leptos::prelude::*;

use crate::fresh::IntoFresh;
use crate::json::Value;
use leptos::task::spawn_local;

use crate::api::{self, ApiError};
use crate::dates::{self, Date, Day, Month, Nights, WEEKDAYS};
use crate::rules::{Keys, Rule};
use crate::ui::{self, rx, s, Alert, Field, Opts};
use crate::{env, money};

/// The longest stay the API takes.
const MAX_NIGHTS: i32 = 365;
/// How far ahead the calendar pages.
const MONTHS_AHEAD: i32 = 24;

#[derive(Clone, Copy)]
struct Form {
    check_in: Field,
    check_out: Field,
    guests: Field,
    name: Field,
    email: Field,
    phone: Field,
}

/// The state of the calendar: which month it shows and which day holds the keyboard.
#[derive(Clone, Copy)]
struct Calendar {
    today: Date,
    month: RwSignal<Month>,
    focus: RwSignal<Date>,
    taken: Memo<Vec<Nights>>,
    check_in: Memo<Option<Date>>,
    check_out: Memo<Option<Date>>,
}

impl Calendar {
    fn state(self, day: Date) -> Day {
        self.taken.with(|t| dates::day_state(day, self.today, t, self.check_in.get(), self.check_out.get()))
    }

    /// The one day of the month in the tab order (roving tabindex): the focused day, else
    /// the check-in, else the first day that can be chosen.
    fn anchor(self) -> Option<Date> {
        let m = self.month.get();
        let in_month = |d: Date| d.month() == m && self.state(d).enabled();
        let f = self.focus.get();
        if in_month(f) {
            return Some(f);
        }
        if let Some(i) = self.check_in.get().filter(|i| in_month(*i)) {
            return Some(i);
        }
        let mut d = m.first();
        while d <= m.last() {
            if self.state(d).enabled() {
                return Some(d);
            }
            d = d.add_days(1);
        }
        None
    }

    fn show(self, m: Month) {
        let min = self.today.month();
        let max = (0..MONTHS_AHEAD).fold(min, |m, _| m.next());
        self.month.set(m.clamp(min, max));
    }
}

pub fn view(data: RwSignal<Value>) -> AnyView {
    let d = data.get_untracked();
    let today = Date::parse(&s(&d, "today")).unwrap_or_else(|| Date::parse("2026-01-01").expect("a date"));
    let form = Form {
        check_in: Field::new("check-in", "Check-in", Rule::Date { required: true }, ""),
        check_out: Field::new("check-out", "Check-out", Rule::Date { required: true }, ""),
        guests: Field::new("guests", "Guests", Rule::Count { min: 1, max: 50 }, "1"),
        name: Field::new("guest-name", "Full name", Rule::Required, ""),
        email: Field::new("guest-email", "Email", Rule::Email { required: true }, ""),
        phone: Field::new("guest-phone", "Phone", Rule::Phone, ""),
    };
    let taken = Memo::new(move |_| {
        data.with(|d| {
            d["unavailable"]
                .as_array()
                .map(|a| {
                    a.iter()
                        .filter_map(|n| Some(Nights { start: Date::parse(n["start"].as_str()?)?, end: Date::parse(n["end"].as_str()?)? }))
                        .collect()
                })
                .unwrap_or_default()
        })
    });
    let exact = |f: Field| Memo::new(move |_| f.value.with(|v| if v.len() == 10 { Date::parse(v) } else { None }));
    let cal = Calendar {
        today,
        month: RwSignal::new(today.month()),
        focus: RwSignal::new(today),
        taken,
        check_in: exact(form.check_in),
        check_out: exact(form.check_out),
    };
    let done = RwSignal::new(d["completed"]["id"].as_str().map(|id| Value::obj([("id", id.into())])));
    view! {
        {move || match done.get() {
            Some(b) => done_view(b).fresh(),
            None => form_view(data, form, cal, done).fresh(),
        }}
    }
    .fresh()
}

fn header(d: &Value) -> impl IntoView {
    let title = match s(&d["listing"], "title") {
        t if t.is_empty() => format!("Unit {}", s(&d["unit"], "number")),
        t => t,
    };
    let rate = money::display(&s(d, "nightly_rate"), &s(d, "currency"));
    let unit = &d["unit"];
    let home =
        [(!s(unit, "number").is_empty()).then(|| format!("Unit {}", s(unit, "number"))), Some(ui::rooms(unit)).filter(|r| !r.is_empty())]
            .into_iter()
            .flatten()
            .collect::<Vec<_>>()
            .join(" · ");
    let description = s(&d["listing"], "description");
    view! {
        <header class="summary">
            <h1 id="view-heading" tabindex="-1">
                {title}
            </h1>
            <p class="place">{ui::place(&d["property"])}</p>
            {(!description.is_empty()).then(|| view! { <p class="description">{description}</p> })}
            <dl class="facts">{ui::row("Nightly rate", format!("{rate} per night"))} {ui::row("Home", home)}</dl>
        </header>
    }
}

/// What is wrong with the chosen stay, if anything (and which date to fix).
fn stay_problem(cal: Calendar, form: Form) -> Option<(Field, String)> {
    let (Some(i), Some(o)) = (cal.check_in.get_untracked(), cal.check_out.get_untracked()) else {
        return None;
    };
    if i < cal.today {
        return Some((form.check_in, format!("Check-in can't be before today ({}).", cal.today.long())));
    }
    if o <= i {
        return Some((form.check_out, "Check-out must be after check-in.".into()));
    }
    if i.days_until(o) > MAX_NIGHTS {
        return Some((form.check_out, format!("A stay is at most {MAX_NIGHTS} nights.")));
    }
    cal.taken.with_untracked(|t| dates::conflict(i, o, t)).map(|n| (form.check_out, format!("{} Choose other dates.", taken_message(n))))
}

fn taken_message(n: Nights) -> String {
    let last = n.end.add_days(-1);
    let nights = if n.start == last {
        format!("the night of {}", n.start.long())
    } else {
        format!("the nights from {} to {}", n.start.long(), last.long())
    };
    format!("Your stay can't include nights that are already booked: {nights} are taken.")
}

fn form_view(data: RwSignal<Value>, form: Form, cal: Calendar, done: RwSignal<Option<Value>>) -> impl IntoView {
    let d = data.get_untracked();
    let rate = s(&d, "nightly_rate");
    let currency = s(&d, "currency");
    // Problems of the dates (beside the calendar), and of the whole form (at its end).
    let stay_alert = RwSignal::new(None::<Alert>);
    let stay_invalid = RwSignal::new(None::<&'static str>);
    let alert = RwSignal::new(None::<Alert>);
    let busy = RwSignal::new(false);
    let keys = StoredValue::new(Keys::default());

    let check_stay = move || -> bool {
        match stay_problem(cal, form) {
            Some((field, message)) => {
                stay_invalid.set(Some(field.id));
                stay_alert.set(Some(Alert::message(message)));
                false
            }
            None => {
                stay_invalid.set(None);
                stay_alert.set(None);
                true
            }
        }
    };
    let pick = move |day: Date| {
        match (cal.check_in.get_untracked(), cal.check_out.get_untracked()) {
            (Some(i), None) if day > i => {
                // A stay over a booked night is refused at once; the day clicked starts a
                // new stay instead (so the calendar never leaves the guest stuck).
                if let Some(n) = cal.taken.with_untracked(|t| dates::conflict(i, day, t)) {
                    form.check_in.set(&day.to_string());
                    form.check_out.set("");
                    stay_invalid.set(None);
                    let text = format!("{} {} is now your check-in day: choose your check-out day.", taken_message(n), day.long());
                    stay_alert.set(Some(Alert::message(text)));
                    cal.focus.set(day);
                    return;
                }
                form.check_out.set(&day.to_string());
            }
            _ => {
                form.check_in.set(&day.to_string());
                form.check_out.set("");
            }
        }
        cal.focus.set(day);
        check_stay();
    };
    let price = {
        let rate = rate.clone();
        let currency = currency.clone();
        rx(move || match (cal.check_in.get(), cal.check_out.get()) {
            (Some(i), Some(o)) if o > i && i >= cal.today && cal.taken.with(|t| dates::conflict(i, o, t).is_none()) => {
                let n = i.days_until(o);
                let total = money::times(&rate, i64::from(n)).unwrap_or_default();
                format!(
                    "{n} {} × {} = {}",
                    if n == 1 { "night" } else { "nights" },
                    money::display(&rate, &currency),
                    money::display(&total, &currency)
                )
            }
            _ => "Choose your check-in and check-out dates to see the price.".into(),
        })
    };
    let fail = move |e: ApiError| {
        ui::report_fatal(&e);
        let field = match e.param.as_deref() {
            Some("guests_count") => Some(form.guests),
            Some("guest" | "guest.name") => Some(form.name),
            Some("guest.email") => Some(form.email),
            Some("guest.phone") => Some(form.phone),
            _ => None,
        };
        match (e.code.as_str(), e.param.as_deref(), field) {
            ("validation_failed", _, Some(f)) => {
                f.fail(&e.message);
                alert.set(Some(Alert::problems(f.problem().into_iter().collect())));
                f.focus();
            }
            ("validation_failed", Some(p @ ("check_in" | "check_out")), _) => {
                let f = if p == "check_in" { form.check_in } else { form.check_out };
                stay_invalid.set(Some(f.id));
                stay_alert.set(Some(Alert::message(ui::server_message(f.label, &e.message))));
                f.focus();
            }
            (_, _, _) if e.status == 409 => {
                // The nights were taken meanwhile, or the flow was completed: show the
                // calendar as it is now.
                stay_alert.set(Some(Alert::api(&e)));
                spawn_local(async move {
                    if let Ok(d) = api::session().await {
                        if let Some(id) = d["completed"]["id"].as_str() {
                            done.set(Some(Value::obj([("id", id.into())])));
                            env::focus_later("view-heading");
                        }
                        data.set(d);
                    }
                });
                env::focus_later("check-in");
            }
            _ => alert.set(Some(Alert::api(&e))),
        }
    };
    let confirm = move || {
        if busy.get_untracked() {
            return;
        }
        let (check_in_ok, check_out_ok) = (form.check_in.validate(), form.check_out.validate());
        let dates_ok = check_in_ok && check_out_ok && check_stay();
        let guest_ok = ui::validate_all(&[form.guests, form.name, form.email, form.phone], alert);
        if !dates_ok {
            if stay_alert.get_untracked().is_none() {
                let missing: Vec<String> = [form.check_in, form.check_out].iter().filter_map(|f| f.problem()).collect();
                stay_alert.set(Some(Alert::problems(missing)));
            }
            let first = if form.check_in.error.get_untracked().is_some() || stay_invalid.get_untracked() == Some("check-in") {
                "check-in"
            } else {
                "check-out"
            };
            env::focus_later(first);
            return;
        }
        if !guest_ok {
            return;
        }
        let mut guest = Value::Object(vec![]);
        for (k, f) in [("name", form.name), ("email", form.email), ("phone", form.phone)] {
            if !f.get().is_empty() {
                guest.insert(k, Value::String(f.get()));
            }
        }
        let body = Value::obj([
            ("check_in", form.check_in.get().into()),
            ("check_out", form.check_out.get().into()),
            ("guests_count", form.guests.get().parse::<i64>().unwrap_or(1).into()),
            ("guest", guest),
        ]);
        busy.set(true);
        alert.set(None);
        spawn_local(async move {
            let result = api::create("bookings", &body, keys).await;
            busy.set(false);
            match result {
                Ok(b) => {
                    env::completed("booking", &s(&b, "id"), &s(&b, "status"));
                    done.set(Some(b));
                    env::focus_later("view-heading");
                    api::refresh(data);
                }
                Err(e) => fail(e),
            }
        });
    };
    let today = cal.today;
    view! {
        {header(&d)}
        <form
            class="flow-form"
            novalidate
            on:submit=move |ev| {
                ev.prevent_default();
                confirm();
            }
        >
            <section class="dates" aria-labelledby="dates-heading">
                <h2 id="dates-heading">"Your dates"</h2>
                {calendar(cal, pick)}
                {ui::alert_view(stay_alert, "stay-alert")}
                <div class="pair">
                    {date_input(form.check_in, today, stay_invalid, cal, check_stay)}
                    {date_input(form.check_out, today.add_days(1), stay_invalid, cal, check_stay)}
                </div>
                <p class="price" aria-live="polite">
                    {price}
                </p>
            </section>
            <section class="guest" aria-labelledby="guest-heading">
                <h2 id="guest-heading">"Your details"</h2>
                <p class="required-note">"Fields marked * are required."</p>
                {ui::input(
                    form.guests,
                    Opts { kind: Some("number"), inputmode: Some("numeric"), min: Some("1".into()), max: Some("50".into()), ..Opts::default() },
                )}
                {ui::input(form.name, Opts { autocomplete: Some("name"), ..Opts::default() })}
                {ui::input(form.email, Opts { kind: Some("email"), autocomplete: Some("email"), ..Opts::default() })}
                {ui::input(form.phone, Opts { kind: Some("tel"), autocomplete: Some("tel"), ..Opts::default() })}
            </section>
            {ui::alert_view(alert, "form-alert")}
            <div class="actions">
                <button type="submit" class="primary" disabled=rx(move || busy.get()) aria-busy=rx(move || busy.get().then_some("true"))>
                    "Confirm booking"
                </button>
            </div>
            <p class="sending" hidden=rx(move || !busy.get())>
                "Confirming your booking…"
            </p>
        </form>
    }
}

/// The keyboard's way to the dates: an `<input type=date>`, kept in step with the calendar.
fn date_input(
    f: Field,
    min: Date,
    stay_invalid: RwSignal<Option<&'static str>>,
    cal: Calendar,
    check_stay: impl Fn() -> bool + Copy + Send + Sync + 'static,
) -> impl IntoView {
    let error_id = format!("{}-error", f.id);
    let invalid = move || f.error.with(Option::is_some) || stay_invalid.get() == Some(f.id);
    let described = rx(move || {
        if f.error.with(Option::is_some) {
            Some(error_id.clone())
        } else if stay_invalid.get() == Some(f.id) {
            Some("stay-alert".to_string())
        } else {
            None
        }
    });
    let on_change = move |v: String| {
        f.value.set(v.clone());
        if v.is_empty() {
            f.error.set(None);
        } else if f.validate() {
            if let Some(d) = Date::parse(&v) {
                cal.show(d.month());
                cal.focus.set(d);
            }
        }
        check_stay();
    };
    view! {
        <div class="field">
            <label for=f.id>{f.label} <span class="req" aria-hidden="true">" *"</span></label>
            <input
                id=f.id
                name=f.id
                type="date"
                min=min.to_string()
                required
                aria-invalid=rx(move || invalid().then_some("true"))
                aria-describedby=described
                prop:value=rx(move || f.value.get())
                on:change=move |ev| on_change(event_target_value(&ev))
            />
            <p class="field-error" id=format!("{}-error", f.id) hidden=rx(move || f.error.with(Option::is_none))>
                {rx(move || f.error.get())}
            </p>
        </div>
    }
}

/// One month of days: buttons with `data-date`, a full date as their name, disabled when
/// booked or past; arrow keys move between days, Page Up and Page Down between months.
fn calendar(cal: Calendar, pick: impl Fn(Date) + Copy + Send + Sync + 'static) -> impl IntoView {
    let min = cal.today.month();
    let max = (0..MONTHS_AHEAD).fold(min, |m, _| m.next());
    let anchor = Memo::new(move |_| cal.anchor());
    let go_to = move |target: Date| {
        cal.focus.set(target);
        if target.month() != cal.month.get_untracked() {
            cal.show(target.month());
        }
        env::focus_id_later(format!("day-{target}"));
    };
    let on_key = move |ev: KeyboardEvent, day: Date| {
        let step: i32 = match ev.key().as_str() {
            "ArrowLeft" => -1,
            "ArrowRight" => 1,
            "ArrowUp" => -7,
            "ArrowDown" => 7,
            "Home" => -(day.weekday() as i32),
            "End" => 6 - day.weekday() as i32,
            "PageUp" => -(day.ymd().2 as i32),
            "PageDown" => dates::days_in_month(day.ymd().0, day.ymd().1) as i32 - day.ymd().2 as i32 + 1,
            _ => return,
        };
        ev.prevent_default();
        // Skip the days that cannot be chosen, in the same direction.
        let unit = match step {
            1 | -1 => step,
            7 | -7 => step,
            n if n > 0 => 1,
            _ => -1,
        };
        let mut target = day.add_days(step);
        let limit = max.last();
        while target >= cal.today && target <= limit && !cal.state(target).enabled() {
            target = target.add_days(unit);
        }
        if target >= cal.today && target <= limit {
            go_to(target);
        }
    };
    let selected = move |day: Date| {
        let (i, o) = (cal.check_in.get(), cal.check_out.get());
        Some(day) == i || Some(day) == o
    };
    let in_stay = move |day: Date| matches!((cal.check_in.get(), cal.check_out.get()), (Some(i), Some(o)) if i < day && day < o);
    let day_view = move |day: Date| {
        let label = rx(move || {
            let mut l = day.full();
            match cal.state(day) {
                Day::Past | Day::Taken => l.push_str(", unavailable"),
                Day::DepartureOnly => l.push_str(", available as the day you leave"),
                Day::Open => {}
            }
            if day == cal.today {
                l.push_str(", today");
            }
            l
        });
        let class = rx(move || {
            let mut c = String::from("day");
            match cal.state(day) {
                Day::Past => c.push_str(" past"),
                Day::Taken => c.push_str(" taken"),
                Day::DepartureOnly => c.push_str(" departure"),
                Day::Open => {}
            }
            if selected(day) {
                c.push_str(" selected");
            }
            if in_stay(day) {
                c.push_str(" in-stay");
            }
            if day == cal.today {
                c.push_str(" today");
            }
            c
        });
        view! {
            <td>
                <button
                    type="button"
                    id=format!("day-{day}")
                    class=class
                    data-date=day.to_string()
                    aria-label=label
                    aria-pressed=rx(move || if selected(day) { "true" } else { "false" })
                    disabled=rx(move || !cal.state(day).enabled())
                    tabindex=rx(move || if anchor.get() == Some(day) { "0" } else { "-1" })
                    on:click=move |_| pick(day)
                    on:keydown=move |ev| on_key(ev, day)
                    on:focus=move |_| cal.focus.set(day)
                >
                    {day.ymd().2}
                </button>
            </td>
        }
    };
    view! {
        <div class="calendar">
            <div class="calendar-bar">
                <button
                    type="button"
                    class="secondary small"
                    disabled=rx(move || cal.month.get() <= min)
                    on:click=move |_| cal.show(cal.month.get_untracked().prev())
                >
                    <span aria-hidden="true">"‹ "</span>
                    "Previous month"
                </button>
                <p class="month" id="calendar-month" aria-live="polite">
                    {rx(move || cal.month.get().name())}
                </p>
                <button
                    type="button"
                    class="secondary small"
                    disabled=rx(move || cal.month.get() >= max)
                    on:click=move |_| cal.show(cal.month.get_untracked().next())
                >
                    "Next month"
                    <span aria-hidden="true">" ›"</span>
                </button>
            </div>
            <table role="grid" aria-labelledby="calendar-month">
                <thead>
                    <tr>
                        {WEEKDAYS
                            .iter()
                            .map(|w| {
                                view! {
                                    <th scope="col" abbr=*w>
                                        {&w[..2]}
                                    </th>
                                }
                            })
                            .collect_view()}
                    </tr>
                </thead>
                <tbody>
                    {move || {
                        cal.month
                            .get()
                            .weeks()
                            .into_iter()
                            .map(|week| {
                                view! {
                                    <tr>
                                        {week
                                            .into_iter()
                                            .map(|day| match day {
                                                Some(day) => day_view(day).fresh(),
                                                None => view! { <td class="pad"></td> }.fresh(),
                                            })
                                            .collect_view()}
                                    </tr>
                                }
                            })
                            .collect_view()
                            .fresh()
                    }}
                </tbody>
            </table>
            <p class="legend hint">"Days that are crossed out are already booked. Pick your check-in day, then your check-out day."</p>
        </div>
    }
}

fn done_view(b: Value) -> impl IntoView {
    let cur = s(&b, "currency");
    let nights = s(&b, "nights");
    view! {
        <section class="done">
            <h1 id="view-heading" tabindex="-1">
                "Booking confirmed"
            </h1>
            <p>"Your stay is booked. A confirmation goes to your email address."</p>
            <dl class="facts">
                {ui::row("Check-in", dates::long(&s(&b, "check_in")))} {ui::row("Check-out", dates::long(&s(&b, "check_out")))}
                {ui::row("Nights", nights)} {ui::row("Guests", s(&b, "guests_count"))}
                {ui::row("Total", if s(&b, "total").is_empty() { String::new() } else { ui::amount(&b, "total", &cur) })}
                {ui::row("Booking id", s(&b, "id"))}
            </dl>
        </section>
    }
}
