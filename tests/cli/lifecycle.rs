//! How `dhara call` ends a session with extensions written as plain line loops
//! (`tests/lifecycle/ext.py`): the exact exit status, under load too; an extension
//! that exits at the end of stdin; a reply without its newline; and what an extension
//! leaves behind in its process group.

use std::path::PathBuf;
use std::process::{Command, Output};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

const DHARA: &str = env!("CARGO_BIN_EXE_dhara");

fn script() -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/lifecycle/ext.py")
        .display()
        .to_string()
}

/// `dhara call run [OPTIONS] -- python3 ext.py MODE [ARGS]`, and how long it took.
fn call(options: &[&str], mode: &[&str]) -> (Output, Duration) {
    let script = script();
    let mut args = vec!["call", "run"];
    args.extend_from_slice(options);
    args.extend(["--", "python3", script.as_str()]);
    args.extend_from_slice(mode);
    let started = Instant::now();
    let output = Command::new(DHARA)
        .args(&args)
        .output()
        .expect("dhara runs");
    (output, started.elapsed())
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

fn python_present() -> bool {
    let present = Command::new("python3").arg("--version").output().is_ok();
    if !present {
        assert!(
            std::env::var_os("CI").is_none(),
            "python3 is required in CI"
        );
        use std::io::Write;
        let _ = writeln!(std::io::stderr(), "SKIPPED: python3 not found");
    }
    present
}

#[test]
fn the_exit_code_is_reported_exactly_every_time_even_under_load() {
    if !python_present() {
        return;
    }
    // Two busy threads beside the runs, as a loaded machine has.
    let stop = Arc::new(AtomicBool::new(false));
    let busy: Vec<_> = (0..2)
        .map(|_| {
            let stop = Arc::clone(&stop);
            std::thread::spawn(move || {
                let mut x = 0u64;
                while !stop.load(Ordering::Relaxed) {
                    x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
                    std::hint::black_box(x);
                }
            })
        })
        .collect();
    for run in 0..20 {
        let (output, _) = call(&[], &["exit-3"]);
        let text = stderr(&output);
        assert_eq!(output.status.code(), Some(5), "run {run}: {text}");
        assert!(
            text.contains("the extension exited with code 3"),
            "run {run}: {text}"
        );
        assert!(!text.contains("signal"), "run {run}: {text}");
    }
    stop.store(true, Ordering::Relaxed);
    for thread in busy {
        thread.join().expect("busy thread");
    }
}

#[test]
fn an_extension_that_ignores_shutdown_but_exits_at_the_end_of_stdin_is_not_killed() {
    if !python_present() {
        return;
    }
    let (output, took) = call(&["--grace", "10s"], &["ignore-shutdown"]);
    let text = stderr(&output);
    assert_eq!(output.status.code(), Some(0), "{text}");
    assert_eq!(String::from_utf8_lossy(&output.stdout), "done\n");
    assert!(!text.contains("killed"), "{text}");
    // Far less than the 10 s grace a kill would have waited for.
    assert!(took < Duration::from_secs(5), "took {took:?}");
}

#[test]
fn a_reply_without_its_newline_is_named_not_reported_as_silence() {
    if !python_present() {
        return;
    }
    let (output, _) = call(&["--timeout", "1s"], &["no-newline"]);
    let text = stderr(&output);
    assert_eq!(output.status.code(), Some(4), "{text}");
    assert!(text.contains("no reply within 1s"), "{text}");
    assert!(
        text.contains("bytes without a final newline were pending"),
        "{text}"
    );
    assert!(
        text.contains(r#"`{"jsonrpc":"2.0","id":2,"result":"#),
        "{text}"
    );
    assert!(text.contains("flush"), "{text}");
}

#[test]
fn what_an_exited_extension_leaves_in_its_process_group_is_ended() {
    if !python_present() || !cfg!(target_os = "linux") {
        return;
    }
    let pidfile = std::env::temp_dir().join(format!("dhara-leave-child-{}", std::process::id()));
    let pidfile_arg = pidfile.display().to_string();
    let (output, took) = call(&[], &["leave-child", &pidfile_arg]);
    let text = stderr(&output);
    assert_eq!(output.status.code(), Some(5), "{text}");
    assert!(text.contains("exited with code 3"), "{text}");
    // The `sleep 300` holding the pipes does not hold the call up...
    assert!(took < Duration::from_secs(5), "took {took:?}");
    // ...and does not outlive the session.
    let pid = std::fs::read_to_string(&pidfile).expect("the pid file");
    let _ = std::fs::remove_file(&pidfile);
    let alive = || {
        std::fs::read_to_string(format!("/proc/{}/stat", pid.trim()))
            .is_ok_and(|stat| !stat.contains(") Z "))
    };
    let give_up = Instant::now() + Duration::from_secs(3);
    while alive() && Instant::now() < give_up {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(!alive(), "the extension's child {pid} is still running");
}
