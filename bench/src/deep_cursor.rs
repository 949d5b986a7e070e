//! Walks a list page by page and prints the cursor of page N, so the benchmark can
//! request that deep page directly. Usage: `deep-cursor URL KEY PAGES`.

#[tokio::main]
async fn main() {
    let mut args = std::env::args().skip(1);
    let (url, key, pages) = match (args.next(), args.next(), args.next().and_then(|p| p.parse::<usize>().ok())) {
        (Some(u), Some(k), Some(p)) => (u, k, p),
        _ => {
            eprintln!("usage: deep-cursor URL KEY PAGES");
            std::process::exit(2);
        }
    };
    let client = reqwest::Client::new();
    let mut cursor: Option<String> = None;
    for page in 1..pages {
        let full = match &cursor {
            Some(c) => format!("{url}&cursor={c}"),
            None => url.clone(),
        };
        let r: serde_json::Value = client.get(&full).bearer_auth(&key).send().await.expect("request").json().await.expect("json");
        match r["meta"]["next_cursor"].as_str() {
            Some(c) => cursor = Some(c.to_string()),
            None => {
                eprintln!("the list ended at page {page}");
                std::process::exit(1);
            }
        }
    }
    println!("{}", cursor.unwrap_or_default());
}
