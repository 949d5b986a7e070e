//! Accounts: sign-up, sign-in, and the users and roles of a tenant.
//!
//! Console users and roles ARE the API's `users` and `roles` records (live
//! environment): they are created through the same validation and storage as
//! `POST /v1/users`, so the console and the API show the same records. The password
//! is kept beside the user record, in `console_credentials`.

use std::collections::HashMap;

use gable_app::service::{ConsoleError, Me, NewSession, NewUser, RoleView, SignUp, Team, UserView};
use serde_json::{json, Value as Json};
use uuid::Uuid;

use super::{invalid, passwords, require_manage, require_read, store_error, tenant_of, AccountService};
use crate::domain::collections::collection;
use crate::domain::reach::Scope;
use crate::domain::record::Record;
use crate::domain::validate;
use crate::domain::value::format_datetime;
use crate::error::Error;
use crate::ops::Actor;
use crate::store::accounts::users::UserRow;

/// The roles every tenant starts with: name, permissions (scopes), description.
pub const DEFAULT_ROLES: [(&str, &str, &str); 3] = [
    ("Owner", "*", "Everything: properties, money, users, service accounts and API keys."),
    ("Admin", "*", "Everything an owner can do."),
    ("Read-only staff", "*:read", "Sees everything; changes nothing."),
];

const NAME_MAX: usize = 200;
const COMPANY_MAX: usize = 200;

fn email_taken() -> ConsoleError {
    ConsoleError::Conflict("An account with this email already exists.".into())
}

/// A required line of text: trimmed, not empty, at most `max` characters.
fn text(field: &str, value: &str, max: usize, what: &str) -> Result<String, ConsoleError> {
    let v = value.trim();
    if v.is_empty() {
        return Err(invalid(field, format!("Enter {what}.")));
    }
    if v.chars().count() > max {
        return Err(invalid(field, format!("Use at most {max} characters for {what}.")));
    }
    if v.chars().any(char::is_control) {
        return Err(invalid(field, format!("Use letters, digits and punctuation only in {what}.")));
    }
    Ok(v.to_string())
}

/// An email address as the `Email` type of the API accepts it, trimmed and lowercase
/// (sign-in compares emails in lowercase).
fn email(value: &str) -> Result<String, ConsoleError> {
    let v = value.trim().to_lowercase();
    let bad = || invalid("email", "Enter a valid email address, like name@company.com.");
    if v.is_empty() {
        return Err(invalid("email", "Enter your email address."));
    }
    let field = collection("users").and_then(|c| c.field("email")).ok_or(ConsoleError::Internal)?;
    crate::domain::value::from_json(field, &json!(v)).map_err(|_| bad())?;
    Ok(v)
}

/// A domain error from validating or storing a record, in words.
fn record_error(doing: &'static str) -> impl FnOnce(Error) -> ConsoleError {
    move |e| match e {
        Error::Validation { param, .. } | Error::NotFound { param: Some(param), .. } => {
            let message = match param.as_str() {
                "email" => "Enter a valid email address, like name@company.com.".to_string(),
                "name" => format!("Enter a name of at most {NAME_MAX} characters."),
                "role_id" => "Choose one of the roles.".to_string(),
                other => format!("Check the {other} field."),
            };
            invalid(&param, message)
        }
        Error::InsufficientScope { message, .. } => ConsoleError::Forbidden(message),
        other => store_error(doing)(other),
    }
}

fn user_view(u: &UserRow, roles: &HashMap<Uuid, String>) -> UserView {
    UserView {
        id: u.id.to_string(),
        email: u.email.clone(),
        name: u.name.clone(),
        role_id: u.role_id.map(|r| r.to_string()),
        role: u.role_id.and_then(|r| roles.get(&r).cloned()),
        status: u.status.clone(),
        last_sign_in_at: u.last_sign_in_at.as_ref().map(format_datetime),
    }
}

impl AccountService {
    /// Validates and stores a record of a collection in the live environment, as Gable
    /// itself (sign-up makes a tenant's first roles and owner) or as a signed-in user.
    async fn create_record(&self, actor: &Actor, name: &str, body: Json) -> Result<Record, ConsoleError> {
        let c = collection(name).ok_or(ConsoleError::Internal)?;
        self.ops.create(actor, c, &body).await.map(|created| created.record).map_err(record_error("creating a record"))
    }

    /// Sign-up (`Sessions::sign_up`), throttled per client address.
    pub(super) async fn register(&self, form: SignUp, client: &str) -> Result<NewSession, ConsoleError> {
        // Counted before the form is checked, like sign-in: "this email is taken" is an answer worth limiting.
        self.throttle.sign_up(client).map_err(|retry_after_secs| ConsoleError::TooManyAttempts { retry_after_secs })?;
        let company = text("company", &form.company, COMPANY_MAX, "your company's name")?;
        let name = text("name", &form.name, NAME_MAX, "your name")?;
        let email = email(&form.email)?;
        passwords::check_rules(&form.password, &email)?;
        // The user record must validate before anything is created.
        let users = collection("users").ok_or(ConsoleError::Internal)?;
        validate::create(users, &json!({ "email": email, "name": name, "status": "active" }), true)
            .map_err(record_error("validating a user"))?;
        if self.store.console_email_taken(&email).await.map_err(store_error("checking an email"))? {
            return Err(email_taken());
        }
        let hash = self.hasher.hash(&form.password).await?;
        let tenant = self.store.create_tenant(&company).await.map_err(store_error("creating a tenant"))?;
        match self.populate_tenant(tenant, &name, &email, &hash).await {
            Ok(session) => {
                tracing::info!(tenant = %tenant, user = %session.me.user_id, "console: signed up");
                Ok(session)
            }
            Err(e) => {
                // All or nothing: a sign-up that failed half-way leaves no tenant behind.
                if let Err(d) = self.store.console_discard_tenant(tenant).await {
                    tracing::error!(tenant = %tenant, error = %super::describe(&d), "console: removing a half-made tenant failed");
                }
                Err(e)
            }
        }
    }

    async fn populate_tenant(&self, tenant: Uuid, name: &str, email: &str, hash: &str) -> Result<NewSession, ConsoleError> {
        let gable = Actor::system(tenant, true);
        let mut owner = None;
        for (role, permission, description) in DEFAULT_ROLES {
            let rec = self
                .create_record(&gable, "roles", json!({ "name": role, "permissions": [permission], "description": description }))
                .await?;
            owner.get_or_insert(rec.id);
        }
        let user =
            self.create_record(&gable, "users", json!({ "email": email, "name": name, "role_id": owner, "status": "active" })).await?;
        self.store.console_insert_credential(tenant, user.id, email, hash, self.now()).await.map_err(|e| match e {
            Error::Conflict(_) => email_taken(),
            other => store_error("storing a password")(other),
        })?;
        self.start_session(tenant, user.id, None, true).await
    }

    /// Sign-in (`Sessions::sign_in`).
    pub(super) async fn sign_in_with_password(
        &self,
        email: &str,
        password: &str,
        client: &str,
        previous: Option<&str>,
    ) -> Result<NewSession, ConsoleError> {
        let email = email.trim().to_lowercase();
        // Counted before anything else, so parallel guesses cannot outrun the count.
        self.throttle.attempt(&email, client).map_err(|retry_after_secs| ConsoleError::TooManyAttempts { retry_after_secs })?;
        if email.is_empty() || email.len() > 320 || password.is_empty() || password.len() > 1024 {
            return Err(ConsoleError::BadCredentials);
        }
        let stored = self.store.console_credential(&email).await.map_err(store_error("reading a password"))?;
        // An unknown email is verified against a dummy hash: it costs what a wrong password costs.
        let verified = self.hasher.verify(password, stored.as_ref().map(|c| c.password_hash.clone())).await?;
        let Some(cred) = stored.filter(|c| verified.ok && c.user_status == "active") else {
            return Err(ConsoleError::BadCredentials);
        };
        if verified.needs_rehash {
            // Best effort: the sign-in stands even if the new hash cannot be stored.
            match self.hasher.hash(password).await {
                Ok(h) => {
                    if let Err(e) = self.store.console_set_password_hash(cred.tenant_id, cred.user_id, &h, self.now()).await {
                        tracing::warn!(error = %super::describe(&e), "console: storing a rehashed password failed");
                    }
                }
                Err(_) => tracing::warn!("console: rehashing a password failed"),
            }
        }
        let session = self.start_session(cred.tenant_id, cred.user_id, previous, true).await?;
        tracing::info!(tenant = %cred.tenant_id, user = %cred.user_id, "console: signed in");
        Ok(session)
    }

    async fn role_names(&self, tenant: Uuid) -> Result<Vec<RoleView>, ConsoleError> {
        let roles = self.store.console_roles(tenant).await.map_err(store_error("listing roles"))?;
        Ok(roles.into_iter().map(|r| RoleView { id: r.id.to_string(), name: r.name, permissions: r.permissions }).collect())
    }

    /// `gable user create`: a console user made by an operator, with one of the default
    /// roles (`owner`, `admin`, `read-only`), which are made first if the tenant lacks them
    /// (a tenant made by `gable tenant create` has none).
    pub async fn create_user_as_operator(
        &self,
        tenant: Uuid,
        email: &str,
        name: &str,
        role: &str,
        password: &str,
    ) -> Result<UserView, ConsoleError> {
        let wanted = match role {
            "owner" => DEFAULT_ROLES[0].0,
            "admin" => DEFAULT_ROLES[1].0,
            "read-only" => DEFAULT_ROLES[2].0,
            _ => return Err(invalid("role", "Choose owner, admin or read-only.")),
        };
        let mut roles = self.role_names(tenant).await?;
        let gable = Actor::system(tenant, true);
        for (role, permission, description) in DEFAULT_ROLES {
            if !roles.iter().any(|r| r.name == role) {
                self.create_record(&gable, "roles", json!({ "name": role, "permissions": [permission], "description": description }))
                    .await?;
            }
        }
        if roles.len() < DEFAULT_ROLES.len() {
            roles = self.role_names(tenant).await?;
        }
        let role_id = roles.iter().find(|r| r.name == wanted).map(|r| r.id.clone()).ok_or(ConsoleError::Internal)?;
        let form = NewUser { email: email.into(), name: name.into(), role_id, password: password.into() };
        // The operator at the machine acts as Gable itself.
        let view = self.insert_user(&Actor::system(tenant, true), &roles, form).await?;
        tracing::info!(tenant = %tenant, user = %view.id, "console: user added by an operator (gable user create)");
        Ok(view)
    }

    /// Validates and stores a user with a password, all or nothing, made by `actor`: the
    /// operations refuse a role carrying more than the actor holds.
    async fn insert_user(&self, actor: &Actor, roles: &[RoleView], form: NewUser) -> Result<UserView, ConsoleError> {
        let tenant = actor.scope.tenant;
        let name = text("name", &form.name, NAME_MAX, "the person's name")?;
        let email = email(&form.email)?;
        let role = Uuid::parse_str(form.role_id.trim())
            .ok()
            .and_then(|id| roles.iter().find(|r| r.id == id.to_string()))
            .ok_or_else(|| invalid("role_id", "Choose one of the roles."))?;
        passwords::check_rules(&form.password, &email)?;
        if self.store.console_email_taken(&email).await.map_err(store_error("checking an email"))? {
            return Err(email_taken());
        }
        let hash = self.hasher.hash(&form.password).await?;
        let rec =
            self.create_record(actor, "users", json!({ "email": email, "name": name, "role_id": role.id, "status": "active" })).await?;
        if let Err(e) = self.store.console_insert_credential(tenant, rec.id, &email, &hash, self.now()).await {
            // All or nothing: no user record without its password.
            let users = collection("users").ok_or(ConsoleError::Internal)?;
            if let Err(d) = self.ops.delete(&Actor::system(tenant, true), users, rec.id).await {
                tracing::error!(error = %super::describe(&d), "console: removing a half-made user failed");
            }
            return Err(match e {
                Error::Conflict(_) => email_taken(),
                other => store_error("storing a password")(other),
            });
        }
        let row = UserRow {
            id: rec.id,
            email,
            name,
            role_id: Some(Uuid::parse_str(&role.id).map_err(|_| ConsoleError::Internal)?),
            status: "active".into(),
            last_sign_in_at: None,
        };
        let names: HashMap<Uuid, String> = roles.iter().filter_map(|r| Some((Uuid::parse_str(&r.id).ok()?, r.name.clone()))).collect();
        Ok(user_view(&row, &names))
    }
}

#[async_trait::async_trait]
impl Team for AccountService {
    async fn roles(&self, me: &Me) -> Result<Vec<RoleView>, ConsoleError> {
        require_read(me, "roles:read", "roles")?;
        self.role_names(tenant_of(me)?).await
    }

    async fn users(&self, me: &Me) -> Result<Vec<UserView>, ConsoleError> {
        require_read(me, "users:read", "the team")?;
        let tenant = tenant_of(me)?;
        let roles: HashMap<Uuid, String> =
            self.role_names(tenant).await?.into_iter().filter_map(|r| Some((Uuid::parse_str(&r.id).ok()?, r.name))).collect();
        let users = self.store.console_users(tenant).await.map_err(store_error("listing users"))?;
        Ok(users.iter().map(|u| user_view(u, &roles)).collect())
    }

    async fn create_user(&self, me: &Me, form: NewUser) -> Result<UserView, ConsoleError> {
        require_manage(me, "add users")?;
        let tenant = tenant_of(me)?;
        let roles = self.role_names(tenant).await?;
        // Users are production records; the signed-in user acts with their own role's
        // permissions, so they can never give someone more than they hold.
        let me_acting = Actor { scope: Scope { tenant, livemode: true, properties: None }, grants: me.permissions.clone().into() };
        let view = self.insert_user(&me_acting, &roles, form).await?;
        tracing::info!(tenant = %tenant, user = %view.id, by = %me.user_id, "console: user added");
        Ok(view)
    }
}
