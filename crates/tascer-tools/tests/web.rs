//! WebFetch and WebSearch tests against local HTTP servers.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::Router;
use axum::body::Body;
use axum::http::{HeaderMap, StatusCode, Uri, header};
use axum::response::{Html, IntoResponse, Redirect, Response};
use axum::routing::get;
use common::*;
use futures::future::BoxFuture;
use serde_json::{Value, json};
use tascer_tools::{
    BraveSearch, SearchBackend, SearchHit, SearchRequest, Summarizer, ToolState, WebFetchConfig,
    WebFetchTool, WebSearchTool,
};

const PAGE: &str = "<!DOCTYPE html><html><head><title>T</title><style>.x{color:red}</style>\
    </head><body><h1>Hello</h1><p>Some <b>bold</b> text and a <a href=\"/x\">link</a>.</p>\
    <script>alert('boo')</script><ul><li>one</li><li>two</li></ul></body></html>";

async fn serve(app: Router) -> SocketAddr {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        axum::serve(listener, app).await.unwrap();
    });
    addr
}

async fn fetch_server() -> SocketAddr {
    let app = Router::new()
        .route("/page", get(|| async { Html(PAGE) }))
        .route("/redirect", get(|| async { Redirect::temporary("/page") }))
        .route("/loop", get(|| async { Redirect::temporary("/loop") }))
        .route(
            "/missing",
            get(|| async { (StatusCode::NOT_FOUND, "no such page") }),
        )
        .route(
            "/text",
            get(|| async { ([(header::CONTENT_TYPE, "text/plain")], "plain words\n") }),
        )
        .route(
            "/image",
            get(|| async { ([(header::CONTENT_TYPE, "image/png")], vec![0x89u8, b'P', 0]) }),
        )
        .route("/big", get(|| async { "x".repeat(64 * 1024) }))
        .route(
            "/big-stream",
            get(|| async {
                // Chunked: no Content-Length, so the cap applies while reading.
                let chunks = (0..32).map(|_| Ok::<_, std::io::Error>(vec![b'y'; 4096]));
                Response::builder()
                    .header(header::CONTENT_TYPE, "text/plain")
                    .body(Body::from_stream(futures::stream::iter(chunks)))
                    .unwrap()
            }),
        )
        .route(
            "/slow",
            get(|| async {
                tokio::time::sleep(Duration::from_secs(5)).await;
                "late"
            }),
        );
    serve(app).await
}

fn small_config() -> WebFetchConfig {
    WebFetchConfig {
        timeout: Duration::from_millis(500),
        max_bytes: 32 * 1024,
        max_redirects: 3,
        max_content_chars: 1000,
    }
}

#[tokio::test]
async fn fetches_html_as_markdown() {
    let addr = fetch_server().await;
    let (_d, dir) = tempdir();
    let tool = WebFetchTool::new(ToolState::new());
    let url = format!("http://{addr}/page");
    let out = call(
        &tool,
        &ctx(&dir),
        json!({"url": url, "prompt": "What is it?"}),
    )
    .await;
    assert!(!out.is_error, "{out:?}");
    let raw = out.raw.clone().unwrap();
    let md = raw["result"].as_str().unwrap();
    assert!(md.contains("# Hello"), "{md}");
    assert!(md.contains("**bold**"), "{md}");
    assert!(md.contains("[link](/x)"), "{md}");
    assert!(md.contains("one") && md.contains("two"), "{md}");
    assert!(!md.contains("alert"), "{md}");
    assert!(!md.contains("color:red"), "{md}");
    assert_eq!(raw["code"], 200);
    assert_eq!(raw["codeText"], "OK");
    assert_eq!(raw["bytes"], PAGE.len());
    assert_eq!(raw["url"], url);
    assert_eq!(raw["truncated"], false);
    assert!(raw["durationMs"].is_u64());
    let txt = text(&out);
    assert!(
        txt.starts_with(&format!("Content of {url} (no summarizer")),
        "{txt}"
    );
    assert!(txt.ends_with(md));
}

#[tokio::test]
async fn follows_redirects_and_limits_them() {
    let addr = fetch_server().await;
    let (_d, dir) = tempdir();
    let tool = WebFetchTool::with_config(ToolState::new(), small_config());
    let c = ctx(&dir);
    let out = call(
        &tool,
        &c,
        json!({"url": format!("http://{addr}/redirect"), "prompt": "p"}),
    )
    .await;
    assert!(!out.is_error, "{out:?}");
    let raw = out.raw.unwrap();
    assert_eq!(raw["finalUrl"], format!("http://{addr}/page"));
    assert!(raw["result"].as_str().unwrap().contains("# Hello"));

    let out = call(
        &tool,
        &c,
        json!({"url": format!("http://{addr}/loop"), "prompt": "p"}),
    )
    .await;
    assert!(out.is_error);
    assert!(
        text(&out).contains("too many redirects (at most 3 are followed)"),
        "{}",
        text(&out)
    );
}

#[tokio::test]
async fn non_2xx_is_an_error_with_status() {
    let addr = fetch_server().await;
    let (_d, dir) = tempdir();
    let tool = WebFetchTool::new(ToolState::new());
    let out = call(
        &tool,
        &ctx(&dir),
        json!({"url": format!("http://{addr}/missing"), "prompt": "p"}),
    )
    .await;
    assert!(out.is_error);
    assert_eq!(
        text(&out),
        format!("Request to http://{addr}/missing failed with status code 404 Not Found.")
    );
}

#[tokio::test]
async fn oversize_bodies_fail() {
    let addr = fetch_server().await;
    let (_d, dir) = tempdir();
    let tool = WebFetchTool::with_config(ToolState::new(), small_config());
    let c = ctx(&dir);
    for path in ["big", "big-stream"] {
        let out = call(
            &tool,
            &c,
            json!({"url": format!("http://{addr}/{path}"), "prompt": "p"}),
        )
        .await;
        assert!(out.is_error, "{path}");
        assert_eq!(
            text(&out),
            format!("The response from http://{addr}/{path} is larger than the 32768-byte limit."),
        );
    }
}

#[tokio::test]
async fn slow_server_times_out() {
    let addr = fetch_server().await;
    let (_d, dir) = tempdir();
    let tool = WebFetchTool::with_config(ToolState::new(), small_config());
    let started = Instant::now();
    let out = call(
        &tool,
        &ctx(&dir),
        json!({"url": format!("http://{addr}/slow"), "prompt": "p"}),
    )
    .await;
    assert!(out.is_error);
    assert_eq!(
        text(&out),
        format!("Fetching http://{addr}/slow timed out after 0.5 seconds.")
    );
    assert!(started.elapsed() < Duration::from_secs(3));
}

#[tokio::test]
async fn text_truncation_and_unsupported_types() {
    let addr = fetch_server().await;
    let (_d, dir) = tempdir();
    let c = ctx(&dir);
    let tool = WebFetchTool::with_config(
        ToolState::new(),
        WebFetchConfig {
            max_content_chars: 5,
            ..WebFetchConfig::default()
        },
    );
    let out = call(
        &tool,
        &c,
        json!({"url": format!("http://{addr}/text"), "prompt": "p"}),
    )
    .await;
    assert!(!out.is_error, "{out:?}");
    let raw = out.raw.unwrap();
    assert_eq!(
        raw["result"],
        "plain\n\n[Content truncated: showing the first 5 of 12 characters.]"
    );
    assert_eq!(raw["truncated"], true);

    let out = call(
        &tool,
        &c,
        json!({"url": format!("http://{addr}/image"), "prompt": "p"}),
    )
    .await;
    assert!(out.is_error);
    assert!(text(&out).contains("image/png"), "{}", text(&out));

    for (input, want) in [
        (
            json!({"url": "ftp://example.com/", "prompt": "p"}),
            "WebFetch input is invalid: url must use http or https",
        ),
        (
            json!({"url": "nope", "prompt": "p"}),
            "WebFetch input is invalid: url is not a valid URL",
        ),
        (
            json!({"url": "https://x.test/"}),
            "WebFetch input is invalid:",
        ),
    ] {
        let out = call(&tool, &c, input).await;
        assert!(out.is_error);
        assert!(text(&out).starts_with(want), "{}", text(&out));
    }
}

#[tokio::test]
async fn connection_refused_is_an_error() {
    // Bind then drop to get a port nobody listens on.
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let (_d, dir) = tempdir();
    let tool = WebFetchTool::new(ToolState::new());
    let out = call(
        &tool,
        &ctx(&dir),
        json!({"url": format!("http://127.0.0.1:{port}/"), "prompt": "p"}),
    )
    .await;
    assert!(out.is_error);
    assert!(
        text(&out).starts_with(&format!("Fetching http://127.0.0.1:{port}/ failed:")),
        "{}",
        text(&out)
    );
}

struct Echo;

impl Summarizer for Echo {
    fn summarize<'a>(
        &'a self,
        content: &'a str,
        prompt: &'a str,
    ) -> BoxFuture<'a, Result<String, String>> {
        Box::pin(async move {
            if prompt == "fail" {
                return Err("model unavailable".into());
            }
            let heading = content.lines().find(|l| l.starts_with('#')).unwrap_or("");
            Ok(format!("{prompt} -> {heading}"))
        })
    }
}

#[tokio::test]
async fn summarizer_answers_the_prompt() {
    let addr = fetch_server().await;
    let (_d, dir) = tempdir();
    let c = ctx(&dir);
    let tool = WebFetchTool::new(ToolState::new().with_summarizer(Arc::new(Echo)));
    let out = call(
        &tool,
        &c,
        json!({"url": format!("http://{addr}/page"), "prompt": "Title?"}),
    )
    .await;
    assert!(!out.is_error, "{out:?}");
    assert_eq!(text(&out), "Title? -> # Hello");
    assert_eq!(out.raw.unwrap()["result"], "Title? -> # Hello");

    let out = call(
        &tool,
        &c,
        json!({"url": format!("http://{addr}/page"), "prompt": "fail"}),
    )
    .await;
    // A failed model gives the page with a note, not an error.
    assert!(!out.is_error, "{out:?}");
    let txt = text(&out);
    assert!(
        txt.contains(
            "the prompt could not be applied: the model that answers it failed: model unavailable"
        ),
        "{txt}"
    );
    assert!(txt.contains("# Hello"), "{txt}");
    assert_eq!(out.raw.unwrap()["promptApplied"], false);
}

/// Counts its calls; answers with the call number.
#[derive(Default)]
struct Counting(Mutex<u32>);

impl Summarizer for Counting {
    fn summarize<'a>(
        &'a self,
        _content: &'a str,
        prompt: &'a str,
    ) -> BoxFuture<'a, Result<String, String>> {
        Box::pin(async move {
            let mut n = self.0.lock().unwrap();
            *n += 1;
            if prompt == "fail" {
                return Err("down".into());
            }
            Ok(format!("answer {n}"))
        })
    }
}

#[tokio::test]
async fn answers_are_cached_by_url_and_prompt_but_failures_are_not() {
    let addr = fetch_server().await;
    let (_d, dir) = tempdir();
    let c = ctx(&dir);
    let counting = Arc::new(Counting::default());
    let tool = WebFetchTool::new(ToolState::new().with_summarizer(counting.clone()));
    let ask = |path: &str, prompt: &str| json!({"url": format!("http://{addr}/{path}"), "prompt": prompt});
    assert_eq!(text(&call(&tool, &c, ask("page", "a")).await), "answer 1");
    assert_eq!(text(&call(&tool, &c, ask("page", "a")).await), "answer 1");
    assert_eq!(text(&call(&tool, &c, ask("page", "b")).await), "answer 2");
    assert_eq!(text(&call(&tool, &c, ask("text", "a")).await), "answer 3");
    // A clone shares the cache.
    let clone = tool.clone();
    assert_eq!(text(&call(&clone, &c, ask("page", "b")).await), "answer 2");
    call(&tool, &c, ask("page", "fail")).await;
    call(&tool, &c, ask("page", "fail")).await;
    assert_eq!(*counting.0.lock().unwrap(), 5);
}

// ---- WebSearch ----

#[derive(Default)]
struct Seen {
    queries: Vec<HashMap<String, String>>,
}

async fn brave_server() -> (SocketAddr, Arc<Mutex<Seen>>) {
    let seen = Arc::new(Mutex::new(Seen::default()));
    let s = seen.clone();
    let app = Router::new().route(
        "/res/v1/web/search",
        get(move |uri: Uri, headers: HeaderMap| {
            let s = s.clone();
            async move {
                if headers
                    .get("x-subscription-token")
                    .and_then(|v| v.to_str().ok())
                    != Some("test-key")
                {
                    return (StatusCode::UNAUTHORIZED, "bad token").into_response();
                }
                if headers.get("accept").and_then(|v| v.to_str().ok()) != Some("application/json") {
                    return (StatusCode::BAD_REQUEST, "accept").into_response();
                }
                let url = reqwest::Url::parse(&format!("http://h{uri}")).unwrap();
                let q: HashMap<String, String> = url.query_pairs().into_owned().collect();
                s.lock().unwrap().queries.push(q);
                axum::Json(json!({
                    "type": "search",
                    "web": {"results": [
                        {"title": "Tokio <strong>docs</strong>", "url": "https://docs.rs/tokio",
                         "description": "An <strong>async</strong> runtime &amp; more"},
                        {"title": "Spam", "url": "https://ads.spam.com/x", "description": "buy"},
                        {"title": "Blog", "url": "https://blog.example.org/async"},
                    ]}
                }))
                .into_response()
            }
        }),
    );
    (serve(app).await, seen)
}

fn brave_env(addr: SocketAddr, key: &str) -> HashMap<String, String> {
    HashMap::from([
        ("BRAVE_SEARCH_API_KEY".to_string(), key.to_string()),
        (
            "BRAVE_SEARCH_BASE_URL".to_string(),
            format!("http://{addr}"),
        ),
    ])
}

#[tokio::test]
async fn brave_search_request_shape_and_results() {
    let (addr, seen) = brave_server().await;
    let (_d, dir) = tempdir();
    let c = ctx_with_env(&dir, brave_env(addr, "test-key"));
    let tool = WebSearchTool::new(ToolState::new());
    let out = call(&tool, &c, json!({"query": "rust async"})).await;
    assert!(!out.is_error, "{out:?}");
    {
        let seen = seen.lock().unwrap();
        assert_eq!(seen.queries[0]["q"], "rust async");
        assert_eq!(seen.queries[0]["count"], "10");
    }
    let raw = out.raw.clone().unwrap();
    assert_eq!(raw["query"], "rust async");
    assert_eq!(raw["backend"], "brave");
    assert_eq!(raw["searchCount"], 1);
    assert_eq!(raw["results"][0]["tool_use_id"], "toolu_test");
    let content = &raw["results"][0]["content"];
    assert_eq!(content.as_array().unwrap().len(), 3);
    assert_eq!(
        content[0],
        json!({"title": "Tokio docs", "url": "https://docs.rs/tokio",
               "snippet": "An async runtime & more"})
    );
    assert!(content[2].get("snippet").is_none());
    let txt = text(&out);
    assert!(
        txt.starts_with("Web search results for query: \"rust async\"\n\nLinks: [{"),
        "{txt}"
    );
    assert!(
        txt.contains("1. Tokio docs\n   https://docs.rs/tokio\n   An async runtime & more"),
        "{txt}"
    );
}

#[tokio::test]
async fn brave_search_domain_filters() {
    let (addr, seen) = brave_server().await;
    let (_d, dir) = tempdir();
    let c = ctx_with_env(&dir, brave_env(addr, "test-key"));
    let tool = WebSearchTool::new(ToolState::new());

    let out = call(
        &tool,
        &c,
        json!({"query": "async", "blocked_domains": ["spam.com"]}),
    )
    .await;
    assert!(!out.is_error, "{out:?}");
    let urls: Vec<Value> = out.raw.unwrap()["results"][0]["content"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["url"].clone())
        .collect();
    assert_eq!(
        urls,
        [
            json!("https://docs.rs/tokio"),
            json!("https://blog.example.org/async")
        ]
    );

    let out = call(
        &tool,
        &c,
        json!({"query": "async", "allowed_domains": ["docs.rs"]}),
    )
    .await;
    let content = &out.raw.unwrap()["results"][0]["content"];
    assert_eq!(content.as_array().unwrap().len(), 1);
    assert_eq!(content[0]["url"], "https://docs.rs/tokio");

    let seen = seen.lock().unwrap();
    assert_eq!(seen.queries[0]["q"], "async -site:spam.com");
    assert_eq!(seen.queries[1]["q"], "async site:docs.rs");
}

#[tokio::test]
async fn web_search_errors() {
    let (addr, _seen) = brave_server().await;
    let (_d, dir) = tempdir();
    let tool = WebSearchTool::new(ToolState::new());

    // Wrong key: the API's status comes back.
    let c = ctx_with_env(&dir, brave_env(addr, "wrong"));
    let out = call(&tool, &c, json!({"query": "rust"})).await;
    assert!(out.is_error);
    assert_eq!(
        text(&out),
        "Web search failed: Brave Search returned status 401: bad token"
    );

    // Invalid input.
    for (input, want) in [
        (
            json!({"query": "rust", "allowed_domains": ["a.com"], "blocked_domains": ["b.com"]}),
            "WebSearch input is invalid: cannot specify both allowed_domains and blocked_domains",
        ),
        (
            json!({"query": "r"}),
            "WebSearch input is invalid: query must be at least 2 characters",
        ),
        (json!({"q": "rust"}), "WebSearch input is invalid:"),
    ] {
        let out = call(&tool, &c, input).await;
        assert!(out.is_error);
        assert!(text(&out).starts_with(want), "{}", text(&out));
    }
}

#[tokio::test]
async fn web_search_without_backend_names_env_var() {
    if std::env::var_os("BRAVE_SEARCH_API_KEY").is_some() {
        return; // Configured by the environment; nothing to check.
    }
    let (_d, dir) = tempdir();
    let tool = WebSearchTool::new(ToolState::new());
    let out = call(&tool, &ctx(&dir), json!({"query": "rust"})).await;
    assert!(out.is_error);
    assert!(
        text(&out).starts_with("WebSearch needs a Brave Search API key (BRAVE_SEARCH_API_KEY"),
        "{}",
        text(&out)
    );
}

struct Fixed;

impl SearchBackend for Fixed {
    fn name(&self) -> &str {
        "fixed"
    }

    fn search<'a>(
        &'a self,
        request: &'a SearchRequest,
    ) -> BoxFuture<'a, Result<Vec<SearchHit>, String>> {
        Box::pin(async move {
            Ok(vec![SearchHit {
                title: request.query.clone(),
                url: "https://example.com/".into(),
                snippet: None,
            }])
        })
    }
}

#[tokio::test]
async fn configured_backend_wins() {
    let (_d, dir) = tempdir();
    let tool = WebSearchTool::new(ToolState::new().with_search_backend(Arc::new(Fixed)));
    let out = call(&tool, &ctx(&dir), json!({"query": "hello"})).await;
    assert!(!out.is_error, "{out:?}");
    let raw = out.raw.unwrap();
    assert_eq!(raw["backend"], "fixed");
    assert_eq!(raw["results"][0]["content"][0]["title"], "hello");

    let out = call(
        &tool,
        &ctx(&dir),
        json!({"query": "hello", "allowed_domains": ["other.org"]}),
    )
    .await;
    assert!(text(&out).contains("No results found."), "{}", text(&out));
}

#[tokio::test]
async fn brave_backend_direct() {
    let (addr, _seen) = brave_server().await;
    let brave = BraveSearch::new("test-key")
        .with_base_url(format!("http://{addr}/"))
        .with_count(50);
    let hits = brave
        .search(&SearchRequest {
            query: "x".into(),
            allowed_domains: vec![],
            blocked_domains: vec![],
        })
        .await
        .unwrap();
    assert_eq!(hits.len(), 3);
    assert!(BraveSearch::from_env(|_| None).is_none());
}
