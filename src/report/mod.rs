//! Report layer: the renderers of `run` ([`run_table`], [`run_csv`], [`to_json`]), the charts of
//! every report (PNG and SVG), the report documents of run, compare, whatif and advise
//! ([`run_document`] and the others, HTML or Markdown: see [`document`]), dollars as pcsim prints
//! them ([`usd`]) and atomic file output ([`write_atomic`]). Renders what the simulation and analysis layers computed; computes no figures
//! of its own (a chart's parts come from the prices each result was billed at). The formatting
//! primitives (dollars, CSV fields, tables) live in `base::text` so the analyses can use them too.

mod advise;
#[cfg(feature = "cli")]
pub(crate) mod bench;
#[cfg(feature = "cli")]
mod calibrate;
pub mod chart;
mod compare;
#[cfg(feature = "cli")]
pub(crate) mod config;
#[cfg(feature = "cli")]
mod counterfactual;
pub(crate) mod csv;
#[cfg(feature = "cli")]
mod diff;
pub mod document;
// Also without the command line: the Python package prints explain's table and CSV.
#[cfg_attr(not(feature = "cli"), allow(dead_code))]
pub(crate) mod explain;
#[cfg(feature = "cli")]
pub(crate) mod fit;
#[cfg(feature = "cli")]
pub(crate) mod fitted_scenario;
pub(crate) mod json;
#[cfg(feature = "cli")]
pub(crate) mod models;
#[cfg(feature = "cli")]
pub(crate) mod replay;
mod reports;
pub(crate) mod scenario_file;
pub(crate) mod table;
#[cfg(feature = "cli")]
mod tools;
#[cfg_attr(not(feature = "cli"), allow(dead_code))]
pub(crate) mod usagelog;
mod whatif;
pub(crate) use crate::base::terminal;
#[cfg(feature = "cli")]
pub(crate) use reports::diff_document;
pub use reports::{advise_document, compare_document, run_document, whatif_document};
pub(crate) use reports::{provenance, report_charts, table};

use std::io::Write;
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::sim::simulate::RunReport;

/// What `pcsim explain --format table` prints for `explanation`: one row per call with its causes,
/// then the summary (causes ranked by dollars, the simulated fixes).
pub fn explain_table(explanation: &crate::analysis::explain::Explanation) -> String {
    format!(
        "{}\n{}",
        explain::explain_calls(explanation),
        explain::explain_summary(explanation)
    )
}

/// What `pcsim explain --format csv` prints for `explanation`: one row per call.
pub fn explain_csv(explanation: &crate::analysis::explain::Explanation) -> String {
    explain::explain_csv(explanation)
}

/// What `pcsim run --format table` prints for `report`: the totals per model and strategy (with the
/// Monte Carlo figures when it has several runs) and the totals per session; `per_call` adds the
/// table of every call (`--calls`).
pub fn run_table(report: &RunReport, per_call: bool) -> String {
    let mut text = table::run_summary(report);
    text.push_str(&table::per_session(report));
    if per_call {
        text.push_str(&table::run_calls(report));
    }
    text
}

/// What `pcsim run --format csv` prints for `report`: one row per simulated call (the columns are
/// listed in the README).
pub fn run_csv(report: &RunReport) -> String {
    csv::run_calls(report)
}

/// Pretty JSON of any report, as `--format json` prints it (stable keys: see the README), with a
/// trailing newline.
pub fn to_json<T: serde::Serialize>(value: &T) -> Result<String> {
    json::to_json(value)
}

pub(crate) use json::write_json;

/// Writes a file atomically: a temporary file in the same folder, then a rename, so a reader never
/// sees a half-written report and an existing file is replaced whole or not at all. Only a regular
/// file (or nothing) is replaced; in the `pcsim` program, never a file it read as input.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    write_atomic_with(path, |f| f.write_all(bytes))
}

/// Like [`write_atomic`], with the content streamed by `write` (large reports need not be built in
/// memory first). If `write` fails or panics, the temporary file is removed and an existing file at
/// `path` keeps its old content; a replaced file keeps its permissions.
pub fn write_atomic_with(
    path: &Path,
    write: impl FnOnce(&mut std::io::BufWriter<std::fs::File>) -> std::io::Result<()>,
) -> Result<()> {
    let mut write = Some(write);
    write_members(&[path.to_path_buf()], &mut |_, f| match write.take() {
        Some(w) => w(f),
        None => Ok(()),
    })
}

/// Writes a set of report files into `dir` as a whole: every member is first written to a temporary
/// file in `dir` (created exclusively, never through a symbolic link), and only when all of them are
/// complete are they renamed into place; should a rename fail, the members already renamed are put
/// back, so a failure leaves the old set untouched, and the error says so. Refused before anything
/// is written: a member whose path holds anything but a regular file (a device such as `/dev/null`, a
/// pipe, a socket, a symbolic link, a folder), or one of the run's inputs
/// ([`crate::base::files::input_at`]).
pub(crate) fn write_set(dir: &Path, files: &[(&str, &[u8])]) -> Result<Vec<PathBuf>> {
    let paths: Vec<PathBuf> = files.iter().map(|(n, _)| dir.join(n)).collect();
    write_members(&paths, &mut |i, f| f.write_all(files[i].1))?;
    Ok(paths)
}

fn io(action: &'static str, p: &Path) -> impl FnOnce(std::io::Error) -> Error {
    let p = p.to_path_buf();
    move |source| Error::Io {
        path: p,
        action,
        source,
    }
}

/// Checks up front that a report may be written at `path` (see [`write_set`] for what is refused),
/// so a command can refuse before its work rather than after it.
pub(crate) fn check_output_path(path: &Path) -> Result<()> {
    check_target(path).map(|_| ())
}

/// Refuses a target that pcsim must not replace; `Ok(true)` when a regular file exists there.
fn check_target(path: &Path) -> Result<bool> {
    let shown = path.display().to_string();
    let meta = match std::fs::symlink_metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(false),
        Err(e) => return Err(io("cannot inspect output path", path)(e)),
    };
    let t = meta.file_type();
    if t.is_dir() {
        return Err(Error::invalid(
            shown,
            "output path",
            "is a folder; a report cannot replace it",
        ));
    }
    if t.is_symlink() {
        return Err(Error::invalid(
            shown,
            "output path",
            "is a symbolic link; pcsim replaces only regular files (remove the link or choose another path)",
        ));
    }
    if !t.is_file() {
        return Err(Error::invalid(
            shown,
            "output path",
            "is a device, pipe or socket, not a regular file; pcsim will not replace it (omit the output flag to print to standard output)",
        ));
    }
    if let Some(input) = crate::base::files::input_at(path) {
        return Err(Error::invalid(
            shown,
            "output path",
            format!(
                "is `{}`, one of this run's input files; pcsim never writes over its inputs (choose another output path)",
                input.display()
            ),
        ));
    }
    Ok(true)
}

/// A side name in the folder of `path`: `.<name, shortened>.<kind>-<pid>-<n>`.
fn side_path(path: &Path, kind: &str) -> PathBuf {
    use std::sync::atomic::{AtomicU64, Ordering};
    // Process id plus a counter: two writers in one process (threads) never share a side file.
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "out".into());
    let name = crate::base::files::shorten_name(&name, 60);
    parent_dir(path).join(format!(
        ".{name}.{kind}-{}-{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    ))
}

fn parent_dir(path: &Path) -> &Path {
    path.parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
}

/// Test hook: milliseconds to wait after every temporary file is complete and before the renames,
/// so a test can interrupt a run at that point. Read only from the environment of the process.
fn pause_before_rename() {
    if let Some(ms) = std::env::var_os("PCSIM_TEST_PAUSE_BEFORE_RENAME_MS")
        .and_then(|v| v.to_str().and_then(|v| v.parse::<u64>().ok()))
    {
        // Said on stderr so the test interrupts at this point, not after guessing from file counts.
        eprintln!("pcsim test hook: every temporary file is complete; pausing before the renames");
        std::thread::sleep(std::time::Duration::from_millis(ms.min(60_000)));
    }
}

/// The core of [`write_atomic_with`] and [`write_set`]: `write(i, file)` fills member `i`.
// Over 120 lines: the atomic write of a set of files in its numbered steps (check, back up, write
// temporaries, rename, undo the renamed members on a failure); the steps share the temporaries and
// backups the undo needs.
fn write_members(
    paths: &[PathBuf],
    write: &mut dyn FnMut(usize, &mut std::io::BufWriter<std::fs::File>) -> std::io::Result<()>,
) -> Result<()> {
    use crate::base::files::TempFile;
    // Two members with one name would silently keep only the last.
    let mut seen = std::collections::HashSet::new();
    for p in paths {
        if !seen.insert(p) {
            return Err(Error::Unsupported(format!(
                "{}: two reports of this run would have this file name; nothing was written",
                p.display()
            )));
        }
    }
    let mut existed = Vec::with_capacity(paths.len());
    for p in paths {
        existed.push(check_target(p)?);
    }
    let unchanged = |paths: &[PathBuf]| {
        if paths.len() == 1 {
            "the file is unchanged".to_string()
        } else {
            format!(
                "no file of the set of {} was changed ({})",
                paths.len(),
                names(paths)
            )
        }
    };
    // 1. Every member to its temporary file (a write error, a full disk: nothing renamed yet).
    let mut temps: Vec<TempFile> = Vec::with_capacity(paths.len());
    for (i, p) in paths.iter().enumerate() {
        let tmp_path = side_path(p, "tmp");
        let (tmp, file) = TempFile::create(tmp_path.clone()).map_err(|e| {
            set_error(
                io("cannot create a temporary file for", p)(e),
                &unchanged(paths),
            )
        })?;
        let mut out = std::io::BufWriter::new(file);
        // Errors name the report, not its temporary file (issue 29: `.x.tmp-PID-0` was named).
        write(i, &mut out).map_err(|e| set_error(io("cannot write", p)(e), &unchanged(paths)))?;
        let file = out
            .into_inner()
            .map_err(|e| set_error(io("cannot write", p)(e.into_error()), &unchanged(paths)))?;
        file.sync_all()
            .map_err(|e| set_error(io("cannot write", p)(e), &unchanged(paths)))?;
        if existed[i] {
            if let Ok(meta) = std::fs::metadata(p) {
                // Keep the permissions of the file being replaced (best effort).
                let _ = file.set_permissions(meta.permissions());
            }
        }
        temps.push(tmp);
    }
    // 2. With several members, a hard link to each old file, so a rename that fails midway can be
    // undone. A file that cannot be linked (no hard links on the file system, an immutable file) is
    // renamed first: if its rename fails, nothing has changed yet.
    let mut backups: Vec<Option<TempFile>> = (0..paths.len()).map(|_| None).collect();
    if paths.len() > 1 {
        for (i, p) in paths.iter().enumerate() {
            if existed[i] {
                let b = side_path(p, "old");
                if std::fs::hard_link(p, &b).is_ok() {
                    let slot = TempFile::adopt(b);
                    backups[i] = Some(slot);
                }
            }
        }
    }
    let mut order: Vec<usize> = (0..paths.len()).collect();
    order.sort_by_key(|&i| existed[i] && backups[i].is_some());
    pause_before_rename();
    // 3. The renames.
    let mut temps: Vec<Option<TempFile>> = temps.into_iter().map(Some).collect();
    let mut done: Vec<usize> = Vec::new();
    for &i in &order {
        let Some(tmp) = temps[i].take() else { continue };
        if let Err(e) = std::fs::rename(tmp.path(), &paths[i]) {
            let cause = io("cannot replace", &paths[i])(e);
            // Undo the members already renamed.
            let mut new_left = Vec::new();
            for &j in done.iter().rev() {
                let restored = match backups[j].take() {
                    Some(b) => {
                        let ok = std::fs::rename(b.path(), &paths[j]).is_ok();
                        if ok {
                            b.keep();
                        }
                        ok
                    }
                    None if !existed[j] => std::fs::remove_file(&paths[j]).is_ok(),
                    None => false,
                };
                if !restored {
                    new_left.push(paths[j].clone());
                }
            }
            let state = if new_left.is_empty() {
                unchanged(paths)
            } else {
                format!(
                    "the set is mixed: {} new, the others old or absent",
                    names(&new_left)
                )
            };
            return Err(set_error(cause, &state));
        }
        tmp.keep();
        done.push(i);
    }
    // 4. Old links removed when their TempFile drops; the folder entry made durable (best effort).
    drop(backups);
    if let Some(p) = paths.first() {
        if let Ok(d) = std::fs::File::open(parent_dir(p)) {
            let _ = d.sync_all();
        }
    }
    Ok(())
}

fn names(paths: &[PathBuf]) -> String {
    paths
        .iter()
        .map(|p| {
            p.file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default()
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// An I/O error of a set write, with what became of the set.
fn set_error(e: Error, state: &str) -> Error {
    match e {
        Error::Io {
            path,
            action,
            source,
        } => Error::Io {
            path,
            action,
            source: std::io::Error::new(source.kind(), format!("{source}; {state}")),
        },
        other => other,
    }
}

/// Checks up front that `dir` exists (creating it if needed) and can be written, so no simulation
/// work is wasted before an unwritable output folder is discovered. The probe file is created
/// exclusively and never through a symbolic link, so a link planted in a shared folder cannot make
/// pcsim truncate another file.
#[doc(hidden)]
pub fn ensure_writable_dir(dir: &Path) -> Result<()> {
    std::fs::create_dir_all(dir).map_err(|source| Error::Io {
        path: dir.to_path_buf(),
        action: "cannot create output folder",
        source,
    })?;
    let mut last = None;
    for attempt in 0..8u32 {
        let probe = dir.join(format!(
            ".pcsim-write-test-{}-{attempt}",
            std::process::id()
        ));
        match crate::base::files::TempFile::create(probe) {
            Ok((tmp, file)) => {
                drop(file);
                drop(tmp);
                return Ok(());
            }
            // Something (perhaps a planted link) holds the name: try another, never open it.
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => last = Some(e),
            Err(e) => {
                return Err(Error::Io {
                    path: dir.to_path_buf(),
                    action: "cannot write to output folder",
                    source: e,
                })
            }
        }
    }
    Err(Error::Io {
        path: dir.to_path_buf(),
        action: "cannot write to output folder",
        source: last.unwrap_or_else(|| std::io::Error::other("no free probe name")),
    })
}

pub use crate::base::text::usd;

/// A share of Monte Carlo runs in whole percent (`37%`), as every report prints it.
pub(crate) fn share_text(x: f64) -> String {
    format!("{:.0}%", x * 100.0)
}

/// Skips for a terminal, grouped: one line per (model, problem) listing the strategies it stopped,
/// e.g. `skipped on kimi-k3: explicit:tools, explicit:tools+system: the model offers no explicit
/// caching`. The JSON keeps one entry per pair with the full reason.
pub(crate) fn skip_lines(skips: &[crate::analysis::Skip]) -> Vec<String> {
    let mut groups: Vec<(String, String, Vec<String>)> = Vec::new();
    for s in skips {
        // The reason starts with the (canonical) strategy, already named at the start of the line.
        let suffix = format!(" (model `{}`)", s.model);
        let mut problem = s.reason.as_str();
        if let Some(rest) = problem.strip_prefix("strategy `") {
            if let Some((_, p)) = rest.split_once("`: ") {
                problem = p;
            }
        }
        let problem = problem.strip_suffix(&suffix).unwrap_or(problem).to_string();
        match groups
            .iter_mut()
            .find(|(m, p, _)| *m == s.model && *p == problem)
        {
            Some((_, _, list)) => list.push(s.strategy.clone()),
            None => groups.push((s.model.clone(), problem, vec![s.strategy.clone()])),
        }
    }
    groups
        .into_iter()
        .map(|(m, p, list)| format!("skipped on {m}: {}: {p}", list.join(", ")))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::Skip;

    #[test]
    fn skip_lines_group_by_model_and_problem() {
        let skip = |m: &str, s: &str, p: &str| {
            Skip::new(
                m,
                s,
                format!("strategy `{s}`: {p} (model `{m}`)"),
                crate::sim::request::SkipKind::Unsupported,
            )
        };
        let lines = skip_lines(&[
            skip(
                "k",
                "explicit:tools",
                "the model offers no explicit caching",
            ),
            skip("k", "explicit:last", "the model offers no explicit caching"),
            skip("k", "implicit", "the model offers no implicit caching"),
            skip(
                "g",
                "explicit:tools",
                "the model offers no explicit caching",
            ),
        ]);
        assert_eq!(
            lines,
            [
                "skipped on k: explicit:tools, explicit:last: the model offers no explicit caching",
                "skipped on k: implicit: the model offers no implicit caching",
                "skipped on g: explicit:tools: the model offers no explicit caching",
            ]
        );
    }
}
