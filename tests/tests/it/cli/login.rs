//! `gable login` and profiles: a key checked against the server and saved in a file only
//! its user may read, never printed back; the other commands use the profile, with
//! `--profile`, `GABLE_API_KEY` and the flags over it; each says which environment it acts
//! on.

use std::os::unix::fs::PermissionsExt;

use gable_tests::cli::Cli;
use gable_tests::{both, TestApp};

async fn a_profile_is_saved_privately_and_used(app: &TestApp) {
    let t = app.tenant("Profiles").await;
    let cli = Cli::bare();
    let saved = cli.run(&["login", "--api-url", &format!("{}/v1", app.sandbox), "--api-key", &t.test_key]).await;
    assert!(saved.success, "{saved:?}");
    assert!(
        saved.stderr.contains("Saved profile `default`: the sandbox (test mode) at") && saved.stderr.contains(&app.sandbox),
        "{saved:?}"
    );
    assert!(!saved.stdout.contains(&t.test_key) && !saved.stderr.contains(&t.test_key), "the key is never printed back");
    let file = cli.home().join("profiles.toml");
    assert_eq!(std::fs::metadata(&file).expect("the profiles file").permissions().mode() & 0o777, 0o600);
    assert_eq!(std::fs::metadata(cli.home()).expect("its directory").permissions().mode() & 0o777, 0o700);
    let text = std::fs::read_to_string(&file).expect("readable by its owner");
    assert!(text.contains(&t.test_key) && text.contains(&format!("api_url = \"{}\"", app.sandbox)), "{text}");

    // The other commands use it without a key of their own, and name the environment.
    let secret = cli.run(&["listen", "--print-secret"]).await;
    assert!(secret.success && secret.stdout.starts_with("whsec_"), "{secret:?}");
    assert!(secret.stderr.contains("the sandbox (test mode)") && secret.stderr.contains("profile `default`"), "{secret:?}");

    // A second profile, with the key from standard input; chosen by flag or environment.
    let out = cli
        .run_with_stdin(&["login", "--profile", "live", "--api-url", &app.live, "--api-key-stdin"], Some(&format!("{}\n", t.live_key)))
        .await;
    assert!(out.success, "{out:?}");
    assert!(out.stderr.contains("Saved profile `live`: PRODUCTION (live mode)"), "{out:?}");
    let live = cli.run(&["listen", "--print-secret", "--profile", "live"]).await;
    assert!(live.success && live.stderr.contains("PRODUCTION (live mode)"), "{live:?}");
    assert_ne!(live.stdout, secret.stdout, "each key its own secret");
    let by_env = cli.clone().env("GABLE_PROFILE", "live").run(&["listen", "--print-secret"]).await;
    assert_eq!(by_env.stdout, live.stdout, "GABLE_PROFILE chooses it too: {by_env:?}");

    // GABLE_API_KEY and the flags override the profile's key.
    let other = app.key(t.id, false, &["*"], None).await;
    let overridden = cli.clone().env("GABLE_API_KEY", &other).run(&["listen", "--print-secret"]).await;
    assert!(overridden.success && overridden.stderr.contains("the key given"), "{overridden:?}");
    assert_ne!(overridden.stdout, secret.stdout);
    let flagged = cli.run(&["listen", "--print-secret", "--api-key", "gbl_test_not_a_key"]).await;
    assert!(!flagged.success && flagged.stderr.contains("401"), "{flagged:?}");

    // A missing profile, and no profile at all, are clear errors.
    let missing = cli.run(&["listen", "--profile", "staging"]).await;
    assert!(!missing.success && missing.stderr.contains("there is no profile `staging`"), "{missing:?}");
    let nothing = Cli::bare().run(&["listen"]).await;
    assert!(!nothing.success && nothing.stderr.contains("gable login"), "{nothing:?}");

    // A file others may read is refused, as ssh refuses such a key.
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).expect("chmod");
    let refused = cli.run(&["listen", "--print-secret"]).await;
    assert!(!refused.success && refused.stderr.contains("chmod 600"), "{refused:?}");
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).expect("chmod");

    // Logout forgets one profile and leaves the other.
    let out = cli.run(&["logout", "--profile", "live"]).await;
    assert!(out.success, "{out:?}");
    let gone = cli.run(&["listen", "--profile", "live"]).await;
    assert!(!gone.success && gone.stderr.contains("no profile `live`"), "{gone:?}");
    assert!(cli.run(&["listen", "--print-secret"]).await.success, "default is still there");
}
both!(a_profile_is_saved_privately_and_used);

async fn a_key_the_server_refuses_is_not_saved(app: &TestApp) {
    let cli = Cli::bare();
    let out = cli.run(&["login", "--api-url", &app.sandbox, "--api-key", "gbl_test_doesnotexist000000000000"]).await;
    assert!(!out.success && out.stderr.contains("refused the key") && out.stderr.contains("nothing was saved"), "{out:?}");
    assert!(!cli.home().join("profiles.toml").exists());
    // A server that is not there: not saved either, unless asked to.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").expect("a free port");
    let nowhere = format!("http://{}", closed.local_addr().expect("addr"));
    drop(closed);
    let out = cli.run(&["login", "--api-url", &nowhere, "--api-key", "gbl_test_whatever"]).await;
    assert!(!out.success && out.stderr.contains("could not reach Gable"), "{out:?}");
    assert!(!cli.home().join("profiles.toml").exists());
    let out = cli.run(&["login", "--api-url", &nowhere, "--api-key", "gbl_test_whatever", "--no-check"]).await;
    assert!(out.success, "{out:?}");
    // A key that may not read events is saved, with a note.
    let t = app.tenant("Narrow login").await;
    let narrow = app.key(t.id, false, &["properties:read"], None).await;
    let out = cli.run(&["login", "--profile", "narrow", "--api-url", &app.sandbox, "--api-key", &narrow]).await;
    assert!(out.success && out.stderr.contains("may not read events"), "{out:?}");
}
both!(a_key_the_server_refuses_is_not_saved);
