//! MCP servers' sampling requests in a session: completed by the
//! session's own model client and recorded like its other model calls
//! (usage and cost, a `model_response` ledger entry). Refused when
//! `Options::refuse_mcp_sampling` is set.

use std::sync::Arc;

use futures::future::BoxFuture;
use tascer_core::{ChatMessage, ContentBlock, Role, StopReason};
use tascer_mcp::{Sampler, SamplingRequest, SamplingResponse};
use tascer_model::ModelRequest;
use tokio_util::sync::CancellationToken;

use crate::loop_env::LoopEnv;

/// Completes sampling requests with the session's model.
pub(crate) struct SessionSampler {
    env: LoopEnv,
    model: String,
}

impl SessionSampler {
    /// The sampler of a session (none when sampling is refused).
    pub fn for_session(refuse: bool, env: &LoopEnv, model: &str) -> Option<Arc<dyn Sampler>> {
        (!refuse).then(|| {
            Arc::new(SessionSampler {
                env: env.clone(),
                model: model.to_owned(),
            }) as Arc<dyn Sampler>
        })
    }
}

impl Sampler for SessionSampler {
    fn create_message(
        &self,
        request: SamplingRequest,
    ) -> BoxFuture<'_, Result<SamplingResponse, String>> {
        Box::pin(async move {
            let messages = request
                .messages
                .iter()
                .map(|m| ChatMessage {
                    role: if m.role == "assistant" {
                        Role::Assistant
                    } else {
                        Role::User
                    },
                    content: vec![ContentBlock::text(m.text.clone())],
                })
                .collect();
            let model_request = ModelRequest {
                model: self.model.clone(),
                system: request.system_prompt.clone(),
                messages,
                tools: Vec::new(),
                server_tools: Vec::new(),
                max_tokens: Some(request.max_tokens),
                stream: true,
            };
            let response = self
                .env
                .client
                .send(&model_request, None, &CancellationToken::new())
                .await
                .map_err(|e| format!("the model call failed: {e}"))?;
            let cost = self
                .env
                .add_usage(&response.model, &response.usage, response.cost_usd);
            self.env.proof.sampling_response(
                &request.server,
                &response.model,
                &response.content,
                &response.usage,
                (response.api_duration, cost),
            );
            tracing::info!(server = %request.server, model = %response.model, "answered an MCP sampling request");
            let text = response
                .content
                .iter()
                .filter_map(|b| match b {
                    ContentBlock::Text { text } => Some(text.as_str()),
                    _ => None,
                })
                .collect::<Vec<_>>()
                .join("");
            Ok(SamplingResponse {
                model: response.model.clone(),
                text,
                // MCP's names (endTurn, maxTokens, stopSequence).
                stop_reason: response.stop_reason.as_ref().map(|r| match r {
                    StopReason::EndTurn => "endTurn".to_owned(),
                    StopReason::MaxTokens => "maxTokens".to_owned(),
                    StopReason::StopSequence => "stopSequence".to_owned(),
                    other => serde_json::to_value(other)
                        .ok()
                        .and_then(|v| v.as_str().map(str::to_owned))
                        .unwrap_or_default(),
                }),
            })
        })
    }
}
