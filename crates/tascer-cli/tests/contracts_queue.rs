//! Contract workers on many hosts, end to end: a real PostgreSQL queue,
//! a real git remote (a bare repository), `tascer contracts enqueue`,
//! `tascer contracts worker` processes against the scripted mock model,
//! `tascer contracts status --queue --json`, archives in a directory.
//!
//! - enqueue refuses a malformed contract (nothing enqueued) and adds the
//!   same text only once;
//! - a worker with `--until-empty` runs the queue and exits; each contract
//!   is on its own pushed branch with the written-back contract, its
//!   session archived and verifiable;
//! - a worker killed with SIGKILL mid-contract loses its lease and another
//!   worker completes the contract; with `--max-attempts 1` it fails;
//! - a worker paused past its lease loses it: its result is discarded and
//!   it says so;
//! - with `TASCER_STORE=postgres://…` the workers' sessions go to the
//!   shared store (nothing in their homes) and verify from there;
//! - the fleet: 4 workers, 100 contracts, one SIGKILLed mid-contract —
//!   every contract completes exactly once and every session verifies.
#![cfg(unix)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use common::{git_in, tascer, texts};
use serde_json::{Value, json};
use tascer_testkit::postgres::PgServer;
use tascer_testkit::{MockServer, Scenario, Turn};

/// A contract of the tests: `title` writes `file`.
#[derive(Clone)]
struct Spec {
    name: String,
    title: String,
    file: String,
    /// Latency of the model's second (final) turn, ms.
    slow_ms: u64,
}

fn spec(i: usize, slow_ms: u64) -> Spec {
    Spec {
        name: format!("c{i:03}"),
        title: format!("Job {i:03}"),
        file: format!("out/c{i:03}.txt"),
        slow_ms,
    }
}

fn contract_text(s: &Spec) -> String {
    format!(
        "# Contract: {}\n\n## Status\npending\n\n## Task\nWrite {}.\n\n## Constraints\n- Files: {}\n",
        s.title, s.file, s.file
    )
}

fn content(s: &Spec) -> String {
    format!("written for {}\n", s.title)
}

fn git(dir: &Path, args: &[&str]) -> Result<String, String> {
    git_in(dir, args)
}

struct Fleet {
    root: tempfile::TempDir,
    db_url: String,
    db_name: String,
    pg: &'static PgServer,
    mock: MockServer,
    specs: Vec<Spec>,
}

impl Fleet {
    /// A repository (workspace + bare `origin`) with `specs` as contracts
    /// committed and pushed, a fresh queue database and the mock playing
    /// every contract. `None` when PostgreSQL is not installed.
    fn new(test: &str, specs: Vec<Spec>) -> Option<Fleet> {
        let pg = PgServer::shared(test)?;
        let db_url = pg.fresh_database(test).unwrap();
        let db_name = db_url.rsplit('/').next().unwrap().to_string();
        let root = tempfile::tempdir().unwrap();
        let origin = root.path().join("origin.git");
        let ws = root.path().join("ws");
        std::fs::create_dir_all(ws.join("contracts")).unwrap();
        git(
            root.path(),
            &[
                "init",
                "--quiet",
                "--bare",
                "--initial-branch=main",
                "origin.git",
            ],
        )
        .unwrap();
        git(&ws, &["init", "--quiet", "--initial-branch=main"]).unwrap();
        std::fs::write(ws.join("README.md"), "base\n").unwrap();
        let mut scenario = Scenario::new();
        for s in &specs {
            std::fs::write(
                ws.join(format!("contracts/{}.md", s.name)),
                contract_text(s),
            )
            .unwrap();
            scenario = scenario.conversation(
                format!("Contract: {}\n", s.title),
                vec![
                    Turn::tool("Write", json!({"file_path": s.file, "content": content(s)})),
                    Turn::text(format!("Wrote {}.", s.file)).with_latency_ms(s.slow_ms),
                ],
            );
        }
        git(&ws, &["add", "."]).unwrap();
        git(&ws, &["commit", "--quiet", "-m", "base with contracts"]).unwrap();
        git(&ws, &["remote", "add", "origin", origin.to_str().unwrap()]).unwrap();
        git(&ws, &["push", "--quiet", "origin", "main"]).unwrap();
        let mock = MockServer::start_blocking(scenario).unwrap();
        Some(Fleet {
            root,
            db_url,
            db_name,
            pg,
            mock,
            specs,
        })
    }

    fn path(&self, name: &str) -> PathBuf {
        self.root.path().join(name)
    }
    fn ws(&self) -> PathBuf {
        self.path("ws")
    }
    fn origin(&self) -> PathBuf {
        self.path("origin.git")
    }

    /// `tascer` with home `home`, cwd `cwd`, the mock as provider and a git identity.
    fn cmd(&self, home: &str, cwd: &Path) -> Command {
        let home = self.path(home);
        std::fs::create_dir_all(&home).unwrap();
        let mut cmd = tascer(&home, cwd);
        cmd.env("ANTHROPIC_API_KEY", "test")
            .env("ANTHROPIC_BASE_URL", self.mock.url())
            .env("GIT_AUTHOR_NAME", "Worker")
            .env("GIT_AUTHOR_EMAIL", "worker@example.invalid")
            .env("GIT_COMMITTER_NAME", "Worker")
            .env("GIT_COMMITTER_EMAIL", "worker@example.invalid")
            .env_remove("TASCER_QUEUE")
            .stdin(Stdio::null());
        cmd
    }

    fn enqueue(&self, extra: &[&str]) -> Output {
        self.cmd("enqueuer", &self.ws())
            .args(["contracts", "enqueue", "contracts", "--queue", &self.db_url])
            .args(extra)
            .output()
            .unwrap()
    }

    /// A worker process `w` (home `home-w`, work dir `work-w`), not started.
    fn worker(&self, w: &str, extra: &[&str]) -> Command {
        let cwd = self.path(&format!("cwd-{w}"));
        std::fs::create_dir_all(&cwd).unwrap();
        let mut cmd = self.cmd(&format!("home-{w}"), &cwd);
        cmd.args(["contracts", "worker", "--queue", &self.db_url])
            .args(["--archive-to", self.path("archives").to_str().unwrap()])
            .args([
                "--work-dir",
                self.path(&format!("work-{w}")).to_str().unwrap(),
            ])
            .args(["--poll-ms", "100"])
            .args(extra);
        cmd
    }

    fn status(&self) -> Vec<Value> {
        let out = self
            .cmd("enqueuer", &self.ws())
            .args(["contracts", "status", "--queue", &self.db_url, "--json"])
            .output()
            .unwrap();
        assert!(out.status.success(), "{:?}", texts(&out));
        serde_json::from_slice::<Vec<Value>>(&out.stdout).unwrap()
    }

    fn sql(&self, query: &str) -> String {
        self.pg
            .psql(&self.db_name, query)
            .unwrap()
            .trim()
            .to_string()
    }

    /// The contract branches on the remote, with their commits.
    fn remote_branches(&self) -> BTreeMap<String, String> {
        git(
            &self.origin(),
            &[
                "for-each-ref",
                "--format=%(refname:short) %(objectname)",
                "refs/heads/contracts/",
            ],
        )
        .unwrap()
        .lines()
        .filter_map(|l| l.split_once(' '))
        .map(|(b, c)| (b.to_string(), c.to_string()))
        .collect()
    }

    /// Objects of the remote by name (`rev:path`, `rev^`…), read with one
    /// `git cat-file --batch`; `None` for a missing one.
    fn objects(&self, names: &[String]) -> Vec<Option<String>> {
        use std::io::{BufRead, BufReader, Read, Write};
        let mut child = Command::new("git")
            .args(["cat-file", "--batch"])
            .current_dir(self.origin())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let mut input = child.stdin.take().unwrap();
        let text: String = names.iter().map(|n| format!("{n}\n")).collect();
        let writer = std::thread::spawn(move || input.write_all(text.as_bytes()).unwrap());
        let mut out = BufReader::new(child.stdout.take().unwrap());
        let mut objects = Vec::new();
        for _ in names {
            let mut header = String::new();
            out.read_line(&mut header).unwrap();
            if header.trim_end().ends_with(" missing") {
                objects.push(None);
                continue;
            }
            let size: usize = header
                .trim_end()
                .rsplit(' ')
                .next()
                .unwrap()
                .parse()
                .unwrap();
            let mut body = vec![0; size + 1];
            out.read_exact(&mut body).unwrap();
            body.pop();
            objects.push(Some(String::from_utf8(body).unwrap()));
        }
        writer.join().unwrap();
        child.wait().unwrap();
        objects
    }

    /// Checks completed jobs: each one's branch on the remote at the
    /// recorded commit holds the agent's file and the written-back contract
    /// (moved to contracts_completed/), and its two commits carry the
    /// session's trailers; exactly one attempt completed it.
    fn check_completed(&self, jobs: &[Value]) {
        let branches = self.remote_branches();
        let mut names = Vec::new();
        for job in jobs {
            assert_eq!(job["status"], "completed", "{job:#}");
            let name = job["name"].as_str().unwrap();
            let s = self.specs.iter().find(|s| s.name == name).unwrap();
            let branch = job["branch"].as_str().unwrap();
            let attempt = job["attempts"].as_u64().unwrap();
            assert_eq!(
                branch,
                format!("contracts/{name}-job{}-try{attempt}", job["id"]),
                "{job:#}"
            );
            assert_eq!(
                branches.get(branch).map(String::as_str),
                job["commit"].as_str(),
                "{job:#}"
            );
            let completed = job["history"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|h| h["outcome"] == "completed")
                .count();
            assert_eq!(completed, 1, "{job:#}");
            names.extend([
                format!("{branch}:{}", s.file),
                format!("{branch}:contracts_completed/{name}.md"),
                format!("{branch}:contracts/{name}.md"),
                branch.to_string(),
                format!("{branch}^"),
            ]);
        }
        let objects = self.objects(&names);
        for (job, o) in jobs.iter().zip(objects.chunks(5)) {
            let name = job["name"].as_str().unwrap();
            let s = self.specs.iter().find(|s| s.name == name).unwrap();
            assert_eq!(o[0].as_deref(), Some(content(s).as_str()), "{job:#}");
            let done = o[1]
                .as_deref()
                .unwrap_or_else(|| panic!("no completed contract: {job:#}"));
            assert!(done.contains("## Status\ncompleted\n"), "{done}");
            let session = job["session_id"].as_str().unwrap();
            assert!(done.contains(&format!("- Session: `{session}`")), "{done}");
            assert!(
                done.contains(&format!(
                    "- Archive: {}",
                    job["archive_url"].as_str().unwrap()
                )),
                "{done}"
            );
            assert_eq!(job["contract_result"].as_str().unwrap(), done);
            assert!(
                o[2].is_none(),
                "the pending contract is moved away on the branch"
            );
            for commit in [&o[3], &o[4]] {
                let commit = commit.as_deref().unwrap();
                assert!(
                    commit.contains(&format!("Tascer-Session: {session}")),
                    "{commit}"
                );
            }
        }
    }

    fn verify_home(&self, w: &str) {
        let home = self.path(&format!("home-{w}"));
        if !home.join("tascer.db").exists() {
            return;
        }
        let out = tascer(&home, self.root.path())
            .args(["verify", "--all"])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "verify --all of {w}: {:?}",
            texts(&out)
        );
    }

    /// Verifies an archive from the archive alone, with `w`'s public key.
    fn verify_archive(&self, url: &str, w: &str) {
        let key = self.path(&format!("home-{w}/keys/tascer-ed25519.pub.pem"));
        let out = tascer(&self.path("auditor"), self.root.path())
            .args(["archive", "verify", url, "--key"])
            .arg(key)
            .output()
            .unwrap();
        let (stdout, stderr) = texts(&out);
        assert!(out.status.success(), "{stdout}\n{stderr}");
        assert!(stdout.contains("head signed"), "{stdout}");
    }
}

fn wait_until(limit: Duration, what: &str, mut check: impl FnMut() -> bool) {
    let start = Instant::now();
    while !check() {
        assert!(start.elapsed() < limit, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Waits until worker `child` holds a job whose session has written the
/// job's file and not ended (so it is in its final turn); returns (job id,
/// attempt).
fn wait_mid_contract(f: &Fleet, w: &str, child: &mut Child) -> (i64, u64) {
    let pid = child.id();
    let mut found = None;
    wait_until(Duration::from_secs(60), "a worker mid-contract", || {
        if let Ok(Some(status)) = child.try_wait() {
            panic!("worker {w} exited early: {status}");
        }
        let rows = f.sql(&format!(
            "SELECT id, attempts, name FROM tascer_contract_jobs \
             WHERE status = 'running' AND lease_pid = {pid} ORDER BY id"
        ));
        for row in rows.lines() {
            let cols: Vec<&str> = row.split('|').collect();
            let (id, attempt, name) = (cols[0], cols[1], cols[2]);
            let s = f.specs.iter().find(|s| s.name == name).unwrap();
            let checkout = f.path(&format!("work-{w}/jobs/{id}-{attempt}"));
            // The agent wrote its file and the contract is still in
            // progress: the session has not ended, so nothing is pushed
            // yet (and cannot be within the next milliseconds).
            let contract = std::fs::read_to_string(checkout.join(format!("contracts/{name}.md")))
                .unwrap_or_default();
            if checkout.join(&s.file).exists() && contract.contains("## Status\nin_progress\n") {
                found = Some((id.parse().unwrap(), attempt.parse().unwrap()));
                return true;
            }
        }
        false
    });
    found.unwrap()
}

/// SIGKILL (what `Child::kill` sends on Unix).
fn kill_9(child: &mut Child) {
    child.kill().unwrap();
    child.wait().unwrap();
}

fn signal(pid: u32, sig: &str) {
    let status = Command::new("kill")
        .args([sig, &pid.to_string()])
        .status()
        .unwrap();
    assert!(status.success(), "kill {sig} {pid}");
}

#[test]
fn enqueue_refuses_malformed_contracts_and_adds_a_text_once() {
    let Some(f) = Fleet::new("enqueue_refuses_malformed", vec![spec(1, 0), spec(2, 0)]) else {
        return;
    };
    // A malformed contract: nothing is enqueued, the error names it.
    std::fs::write(
        f.ws().join("contracts/bad.md"),
        "# Contract: Bad\n\n## Status\nsoon\n\n## Task\nx\n",
    )
    .unwrap();
    let out = f.enqueue(&[]);
    let (stdout, stderr) = texts(&out);
    assert_eq!(out.status.code(), Some(1), "{stdout}\n{stderr}");
    assert!(
        stderr.contains("1 malformed contract(s), nothing was enqueued"),
        "{stderr}"
    );
    assert!(
        stderr.contains("bad.md:4: unknown status `soon`"),
        "{stderr}"
    );
    assert!(f.status().is_empty());

    // Fixed: both good ones are enqueued, once.
    std::fs::remove_file(f.ws().join("contracts/bad.md")).unwrap();
    let out = f.enqueue(&[]);
    let (stdout, stderr) = texts(&out);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert!(
        stdout.contains("2 contract(s) enqueued in queue default"),
        "{stdout}"
    );
    assert!(!stderr.contains("warning"), "pushed base: {stderr}");
    let out = f.enqueue(&["--json"]);
    assert!(out.status.success(), "{:?}", texts(&out));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(
        report["jobs"]
            .as_array()
            .unwrap()
            .iter()
            .all(|j| j["result"] == "exists" && j["status"] == "queued"),
        "{report:#}"
    );
    let jobs = f.status();
    assert_eq!(jobs.len(), 2);
    let base = git(&f.ws(), &["rev-parse", "HEAD"]).unwrap();
    for j in &jobs {
        assert_eq!(j["status"], "queued");
        assert_eq!(j["attempts"], 0);
        assert_eq!(j["base_commit"], base.as_str());
        assert_eq!(
            j["repo"],
            f.origin().canonicalize().unwrap().to_str().unwrap()
        );
    }

    // A commit not on the remote: enqueued with a warning.
    std::fs::write(f.ws().join("contracts/c003.md"), contract_text(&spec(3, 0))).unwrap();
    git(&f.ws(), &["add", "."]).unwrap();
    git(&f.ws(), &["commit", "--quiet", "-m", "unpushed"]).unwrap();
    let out = f.enqueue(&[]);
    let (stdout, stderr) = texts(&out);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert!(
        stderr.contains("is on no branch of origin known here: push it"),
        "{stderr}"
    );

    // Bad input: no queue, a URL that is not PostgreSQL, an unreachable server.
    let out = f
        .cmd("enqueuer", &f.ws())
        .args(["contracts", "enqueue", "contracts"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(
        texts(&out).1.contains("no queue: pass --queue postgres://"),
        "{:?}",
        texts(&out)
    );
    let out = f
        .cmd("enqueuer", &f.ws())
        .args(["contracts", "enqueue", "--queue", "mysql://x/y"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(
        texts(&out).1.contains("the queue URL is not usable"),
        "{:?}",
        texts(&out)
    );
    let dead = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = dead.local_addr().unwrap().port();
    drop(dead);
    let out = f
        .cmd("enqueuer", &f.ws())
        .args(["contracts", "status", "--json", "--queue"])
        .arg(format!("postgres://postgres:hunter2@127.0.0.1:{port}/q"))
        .output()
        .unwrap();
    let (_, stderr) = texts(&out);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "contract queue at postgres://postgres@127.0.0.1:{port}/q"
        )),
        "{stderr}"
    );
    assert!(!stderr.contains("hunter2"), "{stderr}");
}

#[test]
fn a_worker_runs_the_queue_until_empty() {
    let specs: Vec<Spec> = (1..=3).map(|i| spec(i, 0)).collect();
    let Some(f) = Fleet::new("worker_until_empty", specs) else {
        return;
    };
    let out = f.enqueue(&[]);
    assert!(out.status.success(), "{:?}", texts(&out));
    let out = f
        .worker("a", &["--until-empty", "--concurrency", "2"])
        .output()
        .unwrap();
    let (stdout, stderr) = texts(&out);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert_eq!(stdout.matches(": completed — ").count(), 3, "{stdout}");
    let jobs = f.status();
    assert_eq!(jobs.len(), 3);
    f.check_completed(&jobs);
    for job in &jobs {
        assert_eq!(job["attempts"], 1);
        let history = job["history"].as_array().unwrap();
        assert_eq!(history.len(), 1);
        assert_eq!(history[0]["pid"], out_pid(&stderr));
        assert_eq!(job["result"]["completed"], true);
    }
    assert_eq!(f.remote_branches().len(), 3);
    f.verify_home("a");
    f.verify_archive(jobs[0]["archive_url"].as_str().unwrap(), "a");
    // The worker cleaned up its worktrees.
    let left = std::fs::read_dir(f.path("work-a/jobs")).unwrap().count();
    assert_eq!(left, 0);

    // Nothing left: another worker exits at once, running nothing.
    let requests = f.mock.requests().len();
    let out = f.worker("b", &["--until-empty"]).output().unwrap();
    assert!(out.status.success(), "{:?}", texts(&out));
    assert_eq!(f.mock.requests().len(), requests);
}

#[test]
fn workers_on_the_shared_store_keep_their_sessions_there() {
    let specs: Vec<Spec> = (1..=2).map(|i| spec(i, 0)).collect();
    let Some(f) = Fleet::new("workers_shared_store", specs) else {
        return;
    };
    let store =
        f.pg.fresh_database("workers_shared_store_sessions")
            .unwrap();
    assert!(f.enqueue(&[]).status.success());
    for w in ["a", "b"] {
        let out = f
            .worker(w, &["--until-empty"])
            .env("TASCER_STORE", &store)
            .output()
            .unwrap();
        assert!(out.status.success(), "{:?}", texts(&out));
    }
    let jobs = f.status();
    f.check_completed(&jobs);
    // The sessions are in the shared store, not in the workers' homes.
    for w in ["a", "b"] {
        assert!(!f.path(&format!("home-{w}/tascer.db")).exists());
    }
    let auditor = f.path("auditor-home");
    let out = tascer(&auditor, f.root.path())
        .env("TASCER_STORE", &store)
        .args(["verify", "--all", "--json"])
        .output()
        .unwrap();
    let (stdout, stderr) = texts(&out);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    for job in &jobs {
        assert!(
            stdout.contains(job["session_id"].as_str().unwrap()),
            "{stdout}"
        );
    }
    // And the archive of one verifies on its own, with its worker's key.
    let url = jobs[0]["archive_url"].as_str().unwrap();
    let key_of = |w: &str| f.path(&format!("home-{w}/keys/tascer-ed25519.pub.pem"));
    let signer = ["a", "b"].into_iter().find(|w| {
        tascer(&f.path("auditor"), f.root.path())
            .args(["archive", "verify", url, "--key"])
            .arg(key_of(w))
            .output()
            .unwrap()
            .status
            .success()
    });
    assert!(
        signer.is_some(),
        "the archive verifies with one worker's key"
    );
}

/// The pid a worker announced on standard error.
fn out_pid(stderr: &str) -> u64 {
    stderr
        .lines()
        .find_map(|l| l.strip_prefix("tascer worker (pid "))
        .and_then(|rest| rest.split(')').next())
        .unwrap()
        .parse()
        .unwrap()
}

#[test]
fn a_killed_worker_loses_its_lease_and_another_worker_completes_the_contract() {
    let Some(f) = Fleet::new("killed_worker_reclaimed", vec![spec(1, 2500)]) else {
        return;
    };
    assert!(f.enqueue(&[]).status.success());
    let mut a = f
        .worker("a", &["--lease-secs", "1"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let (id, attempt) = wait_mid_contract(&f, "a", &mut a);
    assert_eq!(attempt, 1);
    kill_9(&mut a);

    let out = f.worker("b", &["--until-empty"]).output().unwrap();
    let (stdout, stderr) = texts(&out);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert!(stderr.contains("its lease expired"), "{stderr}");
    let jobs = f.status();
    let job = &jobs[0];
    assert_eq!(job["id"], id);
    f.check_completed(&jobs);
    assert_eq!(job["attempts"], 2);
    let outcomes: Vec<&str> = job["history"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["outcome"].as_str().unwrap())
        .collect();
    assert_eq!(outcomes, ["lost", "completed"]);
    let done = job["contract_result"].as_str().unwrap();
    assert!(done.contains("attempt 1: its worker (pid "), "{done}");
    // Only the completing attempt's branch was pushed.
    let branches: Vec<String> = f.remote_branches().into_keys().collect();
    assert_eq!(branches, vec![format!("contracts/c001-job{id}-try2")]);
    f.verify_home("a");
    f.verify_home("b");
    f.verify_archive(job["archive_url"].as_str().unwrap(), "b");
}

#[test]
fn a_contract_whose_worker_dies_at_its_last_attempt_fails() {
    let Some(f) = Fleet::new("max_attempts_fail", vec![spec(1, 2500)]) else {
        return;
    };
    assert!(f.enqueue(&["--max-attempts", "1"]).status.success());
    let mut a = f
        .worker("a", &["--lease-secs", "1"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    wait_mid_contract(&f, "a", &mut a);
    kill_9(&mut a);
    let requests = f.mock.requests().len();
    let out = f.worker("b", &["--until-empty"]).output().unwrap();
    let (stdout, stderr) = texts(&out);
    assert_eq!(out.status.code(), Some(1), "{stdout}\n{stderr}");
    assert!(
        stderr.contains("failed — not retried: its worker stopped during 1 attempt(s) (at most 1)"),
        "{stderr}"
    );
    assert_eq!(f.mock.requests().len(), requests, "not run again");
    let job = &f.status()[0];
    assert_eq!(job["status"], "failed");
    assert_eq!(job["history"][0]["outcome"], "lost");
    assert!(f.remote_branches().is_empty());
}

#[test]
fn a_worker_paused_past_its_lease_discards_its_result_and_says_so() {
    let Some(f) = Fleet::new("paused_worker_discards", vec![spec(1, 2000)]) else {
        return;
    };
    assert!(f.enqueue(&[]).status.success());
    let mut a = f
        .worker("a", &["--lease-secs", "1", "--until-empty"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let (id, _) = wait_mid_contract(&f, "a", &mut a);
    signal(a.id(), "-STOP");
    // b takes the job over once a's lease has expired.
    let b = f
        .worker("b", &["--until-empty"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_until(Duration::from_secs(30), "b to claim the job", || {
        f.sql(&format!(
            "SELECT attempts FROM tascer_contract_jobs WHERE id = {id}"
        )) == "2"
    });
    signal(a.id(), "-CONT");
    let a = a.wait_with_output().unwrap();
    let b = b.wait_with_output().unwrap();
    let (a_out, a_err) = texts(&a);
    let (b_out, b_err) = texts(&b);
    assert!(a.status.success(), "{a_out}\n{a_err}");
    assert!(b.status.success(), "{b_out}\n{b_err}");
    assert!(
        a_out.contains("attempt 1: discarded — this worker lost the job's lease"),
        "{a_out}\n{a_err}"
    );
    assert!(b_out.contains("attempt 2: completed"), "{b_out}");
    let jobs = f.status();
    let job = &jobs[0];
    f.check_completed(&jobs);
    let outcomes: Vec<&str> = job["history"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["outcome"].as_str().unwrap())
        .collect();
    assert_eq!(outcomes, ["discarded", "completed"]);
    // a's branch (pushed or not) is not on the remote.
    let branches: Vec<String> = f.remote_branches().into_keys().collect();
    assert_eq!(branches, vec![format!("contracts/c001-job{id}-try2")]);
    f.verify_home("a");
    f.verify_home("b");
}

#[test]
fn four_workers_one_killed_every_contract_completes_exactly_once() {
    let specs: Vec<Spec> = (0..100).map(|i| spec(i, 100)).collect();
    let Some(f) = Fleet::new("fleet_four_workers", specs) else {
        return;
    };
    let started = Instant::now();
    let out = f.enqueue(&[]);
    assert!(out.status.success(), "{:?}", texts(&out));
    let workers = ["w0", "w1", "w2", "w3"];
    let mut children: Vec<Child> = workers
        .iter()
        .map(|w| {
            f.worker(
                w,
                &["--until-empty", "--concurrency", "2", "--lease-secs", "3"],
            )
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
        })
        .collect();
    let worker_of: BTreeMap<u64, &str> = children
        .iter()
        .zip(workers)
        .map(|(c, w)| (u64::from(c.id()), w))
        .collect();
    // Kill w0 once it has done some work and is in the middle of a contract.
    wait_until(Duration::from_secs(120), "some completed contracts", || {
        f.sql("SELECT count(*) FROM tascer_contract_jobs WHERE status = 'completed'")
            .parse::<u32>()
            .unwrap()
            >= 8
    });
    let (killed_job, _) = wait_mid_contract(&f, "w0", &mut children[0]);
    kill_9(&mut children[0]);
    let mut stderr = String::new();
    for child in children.drain(1..) {
        let out = child.wait_with_output().unwrap();
        let (_, err) = texts(&out);
        assert!(out.status.success(), "{err}");
        stderr.push_str(&err);
    }
    let elapsed = started.elapsed();
    let jobs = f.status();
    assert_eq!(jobs.len(), 100);
    f.check_completed(&jobs);
    let mut recorded = BTreeMap::new();
    for job in &jobs {
        recorded.insert(
            job["branch"].as_str().unwrap().to_string(),
            job["commit"].as_str().unwrap().to_string(),
        );
    }
    // The killed contract was taken over.
    let killed = jobs.iter().find(|j| j["id"] == killed_job).unwrap();
    assert!(killed["attempts"].as_u64().unwrap() >= 2, "{killed:#}");
    assert_eq!(killed["history"][0]["outcome"], "lost", "{killed:#}");
    assert!(stderr.contains("its lease expired"), "{stderr}");
    // Exactly the recorded branches are on the remote: no attempt that did
    // not complete left one.
    assert_eq!(f.remote_branches(), recorded);
    // Each contract's file is on exactly one branch: every file is checked
    // on its job's branch above, and no other branch exists; no branch
    // carries another contract's file.
    let mut names = Vec::new();
    for (i, job) in jobs.iter().enumerate() {
        let other = &jobs[(i + 1) % jobs.len()];
        let s = f.specs.iter().find(|s| s.name == other["name"]).unwrap();
        names.push(format!("{}:{}", job["branch"].as_str().unwrap(), s.file));
    }
    assert!(f.objects(&names).iter().all(Option::is_none));
    // Every session verifies, in every worker's home (the killed one's too),
    // and the taken-over contract's archive verifies on its own.
    for w in workers {
        f.verify_home(w);
    }
    let completer = killed["history"]
        .as_array()
        .unwrap()
        .iter()
        .find(|h| h["outcome"] == "completed")
        .and_then(|h| worker_of.get(&h["pid"].as_u64()?))
        .unwrap();
    f.verify_archive(killed["archive_url"].as_str().unwrap(), completer);
    eprintln!(
        "fleet of 4 workers, 100 contracts: {:.1} s",
        elapsed.as_secs_f64()
    );
}
