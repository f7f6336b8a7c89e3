//! `tascer serve`'s JSON API, over real HTTP against the binary started on
//! port 0, on a home whose sessions `tascer run` recorded against the
//! scripted mock model: the token and Host checks, the session list with
//! search, filters and paging, a session's timeline (tool calls with their
//! decisions and who made them, gates, diffs), live sessions, the ledger's
//! verification before and after a row is tampered with, the attestation,
//! and the OpenAPI document (identical to docs/openapi.json).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use serde_json::Value;
use tascer_ledger::{Envelope, IN_TOTO_PAYLOAD_TYPE};
use tascer_testkit::postgres::PgServer;
use tascer_testkit::{Scenario, Turn};

use common::serve::{
    POST_HOOK, Served, fill_queue, record, repo_root, run_session, tamper, write_contracts,
};

/// Regenerates docs/openapi.json from the served document when set.
const UPDATE_ENV: &str = "TASCER_UPDATE_OPENAPI";

fn ids(page: &Value) -> Vec<String> {
    page["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["id"].as_str().unwrap().to_string())
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn requests_without_the_token_or_from_another_host_are_refused() {
    let home = tempfile::tempdir().unwrap();
    let served = Served::start(home.path(), home.path(), &[]);
    let client = reqwest::Client::new();
    for auth in [
        None,
        Some("Bearer wrong-token-0123456789"),
        Some("Basic abc"),
    ] {
        let mut request = client.get(format!("{}/api/sessions", served.base));
        if let Some(auth) = auth {
            request = request.header("Authorization", auth);
        }
        let response = request.send().await.unwrap();
        assert_eq!(response.status().as_u16(), 401, "{auth:?}");
        assert_eq!(response.headers()["www-authenticate"], "Bearer");
        let body: Value = response.json().await.unwrap();
        assert!(
            body["error"].as_str().unwrap().contains("access token"),
            "{body}"
        );
    }
    // A DNS-rebinding page: the right token, but addressed to another name.
    let response = client
        .get(format!("{}/api/sessions", served.base))
        .bearer_auth(&served.token)
        .header("Host", "attacker.example:80")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status().as_u16(), 403);
    // The page itself holds no data: it loads without the token, with
    // headers that keep the token in the page.
    let page = client
        .get(format!("{}/", served.base))
        .send()
        .await
        .unwrap();
    assert_eq!(page.status().as_u16(), 200);
    assert_eq!(page.headers()["referrer-policy"], "no-referrer");
    assert!(
        page.text()
            .await
            .unwrap()
            .contains("<script src=\"/app.js\"")
    );
    // With the token, an empty home lists no sessions (and gets no database).
    let list = served.ok("/api/sessions").await;
    assert_eq!(list["total"], 0);
    assert!(!home.path().join("tascer.db").exists());
}

#[test]
fn a_remote_address_is_refused_without_allow_remote() {
    let home = tempfile::tempdir().unwrap();
    let out = common::tascer(home.path(), home.path())
        .args(["serve", "--port", "0", "--bind", "0.0.0.0"])
        .output()
        .unwrap();
    let (stdout, stderr) = common::texts(&out);
    assert!(!out.status.success(), "{stdout}");
    assert!(
        stderr.contains("refusing to serve on 0.0.0.0:0"),
        "{stderr}"
    );
    assert!(stderr.contains("--allow-remote"), "{stderr}");
}

#[tokio::test(flavor = "multi_thread")]
async fn sessions_are_listed_searched_filtered_and_paged() {
    let rec = record().await;
    // A session still running: created, not ended.
    let store = tascer::SessionStore::open_in_home(rec.home()).unwrap();
    store
        .create_session(&tascer_store::NewSession {
            id: "99999999-0000-4000-8000-000000000001",
            cwd: "/tmp/live",
            model: "claude-live",
            forked_from: None,
        })
        .unwrap();
    drop(store);
    let served = Served::start(rec.home(), rec.ws.path(), &[]);
    let all = served.ok("/api/sessions").await;
    assert_eq!(all["total"], 3, "{all}");
    let both = ids(&all);
    assert!(
        both.contains(&rec.edit) && both.contains(&rec.read),
        "{all}"
    );

    let found = served.ok("/api/sessions?q=NOTES%20write").await;
    assert_eq!(ids(&found), [rec.edit.as_str()]);
    let by_model = served.ok("/api/sessions?model=claude-read").await;
    assert_eq!(ids(&by_model), [rec.read.as_str()]);
    let done = served.ok("/api/sessions?status=success").await;
    assert_eq!(done["total"], 2, "{done}");
    let open = served.ok("/api/sessions?status=open").await;
    assert_eq!(ids(&open), ["99999999-0000-4000-8000-000000000001"]);
    let recent = served.ok("/api/sessions?since=1h").await;
    assert_eq!(recent["total"], 3);
    let old = served.ok("/api/sessions?until=2000-01-01").await;
    assert_eq!(old["total"], 0);
    let first = served.ok("/api/sessions?limit=2").await;
    let rest = served.ok("/api/sessions?limit=2&offset=2").await;
    assert_eq!((ids(&first).len(), ids(&rest).len()), (2, 1));
    assert!(!ids(&first).contains(&ids(&rest)[0]));

    let (status, err) = served.get("/api/sessions?since=whenever").await;
    assert_eq!(status, 400, "{err}");
    assert!(
        err["error"].as_str().unwrap().starts_with("since: "),
        "{err}"
    );
    let (status, err) = served.get("/api/sessions?colour=red").await;
    assert_eq!(status, 400, "{err}");

    let live = served.ok("/api/live").await;
    let live_ids: Vec<&str> = live["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["id"].as_str().unwrap())
        .collect();
    assert_eq!(live_ids, ["99999999-0000-4000-8000-000000000001"]);
}

/// `(tool, status, decision, decider_kind, decider)` of a timeline call.
fn call_facts(call: &Value) -> (String, String, String, String, String) {
    let text = |v: &Value| v.as_str().unwrap_or("-").to_string();
    let d = &call["decision"];
    (
        text(&call["tool"]),
        text(&call["status"]),
        text(&d["decision"]),
        text(&d["decider_kind"]),
        text(&d["decider"]),
    )
}

#[tokio::test(flavor = "multi_thread")]
async fn a_timeline_has_the_calls_with_their_decisions_gates_and_diffs() {
    let rec = record().await;
    let served = Served::start(rec.home(), rec.ws.path(), &[]);
    let t = served.ok(&format!("/api/sessions/{}", rec.edit)).await;
    assert_eq!(t["session"]["id"], rec.edit.as_str());
    assert_eq!(t["session"]["model"], "claude-edit");
    let calls = t["calls"].as_array().unwrap();
    let facts: Vec<_> = calls.iter().map(call_facts).collect();
    let s = |x: &str| x.to_string();
    assert_eq!(
        facts,
        [
            (
                s("Write"),
                s("validated"),
                s("allow"),
                s("mode"),
                s("acceptEdits")
            ),
            (
                s("Bash"),
                s("validated"),
                s("allow"),
                s("rule"),
                s("Bash(echo:*)")
            ),
            (
                s("Bash"),
                s("blocked"),
                s("deny"),
                s("rule"),
                s("Bash(rm:*)")
            ),
            (
                s("Edit"),
                s("validated"),
                s("allow"),
                s("mode"),
                s("acceptEdits")
            ),
        ],
        "{t:#}"
    );
    let write = &calls[0];
    assert!(write["duration_ms"].is_i64(), "{write}");
    let gates: Vec<&str> = write["pre_gates"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g["gate"].as_str().unwrap())
        .collect();
    assert!(gates.contains(&"file_protected"), "{write}");
    let edit = &calls[3];
    let diff = edit["evidence"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["kind"] == "diff")
        .unwrap_or_else(|| panic!("no diff: {edit}"));
    let text = diff["text"].as_str().unwrap();
    assert!(
        text.contains("-first line") && text.contains("+second line"),
        "{text}"
    );
    let echo = &calls[1];
    let hooks: Vec<(&str, &str, &str)> = echo["hooks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| {
            let text = |k: &str| h[k].as_str().unwrap_or("-");
            (text("event"), text("hook"), text("outcome"))
        })
        .collect();
    assert_eq!(hooks, [("PostToolUse", POST_HOOK, "success")], "{echo}");
    let stdout = echo["evidence"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["kind"] == "stdout");
    assert!(
        stdout.is_some_and(|e| e["text"]
            .as_str()
            .unwrap()
            .contains("hello from the session")),
        "{echo}"
    );
    // The messages are there, in stream-json shape, with the tool uses.
    let uses = t["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["type"] == "assistant")
        .flat_map(|m| m["message"]["content"].as_array().unwrap().clone())
        .filter(|b| b["type"] == "tool_use")
        .count();
    assert_eq!(uses, 4);
    assert!(
        t["metrics"]
            .as_array()
            .unwrap()
            .iter()
            .any(|m| m["kind"] == "model_call")
    );
    assert_eq!(
        t["ledger"]["tool_status_counts"]["blocked"], 1,
        "{}",
        t["ledger"]
    );

    let (status, err) = served.get("/api/sessions/no-such-session").await;
    assert_eq!(status, 404, "{err}");
    let (status, _) = served.get("/api/nothing-here").await;
    assert_eq!(status, 404);
}

#[tokio::test(flavor = "multi_thread")]
async fn verify_and_attestation_then_a_tampered_row_shows_broken() {
    let rec = record().await;
    let served = Served::start(rec.home(), rec.ws.path(), &[]);
    let path = format!("/api/sessions/{}", rec.edit);
    let v = served.ok(&format!("{path}/verify")).await;
    assert_eq!(v["ok"], true, "{v}");
    assert_eq!(v["report"]["signed"], true, "{v}");
    assert!(v["report"]["first_broken"].is_null());
    assert!(v["lines"][0].as_str().unwrap().starts_with('✓'), "{v}");

    // The attestation: a DSSE envelope whose signature verifies with the
    // home's key and whose Statement names the session and notes.md.
    let response = reqwest::Client::new()
        .get(format!("{}{path}/attestation", served.base))
        .bearer_auth(&served.token)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status().as_u16(), 200);
    let disposition = response.headers()["content-disposition"]
        .to_str()
        .unwrap()
        .to_string();
    assert_eq!(
        disposition,
        format!("attachment; filename=\"{}.intoto.jsonl\"", rec.edit)
    );
    let body = response.text().await.unwrap();
    let envelope = Envelope::from_json(body.trim()).unwrap();
    let key = tascer_ledger::keys::load_home_signing_key(rec.home())
        .unwrap()
        .unwrap();
    let payload = envelope
        .verify(&key.verifying_key(), IN_TOTO_PAYLOAD_TYPE)
        .unwrap();
    let statement: Value = serde_json::from_slice(&payload).unwrap();
    assert_eq!(
        statement["predicate"]["session_id"],
        rec.edit.as_str(),
        "{statement}"
    );
    let subjects: Vec<&str> = statement["subject"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    assert_eq!(subjects, ["notes.md"], "{statement}");

    tamper(rec.home(), &rec.edit, 3);
    let v = served.ok(&format!("{path}/verify")).await;
    assert_eq!(v["ok"], false, "{v}");
    assert_eq!(v["report"]["first_broken"]["seq"], 3, "{v}");
    assert!(v["lines"][0].as_str().unwrap().starts_with('✗'), "{v}");
    // The other session still verifies; a broken one is never attested.
    let other = served
        .ok(&format!("/api/sessions/{}/verify", rec.read))
        .await;
    assert_eq!(other["ok"], true, "{other}");
    let (status, err) = served.get(&format!("{path}/attestation")).await;
    assert_eq!(status, 409, "{err}");
    assert!(
        err["error"].as_str().unwrap().contains("broken ledger"),
        "{err}"
    );
    let (status, _) = served.get("/api/sessions/no-such-session/verify").await;
    assert_eq!(status, 404);
}

#[tokio::test(flavor = "multi_thread")]
async fn the_openapi_document_matches_docs_and_every_path_answers() {
    let rec = record().await;
    write_contracts(rec.ws.path(), &rec.edit);
    let served = Served::start(rec.home(), rec.ws.path(), &[]);
    let served_doc = served.ok("/api/openapi.json").await;
    let file = repo_root().join("docs/openapi.json");
    if std::env::var_os(UPDATE_ENV).is_some() {
        let text = serde_json::to_string_pretty(&served_doc).unwrap();
        std::fs::write(&file, format!("{text}\n")).unwrap();
    }
    let committed: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    assert_eq!(
        served_doc, committed,
        "docs/openapi.json differs from /api/openapi.json: regenerate it with \
         {UPDATE_ENV}=1 cargo test -p tascer-cli --test serve_api"
    );
    assert_eq!(served_doc["openapi"], "3.1.0");
    // Every documented path answers 200 with the documented top-level keys.
    for (path, item) in served_doc["paths"].as_object().unwrap() {
        let url = path.replace("{id}", &rec.edit);
        if path.ends_with("/attestation") {
            continue; // not JSON with a schema of required keys; tested above
        }
        let body = served.ok(&url).await;
        let schema = &item["get"]["responses"]["200"]["content"]["application/json"]["schema"];
        let schema = match schema["$ref"].as_str() {
            Some(r) => &served_doc["components"]["schemas"][r.rsplit('/').next().unwrap()],
            None => schema,
        };
        for key in schema["required"].as_array().into_iter().flatten() {
            let key = key.as_str().unwrap();
            assert!(body.get(key).is_some(), "{path}: no {key} in {body}");
        }
    }
    let c = served.ok("/api/contracts").await;
    let rows: Vec<(&str, &str, &str)> = c["contracts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| {
            let text = |key: &str| k[key].as_str().unwrap_or("-");
            (text("name"), text("status"), text("session"))
        })
        .collect();
    assert_eq!(
        rows,
        [
            ("fix-typo", "pending", "-"),
            ("write-notes", "completed", rec.edit.as_str())
        ],
        "{c}"
    );
    assert!(c["queue"].is_null());
}

#[tokio::test(flavor = "multi_thread")]
async fn the_contracts_view_shows_the_queue_and_its_workers() {
    let test = "serve_api::the_contracts_view_shows_the_queue_and_its_workers";
    let Some(pg) = PgServer::shared(test) else {
        return;
    };
    let url = pg.fresh_database("serve_queue").unwrap();
    // A worker on another host takes the first job and holds its lease.
    fill_queue(&url).await;

    let home = tempfile::tempdir().unwrap();
    let served = Served::start(home.path(), home.path(), &["--queue", &url]);
    let c = served.ok("/api/contracts").await;
    let q = &c["queue"];
    assert_eq!(q["name"], tascer_fleet::DEFAULT_QUEUE, "{c}");
    let jobs: Vec<(&str, &str)> = q["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| (j["name"].as_str().unwrap(), j["status"].as_str().unwrap()))
        .collect();
    assert_eq!(jobs, [("alpha", "running"), ("beta", "queued")], "{c}");
    let workers = q["workers"].as_array().unwrap();
    assert_eq!(workers.len(), 1, "{c}");
    let w = &workers[0];
    assert_eq!(
        (
            w["holder"].as_str(),
            w["host"].as_str(),
            w["pid"].as_i64(),
            w["contract"].as_str()
        ),
        (
            Some("worker-7"),
            Some("build-host"),
            Some(4242),
            Some("contracts/alpha.md")
        ),
        "{c}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn sessions_in_a_shared_postgresql_store_are_served() {
    let test = "serve_api::sessions_in_a_shared_postgresql_store_are_served";
    let Some(pg) = PgServer::shared(test) else {
        return;
    };
    let url = pg.fresh_database("serve_store").unwrap();
    let home = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    // The home's `store` setting names the shared database, as on a fleet host.
    std::fs::write(
        home.path().join("settings.json"),
        serde_json::json!({"store": url}).to_string(),
    )
    .unwrap();
    let id = run_session(
        home.path(),
        ws.path(),
        Scenario::new()
            .turn(Turn::new().with_tool("Bash", serde_json::json!({"command": "echo shared"})))
            .turn(Turn::text("Done.")),
        "a session in the shared store",
        "claude-edit",
    )
    .await;
    assert!(!home.path().join("tascer.db").exists());
    let served = Served::start(home.path(), ws.path(), &[]);
    let list = served.ok("/api/sessions?q=shared").await;
    assert_eq!(ids(&list), [id.as_str()], "{list}");
    let t = served.ok(&format!("/api/sessions/{id}")).await;
    let facts: Vec<_> = t["calls"]
        .as_array()
        .unwrap()
        .iter()
        .map(call_facts)
        .collect();
    assert_eq!(facts.len(), 1, "{t}");
    assert_eq!(
        (facts[0].2.as_str(), facts[0].4.as_str()),
        ("allow", "Bash(echo:*)")
    );
    let v = served.ok(&format!("/api/sessions/{id}/verify")).await;
    assert_eq!(v["ok"], true, "{v}");
}
