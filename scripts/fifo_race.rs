//! The FIFO-swap race of the pre-fix `read_text` (stat by path, then open by path), alone: a thread
//! swaps a file and a pipe at one path while another reads it. `rustc -O scripts/fifo_race.rs -o /tmp/race
//! && /tmp/race 200000` prints HANG when an open blocked on the pipe (the old code), else the count.
//! tests/integration/reliability.rs (a_file_swapped_for_a_pipe_never_hangs_a_read) runs the same swapper
//! against pcsim's read_text.
use std::io::Read;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
fn old_read(path: &std::path::Path) -> Result<String, String> {
    let meta = std::fs::metadata(path).map_err(|e| e.to_string())?;
    if !meta.is_file() { return Err("special".into()); }
    let mut f = std::fs::File::open(path).map_err(|e| e.to_string())?;
    let mut s = String::new();
    f.read_to_string(&mut s).map_err(|e| e.to_string())?;
    Ok(s)
}
fn main() {
    let dir = std::env::temp_dir().join(format!("race18-{}", std::process::id()));
    let _ = std::fs::create_dir_all(&dir);
    let path = dir.join("s.toml"); let file = dir.join("file"); let fifo = dir.join("fifo");
    std::fs::write(&file, "x").unwrap();
    std::process::Command::new("mkfifo").arg(&fifo).status().unwrap();
    std::fs::copy(&file, &path).unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let swaps = Arc::new(AtomicU64::new(0));
    let (s2, p2, f2, q2, w2) = (stop.clone(), path.clone(), file.clone(), fifo.clone(), swaps.clone());
    let sw = std::thread::spawn(move || { let mut i = 0u64; while !s2.load(Ordering::Relaxed) {
        let src = if i % 2 == 0 { &q2 } else { &f2 }; let tmp = p2.with_extension(format!("swap{i}"));
        if std::fs::hard_link(src, &tmp).is_ok() { let _ = std::fs::rename(&tmp, &p2); } i += 1; w2.store(i, Ordering::Relaxed); } });
    let n: u64 = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(3000);
    let (tx, rx) = std::sync::mpsc::channel();
    let p3 = path.clone();
    std::thread::spawn(move || { for i in 0..n { let _ = old_read(&p3); let _ = tx.send(i); } });
    let t0 = std::time::Instant::now();
    let mut last = 0;
    loop { match rx.recv_timeout(std::time::Duration::from_secs(3)) {
        Ok(i) => { last = i; if i + 1 == n { println!("no hang in {n} reads, {:?}, {} swaps", t0.elapsed(), swaps.load(Ordering::Relaxed)); break; } }
        Err(_) => { println!("HANG after {} reads, {:?}", last + 1, t0.elapsed()); break; } } }
    stop.store(true, Ordering::Relaxed); let _ = sw.join();
    let _ = std::fs::OpenOptions::new().write(true).open(&fifo);
    let _ = std::fs::remove_dir_all(&dir);
    std::process::exit(0);
}
