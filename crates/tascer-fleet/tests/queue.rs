//! The contract queue against a real PostgreSQL: claims never overlap
//! (many claimers at once), an expired lease makes a job claimable again,
//! a stale worker's heartbeat and completion are refused (its attempt is
//! recorded as discarded), a job whose workers keep dying fails after its
//! max attempts, a job that could not start is given back, and enqueueing
//! the same text twice adds it once.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::HashSet;
use std::time::Duration;

use tascer_fleet::{Enqueued, Finish, Holder, JobStatus, NewJob, Queue, Recorded, content_sha256};
use tascer_testkit::postgres::PgServer;

fn job(name: &str) -> NewJob {
    NewJob {
        name: name.to_string(),
        title: format!("Title {name}"),
        contract_path: format!("contracts/{name}.md"),
        contract: format!("# Contract: {name}\n## Status\npending\n## Task\nDo {name}.\n"),
        repo: "/nowhere/repo".to_string(),
        base_commit: "0".repeat(40),
        max_attempts: 3,
    }
}

fn holder(name: &str) -> Holder {
    Holder {
        owner: format!("{name}-{}", tascer::new_id()),
        host: "test-host".to_string(),
        pid: 4242,
    }
}

async fn queue(test: &str) -> Option<Queue> {
    let server = PgServer::shared(test)?;
    let url = server.fresh_database(test).unwrap();
    Some(Queue::open(&url, "q", 4).await.unwrap())
}

fn done(why: &str) -> Finish {
    Finish {
        completed: true,
        why: why.to_string(),
        session_id: Some("s-1".into()),
        branch: Some("contracts/x-job1-try2".into()),
        commit: Some("abc".into()),
        result: Some(serde_json::json!({"completed": true})),
        contract_after: Some("# Contract: x\n## Status\ncompleted\n".into()),
        ..Finish::default()
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn an_expired_lease_is_claimed_again_and_the_stale_worker_is_refused() {
    let Some(q) = queue("queue_lease_expiry").await else {
        return;
    };
    let added = q.enqueue(&[job("x")]).await.unwrap();
    assert!(matches!(added[0], Enqueued::Added { .. }));
    let (a, b) = (holder("a"), holder("b"));

    let first = q
        .claim(&a, Duration::from_millis(300))
        .await
        .unwrap()
        .job
        .unwrap();
    assert_eq!(first.attempt, 1);
    assert_eq!(first.previous, None);
    // Held: nothing for b while a's lease runs.
    assert_eq!(
        q.claim(&b, Duration::from_secs(30)).await.unwrap().job,
        None
    );
    assert!(
        q.heartbeat(&first, &a, Duration::from_millis(300))
            .await
            .unwrap()
    );

    tokio::time::sleep(Duration::from_millis(700)).await;
    let second = q
        .claim(&b, Duration::from_secs(30))
        .await
        .unwrap()
        .job
        .unwrap();
    assert_eq!(second.id, first.id);
    assert_eq!(second.attempt, 2);
    let previous = second.previous.clone().unwrap();
    assert!(
        previous.contains("pid 4242 on test-host") && previous.contains("lease expired"),
        "{previous}"
    );

    // The stale worker: heartbeat and completion refused.
    assert!(
        !q.heartbeat(&first, &a, Duration::from_secs(30))
            .await
            .unwrap()
    );
    let refused = q
        .finish(&first, &a, &done("a finished late"))
        .await
        .unwrap();
    let Recorded::LeaseLost(now) = refused else {
        panic!("a stale completion was recorded: {refused:?}");
    };
    assert_eq!(now.status, JobStatus::Running);
    assert_eq!(now.attempts, 2);
    assert_eq!(now.holder.as_deref(), Some(b.owner.as_str()));

    // The holder completes; doing it again (a retry after a lost reply) is
    // recognized, not refused, and changes nothing.
    assert_eq!(
        q.finish(&second, &b, &done("b finished")).await.unwrap(),
        Recorded::Yes(JobStatus::Completed)
    );
    assert_eq!(
        q.finish(&second, &b, &done("b finished")).await.unwrap(),
        Recorded::Yes(JobStatus::Completed)
    );
    // And the stale worker still cannot overwrite it.
    assert!(matches!(
        q.finish(&first, &a, &done("a again")).await.unwrap(),
        Recorded::LeaseLost(_)
    ));

    let jobs = q.jobs().await.unwrap();
    assert_eq!(jobs.len(), 1);
    let j = &jobs[0];
    assert_eq!(j.status, JobStatus::Completed);
    assert_eq!(j.why.as_deref(), Some("b finished"));
    assert_eq!(j.attempts, 2);
    assert_eq!(j.branch.as_deref(), Some("contracts/x-job1-try2"));
    assert_eq!(j.result, Some(serde_json::json!({"completed": true})));
    assert!(j.lease.is_none());
    assert!(j.finished_at.is_some());
    let outcomes: Vec<_> = j
        .history
        .iter()
        .map(|h| (h.attempt, h.outcome.clone().unwrap_or_default()))
        .collect();
    assert_eq!(
        outcomes,
        vec![(1, "discarded".to_string()), (2, "completed".to_string())]
    );
    let why = j.history[0].why.clone().unwrap();
    assert!(why.contains("a finished late"), "{why}");
    // Nothing is left to do.
    assert_eq!(q.remaining().await.unwrap(), 0);
    assert_eq!(q.claim(&a, Duration::from_secs(1)).await.unwrap().job, None);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_job_whose_workers_keep_dying_fails_after_max_attempts() {
    let Some(q) = queue("queue_max_attempts").await else {
        return;
    };
    let mut j = job("dies");
    j.max_attempts = 2;
    q.enqueue(&[j]).await.unwrap();
    let lease = Duration::from_millis(200);
    for attempt in 1..=2 {
        let claimed = q.claim(&holder("w"), lease).await.unwrap();
        assert_eq!(claimed.job.unwrap().attempt, attempt);
        tokio::time::sleep(Duration::from_millis(450)).await;
    }
    let claimed = q.claim(&holder("w"), lease).await.unwrap();
    assert_eq!(claimed.job, None);
    assert_eq!(claimed.gave_up.len(), 1);
    let why = &claimed.gave_up[0].why;
    assert!(
        why.contains("its worker stopped during 2 attempt(s) (at most 2)"),
        "{why}"
    );
    let jobs = q.jobs().await.unwrap();
    assert_eq!(jobs[0].status, JobStatus::Failed);
    assert_eq!(jobs[0].why.as_deref(), Some(why.as_str()));
    let outcomes: Vec<_> = jobs[0]
        .history
        .iter()
        .map(|h| h.outcome.clone().unwrap_or_default())
        .collect();
    assert_eq!(outcomes, vec!["lost", "lost"]);
    assert_eq!(q.remaining().await.unwrap(), 0);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_job_that_cannot_start_is_given_back_until_max_attempts() {
    let Some(q) = queue("queue_requeue").await else {
        return;
    };
    let mut j = job("nocheckout");
    j.max_attempts = 2;
    q.enqueue(&[j]).await.unwrap();
    let w = holder("w");
    let first = q
        .claim(&w, Duration::from_secs(30))
        .await
        .unwrap()
        .job
        .unwrap();
    assert_eq!(
        q.requeue(&first, &w, "no checkout").await.unwrap(),
        Recorded::Yes(JobStatus::Queued)
    );
    let second = q
        .claim(&w, Duration::from_secs(30))
        .await
        .unwrap()
        .job
        .unwrap();
    assert_eq!(second.attempt, 2);
    assert_eq!(
        q.requeue(&second, &w, "no checkout again").await.unwrap(),
        Recorded::Yes(JobStatus::Failed)
    );
    let jobs = q.jobs().await.unwrap();
    assert_eq!(jobs[0].status, JobStatus::Failed);
    assert_eq!(jobs[0].why.as_deref(), Some("no checkout again"));
}

#[tokio::test(flavor = "multi_thread")]
async fn many_claimers_at_once_never_share_a_job_and_enqueue_is_idempotent() {
    let Some(server) = PgServer::shared("queue_many_claimers") else {
        return;
    };
    let url = server.fresh_database("queue_many_claimers").unwrap();
    let q = Queue::open(&url, "q", 4).await.unwrap();
    let jobs: Vec<NewJob> = (0..60).map(|i| job(&format!("j{i:02}"))).collect();
    q.enqueue(&jobs).await.unwrap();
    // The same texts again: nothing new; a changed text is a new job.
    let again = q.enqueue(&jobs[..3]).await.unwrap();
    assert!(
        again.iter().all(|e| matches!(
            e,
            Enqueued::Exists {
                status: JobStatus::Queued,
                ..
            }
        )),
        "{again:?}"
    );
    let mut changed = job("j00");
    changed.contract.push_str("More.\n");
    assert!(matches!(
        q.enqueue(&[changed]).await.unwrap()[0],
        Enqueued::Added { .. }
    ));
    // Another queue in the same database is separate.
    let other = Queue::open(&url, "other", 2).await.unwrap();
    assert_eq!(
        other
            .claim(&holder("o"), Duration::from_secs(30))
            .await
            .unwrap()
            .job,
        None
    );

    // 8 workers (each with its own pool, as separate processes would
    // have) claim until nothing is left.
    let mut tasks = Vec::new();
    for w in 0..8 {
        let url = url.clone();
        tasks.push(tokio::spawn(async move {
            let q = Queue::open(&url, "q", 2).await.unwrap();
            let me = holder(&format!("w{w}"));
            let mut mine = Vec::new();
            while let Some(job) = q.claim(&me, Duration::from_secs(60)).await.unwrap().job {
                assert_eq!(job.attempt, 1);
                assert_eq!(job.contract_path, format!("contracts/{}.md", job.name));
                let r = q.finish(&job, &me, &done("ok")).await.unwrap();
                assert_eq!(r, Recorded::Yes(JobStatus::Completed));
                mine.push(job.id);
            }
            mine
        }));
    }
    let mut seen = HashSet::new();
    let mut total = 0;
    for t in tasks {
        for id in t.await.unwrap() {
            total += 1;
            assert!(seen.insert(id), "job {id} was claimed twice");
        }
    }
    assert_eq!(total, 61);
    let views = q.jobs().await.unwrap();
    assert!(
        views
            .iter()
            .all(|j| j.status == JobStatus::Completed && j.history.len() == 1)
    );
    assert_eq!(
        content_sha256("abc"),
        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn the_queue_and_the_shared_store_live_in_one_database() {
    let Some(server) = PgServer::shared("queue_and_store_share_a_database") else {
        return;
    };
    let url = server.fresh_database("queue_and_store").unwrap();
    let q = Queue::open(&url, "q", 2).await.unwrap();
    q.enqueue(&[job("x")]).await.unwrap();
    // The store migrates its own schema next to the queue's.
    let store_url = url.clone();
    tokio::task::spawn_blocking(move || tascer_store::PgBackend::open(&store_url).map(drop))
        .await
        .unwrap()
        .unwrap();
    // Both reopen up to date, and the queue kept its job.
    let again = Queue::open(&url, "q", 2).await.unwrap();
    assert_eq!(again.jobs().await.unwrap().len(), 1);
    let db = url.rsplit('/').next().unwrap();
    let tables = server
        .psql(
            db,
            "SELECT string_agg(table_name, ',' ORDER BY table_name) FROM information_schema.tables \
             WHERE table_name LIKE '%migrations'",
        )
        .unwrap();
    assert_eq!(
        tables.trim(),
        "tascer_queue_migrations,tascer_schema_migrations"
    );
    let queue_versions = server
        .psql(
            db,
            "SELECT string_agg(name, ',') FROM tascer_queue_migrations",
        )
        .unwrap();
    assert_eq!(queue_versions.trim(), "contract_queue");
}
