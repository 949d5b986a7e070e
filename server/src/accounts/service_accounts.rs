//! Service accounts and their API keys.
//!
//! Every statement carries the signed-in user's tenant: an id of another tenant's
//! account or key is `NotFound`, never `Forbidden` (`docs/api.md`, "Records").

use gable_app::service::{ApiKeyView, ConsoleError, CreatedKey, Me, NewKey, ServiceAccount, ServiceAccounts};
use uuid::Uuid;

use super::{invalid, require_manage, require_read, store_error, tenant_of, AccountService};
use crate::domain::value::format_datetime;
use crate::error::Error;
use crate::store::accounts::keys::KeyRow;
use crate::store::accounts::service_accounts::{Changed, ServiceAccountRow};

pub const NAME_MAX: usize = 100;
const MANAGE: &str = "manage service accounts";
const MANAGE_KEYS: &str = "manage API keys";
/// Service accounts and keys are what the account's data can be reached with: seeing
/// them (never their secrets) needs a role that reads everything.
const SEE: &str = "service accounts and API keys";

fn not_found() -> ConsoleError {
    ConsoleError::NotFound("The service account".into())
}

fn name_taken() -> ConsoleError {
    ConsoleError::Conflict("A service account with this name already exists.".into())
}

fn account_name(name: &str) -> Result<String, ConsoleError> {
    let v = name.trim();
    if v.is_empty() {
        return Err(invalid("name", "Give the service account a name, like \"Website\" or \"Accounting sync\"."));
    }
    if v.chars().count() > NAME_MAX {
        return Err(invalid("name", format!("Use at most {NAME_MAX} characters for the name.")));
    }
    if v.chars().any(char::is_control) {
        return Err(invalid("name", "Use letters, digits and punctuation only in the name."));
    }
    Ok(v.to_string())
}

fn account_id(id: &str) -> Result<Uuid, ConsoleError> {
    Uuid::parse_str(id.trim()).map_err(|_| not_found())
}

fn view(r: ServiceAccountRow) -> ServiceAccount {
    ServiceAccount {
        id: r.id.to_string(),
        name: r.name,
        status: r.status,
        created_at: format_datetime(&r.created_at),
        active_keys: u32::try_from(r.active_keys).unwrap_or(u32::MAX),
    }
}

fn key_view(k: KeyRow) -> ApiKeyView {
    ApiKeyView {
        id: k.id.to_string(),
        service_account_id: k.service_account_id.to_string(),
        environment: if k.livemode { "live" } else { "test" }.into(),
        prefix: k.prefix,
        scopes: k.scopes,
        property_ids: k.property_ids,
        created_at: format_datetime(&k.created_at),
        last_used_at: k.last_used_at.as_ref().map(format_datetime),
        revoked_at: k.revoked_at.as_ref().map(format_datetime),
    }
}

impl AccountService {
    async fn account(&self, tenant: Uuid, id: Uuid) -> Result<ServiceAccountRow, ConsoleError> {
        self.store.console_service_account(tenant, id).await.map_err(store_error("reading a service account"))?.ok_or_else(not_found)
    }
}

#[async_trait::async_trait]
impl ServiceAccounts for AccountService {
    async fn service_accounts(&self, me: &Me) -> Result<Vec<ServiceAccount>, ConsoleError> {
        require_read(me, "*:read", SEE)?;
        let tenant = tenant_of(me)?;
        let rows = self.store.console_service_accounts(tenant).await.map_err(store_error("listing service accounts"))?;
        Ok(rows.into_iter().map(view).collect())
    }

    async fn service_account(&self, me: &Me, id: &str) -> Result<ServiceAccount, ConsoleError> {
        require_read(me, "*:read", SEE)?;
        Ok(view(self.account(tenant_of(me)?, account_id(id)?).await?))
    }

    async fn create_service_account(&self, me: &Me, name: &str) -> Result<ServiceAccount, ConsoleError> {
        require_manage(me, MANAGE)?;
        let tenant = tenant_of(me)?;
        let name = account_name(name)?;
        let created = self.store.console_create_service_account(tenant, &name, self.now()).await.map_err(|e| match e {
            // Two creations of one name at once: the unique index decides.
            Error::Conflict(_) => name_taken(),
            other => store_error("creating a service account")(other),
        })?;
        let id = created.ok_or_else(name_taken)?;
        tracing::info!(tenant = %tenant, service_account = %id, by = %me.user_id, "console: service account created");
        Ok(view(self.account(tenant, id).await?))
    }

    async fn rename_service_account(&self, me: &Me, id: &str, name: &str) -> Result<ServiceAccount, ConsoleError> {
        require_manage(me, MANAGE)?;
        let tenant = tenant_of(me)?;
        let id = account_id(id)?;
        let name = account_name(name)?;
        let changed = self.store.console_rename_service_account(tenant, id, &name).await.map_err(|e| match e {
            Error::Conflict(_) => name_taken(),
            other => store_error("renaming a service account")(other),
        })?;
        match changed {
            Changed::Done => Ok(view(self.account(tenant, id).await?)),
            Changed::Missing => Err(not_found()),
            Changed::NameTaken => Err(name_taken()),
        }
    }

    async fn set_service_account_active(&self, me: &Me, id: &str, active: bool) -> Result<ServiceAccount, ConsoleError> {
        require_manage(me, MANAGE)?;
        let tenant = tenant_of(me)?;
        let id = account_id(id)?;
        match self.store.console_set_service_account_status(tenant, id, active).await.map_err(store_error("changing a service account"))? {
            Changed::Done => {}
            _ => return Err(not_found()),
        }
        tracing::info!(tenant = %tenant, service_account = %id, active, by = %me.user_id, "console: service account status changed");
        Ok(view(self.account(tenant, id).await?))
    }

    async fn delete_service_account(&self, me: &Me, id: &str) -> Result<(), ConsoleError> {
        require_manage(me, MANAGE)?;
        let tenant = tenant_of(me)?;
        let id = account_id(id)?;
        let keys = self
            .store
            .console_mark_service_account_deleted(tenant, id, self.now())
            .await
            .map_err(store_error("deleting a service account"))?
            .ok_or_else(not_found)?;
        // Already refused (the account is deleted); revoking records it on every key.
        for key in keys {
            self.store.revoke_key(tenant, key).await.map_err(store_error("revoking a deleted account's key"))?;
        }
        tracing::info!(tenant = %tenant, service_account = %id, by = %me.user_id, "console: service account deleted");
        Ok(())
    }

    async fn keys(&self, me: &Me, service_account_id: &str) -> Result<Vec<ApiKeyView>, ConsoleError> {
        require_read(me, "*:read", SEE)?;
        let tenant = tenant_of(me)?;
        let account = self.account(tenant, account_id(service_account_id)?).await?;
        let keys = self.store.console_keys(tenant, account.id).await.map_err(store_error("listing keys"))?;
        Ok(keys.into_iter().map(key_view).collect())
    }

    async fn create_key(&self, me: &Me, key: NewKey) -> Result<CreatedKey, ConsoleError> {
        require_manage(me, MANAGE_KEYS)?;
        let tenant = tenant_of(me)?;
        let account = self.account(tenant, account_id(&key.service_account_id)?).await?;
        if account.status != "active" {
            return Err(ConsoleError::Conflict("This service account is disabled. Enable it before creating keys.".into()));
        }
        let mut scopes: Vec<String> = Vec::new();
        for s in key.scopes.iter().map(|s| s.trim()).filter(|s| !s.is_empty()) {
            if !scopes.iter().any(|x| x == s) {
                scopes.push(s.to_string());
            }
        }
        if scopes.is_empty() {
            return Err(invalid("scopes", "Choose at least one scope."));
        }
        if let Some(bad) = scopes.iter().find(|s| !crate::domain::scopes::is_valid(s)) {
            return Err(invalid("scopes", format!("\"{bad}\" is not a scope. Use collection:read, collection:write, *:read or *.")));
        }
        crate::domain::scopes::validate("scopes", &scopes).map_err(|_| invalid("scopes", "Choose valid scopes."))?;
        let env = if key.livemode { "live" } else { "test" };
        let properties = match &key.property_ids {
            None => None,
            Some(ids) => {
                let mut out: Vec<Uuid> = Vec::new();
                for raw in ids.iter().map(|s| s.trim()).filter(|s| !s.is_empty()) {
                    let id = Uuid::parse_str(raw).map_err(|_| invalid("property_ids", format!("\"{raw}\" is not a property id.")))?;
                    if !out.contains(&id) {
                        out.push(id);
                    }
                }
                if out.is_empty() {
                    // An empty list would make a key that sees nothing; never widen it silently.
                    return Err(invalid("property_ids", "Choose at least one property, or allow all properties."));
                }
                Some(out)
            }
        };
        if properties.is_some() && crate::domain::scopes::validate_for_properties("scopes", &scopes).is_err() {
            return Err(invalid("scopes", "Request logs cover the whole account: a key limited to some properties cannot read them."));
        }
        let created = self.store.create_key(tenant, account.id, key.livemode, scopes, properties).await.map_err(|e| match e {
            Error::NotFound { param: Some(p), .. } if p == "properties" => {
                invalid("property_ids", format!("One of the chosen properties does not exist in the {env} environment."))
            }
            Error::Validation { param, .. } if param == "scopes" => invalid("scopes", "Choose valid scopes."),
            other => store_error("creating a key")(other),
        })?;
        let row =
            self.store.console_key(tenant, created.id).await.map_err(store_error("reading a new key"))?.ok_or(ConsoleError::Internal)?;
        tracing::info!(tenant = %tenant, key = %created.id, service_account = %account.id, by = %me.user_id, "console: API key created");
        Ok(CreatedKey { key: key_view(row), secret: created.secret })
    }

    async fn revoke_key(&self, me: &Me, key_id: &str) -> Result<(), ConsoleError> {
        require_manage(me, MANAGE_KEYS)?;
        let tenant = tenant_of(me)?;
        let missing = || ConsoleError::NotFound("The API key".into());
        let id = Uuid::parse_str(key_id.trim()).map_err(|_| missing())?;
        if self.store.revoke_key(tenant, id).await.map_err(store_error("revoking a key"))? {
            tracing::info!(tenant = %tenant, key = %id, by = %me.user_id, "console: API key revoked");
            return Ok(());
        }
        // Not revoked now: already revoked (fine, nothing to do) or not the tenant's.
        match self.store.console_key(tenant, id).await.map_err(store_error("reading a key"))? {
            Some(_) => Ok(()),
            None => Err(missing()),
        }
    }
}
