//! The manager/contractor setup end to end, with exactly the setup's
//! environment: the manager on OpenRouter through `OPENAI_API_KEY` /
//! `OPENAI_BASE_URL` (one mock server, OpenAI wire), contractors on
//! Anthropic with `CLAUDE_CODE_OAUTH_TOKEN` (another mock server). The
//! manager writes two contracts, runs them with `ExecuteContracts` (the
//! `--execute-contracts` flag is the consent), and its result carries the
//! summed cost and turns. Unattended, a refused `ExecuteContracts` fails
//! the run.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::path::Path;
use std::process::Command;

use common::*;
use serde_json::{Value, json};
use tascer_testkit::{MockServer, Scenario, Turn};

const ALPHA: &str = "# Contract: Alpha\n\n## Status\npending\n\n## Task\nWrite alpha.txt.\n\n## Constraints\n- Files: alpha.txt\n- Model: sonnet\n\n## Notes for the contractor\nOne line is enough.\n";
const BETA: &str = "# Contract: Beta\n\n## Status\npending\n\n## Task\nWrite beta.txt.\n\n## Constraints\n- Files: beta.txt\n";

/// Costs OpenRouter reports for the manager's four calls.
const MANAGER_COSTS: [f64; 4] = [0.01, 0.02, 0.03, 0.04];

/// The manager: writes both contracts, runs them, reviews.
fn manager() -> Scenario {
    let write =
        |path: &str, text: &str| Turn::tool("Write", json!({"file_path": path, "content": text}));
    Scenario::new()
        .turn(write("contracts/01-alpha.md", ALPHA).with_cost_usd(MANAGER_COSTS[0]))
        .turn(write("contracts/02-beta.md", BETA).with_cost_usd(MANAGER_COSTS[1]))
        .turn(Turn::tool("ExecuteContracts", json!({})).with_cost_usd(MANAGER_COSTS[2]))
        .turn(Turn::text("Both contracts are done.").with_cost_usd(MANAGER_COSTS[3]))
}

/// The contractors, one conversation each.
fn contractors() -> Scenario {
    let work = |file: &str| {
        vec![
            Turn::tool("Write", json!({"file_path": file, "content": "hi\n"})),
            Turn::text(format!("Wrote {file}.")),
        ]
    };
    Scenario::new()
        .conversation("# Contract: Alpha", work("alpha.txt"))
        .conversation("# Contract: Beta", work("beta.txt"))
}

/// A workspace (a git repository) and a home.
fn workspace(root: &Path) -> (std::path::PathBuf, std::path::PathBuf) {
    let home = root.join("home");
    let ws = root.join("ws");
    std::fs::create_dir_all(&home).unwrap();
    std::fs::create_dir_all(&ws).unwrap();
    git_in(&ws, &["init", "-q"]).unwrap();
    (home, ws)
}

/// `tascer` with the setup's environment pointed at the two mocks.
fn setup_env(cmd: &mut Command, router: &MockServer, anthropic: &MockServer) {
    cmd.env("OPENAI_API_KEY", "sk-or-v1-manager")
        .env("OPENAI_BASE_URL", router.openai_base_url())
        .env("CLAUDE_CODE_OAUTH_TOKEN", "sk-ant-oat01-contractor")
        .env("ANTHROPIC_BASE_URL", anthropic.url());
}

#[test]
fn the_setup_end_to_end_with_its_environment() {
    let root = tempfile::tempdir().unwrap();
    let (home, ws) = workspace(root.path());
    let out = tascer(&home, &ws)
        .args(["contracts", "init"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{:?}", texts(&out));
    let router = MockServer::start_blocking(manager()).unwrap();
    let anthropic = MockServer::start_blocking(contractors()).unwrap();

    // What each role will use, before anything runs.
    let mut dry = tascer(&home, &ws);
    setup_env(&mut dry, &router, &anthropic);
    let out = dry
        .args(["contracts", "run", "--dry-run"])
        .output()
        .unwrap();
    let (stdout, stderr) = texts(&out);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    let line = |role: &str| {
        stdout
            .lines()
            .find(|l| l.trim_start().starts_with(role))
            .unwrap_or_default()
            .to_string()
    };
    let m = line("manager");
    assert!(
        m.contains("openrouter")
            && m.contains("OPENAI_API_KEY")
            && m.contains("anthropic/claude-sonnet-4.5"),
        "{stdout}"
    );
    let c = line("contractor");
    assert!(
        c.contains("anthropic-oauth")
            && c.contains("CLAUDE_CODE_OAUTH_TOKEN")
            && c.contains("claude-sonnet-4-5"),
        "{stdout}"
    );
    assert!(
        !stdout.contains("sk-or-v1-manager") && !stdout.contains("oat01"),
        "no secrets: {stdout}"
    );
    assert!(router.requests().is_empty() && anthropic.requests().is_empty());

    let mut cmd = tascer(&home, &ws);
    setup_env(&mut cmd, &router, &anthropic);
    let out = cmd
        .args([
            "run",
            "--output-format",
            "stream-json",
            "--permission-mode",
            "acceptEdits",
            "--execute-contracts",
            "contracts",
            "Split the work into contracts and run them.",
        ])
        .output()
        .unwrap();
    let (stdout, stderr) = texts(&out);
    assert!(out.status.success(), "{stdout}\n{stderr}");

    // Both contracts ran on the contractors' provider and moved.
    for (name, file) in [("01-alpha", "alpha.txt"), ("02-beta", "beta.txt")] {
        let done =
            std::fs::read_to_string(ws.join(format!("contracts_completed/{name}.md"))).unwrap();
        assert!(done.contains("## Status\ncompleted"), "{done}");
        assert!(!ws.join(format!("contracts/{name}.md")).exists());
        assert_eq!(std::fs::read_to_string(ws.join(file)).unwrap(), "hi\n");
    }
    assert!(
        ws.join("contracts/.gitkeep").is_file()
            && ws.join("contracts_completed/.gitkeep").is_file()
    );

    // The manager's requests went to the router, with its headers.
    let manager_requests = router.requests();
    assert_eq!(manager_requests.len(), 4, "{manager_requests:#?}");
    for r in &manager_requests {
        assert!(r.path.ends_with("/chat/completions"), "{}", r.path);
        assert_eq!(r.headers["authorization"], "Bearer sk-or-v1-manager");
        assert!(r.headers.contains_key("http-referer"), "{:?}", r.headers);
        assert_eq!(r.headers["x-title"], "Tascer");
        assert_eq!(r.body["model"], "anthropic/claude-sonnet-4.5");
        assert_eq!(r.body["usage"], json!({"include": true}));
    }
    let system = manager_requests[0].body["messages"][0]["content"].to_string();
    assert!(
        system.contains("## Constraints") && system.contains("ExecuteContracts"),
        "the manager is taught the format"
    );

    // The contractors' went to Anthropic with the bearer token.
    let contractor_requests = anthropic.requests();
    assert_eq!(contractor_requests.len(), 4, "{contractor_requests:#?}");
    for r in &contractor_requests {
        assert!(r.path.ends_with("/v1/messages"), "{}", r.path);
        assert_eq!(r.headers["authorization"], "Bearer sk-ant-oat01-contractor");
        assert!(r.headers["anthropic-beta"].contains("oauth-2025-04-20"));
        assert!(!r.headers.contains_key("x-api-key"));
        assert!(
            !r.headers.contains_key("x-title"),
            "router headers stay with the manager"
        );
        assert_eq!(r.body["model"], "claude-sonnet-4-5", "the alias resolved");
        let tools: Vec<&str> = r.body["tools"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|t| t["name"].as_str())
            .collect();
        assert!(
            !tools.contains(&"AskUserQuestion") && !tools.contains(&"ExecuteContracts"),
            "{tools:?}"
        );
    }
    // Alpha's contractor got its whole contract, notes included, and the
    // eight default tools minus what its constraints leave out.
    let alpha = contractor_requests
        .iter()
        .find(|r| {
            r.body["messages"][0]
                .to_string()
                .contains("Contract: Alpha")
        })
        .unwrap();
    assert!(
        alpha.body["messages"][0]
            .to_string()
            .contains("One line is enough.")
    );
    let system = alpha.body["system"].to_string();
    assert!(system.contains("nothing is committed for you"), "{system}");
    let beta = contractor_requests
        .iter()
        .find(|r| r.body["messages"][0].to_string().contains("Contract: Beta"))
        .unwrap();
    let mut tools: Vec<&str> = beta.body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    tools.sort_unstable();
    assert_eq!(
        tools,
        [
            "Bash",
            "Edit",
            "Glob",
            "Grep",
            "Read",
            "WebFetch",
            "WebSearch",
            "Write"
        ]
    );

    // The manager's result: its own reported cost plus its contractors'.
    let frames = json_lines(&out.stdout);
    let calls = exchanges(&frames);
    let tool = calls.iter().find(|c| c.name == "ExecuteContracts").unwrap();
    assert!(!tool.result().is_error, "{}", tool.text());
    let children: Vec<&Value> = tool.result().raw["contracts"]
        .as_array()
        .unwrap()
        .iter()
        .collect();
    assert_eq!(children.len(), 2);
    let child_cost: f64 = children
        .iter()
        .map(|c| c["session"]["cost_usd"].as_f64().unwrap())
        .sum();
    let child_turns: u64 = children
        .iter()
        .map(|c| c["session"]["turns"].as_u64().unwrap())
        .sum();
    assert!(child_cost > 0.0, "contractors' cost is known: {children:?}");
    let result = frames.iter().find(|f| f["type"] == "result").unwrap();
    assert_eq!(result["is_error"], false);
    let manager_cost: f64 = MANAGER_COSTS.iter().sum();
    let total = result["total_cost_usd"].as_f64().unwrap();
    assert!(
        (total - (manager_cost + child_cost)).abs() < 1e-9,
        "{total} != {manager_cost} + {child_cost}"
    );
    assert_eq!(result["num_turns"].as_u64().unwrap(), 4 + child_turns);
    assert!(result.get("unpriced_models").is_none(), "{result}");
}

/// Unattended, an `ExecuteContracts` that is refused (here by an ask rule
/// in the project's settings: no one can be asked) fails the run.
#[test]
fn a_refused_execute_contracts_fails_the_run() {
    let root = tempfile::tempdir().unwrap();
    let (home, ws) = workspace(root.path());
    std::fs::create_dir_all(ws.join("contracts")).unwrap();
    std::fs::write(ws.join("contracts/01-alpha.md"), ALPHA).unwrap();
    std::fs::create_dir_all(ws.join(".tascer")).unwrap();
    std::fs::write(
        ws.join(".tascer/settings.json"),
        r#"{"permissions": {"ask": ["ExecuteContracts"]}}"#,
    )
    .unwrap();
    let router = MockServer::start_blocking(
        Scenario::new()
            .turn(Turn::tool("ExecuteContracts", json!({})).with_cost_usd(0.01))
            .turn(Turn::text("I could not run them.").with_cost_usd(0.01)),
    )
    .unwrap();
    let anthropic = MockServer::start_blocking(contractors()).unwrap();
    let mut cmd = tascer(&home, &ws);
    setup_env(&mut cmd, &router, &anthropic);
    let out = cmd
        .args([
            "run",
            "--execute-contracts",
            "contracts",
            "Run the contracts.",
        ])
        .output()
        .unwrap();
    let (stdout, stderr) = texts(&out);
    assert_eq!(out.status.code(), Some(1), "{stdout}\n{stderr}");
    assert!(stderr.contains("ExecuteContracts failed"), "{stderr}");
    assert!(stderr.contains("no one can be asked"), "{stderr}");
    assert!(!stdout.contains("✓ done"), "{stdout}");
    assert!(anthropic.requests().is_empty(), "nothing ran");
    let left = std::fs::read_to_string(ws.join("contracts/01-alpha.md")).unwrap();
    assert!(left.contains("## Status\npending"), "{left}");

    // The result frame says so too.
    let mut cmd = tascer(&home, &ws);
    setup_env(&mut cmd, &router, &anthropic);
    let out = cmd
        .args([
            "run",
            "--output-format",
            "stream-json",
            "--execute-contracts",
            "contracts",
            "Run the contracts.",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{:?}", texts(&out));
    let frames = json_lines(&out.stdout);
    let result = frames.iter().find(|f| f["type"] == "result").unwrap();
    assert_eq!(result["is_error"], true, "{result}");
    let errors = result["errors"].to_string();
    assert!(errors.contains("ExecuteContracts failed"), "{errors}");
}

/// An Anthropic key and the OAuth token both set: which one contractors
/// use is not guessed. `--dry-run` says so and fails, `contracts run`
/// refuses before anything is sent, and the flag chooses.
#[test]
fn an_ambiguous_environment_is_refused_with_the_flag_that_chooses() {
    let root = tempfile::tempdir().unwrap();
    let (home, ws) = workspace(root.path());
    std::fs::create_dir_all(ws.join("contracts")).unwrap();
    std::fs::write(ws.join("contracts/02-beta.md"), BETA).unwrap();
    let router = MockServer::start_blocking(Scenario::new()).unwrap();
    let anthropic = MockServer::start_blocking(contractors()).unwrap();
    let run = |extra: &[&str]| {
        let mut cmd = tascer(&home, &ws);
        setup_env(&mut cmd, &router, &anthropic);
        cmd.env("ANTHROPIC_API_KEY", "sk-ant-api-key")
            .args(["contracts", "run"])
            .args(extra)
            .output()
            .unwrap()
    };
    let out = run(&["--dry-run"]);
    let (stdout, stderr) = texts(&out);
    assert_eq!(out.status.code(), Some(1), "{stdout}\n{stderr}");
    assert!(
        stdout.contains("--contractor-provider anthropic|anthropic-oauth"),
        "{stdout}"
    );
    let out = run(&[]);
    let (stdout, stderr) = texts(&out);
    assert_eq!(out.status.code(), Some(1), "{stdout}\n{stderr}");
    assert!(stderr.contains("--contractor-provider"), "{stderr}");
    assert!(anthropic.requests().is_empty() && router.requests().is_empty());
    assert!(
        std::fs::read_to_string(ws.join("contracts/02-beta.md"))
            .unwrap()
            .contains("## Status\npending")
    );

    // The project's settings choose too (below flags and variables).
    std::fs::create_dir_all(ws.join(".tascer")).unwrap();
    std::fs::write(
        ws.join(".tascer/settings.json"),
        r#"{"contracts": {"contractorProvider": "anthropic", "contractorModel": "haiku"}}"#,
    )
    .unwrap();
    let out = run(&["--dry-run"]);
    let (stdout, stderr) = texts(&out);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    let contractor = stdout
        .lines()
        .find(|l| l.trim_start().starts_with("contractor"))
        .unwrap();
    assert!(
        contractor.contains("provider anthropic ") && contractor.contains("claude-haiku-4-5"),
        "{contractor}"
    );

    let out = run(&["--contractor-provider", "anthropic-oauth"]);
    let (stdout, stderr) = texts(&out);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    let requests = anthropic.requests();
    assert_eq!(requests.len(), 2);
    assert_eq!(
        requests[0].body["model"], "claude-haiku-4-5",
        "the settings' model"
    );
    assert_eq!(
        requests[0].headers["authorization"],
        "Bearer sk-ant-oat01-contractor"
    );
    assert!(!requests[0].headers.contains_key("x-api-key"));
}

/// A contract that fails (its contractor wrote outside its files) makes
/// `ExecuteContracts` an error, and the unattended run fails with it.
#[test]
fn a_failed_contract_fails_the_run() {
    let root = tempfile::tempdir().unwrap();
    let (home, ws) = workspace(root.path());
    std::fs::create_dir_all(ws.join("contracts")).unwrap();
    std::fs::write(ws.join("contracts/01-alpha.md"), ALPHA).unwrap();
    let router = MockServer::start_blocking(
        Scenario::new()
            .turn(Turn::tool("ExecuteContracts", json!({})).with_cost_usd(0.01))
            .turn(Turn::text("One failed.").with_cost_usd(0.01)),
    )
    .unwrap();
    let anthropic = MockServer::start_blocking(Scenario::new().conversation(
        "# Contract: Alpha",
        vec![
            Turn::tool(
                "Write",
                json!({"file_path": "elsewhere.txt", "content": "x"}),
            ),
            Turn::text("Wrote elsewhere.txt."),
        ],
    ))
    .unwrap();
    let mut cmd = tascer(&home, &ws);
    setup_env(&mut cmd, &router, &anthropic);
    let out = cmd
        .args([
            "run",
            "--execute-contracts",
            "contracts",
            "Run the contracts.",
        ])
        .output()
        .unwrap();
    let (stdout, stderr) = texts(&out);
    assert_eq!(out.status.code(), Some(1), "{stdout}\n{stderr}");
    assert!(
        stderr.contains("error: ExecuteContracts failed"),
        "{stderr}"
    );
    let left = std::fs::read_to_string(ws.join("contracts/01-alpha.md")).unwrap();
    assert!(left.contains("## Status\nfailed"), "{left}");
    assert!(!ws.join("elsewhere.txt").exists());
}

/// Under the SDKs' control protocol too, a refused `ExecuteContracts`
/// makes the turn's result an error.
#[test]
fn a_refused_execute_contracts_fails_the_turn_under_the_sdk_protocol() {
    use std::io::Write as _;
    let root = tempfile::tempdir().unwrap();
    let (home, ws) = workspace(root.path());
    std::fs::create_dir_all(ws.join("contracts")).unwrap();
    std::fs::write(ws.join("contracts/01-alpha.md"), ALPHA).unwrap();
    std::fs::create_dir_all(ws.join(".tascer")).unwrap();
    std::fs::write(
        ws.join(".tascer/settings.json"),
        r#"{"permissions": {"ask": ["ExecuteContracts"]}}"#,
    )
    .unwrap();
    let router = MockServer::start_blocking(
        Scenario::new()
            .turn(Turn::tool("ExecuteContracts", json!({})))
            .turn(Turn::text("I could not run them.")),
    )
    .unwrap();
    let anthropic = MockServer::start_blocking(contractors()).unwrap();
    let mut cmd = tascer(&home, &ws);
    setup_env(&mut cmd, &router, &anthropic);
    let mut child = cmd
        .args(["--output-format", "stream-json", "--verbose"])
        .args(["--input-format", "stream-json"])
        .args(["--execute-contracts", "contracts"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let initialize = json!({"type": "control_request", "request_id": "init-1",
        "request": {"subtype": "initialize"}});
    let prompt = json!({"type": "user", "session_id": "", "parent_tool_use_id": null,
        "message": {"role": "user", "content": "Run the contracts."}});
    writeln!(stdin, "{initialize}\n{prompt}").unwrap();
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    let frames = json_lines(&out.stdout);
    let result = frames
        .iter()
        .find(|f| f["type"] == "result")
        .unwrap_or_else(|| panic!("no result frame: {:?}", texts(&out)));
    assert_eq!(result["is_error"], true, "{result}");
    let errors = result["errors"].to_string();
    assert!(errors.contains("ExecuteContracts failed"), "{errors}");
    assert!(anthropic.requests().is_empty(), "nothing ran");
}
