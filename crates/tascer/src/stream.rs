//! [`MessageStream`]: the messages of one turn, as [`query`](crate::query)
//! and [`Client::receive_response`](crate::Client::receive_response) hand
//! them out.

use std::pin::Pin;
use std::task::{Context, Poll};

use futures::Stream;
use tokio::sync::mpsc::UnboundedReceiver;

use tascer_core::Message;

/// A stream of [`Message`]s ending with a [`Message::Result`].
pub struct MessageStream {
    rx: Option<UnboundedReceiver<Message>>,
    done: bool,
}

impl MessageStream {
    pub(crate) fn new(rx: UnboundedReceiver<Message>) -> Self {
        MessageStream {
            rx: Some(rx),
            done: false,
        }
    }

    pub(crate) fn empty() -> Self {
        MessageStream {
            rx: None,
            done: true,
        }
    }
}

impl Stream for MessageStream {
    type Item = Message;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Message>> {
        if self.done {
            return Poll::Ready(None);
        }
        let Some(rx) = self.rx.as_mut() else {
            return Poll::Ready(None);
        };
        match rx.poll_recv(cx) {
            Poll::Ready(Some(message)) => {
                if matches!(message, Message::Result(_)) {
                    self.done = true;
                }
                Poll::Ready(Some(message))
            }
            Poll::Ready(None) => {
                self.done = true;
                Poll::Ready(None)
            }
            Poll::Pending => Poll::Pending,
        }
    }
}
