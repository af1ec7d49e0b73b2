//! Issue 29: processes never outlive pcsim. Every captured server and its descendants end when pcsim
//! ends, however it ends: here by SIGKILL, which runs no destructor (the watchdog's case).

use std::time::{Duration, Instant};

/// Processes (by pid) whose environment carries the capture marker of pcsim process `pid`.
#[cfg(target_os = "linux")]
fn marked_by(pid: u32) -> Vec<u32> {
    let needle = format!("PCSIM_CAPTURE_ID={pid}-");
    let mut found = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Some(p) = e.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else {
            continue;
        };
        if let Ok(env) = std::fs::read(e.path().join("environ")) {
            if env.windows(needle.len()).any(|w| w == needle.as_bytes()) {
                found.push(p);
            }
        }
    }
    found
}

/// A `kill -9` of pcsim during `config` with 20 servers, each with a child in its group and a
/// `setsid` grandchild, leaves no server process (before the watchdog, all 60 kept running).
#[cfg(target_os = "linux")]
#[test]
fn kill_9_during_config_with_20_servers_leaves_no_server_process() {
    let dir = tempfile::tempdir().unwrap();
    let servers: Vec<String> = (0..20)
        .map(|i| {
            format!(
                r#""s{i}": {{"command": "sh", "args": ["-c", "sleep 600 & setsid sleep 600 & exec sleep 600"]}}"#
            )
        })
        .collect();
    let config = dir.path().join("mcp.json");
    std::fs::write(
        &config,
        format!("{{\"mcpServers\": {{{}}}}}", servers.join(", ")),
    )
    .unwrap();
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("pcsim"))
        .args([
            "config",
            config.to_str().unwrap(),
            "--timeout-seconds",
            "120",
        ])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let pid = child.id();
    // Every server and both of its helpers started: 60 marked processes.
    let until = Instant::now() + Duration::from_secs(30);
    while marked_by(pid).len() < 60 && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(50));
    }
    let started = marked_by(pid).len();
    child.kill().unwrap(); // SIGKILL: no destructor, no signal handler runs
    child.wait().unwrap();
    let until = Instant::now() + Duration::from_secs(15);
    while !marked_by(pid).is_empty() && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(50));
    }
    let left = marked_by(pid);
    // Clean up whatever a failure leaves, then judge.
    for p in &left {
        let _ = std::process::Command::new("kill")
            .args(["-9", &p.to_string()])
            .status();
    }
    assert!(started >= 60, "only {started} server processes started");
    assert!(
        left.is_empty(),
        "{} server processes outlived pcsim: {left:?}",
        left.len()
    );
}
