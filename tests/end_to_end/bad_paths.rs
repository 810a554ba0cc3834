//! What a new user hits on the bad paths of the command line: every failure
//! is said (a warning or one `error:` line with the right exit code), a
//! failed command leaves the session as it was, and no input, pipe or lock
//! makes the command panic or hang.

use std::fs::File;
use std::io::Read;
use std::path::Path;
use std::process::{Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;
use skill_host::test_support::http::{Reply, Server};

use crate::common::{Sandbox, path, stderr, stdout};

/// The warning a remote index that never answers gets under the default deadline.
const HUNG_REMOTE: &str = "warning: skill provider \"remote\" skipped: did not answer before the call's deadline\n";

/// A loopback server whose index never answers.
fn hung_index() -> Server {
    Server::start(&[("/i.json", Reply::Hang)])
}

fn header(session: &Path) -> Value {
    let text = std::fs::read_to_string(session).unwrap();
    serde_json::from_str(text.lines().next().expect("a header line")).unwrap()
}

#[test]
fn a_failing_provider_is_a_warning_not_silence() {
    let sandbox = Sandbox::new();
    let workspace = sandbox.example_workspace();
    let session = sandbox.path().join("new.jsonl");
    // Nothing listens on port 1.
    let refused = sandbox.run(&[
        "step",
        "--session",
        path(&session),
        "--cwd",
        path(&workspace),
        "--remote",
        "http://127.0.0.1:1/i.json",
    ]);
    assert_eq!(refused.status.code(), Some(0), "{}", stderr(&refused));
    // The last complete view is kept (none yet: no catalog), and the user is told why.
    assert_eq!(stdout(&refused), "");
    let warning = stderr(&refused);
    assert!(
        warning.starts_with(
            "warning: skill provider \"remote\" skipped: http://127.0.0.1:1/i.json: cannot read skill index: "
        ),
        "{warning}"
    );
    assert_eq!(warning.lines().count(), 1, "{warning}");
    // The next step without the broken index publishes the catalog.
    let healthy = sandbox.run(&["step", "--session", path(&session), "--cwd", path(&workspace)]);
    assert!(stdout(&healthy).starts_with("<system-reminder>"), "{}", stdout(&healthy));
}

#[cfg(target_os = "linux")]
#[test]
fn an_unreadable_skill_file_is_named_by_step_and_by_skills() {
    let sandbox = Sandbox::new();
    let workspace = sandbox.example_workspace();
    // A regular file whose read fails (EIO), even for root.
    let unreadable = workspace.join(".agents/skills/mem.md");
    std::os::unix::fs::symlink("/proc/self/mem", &unreadable).unwrap();
    let expected = format!(
        "warning: skill provider \"local\" listed incompletely: cannot read skill file {}: ",
        unreadable.display()
    );

    let session = sandbox.path().join("s.jsonl");
    let step = sandbox.run(&["step", "--session", path(&session), "--cwd", path(&workspace)]);
    assert_eq!((step.status.code(), stdout(&step)), (Some(0), String::new()));
    assert!(stderr(&step).starts_with(&expected), "{}", stderr(&step));

    let skills = sandbox.run(&["skills", "--cwd", path(&workspace)]);
    assert!(stderr(&skills).starts_with(&expected), "{}", stderr(&skills));
    assert!(stdout(&skills).ends_with("incomplete: some skill state could not be read (see warnings)\n"));
}

#[test]
fn a_deadline_of_zero_is_a_usage_error() {
    let sandbox = Sandbox::new();
    let session = sandbox.path().join("s.jsonl");
    for option in ["--timeout-ms", "--memory-mb", "--max-added-messages", "--max-text-bytes", "--max-output-bytes"] {
        let output = sandbox.run(&["step", "--session", path(&session), option, "0"]);
        assert_eq!(output.status.code(), Some(2), "{option}: {}", stderr(&output));
        assert!(stderr(&output).contains(option), "{option}: {}", stderr(&output));
    }
    assert!(!session.exists(), "a refused command line creates no session");
}

#[test]
fn a_hung_index_does_not_hide_a_local_skill_and_is_named_when_it_might_have_had_one() {
    let sandbox = Sandbox::new();
    let workspace = sandbox.example_workspace();
    let server = hung_index();
    let remote = server.url("/i.json");
    let start = Instant::now();
    let found = sandbox.run(&["load", "commit-message", "--cwd", path(&workspace), "--remote", &remote]);
    assert!(start.elapsed() < Duration::from_secs(5), "bounded by the call's deadline");
    assert_eq!(found.status.code(), Some(0), "{}{}", stdout(&found), stderr(&found));
    assert!(stdout(&found).starts_with("<skill_content name=\"commit-message\">"), "{}", stdout(&found));
    assert_eq!(stderr(&found), HUNG_REMOTE);

    // A name no provider that answered has: the one that did not is named.
    let missing = sandbox.run(&["load", "not-here", "--cwd", path(&workspace), "--remote", &remote]);
    assert_eq!(missing.status.code(), Some(1));
    assert_eq!(stdout(&missing), "Error: skill provider \"remote\" did not answer before the call's deadline\n");

    // `expand` expands the local skill, and says what it could not ask.
    let expanded =
        sandbox.run(&["expand", "--cwd", path(&workspace), "--remote", &remote, "/skill:commit-message now"]);
    assert_eq!(expanded.status.code(), Some(0), "{}", stderr(&expanded));
    assert!(stdout(&expanded).starts_with("<skill name=\"commit-message\""), "{}", stdout(&expanded));
    assert_eq!(stderr(&expanded), HUNG_REMOTE);
}

#[test]
fn paths_the_user_typed_that_do_not_exist_are_said() {
    let sandbox = Sandbox::new();
    let session = sandbox.path().join("s.jsonl");
    let missing = sandbox.path().join("nonexistent");
    let output = sandbox.run(&["step", "--session", path(&session), "--cwd", path(&missing)]);
    assert_eq!(output.status.code(), Some(2));
    assert_eq!(
        stderr(&output),
        format!("error: --cwd {}: No such file or directory (os error 2)\n", missing.display())
    );
    assert!(!session.exists(), "no header with a cwd that does not exist");
    for command in [&["skills"][..], &["system-prompt"], &["load", "x"], &["expand", "x"]] {
        let mut args = command.to_vec();
        args.extend(["--cwd", path(&missing)]);
        assert_eq!(sandbox.run(&args).status.code(), Some(2), "{command:?}");
    }

    let typo = sandbox.path().join("typo");
    let output = sandbox.run(&["skills", "--cwd", path(sandbox.path()), "--skills-dir", path(&typo)]);
    assert_eq!(output.status.code(), Some(0));
    assert_eq!(
        stderr(&output),
        format!("warning: --skills-dir {} is not a directory; no skills come from it\n", typo.display())
    );
}

#[test]
fn a_failed_command_creates_and_writes_no_session() {
    let sandbox = Sandbox::new();
    let workspace = sandbox.example_workspace();
    let bad_config = sandbox.path().join("bad.json");
    std::fs::write(&bad_config, "{not json").unwrap();
    let missing_plugin = sandbox.path().join("missing.wasm");
    let empty = sandbox.path().join("empty.jsonl");
    File::create(&empty).unwrap();
    let failures: [&[&str]; 2] = [&["--config", path(&bad_config)], &["--plugin", path(&missing_plugin)]];
    for global in failures {
        for (session, existed) in [(sandbox.path().join("new.jsonl"), false), (empty.clone(), true)] {
            let mut args = global.to_vec();
            args.extend(["step", "--session", path(&session), "--cwd", path(&workspace)]);
            let output = sandbox.run(&args);
            assert_eq!(output.status.code(), Some(3), "{global:?}: {}", stderr(&output));
            assert_eq!(stderr(&output).lines().count(), 1, "{}", stderr(&output));
            assert_eq!(session.exists(), existed, "{global:?}");
            if existed {
                assert_eq!(std::fs::read(&session).unwrap(), b"", "{global:?}: the empty file stays empty");
            }
            let mut load = global.to_vec();
            load.extend(["load", "commit-message", "--session", path(&session), "--cwd", path(&workspace)]);
            assert_eq!(sandbox.run(&load).status.code(), Some(3));
            assert_eq!(session.exists(), existed, "{global:?}");
        }
    }
}

#[test]
fn load_records_the_cwd_in_the_session_it_creates() {
    let sandbox = Sandbox::new();
    let workspace = sandbox.example_workspace();
    let session = sandbox.path().join("new.jsonl");
    let output = sandbox.run(&["load", "commit-message", "--session", path(&session), "--cwd", path(&workspace)]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(header(&session)["cwd"], path(&workspace));
    // So the next step finds the project's skills.
    let step = sandbox.run(&["step", "--session", path(&session)]);
    assert!(stdout(&step).contains("`commit-message`"), "{}", stdout(&step));
}

/// Runs `args` with stdout closed by its reader before anything is written.
fn with_closed_stdout(sandbox: &Sandbox, args: &[&str]) -> Output {
    let mut child = sandbox.command(args).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    drop(child.stdout.take());
    let mut err = String::new();
    child.stderr.take().unwrap().read_to_string(&mut err).unwrap();
    let status = child.wait().unwrap();
    Output { status, stdout: Vec::new(), stderr: err.into_bytes() }
}

/// Runs `args` with stdout on a full device.
#[cfg(target_os = "linux")]
fn with_full_stdout(sandbox: &Sandbox, args: &[&str]) -> Output {
    let full = std::fs::OpenOptions::new().write(true).open("/dev/full").unwrap();
    sandbox.command(args).stdout(full).output().unwrap()
}

#[test]
fn a_closed_stdout_ends_the_command_quietly() {
    let sandbox = Sandbox::new();
    let workspace = sandbox.example_workspace();
    let session = sandbox.path().join("s.jsonl");
    let scenario = crate::common::repo_root().join("tests/scenarios/lifecycle.json");
    let commands: [&[&str]; 5] = [
        &["step", "--session", path(&session), "--cwd", path(&workspace)],
        &["skills", "--cwd", path(&workspace)],
        &["load", "commit-message", "--cwd", path(&workspace)],
        &["system-prompt", "--cwd", path(&workspace)],
        &["replay", path(&scenario)],
    ];
    for args in commands {
        let output = with_closed_stdout(&sandbox, args);
        assert_eq!(output.status.code(), Some(0), "{args:?}: {}", stderr(&output));
        assert_eq!(stderr(&output), "", "{args:?}");
    }
    // The step's decision was recorded before it was printed.
    let after = sandbox.run(&["step", "--session", path(&session), "--cwd", path(&workspace)]);
    assert_eq!(stdout(&after), "", "the catalog is in the session already");
    assert!(std::fs::read_to_string(&session).unwrap().contains("dsh-tool-skill"));
}

#[cfg(target_os = "linux")]
#[test]
fn a_full_disk_is_one_error_line_that_says_what_was_recorded() {
    let sandbox = Sandbox::new();
    let workspace = sandbox.example_workspace();
    let session = sandbox.path().join("s.jsonl");
    let output = with_full_stdout(&sandbox, &["step", "--session", path(&session), "--cwd", path(&workspace)]);
    assert_eq!(output.status.code(), Some(3));
    assert_eq!(
        stderr(&output),
        format!(
            "error: cannot write the output: No space left on device (os error 28); the step's messages are recorded in session log {}\n",
            session.display()
        )
    );
    for args in [&["skills", "--cwd", path(&workspace)][..], &["load", "commit-message", "--cwd", path(&workspace)]] {
        let output = with_full_stdout(&sandbox, args);
        assert_eq!(output.status.code(), Some(3), "{args:?}");
        assert_eq!(stderr(&output), "error: cannot write the output: No space left on device (os error 28)\n");
    }
}

#[test]
fn credentials_in_a_refused_index_url_never_reach_the_output() {
    let sandbox = Sandbox::new();
    let output = sandbox.run(&["skills", "--remote", "http://user:s3cret@[::1"]);
    assert_eq!(output.status.code(), Some(2));
    let text = format!("{}{}", stdout(&output), stderr(&output));
    assert!(!text.contains("s3cret"), "{text}");
    assert!(text.contains("invalid index URL \"http://***@[::1\": invalid IPv6 address"), "{text}");
}

#[test]
fn an_unopenable_session_names_its_cause_once() {
    let sandbox = Sandbox::new();
    let output = sandbox.run(&["step", "--session", path(sandbox.path())]);
    assert_eq!(output.status.code(), Some(3));
    assert_eq!(
        stderr(&output),
        format!("error: session log {}: not a regular file (a directory)\n", sandbox.path().display())
    );
    // An I/O error: its operation and reason once.
    let missing = sandbox.path().join("no-such-folder/s.jsonl");
    let output = sandbox.run(&["compact", "--session", path(&missing)]);
    assert_eq!(output.status.code(), Some(3));
    assert_eq!(
        stderr(&output),
        format!("error: session log {}: opening: No such file or directory (os error 2)\n", missing.display())
    );
}

#[cfg(unix)]
#[test]
fn inputs_that_are_not_regular_files_are_refused_at_once() {
    let sandbox = Sandbox::new();
    let session = sandbox.path().join("s.jsonl");
    let start = Instant::now();
    for (args, what) in [
        (vec!["--config", "/dev/zero", "step", "--session", path(&session)], "configuration /dev/zero"),
        (vec!["--plugin", "/dev/zero", "step", "--session", path(&session)], "plugin /dev/zero"),
        (vec!["replay", "/dev/zero"], "scenario /dev/zero"),
    ] {
        let output = sandbox.run(&args);
        assert_eq!(output.status.code(), Some(3), "{args:?}");
        assert_eq!(stderr(&output), format!("error: cannot read {what}: not a regular file\n"));
    }
    // A FIFO nobody writes to is refused too, without waiting for a writer.
    let fifo = sandbox.path().join("config.fifo");
    if std::process::Command::new("mkfifo").arg(&fifo).status().is_ok_and(|status| status.success()) {
        let output = sandbox.run(&["--config", path(&fifo), "step", "--session", path(&session)]);
        assert_eq!(
            stderr(&output),
            format!("error: cannot read configuration {}: not a regular file\n", fifo.display())
        );
    }
    assert!(start.elapsed() < Duration::from_secs(10), "nothing read a device to its end or waited on a FIFO");
    assert!(!session.exists());

    // A session that is a link to a device is refused, and the device untouched.
    for device in ["/dev/zero", "/dev/null"] {
        let link = sandbox.path().join(format!("link-{}.jsonl", &device[5..]));
        std::os::unix::fs::symlink(device, &link).unwrap();
        let output = sandbox.run(&["step", "--session", path(&link)]);
        assert_eq!(output.status.code(), Some(3), "{device}");
        assert!(stderr(&output).contains("not a regular file"), "{device}: {}", stderr(&output));
    }
}

#[test]
fn a_session_locked_by_another_process_is_waited_for_with_a_word_and_a_bound() {
    let sandbox = Sandbox::new();
    let workspace = sandbox.example_workspace();
    let session = sandbox.path().join("s.jsonl");
    let first = sandbox.run(&["step", "--session", path(&session), "--cwd", path(&workspace)]);
    assert_eq!(first.status.code(), Some(0));
    let before = std::fs::read(&session).unwrap();
    // This test process holds the lock, as another host mid-step would.
    let holder = File::open(&session).unwrap();
    holder.lock().unwrap();
    let start = Instant::now();
    let output = sandbox.run(&["step", "--session", path(&session), "--lock-timeout-ms", "300", "--message", "hi"]);
    assert!(start.elapsed() < Duration::from_secs(10));
    assert_eq!(output.status.code(), Some(3));
    assert_eq!(
        stderr(&output),
        format!(
            "waiting for session log {0}: another process holds its lock\nerror: session log {0}: still locked by another process after 300 ms\n",
            session.display()
        )
    );
    drop(holder);
    assert_eq!(std::fs::read(&session).unwrap(), before);
}

#[test]
fn a_deadline_too_short_to_list_the_skills_is_never_silent() {
    let sandbox = Sandbox::new();
    let project = sandbox.path().join("many");
    for index in 0..3_000 {
        sandbox.write_skill(&project, &format!("skill-{index}"), "description: One of many.\n", "Body.");
    }
    for timeout in ["1", "2", "5"] {
        let session = sandbox.path().join(format!("s-{timeout}.jsonl"));
        let output =
            sandbox.run(&["step", "--session", path(&session), "--cwd", path(&project), "--timeout-ms", timeout]);
        let said = if output.status.success() { stdout(&output) + &stderr(&output) } else { stderr(&output) };
        // A catalog, a warning saying why there is none, or an error: never nothing.
        assert!(!said.is_empty(), "--timeout-ms {timeout}: exit {:?} and no word", output.status.code());
        if output.status.success() && stdout(&output).is_empty() {
            assert!(stderr(&output).starts_with("warning: skill provider \"local\" "), "{}", stderr(&output));
        }
    }
}
