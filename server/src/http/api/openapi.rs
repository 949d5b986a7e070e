//! Placeholder replaced below.
use axum::response::IntoResponse;
pub async fn serve() -> impl IntoResponse { "" }
