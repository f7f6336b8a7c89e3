//! The official Python Agent SDK (`claude-agent-sdk`) drives `tascer`
//! through `cli_path`, against the mock model:
//! `query()` with tools, a hook callback that denies a call, `can_use_tool`
//! rewriting an input, an in-process SDK MCP tool, `interrupt`, a
//! multi-turn session and resume in a second process; every session
//! verifies. The cases are in tests/common/sdk_cases.rs, the script in
//! tests/sdk/python_sdk.py.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::sdk::Sdk;
use common::sdk_cases as cases;
use common::sdk_drop_in as drop_in;

#[test]
fn query_runs_tools_that_change_real_files() {
    cases::with(
        Sdk::python,
        "query_runs_tools_that_change_real_files",
        cases::query_runs_tools,
    );
}

#[test]
fn a_hook_callback_denies_a_call_and_the_reason_reaches_the_model() {
    cases::with(
        Sdk::python,
        "a_hook_callback_denies_a_call_and_the_reason_reaches_the_model",
        cases::hook_callback_denies,
    );
}

#[test]
fn an_mcp_servers_question_is_answered_by_an_elicitation_hook_callback() {
    cases::with(
        Sdk::python,
        "an_mcp_servers_question_is_answered_by_an_elicitation_hook_callback",
        cases::elicitation_answered_by_a_hook_callback,
    );
}

#[test]
fn can_use_tool_rewrites_the_input_that_runs() {
    cases::with(
        Sdk::python,
        "can_use_tool_rewrites_the_input_that_runs",
        cases::can_use_tool_rewrites,
    );
}

#[test]
fn an_in_process_sdk_mcp_tool_is_called_through_the_sdk() {
    cases::with(
        Sdk::python,
        "an_in_process_sdk_mcp_tool_is_called_through_the_sdk",
        cases::sdk_mcp_tool,
    );
}

#[test]
fn interrupt_ends_the_turn_and_the_session_goes_on() {
    cases::with(
        Sdk::python,
        "interrupt_ends_the_turn_and_the_session_goes_on",
        cases::interrupt,
    );
}

#[test]
fn one_session_keeps_its_history_across_prompts() {
    cases::with(
        Sdk::python,
        "one_session_keeps_its_history_across_prompts",
        cases::multi_turn,
    );
}

#[test]
fn resume_continues_the_session_in_a_second_process() {
    cases::with(
        Sdk::python,
        "resume_continues_the_session_in_a_second_process",
        cases::resume,
    );
}

#[test]
fn the_model_is_told_where_it_works_with_the_default_system_prompt() {
    cases::with(
        Sdk::python,
        "the_model_is_told_where_it_works_with_the_default_system_prompt",
        drop_in::environment_block,
    );
}

#[test]
fn a_deny_rule_in_claude_code_s_project_settings_holds_with_default_options() {
    cases::with(
        Sdk::python,
        "a_deny_rule_in_claude_code_s_project_settings_holds_with_default_options",
        drop_in::claude_settings_deny,
    );
}

#[test]
fn ask_user_question_is_answered_through_can_use_tool_and_refused_without_it() {
    cases::with(
        Sdk::python,
        "ask_user_question_is_answered_through_can_use_tool_and_refused_without_it",
        drop_in::ask_user_question,
    );
}

#[test]
fn an_always_allow_update_holds_for_the_next_call_and_the_next_session() {
    cases::with(
        Sdk::python,
        "an_always_allow_update_holds_for_the_next_call_and_the_next_session",
        drop_in::always_allow,
    );
}

#[test]
fn the_sdks_session_helpers_list_read_rename_and_delete_a_tascer_session() {
    cases::with(
        Sdk::python,
        "the_sdks_session_helpers_list_read_rename_and_delete_a_tascer_session",
        common::sdk_sessions::session_helpers,
    );
}

#[test]
fn rewind_files_restores_what_the_session_changed_since_a_prompt() {
    cases::with(
        Sdk::python,
        "rewind_files_restores_what_the_session_changed_since_a_prompt",
        common::sdk_rewind::rewind_restores_files,
    );
}

#[test]
fn rewind_files_refuses_a_file_changed_by_hand_and_names_it() {
    cases::with(
        Sdk::python,
        "rewind_files_refuses_a_file_changed_by_hand_and_names_it",
        common::sdk_rewind::rewind_refuses_a_file_changed_by_hand,
    );
}

#[test]
fn the_plugins_option_loads_a_plugin_whose_command_and_hook_run() {
    cases::with(
        Sdk::python,
        "the_plugins_option_loads_a_plugin_whose_command_and_hook_run",
        |sdk| common::sdk_plugins::plugin_command_and_hook(sdk, None),
    );
}

#[test]
fn resume_session_at_continues_from_an_earlier_answer_in_a_fork() {
    cases::with(
        Sdk::python,
        "resume_session_at_continues_from_an_earlier_answer_in_a_fork",
        common::sdk_plugins::resume_session_at,
    );
}

#[test]
fn rewind_files_in_a_forked_session_finds_the_parents_checkpoints() {
    cases::with(
        Sdk::python,
        "rewind_files_in_a_forked_session_finds_the_parents_checkpoints",
        common::sdk_rewind::rewind_in_a_fork,
    );
}

#[test]
fn a_background_shell_is_a_task_the_sdk_types_and_stops() {
    cases::with(
        Sdk::python,
        "a_background_shell_is_a_task_the_sdk_types_and_stops",
        cases::background_task,
    );
}
