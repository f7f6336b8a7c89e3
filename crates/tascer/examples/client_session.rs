//! A `Client` keeps one session open across prompts, then the session is
//! resumed from the store as a new client would in another process.
//!
//! Run: `cargo run -p tascer --example client_session`

use futures::StreamExt;
use tascer::{Client, Message, Options, ProviderConfig};
use tascer_testkit::{MockServer, Scenario, Turn};

fn options(server: &MockServer, dir: &std::path::Path) -> Options {
    let mut provider = ProviderConfig::openai();
    provider.base_url = server.openai_base_url(); // the OpenAI wire format this time
    Options::new()
        .provider(provider)
        .model("local-model")
        .cwd(dir)
        .home(dir.join(".tascer"))
}

async fn ask(client: &mut Client, prompt: &str) -> Result<(), Box<dyn std::error::Error>> {
    client.query(prompt).await?;
    let mut stream = client.receive_response();
    while let Some(message) = stream.next().await {
        if let Message::Result(r) = message {
            println!("> {prompt}\n{}", r.result.unwrap_or_default());
        }
    }
    Ok(())
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let scenario = Scenario::new()
        .turn(Turn::text("Noted: the code word is 'heron'."))
        .turn(Turn::text("Yes, I remember it."))
        .turn(Turn::text("The code word was 'heron'."));
    let server = MockServer::start(scenario).await?;
    let dir = tempfile::tempdir()?;

    let mut client = Client::connect(options(&server, dir.path())).await?;
    ask(&mut client, "Remember the code word 'heron'.").await?;
    ask(&mut client, "Do you remember it?").await?;
    let id = client.session_id().to_string();
    client.disconnect().await;

    // Later: resume by id; the full history goes to the model again.
    let mut resumed = Client::connect(options(&server, dir.path()).resume(&id)).await?;
    ask(&mut resumed, "What was the code word?").await?;
    resumed.disconnect().await;
    println!(
        "(the last request carried {} messages)",
        server
            .requests()
            .last()
            .map_or(0, |r| r.body["messages"].as_array().map_or(0, Vec::len))
    );
    Ok(())
}
