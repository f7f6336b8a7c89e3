//! `tascer demo`: a scripted model drives real tools in a temp workspace.

use std::process::ExitCode;

use anyhow::{Context, bail};
use tascer::{ContentBlock, Message, Options, ProviderConfig, SessionStore};
use tascer_testkit::{MockServer, Scenario, check_tool_pairing};

use crate::args::{DemoArgs, OutputFormat};

/// The bundled scenario the demo plays.
const DEMO_SCENARIO: &str = include_str!("../scenarios/demo.json");

/// The demo's starting file.
const NOTES: &str =
    "# Notes\nTODO: write summary.md with a short summary of these notes.\nKeep it short.\n";

/// Runs the demo.
pub async fn demo(args: DemoArgs) -> anyhow::Result<ExitCode> {
    let root = tempfile::Builder::new()
        .prefix("tascer-demo-")
        .tempdir()
        .context("cannot create a temp directory for the demo")?;
    let workspace = root.path().join("workspace");
    let home = root.path().join("home");
    std::fs::create_dir_all(&workspace)?;
    std::fs::write(workspace.join("notes.md"), NOTES)?;
    // A signing key for the demo's own home, so its ledger is signed.
    tascer::ledger::generate_keypair(&home, false)
        .context("cannot create the demo's signing key")?;

    let scenario =
        Scenario::from_json(DEMO_SCENARIO).context("the bundled demo scenario is invalid")?;
    let server = MockServer::start(scenario)
        .await
        .context("cannot start the mock model server on 127.0.0.1")?;

    let text = !args.stream_json;
    if text {
        println!(
            "Tascer demo: a scripted model (mock server at {}) drives real tools",
            server.url()
        );
        println!("in {}\n", workspace.display());
    }

    let mut provider = ProviderConfig::anthropic();
    provider.base_url = server.url();
    provider.api_key = Some("demo-key".into());
    let options = Options::new()
        .provider(provider)
        .model("tascer-demo-model")
        .cwd(&workspace)
        .home(&home)
        .max_turns(20)
        // Edits are accepted in the workspace; Bash runs what the demo
        // needs. Deny rules, policies and gates still apply.
        .permission_mode(tascer::guard::permissions::PermissionMode::BypassPermissions);
    let format = if text {
        OutputFormat::Text
    } else {
        OutputFormat::StreamJson
    };
    let code = crate::run::run_with_options(
        "Summarize notes.md into summary.md, then check it.".into(),
        options,
        format,
    )
    .await?;

    let report = check(&server, &home, &workspace)?;
    if text {
        println!("\nWhat happened:");
        for line in &report.tool_lines {
            println!("  {line}");
        }
        println!("\nChecks:");
        println!(
            "  ✓ {} model requests; in each, every tool_use has exactly one tool_result",
            report.requests
        );
        println!(
            "  ✓ session {} stored with {} messages; its history rebuilds",
            report.session_id, report.messages
        );
        println!(
            "  ✓ ledger verified: {} entries, hash chain intact, evidence intact, head signed (key {})",
            report.ledger_entries,
            report.key_id.get(..16).unwrap_or(&report.key_id)
        );
        println!("  ✓ summary.md written by the agent:");
        for line in report.summary.lines() {
            println!("      {line}");
        }
    }
    if args.keep {
        let kept = root.keep();
        if text {
            println!("\nKept the workspace and store in {}", kept.display());
            println!(
                "(inspect with: TASCER_HOME={} tascer sessions show {})",
                kept.join("home").display(),
                report.session_id
            );
        }
    }
    Ok(code)
}

struct DemoReport {
    ledger_entries: u64,
    key_id: String,
    requests: usize,
    messages: usize,
    session_id: String,
    tool_lines: Vec<String>,
    summary: String,
}

/// Verifies what the demo did, from the recorded requests, the store and the
/// files; any failure is an error.
fn check(
    server: &MockServer,
    home: &std::path::Path,
    workspace: &std::path::Path,
) -> anyhow::Result<DemoReport> {
    let requests = server.requests();
    for (i, request) in requests.iter().enumerate() {
        if let Err(problem) = check_tool_pairing(&request.body) {
            bail!(
                "model request {} breaks the tool_use/tool_result pairing: {problem}",
                i + 1
            );
        }
    }
    let store = SessionStore::open_in_home(home)?;
    let session = store
        .list(1)?
        .into_iter()
        .next()
        .context("the demo session was not stored")?;
    let messages = store.messages(&session.id)?;
    let history = store.history(&session.id)?;
    if history.is_empty() {
        bail!("the stored session has no history");
    }

    let mut tool_lines = Vec::new();
    let mut pending: Vec<(String, String)> = Vec::new();
    for message in &messages {
        match message {
            Message::Assistant(a) => {
                for block in &a.message.content {
                    if let ContentBlock::ToolUse { id, name, input } = block {
                        let arg = ["command", "file_path", "pattern"]
                            .iter()
                            .find_map(|k| input.get(*k).and_then(|v| v.as_str()))
                            .unwrap_or("");
                        pending.push((id.clone(), format!("{name}({arg})")));
                    }
                }
            }
            Message::User(u) => {
                if let tascer::UserContent::Blocks(blocks) = &u.message.content {
                    for block in blocks {
                        if let ContentBlock::ToolResult {
                            tool_use_id,
                            is_error,
                            ..
                        } = block
                            && let Some(pos) = pending.iter().position(|(id, _)| id == tool_use_id)
                        {
                            let (_, call) = pending.remove(pos);
                            let status = if is_error.unwrap_or(false) {
                                "✗ failed"
                            } else {
                                "✓ ok"
                            };
                            tool_lines.push(format!("{status:<9} {call}"));
                        }
                    }
                }
            }
            _ => {}
        }
    }
    if !pending.is_empty() {
        bail!("{} tool calls have no stored result", pending.len());
    }
    if let Some(failed) = tool_lines.iter().find(|l| l.starts_with('✗')) {
        bail!("a demo tool call failed: {failed}");
    }
    let key = tascer::ledger::load_home_signing_key(home)?.context("the demo key is missing")?;
    let key_id = tascer::ledger::key_id(&key.verifying_key());
    let ledger = tascer::ledger::Ledger::open_in_home(home, Some(key))?;
    let verified = ledger.verify(&session.id, None)?;
    if !verified.ok || !verified.signed {
        bail!("the demo session's ledger does not verify: {verified:?}");
    }
    let summary = std::fs::read_to_string(workspace.join("summary.md"))
        .context("the agent did not write summary.md")?;
    if summary.contains("TODO") || !summary.contains("3 lines") {
        bail!("summary.md does not have the expected content:\n{summary}");
    }
    Ok(DemoReport {
        ledger_entries: verified.entries_checked,
        key_id,
        requests: requests.len(),
        messages: messages.len(),
        session_id: session.id,
        tool_lines,
        summary,
    })
}
