//! Writing a report directory whole or not at all: every file goes into a temporary
//! directory beside the target (same parent, so the final rename stays on one file
//! system), which replaces the target only when the report is complete. An interrupted or
//! failed run leaves the previous report (or nothing) in place, never new plots without
//! their `report.md`. Creating the temporary directory up front is also the check that
//! the target is writable, before any work.
//!
//! A run stopped by a signal does not unwind, so `Drop` cannot clean up: [`Abandon`] lets
//! another thread (the CLI's signal watcher) remove the temporary directory. It and
//! [`StagedDir::commit`] take the same lock, so a report is either committed whole or
//! abandoned whole, never both, and a commit after an abandon fails.

use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

/// Where a staged report stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    Writing,
    Committed,
    Abandoned,
}

/// A report directory being written.
#[derive(Debug)]
pub struct StagedDir {
    target: PathBuf,
    staging: PathBuf,
    done: bool,
    phase: Arc<Mutex<Phase>>,
}

/// Removes a [`StagedDir`]'s temporary directory from another thread (module docs).
#[derive(Clone, Debug)]
pub struct Abandon {
    staging: PathBuf,
    phase: Arc<Mutex<Phase>>,
}

impl Abandon {
    /// Removes the temporary directory unless the report was committed; afterwards a
    /// commit fails. Returns whether the report had been committed (then nothing is
    /// removed). Files another thread is still writing there may race with the removal:
    /// it is retried a few times.
    pub fn abandon(&self) -> bool {
        // A panic elsewhere while holding the lock leaves a valid Phase: use it.
        let mut phase = self.phase.lock().unwrap_or_else(PoisonError::into_inner);
        if *phase == Phase::Committed {
            return true;
        }
        *phase = Phase::Abandoned;
        for _ in 0..5 {
            match std::fs::remove_dir_all(&self.staging) {
                Err(e) if e.kind() != io::ErrorKind::NotFound => {
                    std::thread::sleep(std::time::Duration::from_millis(10));
                }
                _ => break,
            }
        }
        false
    }
}

fn sibling(target: &Path, tag: &str) -> io::Result<PathBuf> {
    let name = target.file_name().ok_or_else(|| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            "the output directory has no name",
        )
    })?;
    let parent = match target.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    Ok(parent.join(format!(
        ".{}.{tag}{}",
        name.to_string_lossy(),
        std::process::id()
    )))
}

/// The parent directory of `target` when it does not exist (`None` when it does, or when
/// `target` has none): the report creates its `--out` directory but never the directories
/// above it, as `--output` of every command needs its file's directory to exist. A
/// mistyped parent is refused instead of built, and nothing is left behind to remove.
pub fn missing_parent(target: &Path) -> Option<PathBuf> {
    let parent = match target.parent() {
        Some(p) if p.as_os_str().is_empty() => Path::new("."),
        Some(p) => p,
        None => return None,
    };
    (!parent.exists()).then(|| parent.to_path_buf())
}

/// Removes `.NAME.tmpPID` / `.NAME.oldPID` directories beside `target` left by runs that
/// were killed (their process no longer exists), so interrupts do not pile them up.
fn remove_stale(parent: &Path, target: &Path) {
    let Some(name) = target.file_name().map(|n| n.to_string_lossy().into_owned()) else {
        return;
    };
    let Ok(entries) = std::fs::read_dir(parent) else {
        return;
    };
    for e in entries.flatten() {
        let file = e.file_name().to_string_lossy().into_owned();
        let pid = [".tmp", ".old"].iter().find_map(|tag| {
            file.strip_prefix(&format!(".{name}{tag}"))
                .and_then(|p| p.parse::<u32>().ok())
        });
        if let Some(pid) = pid {
            if !Path::new(&format!("/proc/{pid}")).exists() {
                let _ = std::fs::remove_dir_all(e.path());
            }
        }
    }
}

/// The SVG files a report's Markdown refers to: the targets of its images and links
/// (`![title](file.svg)`, `[text](file.svg)`) that are plain file names ending in `.svg`
/// (no directory part: a report refers only to plots beside it).
pub fn referenced_svgs(markdown: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = markdown;
    while let Some(at) = rest.find("](") {
        rest = &rest[at + 2..];
        let Some(end) = rest.find(')') else { break };
        let target = rest[..end].trim();
        let target = target
            .strip_prefix('<')
            .and_then(|t| t.strip_suffix('>'))
            .unwrap_or(target);
        if target.ends_with(".svg")
            && target.len() > ".svg".len()
            && !target.contains('/')
            && !target.contains(char::is_whitespace)
            && !out.iter().any(|t| t == target)
        {
            out.push(target.to_string());
        }
        rest = &rest[end..];
    }
    out
}

/// Whether `dir` may be replaced by a new report: it is empty, or it is a previous report
/// (a `report.md` whose first line is the report's title, `# futexhash report`, and
/// nothing but the regular files that report wrote: `report.md`, `report.json` and the
/// `*.svg` its `report.md` refers to, [`referenced_svgs`]). Otherwise the error names the
/// first entry that is not the report's: an SVG the report does not refer to is the
/// user's, and would be deleted with the old report.
pub fn previous_report(dir: &Path) -> io::Result<()> {
    let mut entries = Vec::new();
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let name = entry.file_name().to_string_lossy().into_owned();
        entries.push((name, entry.file_type()?.is_file()));
    }
    if entries.is_empty() {
        return Ok(());
    }
    // A report.md of futexhash's own: its first line is the report's title (a user's
    // folder with a README-like report.md and diagrams is not a report).
    let markdown = entries
        .iter()
        .any(|(n, f)| *f && n == "report.md")
        .then(|| std::fs::read_to_string(dir.join("report.md")).ok())
        .flatten()
        .filter(|t| t.lines().next() == Some("# futexhash report"));
    let svgs = markdown.as_deref().map(referenced_svgs).unwrap_or_default();
    // Without a report.md of ours, the old classification names what no report writes;
    // with one, the SVGs are only those it refers to.
    let ours = |name: &str, is_file: bool| {
        is_file
            && (name == "report.md"
                || name == "report.json"
                || match markdown {
                    Some(_) => svgs.iter().any(|s| s == name),
                    None => name.ends_with(".svg"),
                })
    };
    let foreign = entries
        .iter()
        .filter(|(n, f)| !ours(n, *f))
        .map(|(n, f)| (n, *f))
        .min();
    match (foreign, &markdown) {
        (None, Some(_)) => Ok(()),
        (None, None) => Err(io::Error::new(
            io::ErrorKind::AlreadyExists,
            "is a directory that is neither empty nor a previous report (no report.md whose \
             first line is '# futexhash report'): name a new or empty directory",
        )),
        (Some((f, is_file)), _) => Err(io::Error::new(
            io::ErrorKind::AlreadyExists,
            format!(
                "holds '{f}', which {}: a report replaces its directory whole, so name a new \
                 or empty directory, or a previous report's",
                if is_file && f.ends_with(".svg") {
                    "the previous report.md does not refer to"
                } else {
                    "a report does not write"
                }
            ),
        )),
    }
}

impl StagedDir {
    /// Creates the temporary directory beside the target; fails (with the OS's reason)
    /// when the target cannot be written or its parent directory does not exist (it is
    /// never created: [`missing_parent`]).
    ///
    /// An existing target must be empty or a previous report (see [`previous_report`]): a
    /// directory holding anything else is the user's and is refused, never replaced. A
    /// symlink is followed, and the directory it leads to is replaced, so the link stays.
    pub fn create(target: &Path) -> io::Result<StagedDir> {
        let resolved;
        let target = if target.is_symlink() {
            resolved = std::fs::canonicalize(target)?;
            resolved.as_path()
        } else {
            target
        };
        if target.exists() && !target.is_dir() {
            return Err(io::Error::new(
                io::ErrorKind::AlreadyExists,
                "exists and is not a directory",
            ));
        }
        if target.is_dir() {
            previous_report(target)?;
        }
        if let Some(parent) = missing_parent(target) {
            return Err(io::Error::new(
                io::ErrorKind::NotFound,
                format!("directory '{}' does not exist", parent.display()),
            ));
        }
        let staging = sibling(target, "tmp")?;
        if let Some(parent) = staging.parent() {
            remove_stale(parent, target);
        }
        let _ = std::fs::remove_dir_all(&staging);
        std::fs::create_dir(&staging)?;
        Ok(StagedDir {
            target: target.to_path_buf(),
            staging,
            done: false,
            phase: Arc::new(Mutex::new(Phase::Writing)),
        })
    }

    /// A handle that removes the temporary directory from another thread.
    pub fn abandon_handle(&self) -> Abandon {
        Abandon {
            staging: self.staging.clone(),
            phase: self.phase.clone(),
        }
    }

    /// Where to write the files now.
    pub fn path(&self) -> &Path {
        &self.staging
    }

    /// Where the files end up.
    pub fn target(&self) -> &Path {
        &self.target
    }

    /// Puts the written directory in place of the target (an existing target is moved
    /// aside first and removed after).
    pub fn commit(mut self) -> io::Result<PathBuf> {
        let phase = self.phase.clone();
        let mut phase = phase.lock().unwrap_or_else(PoisonError::into_inner);
        if *phase == Phase::Abandoned {
            self.done = true;
            return Err(io::Error::new(
                io::ErrorKind::Interrupted,
                "the report was abandoned (interrupted)",
            ));
        }
        // The user may have put files into the target while the report ran: look again,
        // under the lock, just before anything is moved.
        if self.target.is_dir() {
            previous_report(&self.target)?;
        }
        let old = sibling(&self.target, "old")?;
        let had_old = self.target.exists();
        if had_old {
            let _ = std::fs::remove_dir_all(&old);
            std::fs::rename(&self.target, &old)?;
        }
        if let Err(e) = std::fs::rename(&self.staging, &self.target) {
            if had_old {
                let _ = std::fs::rename(&old, &self.target);
            }
            return Err(e);
        }
        self.done = true;
        *phase = Phase::Committed;
        if had_old {
            let _ = std::fs::remove_dir_all(&old);
        }
        Ok(self.target.clone())
    }
}

impl Drop for StagedDir {
    /// A report that was not committed leaves nothing behind.
    fn drop(&mut self) {
        if !self.done {
            let _ = std::fs::remove_dir_all(&self.staging);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_directory_that_is_not_a_report_is_never_replaced() {
        let base = std::env::temp_dir().join(format!("fh-foreign-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&base);
        let mine = base.join("mine");
        std::fs::create_dir_all(mine.join("sub")).unwrap();
        std::fs::write(mine.join("keep.txt"), "precious").unwrap();
        let e = StagedDir::create(&mine).unwrap_err();
        assert!(e.to_string().contains("'keep.txt'"), "{e}");
        assert_eq!(
            std::fs::read_to_string(mine.join("keep.txt")).unwrap(),
            "precious"
        );
        // SVGs alone are not a report either: a report always has its report.md.
        let svgs = base.join("svgs");
        std::fs::create_dir_all(&svgs).unwrap();
        std::fs::write(svgs.join("a.svg"), "<svg/>").unwrap();
        assert!(StagedDir::create(&svgs).is_err());
        // A file the user adds while the report runs is seen at commit: nothing moves.
        let late = base.join("late");
        std::fs::create_dir_all(&late).unwrap();
        let s = StagedDir::create(&late).unwrap();
        std::fs::write(s.path().join("report.md"), "# futexhash report\nnew").unwrap();
        std::fs::write(late.join("keep.txt"), "precious").unwrap();
        assert!(s.commit().is_err());
        assert_eq!(
            std::fs::read_to_string(late.join("keep.txt")).unwrap(),
            "precious"
        );
        // An empty directory and a previous report are fine.
        let empty = base.join("empty");
        std::fs::create_dir_all(&empty).unwrap();
        StagedDir::create(&empty).unwrap();
        // A report.md that is not futexhash's: refused too.
        std::fs::write(svgs.join("report.md"), "# My notes").unwrap();
        assert!(StagedDir::create(&svgs).is_err());
        std::fs::write(
            svgs.join("report.md"),
            "# futexhash report\n\n![a](a.svg)\n",
        )
        .unwrap();
        std::fs::write(svgs.join("report.json"), "[]").unwrap();
        StagedDir::create(&svgs).unwrap();
        // A link to a report directory: the directory is replaced, the link stays.
        let link = base.join("link");
        std::os::unix::fs::symlink(&svgs, &link).unwrap();
        let s = StagedDir::create(&link).unwrap();
        std::fs::write(s.path().join("report.md"), "# futexhash report\nnew").unwrap();
        s.commit().unwrap();
        assert!(link.is_symlink());
        assert_eq!(
            std::fs::read_to_string(svgs.join("report.md")).unwrap(),
            "# futexhash report\nnew"
        );
        std::fs::remove_dir_all(&base).unwrap();
    }

    #[test]
    fn the_svgs_of_a_previous_report_are_those_its_markdown_refers_to() {
        let md = "# futexhash report\n\n![Hash cost (ns)](hash-cost.svg)\n\
                  see [the curve](<answer-slots-1.svg>) and ![again](hash-cost.svg)\n\
                  not ![x](sub/dir.svg), ![y](https://e.org/z.svg), [z](notes.md), ![](.svg)\n";
        assert_eq!(referenced_svgs(md), ["hash-cost.svg", "answer-slots-1.svg"]);

        let base = std::env::temp_dir().join(format!("fh-svgs-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&base);
        let dir = base.join("out");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("report.md"), md).unwrap();
        std::fs::write(dir.join("report.json"), "{}").unwrap();
        std::fs::write(dir.join("hash-cost.svg"), "<svg/>").unwrap();
        std::fs::write(dir.join("answer-slots-1.svg"), "<svg/>").unwrap();
        previous_report(&dir).unwrap();
        // An SVG the report does not refer to is the user's: refused, named, kept.
        std::fs::write(dir.join("extra.svg"), "mine").unwrap();
        let e = StagedDir::create(&dir).unwrap_err().to_string();
        assert!(
            e.contains("'extra.svg'") && e.contains("does not refer to"),
            "{e}"
        );
        assert_eq!(
            std::fs::read_to_string(dir.join("extra.svg")).unwrap(),
            "mine"
        );
        std::fs::remove_file(dir.join("extra.svg")).unwrap();
        // One added while the report runs is seen at commit, under the lock: nothing moves.
        let s = StagedDir::create(&dir).unwrap();
        std::fs::write(s.path().join("report.md"), "# futexhash report\nnew").unwrap();
        std::fs::write(dir.join("extra.svg"), "mine").unwrap();
        let e = s.commit().unwrap_err().to_string();
        assert!(e.contains("'extra.svg'"), "{e}");
        assert_eq!(
            std::fs::read_to_string(dir.join("extra.svg")).unwrap(),
            "mine"
        );
        assert_eq!(std::fs::read_to_string(dir.join("report.md")).unwrap(), md);
        std::fs::remove_dir_all(&base).unwrap();
    }

    #[test]
    fn a_missing_parent_is_refused_and_never_created() {
        let base = std::env::temp_dir().join(format!("fh-parent-{}", std::process::id()));
        std::fs::create_dir_all(&base).unwrap();
        let missing = base.join("missing");
        let e = StagedDir::create(&missing.join("out")).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::NotFound, "{e}");
        assert!(e.to_string().contains(&*missing.to_string_lossy()), "{e}");
        assert!(!missing.exists(), "the parent was created");
        assert_eq!(missing_parent(&missing.join("out")), Some(missing.clone()));
        // The --out directory itself, under a parent that exists, is created on commit.
        assert_eq!(missing_parent(&missing), None);
        let s = StagedDir::create(&missing).unwrap();
        s.commit().unwrap();
        assert!(missing.is_dir());
        // A bare name's parent is the working directory.
        assert_eq!(missing_parent(Path::new("report-out")), None);
        std::fs::remove_dir_all(&base).unwrap();
    }

    #[test]
    fn files_appear_only_on_commit_and_replace_the_old_report() {
        let base = std::env::temp_dir().join(format!("fh-staged-{}", std::process::id()));
        let target = base.join("out");
        std::fs::create_dir_all(&target).unwrap();
        std::fs::write(target.join("old.svg"), "old").unwrap();
        let old_md = "# futexhash report\n\n![old](old.svg)\n";
        std::fs::write(target.join("report.md"), old_md).unwrap();
        let s = StagedDir::create(&target).unwrap();
        std::fs::write(s.path().join("report.md"), "# futexhash report\nnew").unwrap();
        assert_eq!(
            std::fs::read_to_string(target.join("report.md")).unwrap(),
            old_md,
            "nothing visible before commit"
        );
        s.commit().unwrap();
        assert_eq!(
            std::fs::read_to_string(target.join("report.md")).unwrap(),
            "# futexhash report\nnew"
        );
        assert!(
            !target.join("old.svg").exists(),
            "the old report is replaced whole"
        );
        // A dropped (failed) run leaves the target as it was and no temporary directory.
        let s = StagedDir::create(&target).unwrap();
        std::fs::write(s.path().join("x.svg"), "x").unwrap();
        drop(s);
        assert!(!target.join("x.svg").exists());
        let names: Vec<_> = std::fs::read_dir(&base)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, vec![std::ffi::OsString::from("out")]);
        assert!(StagedDir::create(Path::new("/proc/fh-no/out")).is_err());
        // A killed run's directory (its pid no longer exists; pids stop at 2^22) is
        // removed by the next run; a live one's is not.
        let dead = base.join(".out.tmp999999999");
        let live = base.join(format!(".out.tmp{}", std::process::id()));
        std::fs::create_dir_all(dead.join("x")).unwrap();
        let s = StagedDir::create(&target).unwrap();
        assert!(!dead.exists(), "stale staging directory kept");
        assert_eq!(s.path(), live.as_path());
        drop(s);
        // Abandoned from another thread: the directory goes, and a later commit fails
        // and leaves the target as it was.
        let s = StagedDir::create(&target).unwrap();
        std::fs::write(s.path().join("y.svg"), "y").unwrap();
        let h = s.abandon_handle();
        assert!(!std::thread::spawn(move || h.abandon()).join().unwrap());
        assert!(!live.exists(), "abandoned staging directory kept");
        assert!(s.commit().is_err());
        assert!(target.join("report.md").exists() && !target.join("y.svg").exists());
        // After a commit, abandoning removes nothing.
        let s = StagedDir::create(&target).unwrap();
        std::fs::write(s.path().join("z.svg"), "z").unwrap();
        let h = s.abandon_handle();
        s.commit().unwrap();
        assert!(h.abandon());
        assert!(target.join("z.svg").exists());
        std::fs::remove_dir_all(&base).unwrap();
    }
}
