//! A complete session against the scripted mock model: no API key needed.
//!
//! Run: `cargo run -p tascer --example mock_session`

use futures::StreamExt;
use serde_json::json;
use tascer::{ContentBlock, Message, Options, ProviderConfig, query};
use tascer_testkit::{MockServer, Scenario, Turn};

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    // A model that lists files with Bash, then answers.
    let scenario = Scenario::new()
        .turn(Turn::tool("Bash", json!({"command": "ls -1"})).with_text("Let me look."))
        .turn(Turn::text("There is one file, hello.txt."));
    let server = MockServer::start(scenario).await?;

    let workspace = tempfile::tempdir()?;
    std::fs::write(workspace.path().join("hello.txt"), "hi\n")?;

    let mut provider = ProviderConfig::anthropic();
    provider.base_url = server.url();
    provider.api_key = Some("not-needed-for-the-mock".into());
    let options = Options::new()
        .provider(provider)
        .cwd(workspace.path())
        .home(workspace.path().join(".tascer"))
        // `ls` is allowed by a rule; anything else the model tries is denied.
        .allowed_tools(["Bash(ls:*)"]);

    let mut messages = query("What files are here?", options);
    while let Some(message) = messages.next().await {
        match message {
            Message::Assistant(a) => {
                for block in a.message.content {
                    match block {
                        ContentBlock::Text { text } => println!("model: {text}"),
                        ContentBlock::ToolUse { name, input, .. } => {
                            println!("tool call: {name} {input}")
                        }
                        _ => {}
                    }
                }
            }
            Message::User(u) => {
                if let Some(raw) = u.tool_use_result {
                    println!("tool result: {}", raw["stdout"]);
                }
            }
            Message::Result(r) => println!(
                "result: {} after {} model calls",
                r.result.unwrap_or_default(),
                r.num_turns
            ),
            _ => {}
        }
    }
    Ok(())
}
