//! The `tascer serve` page in headless Chromium (Debian's `chromium`,
//! driven by `playwright-core` from npm through tests/serve/browser.mjs):
//! the session list loads and shows the sessions, a search narrows it, a
//! session's timeline shows its tool calls with their decisions, a
//! tampered ledger shows as broken (red, naming the first broken entry),
//! the contracts view lists the contracts. The script takes screenshots
//! of those pages; with `TASCER_VIEWER_SCREENSHOTS=1` it writes them to
//! docs/viewer/ (the ones docs/viewer.md shows).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{Value, json};
use tascer_testkit::{Scenario, Turn, skip};

use common::serve::{Served, fill_queue, record, repo_root, run_session, tamper, write_contracts};
use tascer_testkit::postgres::{PgServer, postgres_available};

/// Where Debian's package puts Chromium.
const CHROMIUM: &str = "/usr/bin/chromium";
/// Writes the screenshots to docs/viewer/ when set.
const SCREENSHOTS_ENV: &str = "TASCER_VIEWER_SCREENSHOTS";

/// `node_modules` holding playwright-core (scripts/install-test-deps), or
/// why the test cannot run.
fn playwright() -> Result<PathBuf, String> {
    if !Path::new(CHROMIUM).is_file() {
        return Err(format!(
            "{CHROMIUM} is missing (Debian package chromium; run scripts/install-test-deps)"
        ));
    }
    let modules = repo_root().join(".test-deps/browser/node_modules");
    if !modules.join("playwright-core/package.json").is_file() {
        return Err(format!(
            "playwright-core is not installed in {} (run scripts/install-test-deps)",
            modules.display()
        ));
    }
    let node = Command::new("node").arg("--version").output();
    if !node.is_ok_and(|o| o.status.success()) {
        return Err("node is not installed".into());
    }
    Ok(modules)
}

#[tokio::test(flavor = "multi_thread")]
async fn the_page_lists_sessions_shows_decisions_and_a_broken_ledger_in_chromium() {
    let modules = match playwright() {
        Ok(m) => m,
        Err(why) => return skip("serve_browser", &why),
    };
    let rec = record().await;
    let tampered = run_session(
        rec.home(),
        rec.ws.path(),
        Scenario::new()
            .turn(Turn::new().with_tool("Bash", json!({"command": "echo audit me"})))
            .turn(Turn::text("Done.")),
        "a session whose ledger is edited afterwards",
        "claude-edit",
    )
    .await;
    tamper(rec.home(), &tampered, 3);
    write_contracts(rec.ws.path(), &rec.edit);
    // With PostgreSQL at hand, the contracts view also shows a queue with
    // a worker (serve_api checks the API; here it is seen and pictured).
    let queue = if postgres_available() {
        PgServer::shared("serve_browser").map(|pg| pg.fresh_database("serve_browser").unwrap())
    } else {
        None
    };
    if let Some(url) = &queue {
        fill_queue(url).await;
    }
    let extra: Vec<&str> = queue.iter().flat_map(|u| ["--queue", u.as_str()]).collect();
    let served = Served::start(rec.home(), rec.ws.path(), &extra);

    let scratch = tempfile::tempdir().unwrap();
    let shots = if std::env::var_os(SCREENSHOTS_ENV).is_some() {
        repo_root().join("docs/viewer")
    } else {
        scratch.path().join("shots")
    };
    std::fs::create_dir_all(&shots).unwrap();
    let profile = scratch.path().join("profile");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/serve/browser.mjs");
    let mut cmd = Command::new("node");
    cmd.arg(&script)
        .env("VIEWER_URL", &served.url)
        .env("EDIT_SESSION", &rec.edit)
        .env("TAMPERED_SESSION", &tampered)
        .env("SCREENSHOT_DIR", &shots)
        .env("CHROMIUM", CHROMIUM)
        .env("NODE_MODULES", &modules)
        .env("USER_DATA_DIR", &profile)
        .env("EXPECT_WORKERS", if queue.is_some() { "1" } else { "0" });
    let out = tokio::task::spawn_blocking(move || cmd.output().unwrap())
        .await
        .unwrap();
    let (stdout, stderr) = common::texts(&out);
    let report: Value = stdout
        .lines()
        .rev()
        .find_map(|l| serde_json::from_str(l).ok())
        .unwrap_or_else(|| panic!("no report from the browser script:\n{stdout}\n{stderr}"));
    assert!(
        out.status.success() && report["ok"] == true,
        "{report:#}\n{stderr}"
    );
    let seen = &report["seen"];
    assert_eq!(seen["rows"], 3, "{seen}");
    assert_eq!(seen["calls"].as_array().unwrap().len(), 4, "{seen}");
    assert_eq!(seen["tampered_ok"], "false", "{seen}");
    for shot in ["list", "timeline", "broken", "contracts"] {
        let png = std::fs::read(shots.join(format!("{shot}.png"))).unwrap();
        assert!(png.starts_with(b"\x89PNG"), "{shot}.png is not a PNG");
    }
}
