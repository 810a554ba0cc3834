//! Tests of what a session path may name: only a regular file, after
//! following symlinks, is read or written, when opened and on every reopen.

use super::*;

/// The error for a session path that is not a regular file.
fn refused(path: &Path, kind: &str) -> String {
    format!("session log {}: not a regular file ({kind})", path.display())
}

fn assert_refused(result: Result<impl std::fmt::Debug, SessionError>, path: &Path, kind: &str) {
    match result {
        Err(error @ SessionError::NotRegularFile { .. }) => assert_eq!(error.to_string(), refused(path, kind)),
        other => panic!("{}: expected a refusal, got {other:?}", path.display()),
    }
}

#[cfg(unix)]
#[test]
fn a_symlink_to_a_device_is_refused() -> TestResult {
    let dir = TempDir::new()?;
    for device in ["/dev/null", "/dev/zero"] {
        let path = dir.path().join(format!("{}.jsonl", &device[5..]));
        std::os::unix::fs::symlink(device, &path)?;
        assert_refused(SessionLog::open(&path), &path, "a character device");
        assert_refused(SessionLog::open_or_create(&path, None), &path, "a character device");
    }
    Ok(())
}

#[test]
fn a_directory_is_refused() -> TestResult {
    let dir = TempDir::new()?;
    let path = dir.path().join("session.jsonl");
    fs::create_dir(&path)?;
    assert_refused(SessionLog::open(&path), &path, "a directory");
    assert_refused(SessionLog::open_or_create(&path, None), &path, "a directory");
    Ok(())
}

#[cfg(unix)]
#[test]
fn a_fifo_is_refused_without_hanging() -> TestResult {
    let dir = TempDir::new()?;
    let path = dir.path().join("session.jsonl");
    match std::process::Command::new("mkfifo").arg(&path).status() {
        Ok(status) if status.success() => {}
        // No mkfifo here: nothing to test with.
        _ => return Ok(()),
    }
    let (done, opened) = std::sync::mpsc::channel();
    let opener = path.clone();
    std::thread::spawn(move || {
        let _ = done.send((SessionLog::open(&opener).map(drop), SessionLog::open_or_create(&opener, None).map(drop)));
    });
    let (open, open_or_create) =
        opened.recv_timeout(std::time::Duration::from_secs(20)).map_err(|_| "opening a FIFO hung")?;
    assert_refused(open, &path, "a FIFO");
    assert_refused(open_or_create, &path, "a FIFO");
    Ok(())
}

#[cfg(unix)]
#[test]
fn a_session_file_replaced_by_a_device_is_refused_on_every_reopen() -> TestResult {
    let dir = TempDir::new()?;
    let path = session_file(&dir, SEEDED_SESSION)?;
    let mut log = SessionLog::open(&path)?;
    fs::remove_file(&path)?;
    std::os::unix::fs::symlink("/dev/zero", &path)?;
    assert_refused(log.refresh(), &path, "a character device");
    assert_refused(log.user_message(1), &path, "a character device");
    assert_refused(log.hold(), &path, "a character device");
    assert_refused(log.append_user_messages(vec![(user_data("x"), SurfaceOp::Append)]), &path, "a character device");
    assert_refused(log.compact("x"), &path, "a character device");
    assert_eq!(log.next_seq(), 4, "nothing was read from the device");
    Ok(())
}

#[cfg(unix)]
#[test]
fn a_new_session_whose_path_becomes_a_device_is_refused_on_its_first_append() -> TestResult {
    let dir = TempDir::new()?;
    let path = dir.path().join("new.jsonl");
    let mut log = SessionLog::open_or_create(&path, None)?;
    std::os::unix::fs::symlink("/dev/null", &path)?;
    assert_refused(log.refresh(), &path, "a character device");
    assert_refused(log.append_user_messages(vec![(user_data("x"), SurfaceOp::Append)]), &path, "a character device");
    Ok(())
}

#[cfg(unix)]
#[test]
fn a_regular_file_through_a_symlink_is_a_session_log() -> TestResult {
    let dir = TempDir::new()?;
    let target = session_file(&dir, SEEDED_SESSION)?;
    let link = dir.path().join("link.jsonl");
    std::os::unix::fs::symlink(&target, &link)?;
    let mut log = SessionLog::open(&link)?;
    assert_eq!(log.append_user_messages(vec![(user_data("via the link"), SurfaceOp::Append)])?, [4]);
    assert_eq!(texts(&SessionLog::open(&target)?).pop(), Some((4, "via the link".to_owned())));
    Ok(())
}
