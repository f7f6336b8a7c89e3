//! What a control-protocol session starts from: the session's options
//! (built by the caller, e.g. from the SDK's command line), how frames
//! are shaped, and what runs once the session ended.

use futures::FutureExt;
use futures::future::BoxFuture;
use tascer::Options;

/// Called with the session id once the session ended and was closed.
pub type OnSessionEnd = Box<dyn FnOnce(String) -> BoxFuture<'static, ()> + Send>;

/// Judges whether a turn did what the session was started for: it sees
/// every message of the turn and may turn its result into an error (a
/// contracts manager whose `ExecuteContracts` call was refused).
pub trait ResultJudge: Send {
    /// Looks at one message of the running turn.
    fn observe(&mut self, message: &tascer::Message);
    /// Adjusts the turn's result before it goes out.
    fn judge(&self, result: &mut tascer::ResultMessage);
}

/// A control-protocol session to [`run`](crate::run): the options of the
/// Tascer session behind it and the SDK's choices about the protocol.
///
/// ```no_run
/// # async fn serve() -> Result<(), tascer_control::ControlError> {
/// let session = tascer_control::ControlSession::new(tascer::Options::new())
///     .permission_prompt_tool(Some("stdio".into()))
///     .on_session_end(|id| async move { eprintln!("session {id} ended") });
/// let code = tascer_control::run(session).await?;
/// # let _ = code;
/// # Ok(())
/// # }
/// ```
pub struct ControlSession {
    pub(crate) options: Options,
    pub(crate) include_hook_events: bool,
    pub(crate) replay_user_messages: bool,
    pub(crate) permission_prompt_tool: Option<String>,
    pub(crate) on_end: Option<OnSessionEnd>,
    pub(crate) judge: Option<Box<dyn ResultJudge>>,
}

impl ControlSession {
    /// A session with these options (the `initialize` request may still
    /// change them: hooks, agents, system prompt, SDK MCP servers, …).
    pub fn new(options: Options) -> ControlSession {
        ControlSession {
            options,
            include_hook_events: false,
            replay_user_messages: false,
            permission_prompt_tool: None,
            on_end: None,
            judge: None,
        }
    }

    /// Every turn's messages go through `judge`, which may make its
    /// result an error.
    pub fn judge_results(mut self, judge: impl ResultJudge + 'static) -> Self {
        self.judge = Some(Box::new(judge));
        self
    }

    /// `--include-hook-events`: keep `system/hook_response` frames.
    pub fn include_hook_events(mut self, yes: bool) -> Self {
        self.include_hook_events = yes;
        self
    }

    /// `--replay-user-messages`: echo prompts with `isReplay: true`.
    pub fn replay_user_messages(mut self, yes: bool) -> Self {
        self.replay_user_messages = yes;
        self
    }

    /// `--permission-prompt-tool`: `stdio` asks the SDK's `can_use_tool`
    /// callback about calls left at "ask"; any other tool is ignored with
    /// a warning (such calls are denied).
    pub fn permission_prompt_tool(mut self, tool: Option<String>) -> Self {
        self.permission_prompt_tool = tool;
        self
    }

    /// Runs `f` with the session id after the session ended (e.g. archival).
    pub fn on_session_end<F, Fut>(mut self, f: F) -> Self
    where
        F: FnOnce(String) -> Fut + Send + 'static,
        Fut: std::future::Future<Output = ()> + Send + 'static,
    {
        self.on_end = Some(Box::new(move |id| f(id).boxed()));
        self
    }
}
