//! A PostgreSQL cluster of a test's own (initdb into a temporary directory, on a free
//! port), so that a test can stop and start the database under a running Gable. Run as
//! the `postgres` user when the tests run as root (PostgreSQL refuses root).

use std::path::PathBuf;
use std::process::{Command, Output};

pub struct Cluster {
    dir: tempfile::TempDir,
    bin: PathBuf,
    pub port: u16,
    as_postgres: bool,
}

impl Cluster {
    /// A new, stopped cluster; `None` (with a note) when PostgreSQL's server programs are
    /// not installed and PostgreSQL is not required (`GABLE_REQUIRE_POSTGRES=1` panics).
    pub fn create() -> Option<Cluster> {
        let bin = std::fs::read_dir("/usr/lib/postgresql")
            .ok()
            .and_then(|versions| versions.filter_map(Result::ok).map(|v| v.path().join("bin")).filter(|b| b.join("initdb").exists()).max());
        let Some(bin) = bin else {
            assert!(
                !std::env::var("GABLE_REQUIRE_POSTGRES").is_ok_and(|v| v == "1"),
                "PostgreSQL is required but its server programs (initdb) are not under /usr/lib/postgresql/*/bin"
            );
            eprintln!("SKIPPED: no initdb under /usr/lib/postgresql/*/bin");
            return None;
        };
        let as_postgres = Command::new("id").arg("-u").output().map(|o| String::from_utf8_lossy(&o.stdout).trim() == "0").unwrap_or(false);
        let dir = tempfile::Builder::new().prefix("gable-pg-").tempdir().expect("temp dir");
        if as_postgres {
            let ok = Command::new("chown").args(["-R", "postgres:"]).arg(dir.path()).status().expect("chown");
            assert!(ok.success(), "chown the cluster's directory to postgres");
        }
        let port = std::net::TcpListener::bind("127.0.0.1:0").and_then(|l| l.local_addr()).expect("a free port").port();
        let cluster = Cluster { dir, bin, port, as_postgres };
        let out = cluster.run("initdb", &["-D", &cluster.data(), "--auth=trust", "--username=postgres", "--no-sync", "--encoding=UTF8"]);
        assert!(out.status.success(), "initdb: {}", String::from_utf8_lossy(&out.stderr));
        Some(cluster)
    }

    fn data(&self) -> String {
        self.dir.path().join("data").display().to_string()
    }

    fn run(&self, tool: &str, args: &[&str]) -> Output {
        let tool = self.bin.join(tool);
        let mut cmd = if self.as_postgres {
            let mut c = Command::new("runuser");
            c.args(["-u", "postgres", "--"]).arg(tool);
            c
        } else {
            Command::new(tool)
        };
        cmd.args(args).current_dir(self.dir.path()).output().expect("run a PostgreSQL program")
    }

    /// Starts it and waits until it accepts connections.
    pub fn start(&self) {
        let options =
            format!("-p {} -k {} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200", self.port, self.dir.path().display());
        let log = self.dir.path().join("postgres.log").display().to_string();
        let out = self.run("pg_ctl", &["-D", &self.data(), "-l", &log, "-o", &options, "-w", "-t", "60", "start"]);
        assert!(out.status.success(), "pg_ctl start: {}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    }

    /// Stops it at once (`-m fast`: open connections are cut, as in a crash or a failover).
    pub fn stop(&self) {
        let out = self.run("pg_ctl", &["-D", &self.data(), "-m", "fast", "-w", "stop"]);
        assert!(out.status.success(), "pg_ctl stop: {}", String::from_utf8_lossy(&out.stderr));
    }

    /// The superuser's URL of its `postgres` database.
    pub fn url(&self) -> String {
        format!("postgres://postgres@127.0.0.1:{}/postgres", self.port)
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        let _ = self.run("pg_ctl", &["-D", &self.data(), "-m", "immediate", "-w", "stop"]);
    }
}
