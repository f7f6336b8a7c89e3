//! `tascer demo contracts`: a directory of contracts run against a built-in
//! mock model (no API key): one completes, one is malformed, one exceeds
//! its turn budget, one tries to write outside its files; every session's
//! ledger is verified.

use std::process::ExitCode;
use std::sync::Arc;

use anyhow::Context;
use serde_json::json;
use tascer::{Options, ProviderConfig};
use tascer_contracts::{RunOptions, RunStatus, run_all};
use tascer_mock::{MockServer, Scenario, Turn};

use crate::args::DemoArgs;

const CONTRACTS: &[(&str, &str)] = &[
    (
        "01-greeting.md",
        "# Contract: Add a greeting\n\n## Status\npending\n\n## Task\nCreate `hello.txt` with a friendly greeting.\n\n## Constraints\n- Files the agent may touch: hello.txt\n- Tools allowed: Write, Read\n- Time/turn budget: 5 turns, 2 min\n\n## Result\n",
    ),
    (
        "02-typo.md",
        "# Contract: Broken status\n\n## Status\nfinished\n\n## Task\nNothing to do.\n",
    ),
    (
        "03-endless.md",
        "# Contract: Endless checking\n\n## Status\npending\n\n## Task\nCheck the workspace until satisfied.\n\n## Constraints\n- Turn budget: 3 turns\n",
    ),
    (
        "04-escape.md",
        "# Contract: Stay in your lane\n\n## Status\npending\n\n## Task\nUpdate notes.txt.\n\n## Constraints\n- Files: notes.txt\n",
    ),
];

fn scenario() -> Scenario {
    let mut scenario = Scenario::new()
        .conversation(
            "Contract: Add a greeting",
            vec![
                Turn::new().with_text("Writing the greeting.").with_tool(
                    "Write",
                    json!({"file_path": "hello.txt", "content": "Hello from a contract!\n"}),
                ),
                Turn::text("Created hello.txt with a greeting."),
            ],
        )
        .conversation(
            "Contract: Endless checking",
            vec![Turn::tool("Bash", json!({"command": "ls"}))],
        )
        .conversation(
            "Contract: Stay in your lane",
            vec![
                Turn::tool(
                    "Write",
                    json!({"file_path": "README.md", "content": "overwritten\n"}),
                ),
                Turn::text("Done."),
            ],
        );
    for c in &mut scenario.conversations {
        if c.when_prompt_contains.contains("Endless") {
            c.loop_last_turn = true;
        }
    }
    scenario
}

/// Runs the contracts demo.
pub async fn demo_contracts(args: DemoArgs) -> anyhow::Result<ExitCode> {
    let root = tempfile::Builder::new()
        .prefix("tascer-demo-contracts-")
        .tempdir()
        .context("cannot create a temp directory for the demo")?;
    let workspace = root.path().join("workspace");
    let home = root.path().join("home");
    let dir = workspace.join("contracts");
    std::fs::create_dir_all(&dir)?;
    std::fs::write(workspace.join("README.md"), "The demo's workspace.\n")?;
    for (name, text) in CONTRACTS {
        std::fs::write(dir.join(name), text)?;
    }
    tascer::ledger::generate_keypair(&home, false)
        .context("cannot create the demo's signing key")?;
    let server = MockServer::start(scenario())
        .await
        .context("cannot start the mock model server on 127.0.0.1")?;
    println!(
        "Tascer contracts demo: a scripted model (mock server at {}) runs {} contracts",
        server.url(),
        CONTRACTS.len()
    );
    println!("in {}\n", dir.display());

    let mut provider = ProviderConfig::anthropic();
    provider.base_url = server.url();
    provider.api_key = Some("demo-key".into());
    let base = Options::new()
        .provider(provider)
        .model("tascer-demo-model")
        .home(&home);
    let display = crate::contracts_cmds::Display::new();
    let shown = display.clone();
    let opts = RunOptions::new("contracts")
        .cwd(&workspace)
        .base(base)
        .progress(Arc::new(move |p| shown.update(p)));
    let summary = run_all(&opts).await?;
    display.clear();
    print!("{}", crate::contracts_cmds::summary_table(&summary));

    let done = workspace.join("contracts_completed/01-greeting.md");
    if let Ok(text) = std::fs::read_to_string(&done) {
        println!("\n{} now reads:\n", done.display());
        for line in text.lines() {
            println!("  │ {line}");
        }
    }
    let ledger = tascer::ledger::Ledger::open_in_home(&home, None)?;
    let key =
        tascer::ledger::load_verifying_key(tascer::ledger::KeyPaths::in_home(&home).public).ok();
    println!("\nLedgers:");
    let mut all_ok = true;
    for c in &summary.contracts {
        let Some(s) = &c.session else { continue };
        let report = ledger.verify(&s.session_id, key.as_ref())?;
        all_ok &= report.ok;
        println!(
            "  {} {}: session {} — {} entries, {}",
            if report.ok { "✓" } else { "✗" },
            c.name,
            s.session_id,
            report.entries_checked,
            if report.signed { "signed" } else { "unsigned" }
        );
    }
    let expected = summary.count(RunStatus::Completed) == 1
        && summary.count(RunStatus::Failed) == 2
        && summary.count(RunStatus::Malformed) == 1;
    if args.keep {
        let kept = root.keep();
        println!("\nKept the demo's files in {}", kept.display());
    }
    Ok(if all_ok && expected {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}
