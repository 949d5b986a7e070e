//! OAuth 2.1's storage (`crate::ops::oauth`): apps, grants (one authorization and the
//! family of its code and tokens), codes and tokens. System tables, read outside any
//! tenant: an app of one tenant is authorized by users of others, and a token is found
//! by its hash before anyone knows its tenant. Codes, secrets and tokens are kept only
//! as SHA-256.
//!
//! A file each: the apps (`clients.rs`), the grants and what reads and ends them
//! (`grants.rs`), the authorization codes (`codes.rs`) and the tokens (`tokens.rs`).

mod clients;
mod codes;
mod grants;
mod tokens;

pub use clients::{NewOAuthClient, OAuthClient};
pub use codes::Code;
pub use grants::{revoke_user_grants, Grant, GrantRow};
pub use tokens::{Issued, Token};
