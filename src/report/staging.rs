//! Writing a report directory whole or not at all: every file goes into a temporary
//! directory beside the target (same parent, so the final rename stays on one file
//! system), which replaces the target only when the report is complete. An interrupted or
//! failed run leaves the previous report (or nothing) in place, never new plots without
//! their `report.md`. Creating the temporary directory up front is also the check that
//! the target is writable, before any work.

use std::io;
use std::path::{Path, PathBuf};

/// A report directory being written.
#[derive(Debug)]
pub struct StagedDir {
    target: PathBuf,
    staging: PathBuf,
    done: bool,
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

impl StagedDir {
    /// Creates the target's parent directories and the temporary directory beside it;
    /// fails (with the OS's reason) when the target cannot be written.
    pub fn create(target: &Path) -> io::Result<StagedDir> {
        if target.exists() && !target.is_dir() {
            return Err(io::Error::new(
                io::ErrorKind::AlreadyExists,
                "exists and is not a directory",
            ));
        }
        let staging = sibling(target, "tmp")?;
        if let Some(parent) = staging.parent() {
            std::fs::create_dir_all(parent)?;
            remove_stale(parent, target);
        }
        let _ = std::fs::remove_dir_all(&staging);
        std::fs::create_dir(&staging)?;
        Ok(StagedDir {
            target: target.to_path_buf(),
            staging,
            done: false,
        })
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
    fn files_appear_only_on_commit_and_replace_the_old_report() {
        let base = std::env::temp_dir().join(format!("fh-staged-{}", std::process::id()));
        let target = base.join("out");
        std::fs::create_dir_all(&target).unwrap();
        std::fs::write(target.join("old.svg"), "old").unwrap();
        let s = StagedDir::create(&target).unwrap();
        std::fs::write(s.path().join("report.md"), "new").unwrap();
        assert!(
            !target.join("report.md").exists(),
            "nothing visible before commit"
        );
        s.commit().unwrap();
        assert_eq!(
            std::fs::read_to_string(target.join("report.md")).unwrap(),
            "new"
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
        std::fs::remove_dir_all(&base).unwrap();
    }
}
