//! The session list: the store's sessions, searched, filtered and paged.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use tascer_store::{SessionInfo, parse_since};

use crate::error::ApiError;

/// The most sessions one page holds.
pub const MAX_PAGE: usize = 500;

/// The page size when none is asked for.
pub const DEFAULT_PAGE: usize = 50;

/// What `GET /api/sessions` takes (all optional).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SessionQuery {
    /// Words that must all appear (any case) in the id, title, first
    /// prompt, working directory or model.
    pub q: Option<String>,
    /// The status (`open`, `success`, `error`, …).
    pub status: Option<String>,
    /// The model, exactly.
    pub model: Option<String>,
    /// Created at or after: an RFC 3339 time, a date, or a span back from
    /// now (`12h`, `7d`).
    pub since: Option<String>,
    /// Created before: an RFC 3339 time or a date.
    pub until: Option<String>,
    /// Sessions to skip (newest first).
    pub offset: Option<usize>,
    /// Sessions to return (default [`DEFAULT_PAGE`], at most [`MAX_PAGE`]).
    pub limit: Option<usize>,
}

/// One page of sessions.
#[derive(Debug, Clone, Serialize)]
pub struct SessionPage {
    /// Sessions that match, over all pages.
    pub total: usize,
    /// Sessions skipped.
    pub offset: usize,
    /// The page size.
    pub limit: usize,
    /// This page's sessions, most recently updated first.
    pub sessions: Vec<SessionInfo>,
}

/// The filters of a [`SessionQuery`], checked.
struct Filter {
    words: Vec<String>,
    status: Option<String>,
    model: Option<String>,
    since: Option<DateTime<Utc>>,
    until: Option<DateTime<Utc>>,
}

impl Filter {
    fn new(query: &SessionQuery, now: DateTime<Utc>) -> Result<Self, ApiError> {
        let time = |name: &str, text: &Option<String>| -> Result<Option<DateTime<Utc>>, ApiError> {
            let Some(text) = text.as_deref().filter(|t| !t.trim().is_empty()) else {
                return Ok(None);
            };
            let stored = parse_since(text, now)
                .map_err(|e| ApiError::bad_request(format!("{name}: {e}")))?;
            Ok(parse_time(&stored))
        };
        let nonempty = |v: &Option<String>| v.clone().filter(|s| !s.trim().is_empty());
        Ok(Self {
            words: query
                .q
                .as_deref()
                .unwrap_or_default()
                .split_whitespace()
                .map(str::to_lowercase)
                .collect(),
            status: nonempty(&query.status),
            model: nonempty(&query.model),
            since: time("since", &query.since)?,
            until: time("until", &query.until)?,
        })
    }

    fn matches(&self, s: &SessionInfo) -> bool {
        if self.status.as_ref().is_some_and(|v| *v != s.status)
            || self.model.as_ref().is_some_and(|v| *v != s.model)
        {
            return false;
        }
        if self.since.is_some() || self.until.is_some() {
            let Some(created) = parse_time(&s.created_at) else {
                return false;
            };
            if self.since.is_some_and(|t| created < t) || self.until.is_some_and(|t| created >= t) {
                return false;
            }
        }
        if self.words.is_empty() {
            return true;
        }
        let haystack = [
            Some(s.id.as_str()),
            s.title.as_deref(),
            s.first_prompt.as_deref(),
            Some(s.cwd.as_str()),
            Some(s.model.as_str()),
        ]
        .into_iter()
        .flatten()
        .collect::<Vec<_>>()
        .join("\n")
        .to_lowercase();
        self.words.iter().all(|w| haystack.contains(w.as_str()))
    }
}

/// An RFC 3339 time in UTC.
fn parse_time(text: &str) -> Option<DateTime<Utc>> {
    DateTime::parse_from_rfc3339(text)
        .ok()
        .map(|t| t.with_timezone(&Utc))
}

/// The page of `all` (most recently updated first) that `query` asks for.
pub fn page(
    all: Vec<SessionInfo>,
    query: &SessionQuery,
    now: DateTime<Utc>,
) -> Result<SessionPage, ApiError> {
    let limit = query.limit.unwrap_or(DEFAULT_PAGE);
    if limit == 0 || limit > MAX_PAGE {
        return Err(ApiError::bad_request(format!(
            "limit must be between 1 and {MAX_PAGE}"
        )));
    }
    let offset = query.offset.unwrap_or(0);
    let filter = Filter::new(query, now)?;
    let matching: Vec<SessionInfo> = all.into_iter().filter(|s| filter.matches(s)).collect();
    Ok(SessionPage {
        total: matching.len(),
        offset,
        limit,
        sessions: matching.into_iter().skip(offset).take(limit).collect(),
    })
}

/// The sessions still open (running, or ended without closing), most
/// recently updated first.
pub fn live(all: Vec<SessionInfo>) -> Vec<SessionInfo> {
    all.into_iter().filter(|s| s.status == "open").collect()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    fn info(id: &str, status: &str, model: &str, created: &str, prompt: &str) -> SessionInfo {
        SessionInfo {
            id: id.into(),
            cwd: "/w".into(),
            model: model.into(),
            created_at: created.into(),
            updated_at: created.into(),
            forked_from: None,
            num_turns: 1,
            total_cost_usd: 0.0,
            status: status.into(),
            first_prompt: Some(prompt.into()),
            title: None,
            message_count: 2,
        }
    }

    fn all() -> Vec<SessionInfo> {
        vec![
            info(
                "c",
                "open",
                "m2",
                "2026-11-03T10:00:00.000Z",
                "Fix the parser",
            ),
            info("b", "error", "m1", "2026-11-02T10:00:00.000Z", "write docs"),
            info(
                "a",
                "success",
                "m1",
                "2026-11-01T10:00:00.000Z",
                "fix the tests",
            ),
        ]
    }

    fn ids(query: SessionQuery) -> Vec<String> {
        let now = parse_time("2026-11-04T00:00:00Z").unwrap();
        let page = page(all(), &query, now).unwrap();
        page.sessions.into_iter().map(|s| s.id).collect()
    }

    #[test]
    fn filters_combine_and_pages_cut() {
        let q = |f: fn(&mut SessionQuery)| {
            let mut q = SessionQuery::default();
            f(&mut q);
            q
        };
        assert_eq!(ids(q(|q| q.q = Some("FIX".into()))), ["c", "a"]);
        assert_eq!(ids(q(|q| q.q = Some("fix tests".into()))), ["a"]);
        assert_eq!(ids(q(|q| q.model = Some("m1".into()))), ["b", "a"]);
        assert_eq!(ids(q(|q| q.status = Some("open".into()))), ["c"]);
        assert_eq!(ids(q(|q| q.since = Some("2026-11-02".into()))), ["c", "b"]);
        assert_eq!(ids(q(|q| q.until = Some("2026-11-02".into()))), ["a"]);
        assert_eq!(ids(q(|q| q.since = Some("36h".into()))), ["c"]);
        assert_eq!(
            ids(q(|q| {
                q.offset = Some(1);
                q.limit = Some(1);
            })),
            ["b"]
        );
    }

    #[test]
    fn bad_parameters_are_named() {
        let now = Utc::now();
        let mut q = SessionQuery {
            since: Some("yesterday-ish".into()),
            ..SessionQuery::default()
        };
        let err = page(all(), &q, now).unwrap_err();
        assert!(err.message.starts_with("since: "), "{}", err.message);
        q.since = None;
        q.limit = Some(0);
        assert!(page(all(), &q, now).is_err());
    }
}
