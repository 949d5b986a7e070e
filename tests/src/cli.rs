//! The `gable` binary as an integrator runs it (`gable login`, `listen`, `trigger`, `logs
//! tail`) against a test server: a child process with an API address and key in its
//! environment and a config directory of its own, so no test sees another's profiles or
//! the machine's. Short commands are run to the end; long ones (`listen`, `logs tail`) are
//! spawned and read line by line as they print.

use std::process::Stdio;
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};
use tokio::sync::mpsc;

use crate::process::binary;

/// Variables of the CLI that the machine's environment must not bring in.
const THEIRS: &[&str] = &["GABLE_PROFILE", "GABLE_API_URL", "GABLE_API_KEY", "GABLE_CLI_HOME", "XDG_CONFIG_HOME"];

/// Clones share the config directory (one user's machine, other settings).
#[derive(Clone)]
pub struct Cli {
    home: std::sync::Arc<tempfile::TempDir>,
    env: Vec<(String, String)>,
}

/// A finished command.
#[derive(Debug)]
pub struct Output {
    pub success: bool,
    pub stdout: String,
    pub stderr: String,
}

impl Cli {
    /// A CLI whose commands use `api_url` (a server's base address) and `key`.
    pub fn new(api_url: &str, key: &str) -> Cli {
        let mut cli = Cli::bare();
        cli.env.push(("GABLE_API_URL".into(), api_url.into()));
        cli.env.push(("GABLE_API_KEY".into(), key.into()));
        cli
    }

    /// A CLI with nothing set but its own (empty) config directory.
    pub fn bare() -> Cli {
        Cli { home: std::sync::Arc::new(tempfile::tempdir().expect("temp dir")), env: vec![] }
    }

    /// The CLI's config directory (`GABLE_CLI_HOME`): where `gable login` saves profiles.
    /// It does not exist until a command makes it (as `~/.config/gable` on a new machine).
    pub fn home(&self) -> std::path::PathBuf {
        self.home.path().join("gable")
    }

    /// Sets (or replaces) an environment variable of the commands.
    pub fn env(mut self, k: &str, v: &str) -> Cli {
        self.env.retain(|(name, _)| name != k);
        self.env.push((k.into(), v.into()));
        self
    }

    fn command(&self, args: &[&str]) -> Command {
        let mut cmd = Command::new(binary());
        for var in THEIRS {
            cmd.env_remove(var);
        }
        cmd.env("GABLE_CLI_HOME", self.home()).envs(self.env.iter().map(|(k, v)| (k, v))).args(args);
        cmd.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped()).kill_on_drop(true);
        cmd
    }

    /// Runs `gable <args>` to its end (at most 2 minutes).
    pub async fn run(&self, args: &[&str]) -> Output {
        self.run_with_stdin(args, None).await
    }

    /// Runs `gable <args>` with `stdin` as its standard input.
    pub async fn run_with_stdin(&self, args: &[&str], stdin: Option<&str>) -> Output {
        let mut cmd = self.command(args);
        if stdin.is_some() {
            cmd.stdin(Stdio::piped());
        }
        let mut child = cmd.spawn().expect("the gable binary starts (cargo build -p gable)");
        if let (Some(text), Some(mut input)) = (stdin, child.stdin.take()) {
            use tokio::io::AsyncWriteExt;
            input.write_all(text.as_bytes()).await.expect("stdin");
        }
        let out = tokio::time::timeout(Duration::from_secs(120), child.wait_with_output())
            .await
            .unwrap_or_else(|_| panic!("`gable {}` did not end within 2 minutes", args.join(" ")))
            .expect("the command's output");
        Output {
            success: out.status.success(),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
    }

    /// Starts `gable <args>` and leaves it running (killed when dropped).
    pub fn spawn(&self, args: &[&str]) -> Running {
        let mut child = self.command(args).spawn().expect("the gable binary starts (cargo build -p gable)");
        let (out_tx, stdout) = mpsc::unbounded_channel();
        let (err_tx, stderr) = mpsc::unbounded_channel();
        let out = child.stdout.take().expect("stdout");
        let err = child.stderr.take().expect("stderr");
        tokio::spawn(async move {
            let mut lines = BufReader::new(out).lines();
            while let Ok(Some(line)) = lines.next_line().await {
                let _ = out_tx.send(line);
            }
        });
        tokio::spawn(async move {
            let mut lines = BufReader::new(err).lines();
            while let Ok(Some(line)) = lines.next_line().await {
                let _ = err_tx.send(line);
            }
        });
        Running { child, stdout, stderr, said: vec![], args: args.join(" ") }
    }
}

/// A running command.
pub struct Running {
    child: Child,
    stdout: mpsc::UnboundedReceiver<String>,
    stderr: mpsc::UnboundedReceiver<String>,
    /// Its standard error so far (what it told the person running it).
    pub said: Vec<String>,
    args: String,
}

impl Running {
    /// Its next line of standard output within `within`, or `None`.
    pub async fn line(&mut self, within: Duration) -> Option<String> {
        tokio::time::timeout(within, self.stdout.recv()).await.ok().flatten()
    }

    /// Waits until a line of its standard error contains `text`; returns that line.
    pub async fn told(&mut self, text: &str, within: Duration) -> String {
        if let Some(line) = self.said.iter().find(|l| l.contains(text)) {
            return line.clone();
        }
        let deadline = tokio::time::Instant::now() + within;
        loop {
            match tokio::time::timeout_at(deadline, self.stderr.recv()).await {
                Ok(Some(line)) => {
                    self.said.push(line.clone());
                    if line.contains(text) {
                        return line;
                    }
                }
                _ => panic!("`gable {}` did not say {text:?} within {within:?}; it said: {:#?}", self.args, self.said),
            }
        }
    }

    /// Sends it a signal (`"INT"` for Ctrl-C, `"TERM"`, …) with `kill(1)`.
    pub fn signal(&self, name: &str) {
        let pid = self.child.id().expect("running");
        let status = std::process::Command::new("kill").arg(format!("-{name}")).arg(pid.to_string()).status().expect("kill");
        assert!(status.success(), "kill -{name} failed");
    }

    /// Waits for it to end (at most `within`); its success and the rest of its standard error.
    pub async fn wait(mut self, within: Duration) -> (bool, Vec<String>) {
        let status = tokio::time::timeout(within, self.child.wait())
            .await
            .unwrap_or_else(|_| panic!("`gable {}` did not end within {within:?}", self.args))
            .expect("wait");
        while let Ok(Some(line)) = tokio::time::timeout(Duration::from_secs(1), self.stderr.recv()).await {
            self.said.push(line);
        }
        (status.success(), self.said)
    }
}
