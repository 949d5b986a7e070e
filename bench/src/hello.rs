//! An axum hello-world on the same runtime settings as Gable: the ceiling a list page
//! is compared with. Usage: `hello 127.0.0.1:9000`.

#[tokio::main]
async fn main() {
    let addr = std::env::args().nth(1).unwrap_or_else(|| "127.0.0.1:9000".into());
    let app = axum::Router::new().route("/", axum::routing::get(|| async { "Hello, world!" }));
    let listener = tokio::net::TcpListener::bind(&addr).await.expect("bind");
    axum::serve(listener, app).await.expect("serve");
}
