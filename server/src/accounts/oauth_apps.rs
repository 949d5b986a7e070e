//! The console's "OAuth apps" (the apps a tenant registers, `docs/api.md`, "Credentials") and "Connected
//! apps" (the authorizations its users gave): `docs/oauth.md`. Apps are registered for the
//! environment the console shows; their secrets are shown once and kept as SHA-256.

use gable_app::service::{ConnectedAppView, ConsoleError, Me, OAuthAppForm, OAuthAppView, OAuthAppWithSecret, OAuthApps};
use uuid::Uuid;

use super::{require_manage, require_read, store_error, tenant_of, AccountService};
use crate::domain::value::format_datetime;
use crate::error::Error;
use crate::store::keys::hash_secret;
use crate::store::keys::random_secret;
use crate::store::oauth::OAuthClient;

fn view(c: &OAuthClient) -> OAuthAppView {
    OAuthAppView {
        id: c.id.to_string(),
        client_id: c.client_id.clone(),
        name: c.name.clone(),
        redirect_uris: c.redirect_uris.clone(),
        public: c.is_public(),
        livemode: c.livemode,
        created_at: format_datetime(&c.created_at),
    }
}

/// One redirect URI per line (blank lines ignored).
fn lines(text: &str) -> Vec<String> {
    text.lines().map(str::trim).filter(|l| !l.is_empty()).map(str::to_string).collect()
}

fn id_of(raw: &str, what: &str) -> Result<Uuid, ConsoleError> {
    Uuid::parse_str(raw.trim()).map_err(|_| ConsoleError::NotFound(format!("There is no such {what}.")))
}

/// A validation refusal of the app's fields as a form error; anything else is ours.
fn form_error(doing: &'static str) -> impl FnOnce(Error) -> ConsoleError {
    move |e| match e {
        Error::Validation { param, message } => {
            let message = upper_first(message.strip_prefix(&format!("{param}: ")).unwrap_or(&message));
            ConsoleError::Invalid { field: param, message }
        }
        other => store_error(doing)(other),
    }
}

fn upper_first(s: &str) -> String {
    let mut c = s.chars();
    c.next().map(|f| f.to_uppercase().collect::<String>() + c.as_str()).unwrap_or_default()
}

impl AccountService {
    async fn tenant_app(&self, me: &Me, id: &str) -> Result<OAuthClient, ConsoleError> {
        let tenant = tenant_of(me)?;
        let id = id_of(id, "app")?;
        let apps = self.store.oauth_clients_of(tenant).await.map_err(store_error("listing oauth apps"))?;
        apps.into_iter().find(|a| a.id == id).ok_or_else(|| ConsoleError::NotFound("There is no such app.".into()))
    }

    /// Owners and admins see and revoke every user's; the others their own.
    fn whose(me: &Me) -> Result<Option<Uuid>, ConsoleError> {
        if me.can_manage {
            Ok(None)
        } else {
            Uuid::parse_str(&me.user_id).map(Some).map_err(|_| ConsoleError::Internal)
        }
    }
}

#[async_trait::async_trait]
impl OAuthApps for AccountService {
    async fn oauth_apps(&self, me: &Me) -> Result<Vec<OAuthAppView>, ConsoleError> {
        // The tenant's registered apps, like its keys, are part of the account's API access.
        require_read(me, "*:read", "the OAuth apps")?;
        let apps = self.store.oauth_clients_of(tenant_of(me)?).await.map_err(store_error("listing oauth apps"))?;
        Ok(apps.iter().map(view).collect())
    }

    async fn create_oauth_app(&self, me: &Me, form: OAuthAppForm) -> Result<OAuthAppWithSecret, ConsoleError> {
        require_manage(me, "register OAuth apps")?;
        let tenant = tenant_of(me)?;
        let uris = lines(&form.redirect_uris);
        let (app, secret) =
            crate::ops::oauth::register_client(&self.store, tenant, &form.name, &uris, form.public, me.livemode, self.now())
                .await
                .map_err(form_error("registering an oauth app"))?;
        tracing::info!(tenant = %tenant, app = %app.id, by = %me.user_id, "console: oauth app registered");
        Ok(OAuthAppWithSecret { app: view(&app), client_secret: secret })
    }

    async fn update_oauth_app(&self, me: &Me, id: &str, redirect_uris: &str) -> Result<OAuthAppView, ConsoleError> {
        require_manage(me, "change OAuth apps")?;
        let mut app = self.tenant_app(me, id).await?;
        let uris = lines(redirect_uris);
        crate::ops::oauth::check_redirect_uris(&uris).map_err(form_error("checking redirect URIs"))?;
        self.store
            .oauth_update_client(app.tenant_id, app.id, Some(&uris), None, self.now())
            .await
            .map_err(store_error("changing an oauth app"))?;
        app.redirect_uris = uris;
        Ok(view(&app))
    }

    async fn rotate_oauth_app_secret(&self, me: &Me, id: &str) -> Result<OAuthAppWithSecret, ConsoleError> {
        require_manage(me, "rotate OAuth app secrets")?;
        let app = self.tenant_app(me, id).await?;
        if app.is_public() {
            return Err(ConsoleError::Conflict("This app is public: it has no secret to rotate.".into()));
        }
        let secret = random_secret(crate::domain::oauth::CLIENT_SECRET_PREFIX);
        self.store
            .oauth_update_client(app.tenant_id, app.id, None, Some(&hash_secret(&secret)), self.now())
            .await
            .map_err(store_error("rotating an oauth app secret"))?;
        tracing::info!(app = %app.id, by = %me.user_id, "console: oauth app secret rotated");
        Ok(OAuthAppWithSecret { app: view(&app), client_secret: Some(secret) })
    }

    async fn delete_oauth_app(&self, me: &Me, id: &str) -> Result<(), ConsoleError> {
        require_manage(me, "delete OAuth apps")?;
        let app = self.tenant_app(me, id).await?;
        self.store.oauth_delete_client(app.tenant_id, app.id, self.now()).await.map_err(store_error("deleting an oauth app"))?;
        tracing::info!(app = %app.id, by = %me.user_id, "console: oauth app deleted, its authorizations revoked");
        Ok(())
    }

    async fn connected_apps(&self, me: &Me) -> Result<Vec<ConnectedAppView>, ConsoleError> {
        let rows = self.store.oauth_grants_of(tenant_of(me)?, Self::whose(me)?).await.map_err(store_error("listing connected apps"))?;
        Ok(connections(rows))
    }

    async fn revoke_connected_app(&self, me: &Me, id: &str) -> Result<(), ConsoleError> {
        let grant = id_of(id, "connected app")?;
        let done = self
            .store
            .oauth_revoke_connection(tenant_of(me)?, Self::whose(me)?, grant, self.now())
            .await
            .map_err(store_error("revoking a connected app"))?;
        if !done {
            return Err(ConsoleError::NotFound("There is no such connected app.".into()));
        }
        tracing::info!(grant = %grant, by = %me.user_id, "console: connected app revoked");
        Ok(())
    }
}

/// One entry per app and user, however often the user authorized it: the scopes its
/// grants hold together, since when it is connected and when it last acted. The entry's
/// id is its newest grant's (rows come newest first); revoking it ends them all.
fn connections(rows: Vec<crate::store::oauth::GrantRow>) -> Vec<ConnectedAppView> {
    let mut merged: Vec<crate::store::oauth::GrantRow> = vec![];
    for g in rows {
        match merged.iter_mut().find(|m| m.client == g.client && m.user_id == g.user_id) {
            Some(m) => {
                for s in g.scopes {
                    if !m.scopes.contains(&s) {
                        m.scopes.push(s);
                    }
                }
                m.created_at = m.created_at.min(g.created_at);
                m.last_used_at = m.last_used_at.max(g.last_used_at);
            }
            None => merged.push(g),
        }
    }
    merged
        .into_iter()
        .map(|g| ConnectedAppView {
            id: g.id.to_string(),
            app_name: g.app_name,
            user_email: g.email,
            scopes: g.scopes,
            livemode: g.livemode,
            created_at: format_datetime(&g.created_at),
            last_used_at: g.last_used_at.as_ref().map(format_datetime),
        })
        .collect()
}
