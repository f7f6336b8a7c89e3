//! `tascer replay`: a recorded session run again offline (docs/replay.md).
//!
//! The model's answers come from the record ([`answers`]: a provider that
//! answers from the store's assistant messages, no network, no cost); the
//! tools run for real, through the same governed pipeline as any session,
//! in a scratch copy of the tree the session started from ([`tree`]). The
//! replay is a new, signed session whose `session_start` names its source
//! (`replay_of`). Its tool calls are then compared with the record, one
//! by one ([`compare`]), and every divergence is reported.

mod answers;
mod compare;
mod error;
mod paths;
mod record;
mod tree;

use std::path::PathBuf;
use std::sync::Arc;

use futures::StreamExt;
use serde::Serialize;
use serde_json::json;
use tascer_guard::settings::SettingsSource;
use tascer_ledger::Ledger;
use tascer_model::{ModelClient, ProviderConfig};
use tascer_store::SessionStore;

pub use answers::REPLAY_PROVIDER;
pub use compare::{Aspect, CallMatch, Divergence, Exactness};
pub use error::ReplayError;
pub use tree::TreeSource;

use crate::client::Client;
use crate::options::Options;
use answers::{Live, ReplayAnswers};
use compare::{CallPair, Texts};
use paths::PathMap;
use record::Recorded;
use tree::Scratch;

/// What to replay, and how.
#[derive(Debug, Clone, Default)]
pub struct ReplayOptions {
    /// The recorded session.
    pub session_id: String,
    /// Stop after this tool call (1 = the first).
    pub until: Option<usize>,
    /// After `until`, continue with this live provider (`--fork`).
    pub fork: Option<ProviderConfig>,
    /// The live model (default: the recorded session's).
    pub model: Option<String>,
    /// Start from a copy of this directory instead of the recorded commit.
    pub tree: Option<PathBuf>,
    /// Settings given again (`--settings`; not recorded).
    pub settings: Option<String>,
    /// Keep the scratch tree.
    pub keep: bool,
    /// The Tascer home; default [`crate::tascer_home`].
    pub home: Option<PathBuf>,
}

/// The outcome of a replay.
#[derive(Debug, Clone, Serialize)]
pub struct ReplayReport {
    /// The recorded session.
    pub source_session: String,
    /// The new session (the replay).
    pub replay_session: String,
    /// Where the scratch tree came from.
    pub tree: TreeSource,
    /// The scratch tree's directory.
    pub scratch_dir: PathBuf,
    /// Whether it was kept.
    pub kept: bool,
    /// `--until`.
    pub until: Option<usize>,
    /// Whether the replay went on live after `until`.
    pub forked: bool,
    /// Tool calls in the record.
    pub recorded_calls: usize,
    /// Recorded calls compared.
    pub compared_calls: usize,
    /// Calls the live model asked for after the fork.
    pub live_calls: usize,
    /// Model requests the live model answered after the fork.
    pub live_requests: usize,
    /// Each compared call.
    pub calls: Vec<CallMatch>,
    /// Every divergence, in call order.
    pub divergences: Vec<Divergence>,
    /// Warnings: what the replay could not reproduce as recorded.
    pub notes: Vec<String>,
}

impl ReplayReport {
    /// The first divergence, if any.
    pub fn first_divergence(&self) -> Option<&Divergence> {
        self.divergences.first()
    }
}

/// Replays a recorded session (see the module documentation).
pub async fn replay(opts: ReplayOptions) -> Result<ReplayReport, ReplayError> {
    if opts.until == Some(0) {
        return Err(ReplayError::Invalid(
            "--until counts tool calls from 1".into(),
        ));
    }
    if opts.fork.is_some() && opts.until.is_none() {
        return Err(ReplayError::Invalid(
            "--fork needs --until N: the tool call after which the live model takes over".into(),
        ));
    }
    let home = opts.home.clone().unwrap_or_else(crate::tascer_home);
    let ledger = tascer_ledger::audit::open_ledger(&home)?;
    let store = SessionStore::open_in_home(&home)?;
    let recorded = Recorded::load(&ledger, &store, &opts.session_id, &home)?;
    let mut notes = Vec::new();
    if crate::run_record::settings_given(&recorded.governance) && opts.settings.is_none() {
        notes.push(
            "the session was run with --settings, which is not recorded: pass them with \
             --settings to replay its decisions"
                .to_string(),
        );
    }
    if recorded.governance.is_null() {
        notes.push(
            "the session recorded no governance options (recorded by an older Tascer): it is \
             replayed with the settings files of its tree only"
                .to_string(),
        );
    }
    let scratch = match &opts.tree {
        Some(dir) => Scratch::copy_of(dir, &recorded.cwd, opts.keep)?,
        None => Scratch::at_commit(
            &recorded.id,
            recorded.first_context().as_ref(),
            &recorded.cwd,
            opts.keep,
        )?,
    };
    let paths = PathMap::new(
        &scratch.stands_for.display().to_string(),
        &scratch.root.display().to_string(),
    );
    let live = match &opts.fork {
        Some(config) => Some(Live {
            client: ModelClient::new(config.clone())?,
            model: opts.model.clone().unwrap_or_else(|| recorded.model.clone()),
        }),
        None => None,
    };
    let source = Arc::new(ReplayAnswers::new(
        recorded.answers.clone(),
        paths.clone(),
        opts.until,
        live,
    ));
    let (options, not_applied) =
        session_options(&opts, &recorded, &scratch, &home, Arc::clone(&source));
    notes.extend(not_applied);
    let replay_session = run_prompts(options, &recorded.prompts, &source).await?;
    let progress = source.progress();
    let new_calls = replayed_call_ids(&store, &replay_session)?;
    let compared = opts
        .until
        .map_or(recorded.call_ids.len(), |n| n.min(recorded.call_ids.len()));
    let (calls, divergences) =
        compare_calls(&ledger, &recorded, &replay_session, compared, &paths)?;
    Ok(ReplayReport {
        source_session: recorded.id.clone(),
        replay_session,
        tree: scratch.source.clone(),
        scratch_dir: scratch.root.clone(),
        kept: scratch.keep,
        until: opts.until,
        forked: opts.fork.is_some(),
        recorded_calls: recorded.call_ids.len(),
        compared_calls: compared,
        live_calls: new_calls.len().saturating_sub(progress.calls),
        live_requests: progress.live_requests,
        calls,
        divergences,
        notes,
    })
}

/// The replayed session's options: the recorded governance in the
/// scratch tree, the answers from `source`; and what of the recorded
/// governance could not be applied.
fn session_options(
    opts: &ReplayOptions,
    recorded: &Recorded,
    scratch: &Scratch,
    home: &std::path::Path,
    source: Arc<ReplayAnswers>,
) -> (Options, Vec<String>) {
    let mut options = Options::new();
    options.cwd = Some(scratch.cwd.clone());
    options.home = Some(home.to_path_buf());
    // The live model of a fork is named in each request it answers.
    options.model = Some(recorded.model.clone());
    // Never asked: the answers come from `source`.
    options.provider = Some(ProviderConfig::anthropic());
    options.setting_sources = vec![
        SettingsSource::User,
        SettingsSource::Project,
        SettingsSource::Local,
    ];
    let not_applied = crate::run_record::apply_governance(&recorded.governance, &mut options);
    options.settings.clone_from(&opts.settings);
    options.answer_source = Some(source);
    options.replay_of = Some(json!({
        "session_id": recorded.id,
        "until": opts.until,
        "fork": opts.fork.is_some(),
        "tree": scratch.source,
    }));
    (options, not_applied)
}

/// Runs the recorded prompts in a new session; stops after the turn in
/// which the replay stopped (`--until`, or the live model's turn after
/// `--fork`). Returns the new session's id.
async fn run_prompts(
    options: Options,
    prompts: &[String],
    source: &ReplayAnswers,
) -> Result<String, ReplayError> {
    let mut client = Client::connect(options).await?;
    let id = client.session_id().to_string();
    for prompt in prompts {
        client.query(prompt.clone()).await?;
        let mut stream = client.receive_response();
        while stream.next().await.is_some() {}
        if source.progress().stopped {
            break;
        }
    }
    client.disconnect().await;
    Ok(id)
}

/// The tool calls the replayed session made, in order.
fn replayed_call_ids(store: &SessionStore, session: &str) -> Result<Vec<String>, ReplayError> {
    let answers: Vec<_> = store
        .messages(session)?
        .into_iter()
        .filter_map(|m| match m {
            tascer_core::Message::Assistant(a) => Some(a.message),
            _ => None,
        })
        .collect();
    Ok(record::tool_use_ids(&answers))
}

/// Evidence texts from the ledger.
struct LedgerTexts<'a>(&'a Ledger);

impl Texts for LedgerTexts<'_> {
    fn text(&self, session: &str, digest: &str) -> Option<String> {
        let bytes = self.0.get_evidence(session, digest).ok()?;
        Some(String::from_utf8_lossy(&bytes).into_owned())
    }
}

/// The first `count` recorded calls against the replay's.
fn compare_calls(
    ledger: &Ledger,
    recorded: &Recorded,
    replay_session: &str,
    count: usize,
    paths: &PathMap,
) -> Result<(Vec<CallMatch>, Vec<Divergence>), ReplayError> {
    let replayed: std::collections::HashMap<String, tascer_ledger::ToolRecord> = ledger
        .store()
        .tool_calls(replay_session)?
        .into_iter()
        .map(|r| (r.tool_use_id.clone(), r))
        .collect();
    let texts = LedgerTexts(ledger);
    let mut calls = Vec::new();
    let mut divergences = Vec::new();
    for (index, id) in recorded.call_ids.iter().take(count).enumerate() {
        let Some(before) = recorded.records.get(id) else {
            continue;
        };
        let pair = CallPair {
            call: index + 1,
            recorded_session: &recorded.id,
            replayed_session: replay_session,
            recorded: before,
            replayed: replayed.get(id),
            paths,
        };
        let (matched, found) = pair.compare(&texts);
        calls.push(matched);
        divergences.extend(found);
    }
    Ok((calls, divergences))
}
