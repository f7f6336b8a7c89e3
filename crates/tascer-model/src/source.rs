//! [`AnswerSource`]: answers that come from somewhere other than a
//! provider's HTTP API — a recorded session being replayed
//! (`tascer replay`, docs/replay.md). A [`ModelClient`](crate::ModelClient)
//! built with [`ModelClient::from_source`](crate::ModelClient::from_source)
//! asks its source instead of a provider: the loop above it cannot tell
//! the difference.

use futures::future::BoxFuture;
use tokio::sync::mpsc::UnboundedSender;
use tokio_util::sync::CancellationToken;

use crate::error::ModelError;
use crate::types::{ModelEvent, ModelRequest, ModelResponse};

/// Something that answers model requests in place of a provider.
pub trait AnswerSource: Send + Sync {
    /// The provider name reported for answers of this source (`replay`).
    fn name(&self) -> &'static str;

    /// The answer to `request`, as [`ModelClient::send`](crate::ModelClient::send)
    /// gives it: `events` receives what a streamed answer would send,
    /// `cancel` ends the request with [`ModelError::Cancelled`].
    fn answer<'a>(
        &'a self,
        request: &'a ModelRequest,
        events: Option<&'a UnboundedSender<ModelEvent>>,
        cancel: &'a CancellationToken,
    ) -> BoxFuture<'a, Result<ModelResponse, ModelError>>;
}
