//! Gable as an OAuth 2.1 authorization server (`docs/oauth.md`).
//!
//! - `tokens`: the token endpoint: code exchange with PKCE, client authentication,
//!   rotating refresh tokens, revocation, introspection, metadata, tokens on the API.
//! - `authorize`: the authorization endpoint and its consent page.
//! - `clients`: real OAuth client libraries (Rust's `oauth2`, Python's `authlib`)
//!   complete the flow.

mod authorize;
mod clients;
mod tokens;
