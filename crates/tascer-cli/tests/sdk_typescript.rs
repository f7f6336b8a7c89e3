//! The official TypeScript Agent SDK (`@anthropic-ai/claude-agent-sdk`)
//! drives `tascer` through `pathToClaudeCodeExecutable`, against the mock model:
//! `query()` with tools, a hook callback that denies a call, `can_use_tool`
//! rewriting an input, an in-process SDK MCP tool, `interrupt`, a
//! multi-turn session, resume in a second process, an MCP server's
//! question answered (or declined) by `onElicitation` and an
//! `ElicitationResult` hook replacing the answer; every session
//! verifies. The cases are in tests/common/sdk_cases.rs, the script in
//! tests/sdk/ts_sdk.mjs.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::sdk::Sdk;
use common::sdk_cases as cases;
use common::sdk_drop_in as drop_in;

#[test]
fn query_runs_tools_that_change_real_files() {
    cases::with(
        Sdk::typescript,
        "query_runs_tools_that_change_real_files",
        cases::query_runs_tools,
    );
}

#[test]
fn a_hook_callback_denies_a_call_and_the_reason_reaches_the_model() {
    cases::with(
        Sdk::typescript,
        "a_hook_callback_denies_a_call_and_the_reason_reaches_the_model",
        cases::hook_callback_denies,
    );
}

#[test]
fn can_use_tool_rewrites_the_input_that_runs() {
    cases::with(
        Sdk::typescript,
        "can_use_tool_rewrites_the_input_that_runs",
        cases::can_use_tool_rewrites,
    );
}

#[test]
fn an_in_process_sdk_mcp_tool_is_called_through_the_sdk() {
    cases::with(
        Sdk::typescript,
        "an_in_process_sdk_mcp_tool_is_called_through_the_sdk",
        cases::sdk_mcp_tool,
    );
}

#[test]
fn interrupt_ends_the_turn_and_the_session_goes_on() {
    cases::with(
        Sdk::typescript,
        "interrupt_ends_the_turn_and_the_session_goes_on",
        cases::interrupt,
    );
}

#[test]
fn one_session_keeps_its_history_across_prompts() {
    cases::with(
        Sdk::typescript,
        "one_session_keeps_its_history_across_prompts",
        cases::multi_turn,
    );
}

#[test]
fn resume_continues_the_session_in_a_second_process() {
    cases::with(
        Sdk::typescript,
        "resume_continues_the_session_in_a_second_process",
        cases::resume,
    );
}

#[test]
fn the_model_is_told_where_it_works_with_the_default_system_prompt() {
    cases::with(
        Sdk::typescript,
        "the_model_is_told_where_it_works_with_the_default_system_prompt",
        drop_in::environment_block,
    );
}

#[test]
fn a_deny_rule_in_claude_code_s_project_settings_holds_with_default_options() {
    cases::with(
        Sdk::typescript,
        "a_deny_rule_in_claude_code_s_project_settings_holds_with_default_options",
        drop_in::claude_settings_deny,
    );
}

#[test]
fn ask_user_question_is_answered_through_can_use_tool_and_refused_without_it() {
    cases::with(
        Sdk::typescript,
        "ask_user_question_is_answered_through_can_use_tool_and_refused_without_it",
        drop_in::ask_user_question,
    );
}

#[test]
fn an_always_allow_update_holds_for_the_next_call_and_the_next_session() {
    cases::with(
        Sdk::typescript,
        "an_always_allow_update_holds_for_the_next_call_and_the_next_session",
        drop_in::always_allow,
    );
}

#[test]
fn an_mcp_servers_question_is_answered_by_on_elicitation_after_the_hooks() {
    cases::with(
        Sdk::typescript,
        "an_mcp_servers_question_is_answered_by_on_elicitation_after_the_hooks",
        |sdk| cases::elicitation_answered_by_the_host(sdk, "accept", false),
    );
}

#[test]
fn an_mcp_servers_question_declined_by_on_elicitation_is_declined() {
    cases::with(
        Sdk::typescript,
        "an_mcp_servers_question_declined_by_on_elicitation_is_declined",
        |sdk| cases::elicitation_answered_by_the_host(sdk, "decline", false),
    );
}

#[test]
fn an_elicitation_result_hook_replaces_the_hosts_answer() {
    cases::with(
        Sdk::typescript,
        "an_elicitation_result_hook_replaces_the_hosts_answer",
        |sdk| cases::elicitation_answered_by_the_host(sdk, "decline", true),
    );
}

#[test]
fn the_plugins_option_loads_a_plugin_whose_command_and_hook_run() {
    cases::with(
        Sdk::typescript,
        "the_plugins_option_loads_a_plugin_whose_command_and_hook_run",
        |sdk| common::sdk_plugins::plugin_command_and_hook(sdk, None),
    );
}

#[test]
fn plugins_delivered_in_initialize_load_too() {
    cases::with(
        Sdk::typescript,
        "plugins_delivered_in_initialize_load_too",
        |sdk| common::sdk_plugins::plugin_command_and_hook(sdk, Some("initialize")),
    );
}

#[test]
fn rewind_files_dry_run_answers_without_changing_files_then_rewinds() {
    cases::with(
        Sdk::typescript,
        "rewind_files_dry_run_answers_without_changing_files_then_rewinds",
        common::sdk_rewind::dry_run_then_rewind,
    );
}

#[test]
fn rewind_files_dry_run_names_a_file_changed_by_hand() {
    cases::with(
        Sdk::typescript,
        "rewind_files_dry_run_names_a_file_changed_by_hand",
        common::sdk_rewind::dry_run_refuses_a_file_changed_by_hand,
    );
}
