//! The end of a server's whole process tree ([`ChildGuard`]): its process group, every descendant by
//! parent links, and by an environment marker the orphans that left the group and session; all
//! killed and reaped on every path a capture takes.

use std::process::Child;
use std::time::{Duration, Instant};

/// Owns the child process: dropping it ends the child's whole process group and reaps the child,
/// whatever path the capture took.
pub(crate) struct ChildGuard {
    pub(super) child: Child,
    /// Value of [`CAPTURE_MARKER`] in the server's environment: its descendants inherit it, so
    /// those that left its process group and session (`setsid()`) and were orphaned are found too.
    pub(super) marker: String,
}

/// Environment variable set on every captured server, so its whole process tree can be found.
pub(crate) const CAPTURE_MARKER: &str = "PCSIM_CAPTURE_ID";

impl ChildGuard {
    pub(super) fn exit_status(&mut self) -> Option<std::process::ExitStatus> {
        self.child.try_wait().ok().flatten()
    }
}

impl Drop for ChildGuard {
    fn drop(&mut self) {
        // The whole tree, found while the server still links it: helpers in other groups or
        // sessions, and (by the environment marker) orphans of it that the kernel moved to us.
        // Its pid is followed only while it is not reaped (a reaped pid may be reused).
        let running = matches!(self.child.try_wait(), Ok(None));
        let root = running.then(|| self.child.id());
        let tree = descendants(root, &self.marker);
        self.end_group();
        kill_all(&tree);
        // Late ones (started while the group was ending), then reap those that became our children.
        let late = descendants(None, &self.marker);
        kill_all(&late);
        reap(tree.iter().chain(&late));
    }
}

impl ChildGuard {
    fn end_group(&mut self) {
        if let Ok(Some(_)) = self.child.try_wait() {
            // Already exited and reaped; helpers it left in its group are still ended below.
            kill_group(&self.child, true);
            return;
        }
        // A polite SIGTERM first, so well-behaved servers clean up; then SIGKILL after a short grace.
        kill_group(&self.child, false);
        let grace = Instant::now() + Duration::from_millis(200);
        while Instant::now() < grace {
            if let Ok(Some(_)) = self.child.try_wait() {
                kill_group(&self.child, true);
                return;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        kill_group(&self.child, true);
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[cfg(unix)]
fn kill_group(child: &Child, hard: bool) {
    // The child was spawned as the leader of its own process group, so `npx`-style launchers and the
    // real server they start are ended together.
    let Ok(pid) = libc::pid_t::try_from(child.id()) else {
        return;
    };
    let sig = if hard { libc::SIGKILL } else { libc::SIGTERM };
    // SAFETY: kill(2) with a negative pid signals a process group; no memory is touched.
    unsafe {
        libc::kill(-pid, sig);
    }
}

#[cfg(not(unix))]
fn kill_group(_child: &Child, _hard: bool) {}

/// Makes this process the reaper of its orphaned descendants (Linux): a helper that a server
/// double-forks away is then reparented to pcsim, not to init, so it stays findable and is reaped
/// here. Set once, before the first server starts.
pub(super) fn become_subreaper() {
    #[cfg(target_os = "linux")]
    {
        static ONCE: std::sync::Once = std::sync::Once::new();
        // SAFETY: prctl(PR_SET_CHILD_SUBREAPER, 1) sets a flag of this process; no memory is passed.
        ONCE.call_once(|| unsafe {
            libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1 as libc::c_ulong, 0, 0, 0);
        });
    }
}

/// Starts, once per process, a watchdog that ends every captured server's process tree when this
/// process ends in a way that runs no destructor (SIGKILL, an abort, a crash): a `sh` in its own
/// process group reads a pipe whose only writer is this process (close-on-exec, so no server holds
/// it), and at end of file kills every process whose environment carries this process's
/// [`CAPTURE_MARKER`] prefix (`<pid>-`): servers, their children, and orphans that called `setsid`.
/// After a normal exit it finds nothing left (each [`ChildGuard`] has ended its tree) and exits.
/// Without `sh`, captures still run and end their servers as before; only the crash path is lost.
pub(super) fn start_watchdog() {
    #[cfg(target_os = "linux")]
    {
        static ONCE: std::sync::Once = std::sync::Once::new();
        ONCE.call_once(|| {
            use std::os::fd::FromRawFd;
            use std::os::unix::process::CommandExt;
            let mut fds = [0 as libc::c_int; 2];
            // SAFETY: pipe2 writes two descriptors into `fds`, a valid array of two ints.
            if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
                return;
            }
            // SAFETY: both descriptors were just created by pipe2 and are owned here alone.
            let (read, write) = unsafe {
                (
                    std::os::fd::OwnedFd::from_raw_fd(fds[0]),
                    std::os::fd::OwnedFd::from_raw_fd(fds[1]),
                )
            };
            const SCRIPT: &str = r#"trap '' INT TERM HUP
cat >/dev/null
for e in /proc/[0-9]*/environ; do
  if grep -qa "$0=$1-" "$e" 2>/dev/null; then
    p=${e#/proc/}; kill -9 "${p%/environ}" 2>/dev/null
  fi
done"#;
            let started = std::process::Command::new("sh")
                .args([
                    "-c",
                    SCRIPT,
                    CAPTURE_MARKER,
                    &std::process::id().to_string(),
                ])
                .env_remove(CAPTURE_MARKER)
                .stdin(std::process::Stdio::from(read))
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::null())
                .process_group(0)
                .spawn();
            if started.is_ok() {
                // The write end lives as long as this process: its close at exit is the signal.
                std::mem::forget(write);
            }
        });
    }
}

/// The processes of a server's tree (Linux, from /proc): every descendant of `root` by parent
/// links (whatever group or session it moved to) and every process whose environment carries
/// `marker` (orphans that lost the link). Never this process.
fn descendants(root: Option<u32>, marker: &str) -> Vec<u32> {
    #[cfg(target_os = "linux")]
    {
        let me = std::process::id();
        let needle = format!("{CAPTURE_MARKER}={marker}\0");
        let mut parent: Vec<(u32, u32)> = Vec::new();
        let mut found: Vec<u32> = Vec::new();
        let Ok(dir) = std::fs::read_dir("/proc") else {
            return found;
        };
        for entry in dir.flatten() {
            let Some(pid) = entry
                .file_name()
                .to_str()
                .and_then(|n| n.parse::<u32>().ok())
            else {
                continue;
            };
            if pid == me {
                continue;
            }
            // `pid (comm) state ppid ...`: comm may hold spaces and parentheses, so after the last `)`.
            if let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) {
                if let Some(ppid) = stat
                    .rsplit_once(')')
                    .and_then(|(_, rest)| rest.split_whitespace().nth(1))
                    .and_then(|p| p.parse::<u32>().ok())
                {
                    parent.push((pid, ppid));
                }
            }
            if let Ok(env) = std::fs::read(entry.path().join("environ")) {
                if env.windows(needle.len()).any(|w| w == needle.as_bytes()) {
                    found.push(pid);
                }
            }
        }
        if let Some(root) = root {
            let mut frontier = vec![root];
            while let Some(p) = frontier.pop() {
                for &(c, pp) in &parent {
                    if pp == p && c != me && !found.contains(&c) {
                        found.push(c);
                        frontier.push(c);
                    }
                }
            }
        }
        found
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = (root, marker);
        Vec::new()
    }
}

/// SIGKILL to each process (and its group, if it leads one).
fn kill_all(pids: &[u32]) {
    #[cfg(unix)]
    for &pid in pids {
        let Ok(pid) = libc::pid_t::try_from(pid) else {
            continue;
        };
        // SAFETY: kill(2) only sends a signal; no memory is touched.
        unsafe {
            libc::kill(pid, libc::SIGKILL);
        }
    }
    #[cfg(not(unix))]
    let _ = pids;
}

/// Waits (briefly) for the killed processes that are our children (orphans we became the reaper
/// of), so none is left as a zombie.
fn reap<'p>(pids: impl Iterator<Item = &'p u32>) {
    #[cfg(unix)]
    {
        let pids: Vec<libc::pid_t> = pids
            .filter_map(|&p| libc::pid_t::try_from(p).ok())
            .collect();
        let until = Instant::now() + Duration::from_millis(500);
        let mut left = pids;
        while !left.is_empty() && Instant::now() < until {
            left.retain(|&pid| {
                let mut status = 0;
                // SAFETY: waitpid on one pid with WNOHANG; `status` is a valid out pointer.
                let r = unsafe { libc::waitpid(pid, &mut status, libc::WNOHANG) };
                // 0: our child, still dying; -1 (ECHILD): not ours or already reaped.
                r == 0
            });
            if !left.is_empty() {
                std::thread::sleep(Duration::from_millis(5));
            }
        }
    }
    #[cfg(not(unix))]
    let _ = pids;
}
