//! WebFetch and WebSearch through the real loop: WebFetch's prompt is
//! answered by the small model over a page served on loopback, and
//! cached; WebSearch on the Anthropic provider runs the provider's own
//! web search (a side request offering the `web_search` server tool,
//! streamed back as `server_tool_use` and `web_search_tool_result`
//! blocks). The mock model plays the agent (its turns) and the side
//! requests (routes picked by their system prompt).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use axum::Router;
use axum::response::Html;
use axum::routing::get;
use common::*;
use futures::StreamExt;
use serde_json::json;
use tascer::{Client, Message};
use tascer_testkit::{MockServer, RecordedRequest, Route, Scenario, Turn};

const PAGE: &str = "<!doctype html><html><head><title>x</title><script>var hidden = 1;</script>\
    </head><body><h1>Release notes</h1><p>Version <b>7.3</b> ships the ledger export.</p></body></html>";

/// What WebFetch's side request's system prompt starts with.
const SUMMARY_MARK: &str = "You answer questions about one web page";
/// What WebSearch's side request's system prompt starts with.
const SEARCH_MARK: &str = "Search the web for the user's query";

/// Serves [`PAGE`] at `/notes` on loopback; counts the fetches.
async fn page_server() -> (SocketAddr, Arc<AtomicUsize>) {
    let hits = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&hits);
    let app = Router::new().route(
        "/notes",
        get(move || {
            counter.fetch_add(1, Ordering::SeqCst);
            async { Html(PAGE) }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (addr, hits)
}

fn side_requests(server: &MockServer, mark: &str) -> Vec<RecordedRequest> {
    server
        .requests()
        .into_iter()
        .filter(|r| r.body["system"].to_string().contains(mark))
        .collect()
}

async fn run(client: &mut Client, prompt: &str) -> Vec<Message> {
    client.query(prompt).await.unwrap();
    tokio::time::timeout(
        std::time::Duration::from_secs(120),
        client.receive_response().collect::<Vec<_>>(),
    )
    .await
    .expect("the turn ends")
}

#[tokio::test(flavor = "multi_thread")]
async fn web_fetch_prompt_is_answered_by_the_small_model_once_per_url_and_prompt() {
    let env = Env::new();
    let (addr, fetches) = page_server().await;
    let url = format!("http://{addr}/notes");
    let fetch = json!({"url": url, "prompt": "Which version ships the export?"});
    let scenario = Scenario::new()
        .turn(Turn::tool("WebFetch", fetch.clone()))
        .turn(Turn::tool("WebFetch", fetch))
        .turn(Turn::text("done"))
        // Answers only a question holding the page's text.
        .route(
            Route::when_system_contains(SUMMARY_MARK, Turn::text("Version 7.3 ships it."))
                .and_last_user_contains("ships the ledger export"),
        );
    let server = MockServer::start(scenario).await.unwrap();
    let mut client = Client::connect(anthropic_options(&server, &env))
        .await
        .unwrap();
    let messages = run(&mut client, "check the notes").await;

    let results = tool_results(&messages);
    assert_eq!(results.len(), 2, "{results:?}");
    for (_, text, is_error) in &results {
        assert!(!is_error);
        assert_eq!(text, "Version 7.3 ships it.");
    }
    // One question to the small model and one fetch: the second call was
    // answered from the cache.
    let asked = side_requests(&server, SUMMARY_MARK);
    assert_eq!(asked.len(), 1);
    assert_eq!(fetches.load(Ordering::SeqCst), 1);
    let question = asked[0].body["messages"][0]["content"].to_string();
    assert!(question.contains("# Release notes"), "{question}");
    assert!(question.contains("Version **7.3** ships"), "{question}");
    assert!(question.contains("Which version ships the export?"));
    assert!(
        !question.contains("hidden"),
        "scripts are dropped: {question}"
    );
    // The haiku class, as Anthropic spells it, counted in the session's usage.
    assert_eq!(asked[0].body["model"], "claude-haiku-4-5");
    let result = result_of(&messages);
    assert!(
        result.model_usage.contains_key("claude-haiku-4-5"),
        "{:?}",
        result.model_usage
    );
    assert!(result.total_cost_usd > 0.0);
    assert_pairing(&server);
}

#[tokio::test(flavor = "multi_thread")]
async fn web_fetch_model_off_or_failing_returns_the_page_with_a_note() {
    let (addr, _) = page_server().await;
    let url = format!("http://{addr}/notes");
    let fetch = json!({"url": url, "prompt": "Which version?"});

    // Turned off in the settings: no side request, the page with a note.
    let env = Env::new();
    let scenario = Scenario::new()
        .turn(Turn::tool("WebFetch", fetch.clone()))
        .turn(Turn::text("done"));
    let server = MockServer::start(scenario).await.unwrap();
    let options = anthropic_options(&server, &env)
        .settings(json!({"webFetch": {"model": "off"}}).to_string());
    let messages = tascer_collect(options).await;
    let (_, text, is_error) = &tool_results(&messages)[0];
    assert!(!is_error);
    assert!(
        text.starts_with(&format!("Content of {url} (no summarizer")),
        "{text}"
    );
    assert!(text.contains("# Release notes"), "{text}");
    assert!(side_requests(&server, SUMMARY_MARK).is_empty());

    // A model the provider refuses (the environment names it): the page
    // with the model's error, and the tool does not fail.
    let env = Env::new();
    let scenario = Scenario::new()
        .turn(Turn::tool("WebFetch", fetch))
        .turn(Turn::text("done"))
        .route(Route::when_system_contains(
            SUMMARY_MARK,
            Turn::text("unused").with_fault(tascer_testkit::Fault::server_error(400)),
        ));
    let server = MockServer::start(scenario).await.unwrap();
    let options = anthropic_options(&server, &env).env(tascer::WEB_FETCH_MODEL_ENV, "sonnet");
    let messages = tascer_collect(options).await;
    let (_, text, is_error) = &tool_results(&messages)[0];
    assert!(!is_error);
    assert!(
        text.contains("(the prompt could not be applied: the model that answers it failed:"),
        "{text}"
    );
    assert!(text.contains("# Release notes"), "{text}");
    let asked = side_requests(&server, SUMMARY_MARK);
    assert_eq!(asked[0].body["model"], "claude-sonnet-4-5");
}

async fn tascer_collect(options: tascer::Options) -> Vec<Message> {
    collect("check the notes", options).await
}

#[tokio::test(flavor = "multi_thread")]
async fn web_search_runs_the_providers_server_tool_when_allowed() {
    let env = Env::new();
    let search = json!({"query": "tascer ledger export", "blocked_domains": ["spam.example"]});
    let scenario = Scenario::new()
        .turn(Turn::tool("WebSearch", search))
        .turn(Turn::text("done"))
        .route(Route::when_system_contains(
            SEARCH_MARK,
            Turn::text("Two sources.").with_web_search(
                "tascer ledger export",
                &[
                    ("Ledger export guide", "https://docs.example/ledger"),
                    ("Spam", "https://spam.example/x"),
                    ("Release 7.3", "https://blog.example/7-3"),
                ],
            ),
        ));
    let server = MockServer::start(scenario).await.unwrap();
    // A priced model, so the search's fee shows in the cost.
    let options = anthropic_options(&server, &env).model("sonnet");
    let mut client = Client::connect(options).await.unwrap();
    let messages = run(&mut client, "search").await;
    let (_, text, is_error) = &tool_results(&messages)[0];
    assert!(!is_error, "{text}");
    assert!(text.contains("Ledger export guide") && text.contains("https://docs.example/ledger"));
    assert!(text.contains("https://blog.example/7-3"), "{text}");
    // The blocked domain is filtered out even if the provider returns it.
    assert!(!text.contains("spam.example"), "{text}");

    let asked = side_requests(&server, SEARCH_MARK);
    assert_eq!(asked.len(), 1);
    let body = &asked[0].body;
    assert_eq!(body["stream"], true);
    assert_eq!(
        body["tools"],
        json!([{"type": "web_search_20250305", "name": "web_search", "max_uses": 8,
                "blocked_domains": ["spam.example"]}])
    );
    assert!(
        body["messages"][0]
            .to_string()
            .contains("tascer ledger export")
    );
    // The call is on record like any other, and the search's tokens and
    // fee count toward the session's cost.
    let report = client.validation_report().await.unwrap();
    assert_eq!(report.tools[0].record.tool, "WebSearch");
    assert_eq!(report.tools[0].record.permission["behavior"], "allow");
    assert!(client.verify_proofs().await.unwrap().ok);
    // The cost is the tokens' at the model's price plus one search's fee.
    let result = result_of(&messages);
    let usage = &result.model_usage["claude-sonnet-4-5"];
    let tokens = tascer::Usage {
        input_tokens: usage["inputTokens"].as_u64().unwrap(),
        output_tokens: usage["outputTokens"].as_u64().unwrap(),
        cache_creation_input_tokens: usage["cacheCreationInputTokens"].as_u64().unwrap(),
        cache_read_input_tokens: usage["cacheReadInputTokens"].as_u64().unwrap(),
    };
    let token_cost = tascer::ProviderConfig::anthropic()
        .prices
        .cost_usd("claude-sonnet-4-5", &tokens);
    let fee = result.total_cost_usd - token_cost;
    assert!((fee - 0.01).abs() < 1e-9, "fee {fee}");
    assert_pairing(&server);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_denied_web_search_never_reaches_the_provider() {
    let env = Env::new();
    let scenario = Scenario::new()
        .turn(Turn::tool("WebSearch", json!({"query": "anything at all"})))
        .turn(Turn::text("done"))
        .route(Route::when_system_contains(
            SEARCH_MARK,
            Turn::text("x").with_web_search("anything", &[("A", "https://a.example/")]),
        ));
    let server = MockServer::start(scenario).await.unwrap();
    let options = anthropic_options(&server, &env)
        .settings(json!({"permissions": {"deny": ["WebSearch"]}}).to_string());
    let messages = collect("search", options).await;
    let (_, text, is_error) = &tool_results(&messages)[0];
    assert!(is_error, "{text}");
    assert!(side_requests(&server, SEARCH_MARK).is_empty());
}

#[tokio::test(flavor = "multi_thread")]
async fn web_search_on_an_openai_provider_without_brave_says_what_it_needs() {
    if std::env::var_os("BRAVE_SEARCH_API_KEY").is_some() {
        return; // Brave is configured by the environment: it would search.
    }
    let env = Env::new();
    let scenario = Scenario::new()
        .turn(Turn::tool("WebSearch", json!({"query": "anything at all"})))
        .turn(Turn::text("done"));
    let server = MockServer::start(scenario).await.unwrap();
    let messages = collect("search", openai_options(&server, &env)).await;
    let (_, text, is_error) = &tool_results(&messages)[0];
    assert!(is_error);
    assert!(
        text.contains("WebSearch needs a Brave Search API key (BRAVE_SEARCH_API_KEY")
            && text.contains("or the Anthropic provider"),
        "{text}"
    );
    assert_eq!(server.requests().len(), 2, "no side request");
}
