//! Tests of sharing a session file: other handles and processes appending,
//! the exclusive lock, and a file changed or removed behind the log.

use super::*;

#[test]
fn compaction_covers_what_another_process_appended() -> TestResult {
    let dir = TempDir::new()?;
    let path = session_file(&dir, SEEDED_SESSION)?;
    let mut stale = SessionLog::open(&path)?;
    let mut other = SessionLog::open(&path)?;
    other.append_user_messages(vec![(user_data("late"), SurfaceOp::Append)])?;
    assert_eq!(stale.compact("All of it.")?, 5);
    assert_eq!(stale.surface(), &[5]);
    let last = events(&path)?.pop().ok_or("no events")?;
    assert_eq!(last["sourceEventSeqs"], json!([3, 1, 2, 4]));
    Ok(())
}

#[test]
fn two_handles_appending_alternately_never_collide() -> TestResult {
    let dir = TempDir::new()?;
    let path = session_file(&dir, SEEDED_SESSION)?;
    let mut first = SessionLog::open(&path)?;
    let mut second = SessionLog::open(&path)?;
    let mut seqs = Vec::new();
    for round in 0..3 {
        seqs.extend(first.append_user_messages(vec![(user_data(&format!("first {round}")), SurfaceOp::Append)])?);
        seqs.extend(second.append_user_messages(vec![(user_data(&format!("second {round}")), SurfaceOp::Append)])?);
    }
    assert_eq!(seqs, [4, 5, 6, 7, 8, 9]);
    // Each handle picked up the other's lines before writing.
    assert_eq!(first.next_seq(), 9);
    assert_eq!(texts(&first).len(), 3 + 5);
    assert_eq!(second.read_user_messages()?, SessionLog::open(&path)?.read_user_messages()?);

    let reopened = SessionLog::open(&path)?;
    assert_eq!(reopened.warnings(), &[] as &[String]);
    assert_eq!(reopened.surface(), &[3, 1, 2, 4, 5, 6, 7, 8, 9]);
    let appended: Vec<String> = texts(&reopened).into_iter().skip(3).map(|(_, t)| t).collect();
    assert_eq!(appended, ["first 0", "second 0", "first 1", "second 1", "first 2", "second 2"]);
    Ok(())
}

#[test]
fn concurrent_appenders_lose_nothing() -> TestResult {
    let dir = TempDir::new()?;
    let path = session_file(&dir, &format!("{HEADER}\n"))?;
    let writers: Vec<_> = (0..2)
        .map(|writer| {
            let path = path.clone();
            std::thread::spawn(move || -> Result<Vec<u64>, SessionError> {
                let mut log = SessionLog::open(&path)?;
                let mut seqs = Vec::new();
                for n in 0..25 {
                    let text = format!("writer {writer} message {n}");
                    seqs.extend(log.append_user_messages(vec![(user_data(&text), SurfaceOp::Append)])?);
                }
                Ok(seqs)
            })
        })
        .collect();
    let mut seqs = Vec::new();
    for writer in writers {
        seqs.extend(writer.join().map_err(|_| "writer panicked")??);
    }
    seqs.sort_unstable();
    assert_eq!(seqs, (0..50).collect::<Vec<u64>>());
    let log = SessionLog::open(&path)?;
    assert_eq!(log.warnings(), &[] as &[String]);
    assert_eq!(log.read_user_messages()?.len(), 50);
    assert_eq!(log.surface(), (0..50).collect::<Vec<u64>>().as_slice());
    Ok(())
}

#[test]
fn an_append_waits_for_the_lock_and_then_reads_what_the_holder_wrote() -> TestResult {
    let dir = TempDir::new()?;
    let path = session_file(&dir, &format!("{HEADER}\n{}\n", user_line(0, "a")))?;
    let mut log = SessionLog::open(&path)?;
    // Another writer holds the lock (a second open file takes its own lock,
    // even in this process).
    let holder = fs::OpenOptions::new().append(true).open(&path)?;
    holder.lock()?;
    let (done, appended) = std::sync::mpsc::channel();
    let writer = std::thread::spawn(move || {
        let seqs = log.append_user_messages(vec![(user_data("waited"), SurfaceOp::Append)]);
        let _ = done.send(());
        seqs
    });
    // Without the lock it would be done long before this; with it, never.
    // (The wait only lets a missing lock show: it cannot fail a correct one.)
    assert!(appended.recv_timeout(std::time::Duration::from_millis(300)).is_err(), "appended under another's lock");
    std::io::Write::write_all(&mut &holder, format!("{}\n", user_line(1, "the holder's")).as_bytes())?;
    holder.unlock()?;
    let seqs = writer.join().map_err(|_| "writer panicked")??;
    assert_eq!(seqs, [2], "the waiting append read the holder's line first");
    let reread = SessionLog::open(&path)?;
    assert_eq!(reread.warnings(), &[] as &[String]);
    assert_eq!(texts(&reread), [(0, "a".to_owned()), (1, "the holder's".to_owned()), (2, "waited".to_owned())]);
    Ok(())
}

#[test]
fn a_file_rewritten_behind_the_log_is_not_appended_to() -> TestResult {
    let dir = TempDir::new()?;
    let path = session_file(&dir, SEEDED_SESSION)?;
    let mut log = SessionLog::open(&path)?;
    fs::write(&path, format!("{HEADER}\n"))?;
    let error = log
        .append_user_messages(vec![(user_data("x"), SurfaceOp::Append)])
        .err()
        .ok_or("appended to a rewritten file")?;
    assert!(matches!(error, SessionError::Shrunk { .. }), "{error}");
    assert_eq!(fs::read_to_string(&path)?, format!("{HEADER}\n"));
    Ok(())
}

#[test]
fn a_vanished_file_is_an_error_naming_it() -> TestResult {
    let dir = TempDir::new()?;
    let path = session_file(&dir, SEEDED_SESSION)?;
    let mut log = SessionLog::open(&path)?;
    fs::remove_file(&path)?;
    let error = log.compact("x").err().ok_or("appended to a missing file")?;
    let message = error.to_string();
    assert!(message.contains(&path.display().to_string()), "{message}");
    assert!(message.contains("opening for append"), "{message}");
    assert!(!path.exists(), "a vanished session is not recreated");
    let missing = SessionLog::open(&path).err().ok_or("opened a missing file")?;
    assert!(missing.to_string().contains("opening"), "{missing}");
    Ok(())
}

#[test]
fn refresh_picks_up_other_writers() -> TestResult {
    let dir = TempDir::new()?;
    let path = session_file(&dir, SEEDED_SESSION)?;
    let mut reader = SessionLog::open(&path)?;
    SessionLog::open(&path)?.append_user_messages(vec![(user_data("new"), SurfaceOp::Append)])?;
    assert_eq!(reader.next_seq(), 4);
    reader.refresh()?;
    assert_eq!(reader.next_seq(), 5);
    assert!(reader.is_visible(4));
    Ok(())
}

#[test]
fn two_logs_creating_one_new_session_at_once_write_one_header() -> TestResult {
    let dir = TempDir::new()?;
    for round in 0..8 {
        let path = dir.path().join(format!("new-{round}.jsonl"));
        let start = std::sync::Arc::new(std::sync::Barrier::new(2));
        let writers: Vec<_> = ["/first", "/second"]
            .into_iter()
            .map(|cwd| {
                let (path, start) = (path.clone(), start.clone());
                std::thread::spawn(move || -> Result<(Vec<u64>, SessionHeader), SessionError> {
                    let mut log = SessionLog::open_or_create(&path, Some(cwd))?;
                    start.wait();
                    let seqs = log.append_user_messages(vec![(user_data(cwd), SurfaceOp::Append)])?;
                    Ok((seqs, log.header().clone()))
                })
            })
            .collect();
        let mut seqs = Vec::new();
        let mut headers = Vec::new();
        for writer in writers {
            let (written, header) = writer.join().map_err(|_| "writer panicked")??;
            seqs.extend(written);
            headers.push(header);
        }
        seqs.sort_unstable();
        assert_eq!(seqs, [0, 1], "round {round}");
        let content = fs::read_to_string(&path)?;
        assert_eq!(content.matches(r#""type":"session""#).count(), 1, "round {round}: {content}");
        let log = SessionLog::open(&path)?;
        assert_eq!(log.warnings(), &[] as &[String]);
        assert!(headers.iter().all(|header| header == log.header()), "round {round}: both logs took the file's header");
    }
    Ok(())
}

#[test]
fn a_hold_on_a_new_session_creates_the_file_and_removes_it_if_nothing_was_appended() -> TestResult {
    let dir = TempDir::new()?;
    let path = dir.path().join("new.jsonl");
    let mut log = SessionLog::open_or_create(&path, None)?;
    assert!(log.hold()?);
    assert_eq!(fs::read(&path)?, b"", "the lock needs a file");
    log.release();
    assert!(!path.exists(), "released without appending, yet the file stayed");

    // Dropping the log lets go the same way.
    assert!(log.hold()?);
    drop(log);
    assert!(!path.exists());

    // Once something was appended, the file stays.
    let mut log = SessionLog::open_or_create(&path, None)?;
    assert!(log.hold()?);
    log.append_user_messages(vec![(user_data("kept"), SurfaceOp::Append)])?;
    log.release();
    assert_eq!(texts(&SessionLog::open(&path)?), [(0, "kept".to_owned())]);
    Ok(())
}

#[test]
fn a_hold_never_removes_an_empty_file_it_did_not_create() -> TestResult {
    let dir = TempDir::new()?;
    let path = session_file(&dir, "")?;
    let mut log = SessionLog::open_or_create(&path, None)?;
    assert!(log.hold()?);
    log.release();
    assert_eq!(fs::read(&path)?, b"", "an existing empty file is the user's");
    Ok(())
}

#[test]
fn two_holds_on_a_new_session_take_turns() -> TestResult {
    let dir = TempDir::new()?;
    let path = dir.path().join("new.jsonl");
    let mut first = SessionLog::open_or_create(&path, Some("/first"))?;
    let mut second = SessionLog::open_or_create(&path, Some("/second"))?;
    assert!(first.hold()?);
    let (done, held) = std::sync::mpsc::channel();
    let waiter = std::thread::spawn(move || -> Result<SessionLog, SessionError> {
        second.hold()?;
        let _ = done.send(second.next_seq());
        Ok(second)
    });
    // (The wait only lets a missing lock show: it cannot fail a correct one.)
    assert!(held.recv_timeout(std::time::Duration::from_millis(300)).is_err(), "both held a new session's lock");
    first.append_user_messages(vec![(user_data("first"), SurfaceOp::Append)])?;
    first.release();
    assert_eq!(held.recv_timeout(std::time::Duration::from_secs(20))?, 1, "the second saw the first's message");
    let mut second = waiter.join().map_err(|_| "waiter panicked")??;
    assert_eq!(second.header(), first.header());
    second.append_user_messages(vec![(user_data("second"), SurfaceOp::Append)])?;
    second.release();
    let reopened = SessionLog::open(&path)?;
    assert_eq!(reopened.warnings(), &[] as &[String]);
    assert_eq!(texts(&reopened), [(0, "first".to_owned()), (1, "second".to_owned())]);
    Ok(())
}

#[test]
fn a_waiter_whose_file_was_removed_under_it_locks_the_one_the_path_names() -> TestResult {
    static WAITING: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
    fn noticed(_: &Path) {
        WAITING.store(true, std::sync::atomic::Ordering::SeqCst);
    }
    let dir = TempDir::new()?;
    let path = dir.path().join("new.jsonl");
    let mut holder = SessionLog::open_or_create(&path, None)?;
    let wait = LockWait { timeout: None, on_wait: Some(noticed) };
    let mut waiter = SessionLog::open_or_create_waiting(&path, Some("/waiter"), wait)?;
    assert!(holder.hold()?, "the holder creates the file to lock it");
    let waiting = std::thread::spawn(move || -> Result<SessionLog, SessionError> {
        // Opens the holder's empty file, then waits for its lock.
        waiter.hold()?;
        waiter.append_user_messages(vec![(user_data("after"), SurfaceOp::Append)])?;
        waiter.release();
        Ok(waiter)
    });
    while !WAITING.load(std::sync::atomic::Ordering::SeqCst) {
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    // Removes the file it created, which the waiter has open.
    holder.release();
    let waiter = waiting.join().map_err(|_| "waiter panicked")??;
    // Without the check the message would have gone into the removed file.
    let reopened = SessionLog::open(&path)?;
    assert_eq!(reopened.header(), waiter.header());
    assert_eq!(reopened.header().cwd.as_deref(), Some("/waiter"));
    assert_eq!(texts(&reopened), [(0, "after".to_owned())]);
    Ok(())
}
