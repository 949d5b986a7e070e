//! What a credential learns beyond its scopes (third review): a webhook delivery's
//! response excerpt and the reports.
