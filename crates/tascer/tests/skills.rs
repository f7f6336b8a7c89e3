//! Skills: `SKILL.md` files from real directories are offered through the
//! `Skill` tool (name + description), a call returns the body and the
//! skill's directory, and the call is governed like any other.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::*;
use serde_json::json;
use tascer::guard::permissions::PermissionMode;
use tascer::guard::settings::SettingsSource;
use tascer_testkit::{MockServer, Scenario, Turn};

fn setup(env: &Env) {
    std::fs::create_dir_all(env.ws().join(".git")).unwrap();
    write_file(
        env.ws().join(".claude/skills/pdf/SKILL.md"),
        "---\nname: pdf-forms\ndescription: Fill in PDF forms with the scripts here\n---\n\
         PDF-SKILL-BODY: run fill.py\n",
    );
    write_file(
        env.root.path().join("user/skills/notes/SKILL.md"),
        "Write meeting notes in the house style.\nNOTES-SKILL-BODY",
    );
}

fn skill_scenario() -> Scenario {
    Scenario::new()
        .turn(Turn::tool("Skill", json!({"skill": "pdf-forms"})))
        .turn(Turn::text("done"))
}

#[tokio::test(flavor = "multi_thread")]
async fn skills_are_offered_and_a_call_returns_the_body_and_directory() {
    let env = Env::new();
    setup(&env);
    let server = MockServer::start(skill_scenario()).await.unwrap();
    let options = anthropic_options(&server, &env)
        .claude_config_dir(env.root.path().join("user"))
        .setting_sources([SettingsSource::User, SettingsSource::Project]);
    let messages = collect("fill the form", options).await;
    assert!(!result_of(&messages).is_error);

    let requests = server.requests();
    let tool = requests[0].body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "Skill")
        .expect("a Skill tool")
        .clone();
    let description = tool["description"].as_str().unwrap();
    assert!(
        description.contains("pdf-forms: Fill in PDF forms with the scripts here"),
        "{description}"
    );
    assert!(
        description.contains("notes: Write meeting notes in the house style."),
        "{description}"
    );
    assert!(!description.contains("BODY"), "bodies load only on a call");

    let results = tool_results(&messages);
    assert_eq!(results.len(), 1);
    assert!(!results[0].2, "{results:?}");
    assert!(results[0].1.contains("PDF-SKILL-BODY"), "{results:?}");
    let dir = env.ws().join(".claude/skills/pdf");
    assert!(
        results[0]
            .1
            .contains(&format!("Base directory for this skill: {}", dir.display())),
        "{results:?}"
    );

    let init = init_of(&messages);
    assert_eq!(init["skills"], json!(["notes", "pdf-forms"]));
    assert!(init["tools"].as_array().unwrap().contains(&json!("Skill")));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_skill_call_is_governed_like_any_tool() {
    let env = Env::new();
    setup(&env);
    let server = MockServer::start(skill_scenario()).await.unwrap();
    let base = || {
        anthropic_options(&server, &env)
            .setting_sources([SettingsSource::Project])
            .permission_mode(PermissionMode::Default)
    };

    // Not allowed by any rule, nobody to ask: denied and reported.
    let messages = collect("fill", base()).await;
    let results = tool_results(&messages);
    assert!(results[0].2, "{results:?}");
    assert!(!results[0].1.contains("PDF-SKILL-BODY"));
    assert_eq!(result_of(&messages).permission_denials.len(), 1);

    // With an allow rule it runs.
    let messages = collect("fill", base().allowed_tools(["Skill"])).await;
    let results = tool_results(&messages);
    assert!(!results[0].2, "{results:?}");
    assert!(results[0].1.contains("PDF-SKILL-BODY"));

    // Without setting sources there are no skills and no Skill tool.
    server.clear_requests();
    let messages = collect("fill", anthropic_options(&server, &env)).await;
    assert!(!result_of(&messages).is_error);
    let tools = server.requests()[0].body["tools"].to_string();
    assert!(!tools.contains("\"Skill\""), "{tools}");
}
