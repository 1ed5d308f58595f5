//! Outputs onto what is already there (issue 26): a device, FIFO or `/dev/stdout` is
//! written in place and stays what it was; a symlink stays a link and the file it points
//! to gets the new content; a regular file is replaced whole. The devices are private
//! copies made with mknod(2), and `/dev/stdout`'s link a copy, in a temporary directory:
//! the system's own `/dev/null` and `/dev/stdout` are not put at risk by tests that must
//! fail on code that replaces them (the real `/dev/null`, `/dev/full` are used only where
//! the test may not make its own device, and only through paths that code cannot rename
//! over without root).

use std::fs;
use std::io::{Read, Write};
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

fn tmpdir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("fh-outputs-{name}-{}", std::process::id()));
    let _ = fs::remove_dir_all(&d);
    fs::create_dir_all(&d).unwrap();
    d
}

/// `futexhash hash --algo jhash2 --output OUT private:1:0x1000`: one small table.
fn hash_into(out: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_futexhash"))
        .args(["hash", "--algo", "jhash2", "--format", "csv", "--output"])
        .arg(out)
        .arg("private:1:0x1000")
        .output()
        .expect("run futexhash")
}

/// What the same command prints on stdout: the content every output must receive.
fn expected() -> Vec<u8> {
    let o = Command::new(env!("CARGO_BIN_EXE_futexhash"))
        .args([
            "hash",
            "--algo",
            "jhash2",
            "--format",
            "csv",
            "private:1:0x1000",
        ])
        .output()
        .unwrap();
    assert!(o.status.success());
    assert!(o.stdout.starts_with(b"key,algo,hash\n"));
    o.stdout
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// The names in `dir`, sorted (to see that no temporary file was left behind).
fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

/// A character device node `name` in `dir` with the given major/minor, or `None` when this
/// process may not make one (not root).
fn char_device(dir: &Path, name: &str, major: u32, minor: u32) -> Option<PathBuf> {
    let p = dir.join(name);
    let c = std::ffi::CString::new(p.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: `c` is a NUL-terminated path; mknod(2) only reads it.
    let rc = unsafe {
        libc::mknod(
            c.as_ptr(),
            libc::S_IFCHR | 0o666,
            libc::makedev(major, minor),
        )
    };
    (rc == 0).then_some(p)
}

#[test]
fn a_fifo_is_written_into_and_stays_a_fifo() {
    let dir = tmpdir("fifo");
    let fifo = dir.join("out.fifo");
    let c = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: `c` is a NUL-terminated path; mkfifo(3) only reads it.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    // The reader: opened read-write and non-blocking, so neither its open nor futexhash's
    // waits for the other, and the bytes (far less than a pipe's 64 KiB) wait in the FIFO
    // until read after futexhash has exited. No timing is involved.
    let mut reader = fs::OpenOptions::new()
        .read(true)
        .write(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(&fifo)
        .unwrap();
    let o = hash_into(&fifo);
    assert!(o.status.success(), "{}", stderr(&o));
    let mut got = vec![0u8; 65536];
    let n = match reader.read(&mut got) {
        Ok(n) => n,
        Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => 0,
        Err(e) => panic!("{e}"),
    };
    got.truncate(n);
    assert_eq!(got, expected(), "the FIFO's reader got the output");
    assert!(fs::symlink_metadata(&fifo).unwrap().file_type().is_fifo());
    assert_eq!(names(&dir), ["out.fifo"]);
    let _ = fs::remove_dir_all(&dir);
}

#[test]
fn a_symlink_stays_a_link_and_its_target_gets_the_content() {
    let dir = tmpdir("link");
    let (links, files) = (dir.join("links"), dir.join("files"));
    fs::create_dir_all(&links).unwrap();
    fs::create_dir_all(&files).unwrap();
    let target = files.join("real.csv");
    fs::write(&target, "old content\n").unwrap();

    // A relative link into another directory, to an existing file.
    let link = links.join("out.csv");
    std::os::unix::fs::symlink("../files/real.csv", &link).unwrap();
    let o = hash_into(&link);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert_eq!(
        fs::read_link(&link).unwrap(),
        Path::new("../files/real.csv")
    );
    assert_eq!(fs::read(&target).unwrap(), expected());
    assert_eq!(names(&links), ["out.csv"]);
    assert_eq!(
        names(&files),
        ["real.csv"],
        "no temporary file left beside the target"
    );

    // A link to a link to a file that does not exist yet: the file is created there.
    let hop = links.join("hop");
    std::os::unix::fs::symlink(files.join("new.csv"), &hop).unwrap();
    let link2 = dir.join("out2.csv");
    std::os::unix::fs::symlink(&hop, &link2).unwrap();
    let o = hash_into(&link2);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        fs::symlink_metadata(&link2)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert!(fs::symlink_metadata(&hop).unwrap().file_type().is_symlink());
    assert_eq!(fs::read(files.join("new.csv")).unwrap(), expected());

    // A link to a directory is refused before any work, and left alone.
    let to_dir = dir.join("to-dir");
    std::os::unix::fs::symlink(&files, &to_dir).unwrap();
    let o = hash_into(&to_dir);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(stderr(&o).lines().count(), 1, "{}", stderr(&o));
    assert!(stderr(&o).contains("is a directory"), "{}", stderr(&o));
    assert!(
        fs::symlink_metadata(&to_dir)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    let _ = fs::remove_dir_all(&dir);
}

#[test]
fn the_null_device_stays_a_device() {
    let dir = tmpdir("null");
    // The null device is major 1, minor 3 (Documentation/admin-guide/devices.txt).
    let null = char_device(&dir, "null", 1, 3).unwrap_or_else(|| PathBuf::from("/dev/null"));
    let o = hash_into(&null);
    assert!(o.status.success(), "{}", stderr(&o));
    let m = fs::symlink_metadata(&null).unwrap();
    assert!(m.file_type().is_char_device(), "{null:?} was replaced");
    assert_eq!(fs::read(&null).unwrap(), b"", "still the null device");
    // The real one, through its path and through a symlink to it.
    let link = dir.join("to-null");
    std::os::unix::fs::symlink("/dev/null", &link).unwrap();
    let o = hash_into(&link);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert!(
        fs::metadata("/dev/null")
            .unwrap()
            .file_type()
            .is_char_device()
    );
    let _ = fs::remove_dir_all(&dir);
}

#[test]
fn a_full_device_is_refused_with_one_line_and_stays_a_device() {
    let dir = tmpdir("full");
    // The full device is major 1, minor 7: every write fails with ENOSPC.
    let full = char_device(&dir, "full", 1, 7).unwrap_or_else(|| PathBuf::from("/dev/full"));
    let o = hash_into(&full);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains(&full.display().to_string()), "{err}");
    assert!(err.contains("No space left on device"), "{err}");
    assert!(
        fs::symlink_metadata(&full)
            .unwrap()
            .file_type()
            .is_char_device()
    );
    let _ = fs::remove_dir_all(&dir);
}

#[test]
fn a_link_to_proc_self_fd_1_writes_into_the_pipe_it_leads_to() {
    // `/dev/stdout`'s own link (`/proc/self/fd/1`), made in the temporary directory so that
    // code which renames over links damages only this copy, not the system's. futexhash's
    // stdout is the pipe `output()` reads: the output must arrive there, the link stay.
    let dir = tmpdir("stdout");
    let link = dir.join("stdout");
    std::os::unix::fs::symlink("/proc/self/fd/1", &link).unwrap();
    let o = hash_into(&link);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(o.stdout, expected());
    assert!(
        fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert_eq!(names(&dir), ["stdout"]);
    let _ = fs::remove_dir_all(&dir);
}

#[test]
fn a_regular_file_is_replaced_whole() {
    let dir = tmpdir("regular");
    let p = dir.join("out.csv");
    fs::write(
        &p,
        "a much longer old content that must not survive in any part\n",
    )
    .unwrap();
    let o = hash_into(&p);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(fs::read(&p).unwrap(), expected());
    assert_eq!(names(&dir), ["out.csv"]);
    let _ = fs::remove_dir_all(&dir);
}

/// `report --out DIR` on a directory of the user's (a file and a subdirectory that no
/// report writes): refused before any work with one line naming the file, exit 2, and the
/// directory untouched. The report replaces its directory whole, so before this fix the
/// user's files were deleted (issue 26).
#[test]
fn report_never_replaces_a_directory_that_is_not_a_report() {
    let d = tmpdir("report-foreign");
    let mine = d.join("mine");
    fs::create_dir_all(mine.join("sub")).unwrap();
    fs::write(mine.join("keep.txt"), "precious").unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_futexhash"))
        .args(["report", "--quick", "--out"])
        .arg(&mine)
        .output()
        .expect("run futexhash");
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("'keep.txt'"), "{err}");
    assert_eq!(
        fs::read_to_string(mine.join("keep.txt")).unwrap(),
        "precious"
    );
    assert_eq!(names(&mine), ["keep.txt", "sub"]);
    assert_eq!(names(&d), ["mine"]);
    fs::remove_dir_all(&d).unwrap();
}

/// `futexhash hash ... --output OUT` with its stdout sent to `stdout`.
fn hash_into_with_stdout(out: &str, stdout: fs::File) -> Output {
    Command::new(env!("CARGO_BIN_EXE_futexhash"))
        .args([
            "hash", "--algo", "jhash2", "--format", "csv", "--output", out,
        ])
        .arg("private:1:0x1000")
        .stdout(Stdio::from(stdout))
        .output()
        .expect("run futexhash")
}

/// `>> log` with `--output /dev/stdout`: the shell opened the file for append, and the
/// output must follow what the file held. Opening `/dev/stdout` anew (a new open file at
/// offset 0, without `O_APPEND`) wrote over the first line.
#[test]
fn output_to_dev_stdout_appends_to_a_file_opened_for_append() {
    let dir = tmpdir("append");
    let log = dir.join("app.txt");
    for out in ["/dev/stdout", "/proc/self/fd/1", "/dev/fd/1"] {
        fs::write(&log, "precious\n").unwrap();
        let f = fs::OpenOptions::new().append(true).open(&log).unwrap();
        let o = hash_into_with_stdout(out, f);
        assert!(o.status.success(), "{out}: {}", stderr(&o));
        let mut want = b"precious\n".to_vec();
        want.extend(expected());
        assert_eq!(
            String::from_utf8_lossy(&fs::read(&log).unwrap()),
            String::from_utf8_lossy(&want),
            "{out}"
        );
    }
    let _ = fs::remove_dir_all(&dir);
}

/// `( echo before; futexhash ... --output /dev/stdout; echo after ) > f`: the three share
/// one open file (not in append mode) and its offset; each writes where the last stopped.
#[test]
fn output_to_dev_stdout_writes_at_the_shared_offset() {
    let dir = tmpdir("shared-offset");
    let p = dir.join("app2.txt");
    let mut f = fs::File::create(&p).unwrap();
    f.write_all(b"before\n").unwrap();
    let o = hash_into_with_stdout("/dev/stdout", f.try_clone().unwrap());
    assert!(o.status.success(), "{}", stderr(&o));
    f.write_all(b"after\n").unwrap();
    let mut want = b"before\n".to_vec();
    want.extend(expected());
    want.extend(b"after\n");
    assert_eq!(
        String::from_utf8_lossy(&fs::read(&p).unwrap()),
        String::from_utf8_lossy(&want)
    );
    let _ = fs::remove_dir_all(&dir);
}

/// `--plot /dev/stdout` goes through the same descriptor: the SVG follows the first line.
#[test]
fn plot_to_dev_stdout_appends_to_a_file_opened_for_append() {
    let dir = tmpdir("plot-append");
    let log = dir.join("plot.txt");
    fs::write(&log, "precious\n").unwrap();
    let f = fs::OpenOptions::new().append(true).open(&log).unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_futexhash"))
        .args([
            "dist",
            "--algo",
            "jhash2",
            "--keys",
            "100",
            "--buckets",
            "16",
            "--output",
            "/dev/null",
            "--plot",
            "/dev/stdout",
        ])
        .stdout(Stdio::from(f))
        .output()
        .expect("run futexhash");
    assert!(o.status.success(), "{}", stderr(&o));
    let got = fs::read_to_string(&log).unwrap();
    assert!(got.starts_with("precious\n<svg"), "{got:.80}");
    assert!(got.trim_end().ends_with("</svg>"), "{got}");
    let _ = fs::remove_dir_all(&dir);
}

/// A descriptor the process does not have open is refused before any work, naming it.
#[test]
fn a_closed_descriptor_is_refused_in_one_line() {
    let o = hash_into(Path::new("/dev/fd/57"));
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("/dev/fd/57") && err.contains("not open"),
        "{err}"
    );
}

/// `chmod 600 priv.txt; futexhash ... --output priv.txt`: the new content is as private
/// as the old (the temporary file used to be created 0644 and renamed over it). As root
/// the owner and group stay too.
#[test]
fn a_replaced_file_keeps_its_permissions_and_owner() {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    let dir = tmpdir("perms");
    let p = dir.join("priv.txt");
    fs::write(&p, "old\n").unwrap();
    fs::set_permissions(&p, fs::Permissions::from_mode(0o600)).unwrap();
    // SAFETY: geteuid(2) reads no memory and cannot fail.
    let root = unsafe { libc::geteuid() } == 0;
    if root {
        std::os::unix::fs::chown(&p, Some(4242), Some(4343)).unwrap();
    }
    let o = hash_into(&p);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(fs::read(&p).unwrap(), expected());
    let m = fs::metadata(&p).unwrap();
    assert_eq!(m.mode() & 0o7777, 0o600);
    if root {
        assert_eq!((m.uid(), m.gid()), (4242, 4343));
    }
    assert_eq!(names(&dir), ["priv.txt"]);
    let _ = fs::remove_dir_all(&dir);
}

/// `report --out DIR` over a previous report holding an SVG of the user's that its
/// report.md does not show: only the SVGs a report refers to are its own (docs/report.md),
/// so the directory is refused before any work, naming the file, and stays as it was.
#[test]
fn report_never_deletes_an_svg_its_previous_report_does_not_refer_to() {
    let d = tmpdir("report-extra-svg");
    let prev = d.join("prev");
    fs::create_dir_all(&prev).unwrap();
    let md = "# futexhash report\n\n![Hash cost](hash-cost.svg)\n";
    fs::write(prev.join("report.md"), md).unwrap();
    fs::write(prev.join("hash-cost.svg"), "<svg/>").unwrap();
    fs::write(prev.join("extra.svg"), "<svg>mine</svg>").unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_futexhash"))
        .args(["report", "--quick", "--out"])
        .arg(&prev)
        .output()
        .expect("run futexhash");
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("'extra.svg'"), "{err}");
    assert_eq!(
        fs::read_to_string(prev.join("extra.svg")).unwrap(),
        "<svg>mine</svg>"
    );
    assert_eq!(fs::read_to_string(prev.join("report.md")).unwrap(), md);
    assert_eq!(names(&prev), ["extra.svg", "hash-cost.svg", "report.md"]);
    assert_eq!(names(&d), ["prev"]);
    fs::remove_dir_all(&d).unwrap();
}

/// Every writer of a user-named path gives a full device (every write fails with ENOSPC)
/// the same answer as `--output` does (docs/cli.md: an unwritable output path is bad
/// input): exit 2, one line naming the path. `keys --output`, `bench --plot`,
/// `sim calibrate --out` and `sim profile --out` exited 1.
#[test]
fn a_full_device_is_exit_2_for_every_writer() {
    let dir = tmpdir("full-every");
    let full = char_device(&dir, "full", 1, 7).unwrap_or_else(|| PathBuf::from("/dev/full"));
    let f = full.to_str().unwrap();
    let measured = dir.join("measured.csv");
    fs::write(&measured, "buckets,ops/sec\n0,1500000\n2,40000\n").unwrap();
    let m = measured.to_str().unwrap();
    let runs: [&[&str]; 5] = [
        &["keys", "--workload", "perf", "--keys", "10", "--output", f],
        &[
            "bench",
            "-t",
            "1",
            "-r",
            "0.1",
            "--output",
            "/dev/null",
            "--plot",
            f,
        ],
        &[
            "bench",
            "--workload",
            "lock",
            "-t",
            "2",
            "-r",
            "0.1",
            "--output",
            "/dev/null",
            "--plot",
            f,
        ],
        &[
            "sim",
            "calibrate",
            "--from",
            m,
            "--rows",
            "0,1",
            "--threads",
            "2",
            "--cpus",
            "2",
            "--out",
            f,
        ],
        &["sim", "profile", "--this-machine", "--out", f],
    ];
    for args in runs {
        let o = Command::new(env!("CARGO_BIN_EXE_futexhash"))
            .args(args)
            .output()
            .expect("run futexhash");
        let all = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {all}");
        // bench may first warn of a busy machine (2 shared CPUs): the error is one line.
        let err: Vec<&str> = all.lines().filter(|l| !l.contains(": warning: ")).collect();
        assert_eq!(err.len(), 1, "{args:?}: {all}");
        assert!(
            err[0].contains(&format!("'{f}'")) && err[0].contains("No space left on device"),
            "{args:?}: {all}"
        );
        assert!(
            fs::symlink_metadata(&full)
                .unwrap()
                .file_type()
                .is_char_device()
        );
    }
    let _ = fs::remove_dir_all(&dir);
}

/// A missing directory above the output is refused alike by `--output` (a file) and by
/// `report --out` (a directory), before any work, in one line naming it, and nothing is
/// created: the report used to create every missing parent of `--out`.
#[test]
fn a_missing_parent_directory_is_refused_alike_by_output_and_report_out() {
    let dir = tmpdir("no-parent");
    let missing = dir.join("missing");
    let file = missing.join("x.csv");
    let out = missing.join("report");
    let runs: [Vec<&std::ffi::OsStr>; 2] = [
        vec![
            "hash".as_ref(),
            "--algo".as_ref(),
            "jhash2".as_ref(),
            "--output".as_ref(),
            file.as_os_str(),
            "private:1:0x1000".as_ref(),
        ],
        vec![
            "report".as_ref(),
            "--quick".as_ref(),
            "--out".as_ref(),
            out.as_os_str(),
        ],
    ];
    for args in runs {
        let o = Command::new(env!("CARGO_BIN_EXE_futexhash"))
            .args(&args)
            .output()
            .expect("run futexhash");
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err}");
        assert!(
            err.contains(&format!("directory '{}' does not exist", missing.display())),
            "{args:?}: {err}"
        );
        assert!(names(&dir).is_empty(), "{args:?} left {:?}", names(&dir));
    }
    let _ = fs::remove_dir_all(&dir);
}

/// `--output same.svg --plot ./same.svg`: both are written whole, so the second replaced
/// the first and the plot was lost with exit 0. Refused before any work (no file made),
/// one line naming both flags, for every subcommand that takes both.
#[test]
fn output_and_plot_naming_one_file_are_refused() {
    let dir = tmpdir("same-file");
    let runs: [&[&str]; 3] = [
        &["dist", "--keys", "100", "--buckets", "16"],
        &["bench", "-t", "1", "-r", "0.1"],
        &["sim", "--profile", "this-vm", "-t", "2", "-b", "0,16"],
    ];
    for args in runs {
        let o = Command::new(env!("CARGO_BIN_EXE_futexhash"))
            .args(args)
            .args(["--output", "same.svg", "--plot", "./same.svg"])
            .current_dir(&dir)
            .output()
            .expect("run futexhash");
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(
            err.contains("--output 'same.svg'") && err.contains("--plot './same.svg'"),
            "{args:?}: {err}"
        );
        assert!(names(&dir).is_empty(), "{args:?}: {:?}", names(&dir));
    }
    // Different files: both written.
    let o = Command::new(env!("CARGO_BIN_EXE_futexhash"))
        .args([
            "dist",
            "--keys",
            "100",
            "--buckets",
            "16",
            "--format",
            "csv",
        ])
        .args(["--output", "d.csv", "--plot", "d.svg"])
        .current_dir(&dir)
        .output()
        .expect("run futexhash");
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(names(&dir), ["d.csv", "d.svg"]);
    let _ = fs::remove_dir_all(&dir);
}

/// A FIFO made in `dir`.
fn fifo_in(dir: &Path, name: &str) -> PathBuf {
    let fifo = dir.join(name);
    let c = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: `c` is a NUL-terminated path; mkfifo(3) only reads it.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    fifo
}

/// Runs futexhash with `args`, killing it (and failing) if it has not ended within
/// `limit`: a blocked open must fail the test, not hang it.
fn run_at_most(args: &[&std::ffi::OsStr], limit: std::time::Duration) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_futexhash"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run futexhash");
    let start = std::time::Instant::now();
    loop {
        if child.try_wait().unwrap().is_some() {
            return child.wait_with_output().unwrap();
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let o = child.wait_with_output().unwrap();
            panic!(
                "{args:?} still running after {limit:?} (blocked): {}",
                stderr(&o)
            );
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// `--output FIFO` with nobody reading it blocked forever in open(2). It is refused at
/// once instead: exit 2, one line naming the FIFO and that nothing reads it, for the
/// writers that check their output first and for one that does not (`report`'s files
/// are in a directory, so `hash`, `keys` and `bench --plot` stand for them all).
#[test]
fn a_fifo_without_a_reader_is_refused_at_once() {
    let dir = tmpdir("fifo-no-reader");
    let fifo = fifo_in(&dir, "out.fifo");
    let f = fifo.as_os_str();
    let s = std::ffi::OsStr::new;
    let runs: [Vec<&std::ffi::OsStr>; 3] = [
        vec![
            s("hash"),
            s("--algo"),
            s("jhash2"),
            s("--output"),
            f,
            s("private:1:0x1000"),
        ],
        vec![
            s("keys"),
            s("--workload"),
            s("perf"),
            s("--keys"),
            s("10"),
            s("--output"),
            f,
        ],
        vec![
            s("bench"),
            s("-t"),
            s("1"),
            s("-r"),
            s("0.05"),
            s("--output"),
            s("/dev/null"),
            s("--plot"),
            f,
        ],
    ];
    for args in runs {
        let o = run_at_most(&args, std::time::Duration::from_secs(30));
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        let lines: Vec<&str> = err.lines().filter(|l| !l.contains(": warning: ")).collect();
        assert_eq!(lines.len(), 1, "{args:?}: {err}");
        assert!(
            lines[0].contains(&format!("'{}'", fifo.display())) && lines[0].contains("reading"),
            "{args:?}: {err}"
        );
        assert!(o.stdout.is_empty(), "{args:?}");
        assert!(fs::symlink_metadata(&fifo).unwrap().file_type().is_fifo());
    }
    assert_eq!(names(&dir), ["out.fifo"]);
    let _ = fs::remove_dir_all(&dir);
}

/// With a reader that opened the FIFO for reading only (as `cat FIFO` does), the whole
/// output arrives and then the end of the data: the early open that tells "no reader"
/// apart must neither lose bytes nor end the data before them.
#[test]
fn a_fifo_with_a_reader_gets_the_whole_output_then_its_end() {
    let dir = tmpdir("fifo-reader");
    let fifo = fifo_in(&dir, "out.fifo");
    // Non-blocking so that this open does not wait for the writer; the bytes (far less
    // than a pipe's 64 KiB) wait in the FIFO until read after futexhash has exited.
    let mut reader = fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(&fifo)
        .unwrap();
    let o = run_at_most(
        &["hash", "--algo", "jhash2", "--format", "csv", "--output"]
            .map(std::ffi::OsStr::new)
            .iter()
            .copied()
            .chain([fifo.as_os_str(), std::ffi::OsStr::new("private:1:0x1000")])
            .collect::<Vec<_>>(),
        std::time::Duration::from_secs(30),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let mut got = Vec::new();
    // Every writer has closed: the data, then 0 (the end), never "would block".
    reader.read_to_end(&mut got).unwrap();
    assert_eq!(got, expected());
    let _ = fs::remove_dir_all(&dir);
}

/// `--output /proc/PID/fd/N` naming another process's descriptor opened the file anew at
/// offset 0 and wrote over what that process had written. It is now opened for appending
/// (docs/cli.md): what was there stays, the output follows it. The other process is this
/// test, holding the file open for writing as a shell's `>` would.
#[test]
fn another_process_s_descriptor_is_appended_to_never_overwritten() {
    let dir = tmpdir("other-fd");
    let log = dir.join("log");
    let before = "a line the other process wrote, longer than one hash record\n";
    fs::write(&log, before).unwrap();
    let held = fs::OpenOptions::new().write(true).open(&log).unwrap();
    let fd = std::os::fd::AsRawFd::as_raw_fd(&held);
    let path = PathBuf::from(format!("/proc/{}/fd/{fd}", std::process::id()));
    let o = hash_into(&path);
    assert!(o.status.success(), "{}", stderr(&o));
    let want = format!("{before}{}", String::from_utf8(expected()).unwrap());
    assert_eq!(fs::read_to_string(&log).unwrap(), want);
    assert!(fs::symlink_metadata(&log).unwrap().is_file());
    assert_eq!(names(&dir), ["log"]);
    drop(held);
    let _ = fs::remove_dir_all(&dir);
}

/// `futexhash sim ARGS` with its stdout sent to `stdout`.
fn sim_with_stdout(args: &[&str], stdout: fs::File) -> Output {
    Command::new(env!("CARGO_BIN_EXE_futexhash"))
        .arg("sim")
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stdout(Stdio::from(stdout))
        .output()
        .expect("run futexhash")
}

/// Defect: `--output /dev/stdout` (and plain stdout) on the full device was found only when
/// the result was written, after the work: exit 2 after a whole simulation. Refused before
/// the work, as `--output /dev/full` is: one line naming the output and `ENOSPC`'s words,
/// and nothing of the run (this sweep's only other stderr line, its note that the
/// profile's jhash2 cost was timed here, comes after the simulation).
#[test]
fn stdout_on_the_full_device_is_refused_before_the_work() {
    let dir = tmpdir("stdout-full");
    let full = char_device(&dir, "full", 1, 7).unwrap_or_else(|| PathBuf::from("/dev/full"));
    let run = |extra: &[&str]| {
        let mut args = vec![
            "--profile",
            "seed-256cpu",
            "-t",
            "2",
            "-b",
            "16",
            "--ops",
            "50",
            "--warmup",
            "10",
        ];
        args.extend(extra);
        let to = fs::OpenOptions::new().write(true).open(&full).unwrap();
        sim_with_stdout(&args, to)
    };
    for out in ["/dev/stdout", "/proc/self/fd/1", "/dev/fd/1"] {
        let o = run(&["--output", out]);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{out}: {err}");
        assert_eq!(err.lines().count(), 1, "{out}: {err}");
        assert!(
            err.contains(&format!("'{out}'")) && err.contains("No space left on device"),
            "{out}: {err}"
        );
    }
    let o = run(&[]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("stdout") && err.contains("No space left on device"),
        "{err}"
    );
    // Any other device on stdout is written as before.
    let null = char_device(&dir, "null", 1, 3).unwrap_or_else(|| PathBuf::from("/dev/null"));
    let to = fs::OpenOptions::new().write(true).open(&null).unwrap();
    let o = sim_with_stdout(
        &[
            "--profile",
            "seed-256cpu",
            "-t",
            "2",
            "-b",
            "16",
            "--ops",
            "50",
            "--warmup",
            "10",
            "--output",
            "/dev/stdout",
        ],
        to,
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let _ = fs::remove_dir_all(&dir);
}

/// The kernel log's records (`/dev/kmsg`) from `fd` on, each as `PRIO,SEQ,TIME,FLAGS;TEXT`.
fn kmsg_records(fd: &fs::File) -> Vec<String> {
    let mut out = Vec::new();
    let mut buf = vec![0u8; 16384];
    loop {
        match (&*fd).read(&mut buf) {
            Ok(0) => break,
            Ok(n) => out.push(String::from_utf8_lossy(&buf[..n]).into_owned()),
            // EPIPE: records were overwritten before they were read; read on.
            Err(e) if e.raw_os_error() == Some(libc::EPIPE) => continue,
            Err(_) => break, // EAGAIN: no more records
        }
    }
    out
}

/// Defect: the up-front check of an output device wrote zero bytes to it, and a write of
/// nothing is not nothing to every device: `/dev/kmsg` logged an empty line for it. An
/// output device is opened before the work, and nothing is written to it until the
/// output is (here the run is refused for its profile after the output check, so
/// nothing is written at all: no user record appears in the kernel log between the test's
/// two marker lines; the second also completes any record still open for continuation).
/// Needs root (mknod, and reading the kernel log); skipped otherwise.
#[test]
fn the_output_check_writes_nothing_to_a_device() {
    let dir = tmpdir("kmsg");
    // The kernel log device is major 1, minor 11: a private node of it.
    let Some(kmsg) = char_device(&dir, "kmsg", 1, 11) else {
        eprintln!("skipped: cannot make a device node (not root)");
        return;
    };
    let (Ok(log), Ok(mut marker)) = (
        fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NONBLOCK)
            .open(&kmsg),
        fs::OpenOptions::new().write(true).open(&kmsg),
    ) else {
        eprintln!("skipped: cannot read and write the kernel log");
        return;
    };
    // From about the end of the log on (the markers say exactly where the run's records
    // are).
    // SAFETY: lseek on a descriptor `log` owns and keeps open; it reads no memory.
    let at = unsafe { libc::lseek(std::os::fd::AsRawFd::as_raw_fd(&log), 0, libc::SEEK_END) };
    assert!(at >= 0, "{}", std::io::Error::last_os_error());
    let tag = format!("futexhash outputs_cli test {}", std::process::id());
    marker
        .write_all(format!("{tag} start\n").as_bytes())
        .unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_futexhash"))
        .args(["sim", "--profile", "/nonexistent/profile.toml", "--output"])
        .arg(&kmsg)
        .output()
        .expect("run futexhash");
    marker.write_all(format!("{tag} end\n").as_bytes()).unwrap();
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("/nonexistent/profile.toml"), "{err}");
    let records = kmsg_records(&log);
    let text = |r: &String| r.split_once(';').map(|(_, t)| t.trim().to_string());
    let find = |what: &str| {
        records
            .iter()
            .position(|r| text(r).as_deref() == Some(what))
    };
    let (Some(first), Some(last)) = (find(&format!("{tag} start")), find(&format!("{tag} end")))
    else {
        eprintln!("skipped: the markers are not in the kernel log (printk_devkmsg off?)");
        return;
    };
    // What a write without a `<N>` prefix logs: facility 1 (LOG_USER), so PRIO 8..=15.
    // The kernel's own messages (facility 0) from other work meanwhile are not the run's.
    let user = |r: &&String| {
        r.split(',')
            .next()
            .and_then(|p| p.parse::<u32>().ok())
            .is_some_and(|p| p >> 3 == 1)
    };
    let written: Vec<&String> = records[first + 1..last].iter().filter(user).collect();
    assert!(
        written.is_empty(),
        "the run wrote to the kernel log: {written:?}"
    );
    assert!(
        fs::symlink_metadata(&kmsg)
            .unwrap()
            .file_type()
            .is_char_device()
    );
    let _ = fs::remove_dir_all(&dir);
}

/// A file the user made read-only (mode 0444) is refused before any work, in one line
/// naming it, and stays as it was: the rename that replaces a file needs only its
/// directory to be writable, so without the check it was replaced (docs/cli.md). Root
/// too: write bits all clear are refused whoever runs it. As root, a file of another
/// user's is also made 0444, and refused the same.
#[test]
fn a_read_only_file_is_refused_and_never_replaced() {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    let dir = tmpdir("readonly");
    let p = dir.join("ro.csv");
    fs::write(&p, "old\n").unwrap();
    fs::set_permissions(&p, fs::Permissions::from_mode(0o444)).unwrap();
    // SAFETY: geteuid(2) reads no memory and cannot fail.
    if unsafe { libc::geteuid() } == 0 {
        std::os::unix::fs::chown(&p, Some(4242), Some(4343)).unwrap();
    }
    let before = fs::metadata(&p).unwrap();
    let o = hash_into(&p);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let err = stderr(&o);
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(err.contains("ro.csv") && err.contains("read-only"), "{err}");
    assert!(o.stdout.is_empty());
    assert_eq!(fs::read(&p).unwrap(), b"old\n");
    let after = fs::metadata(&p).unwrap();
    assert_eq!(
        (after.ino(), after.mode(), after.uid()),
        (before.ino(), before.mode(), before.uid())
    );
    assert_eq!(names(&dir), ["ro.csv"]);
    // `--plot` is checked the same way, before any work.
    let svg = dir.join("ro.svg");
    fs::write(&svg, "old\n").unwrap();
    fs::set_permissions(&svg, fs::Permissions::from_mode(0o444)).unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_futexhash"))
        .args([
            "dist",
            "--algo",
            "jhash2",
            "--keys",
            "64",
            "--buckets",
            "16",
            "--plot",
        ])
        .arg(&svg)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("ro.svg"), "{}", stderr(&o));
    assert_eq!(fs::read(&svg).unwrap(), b"old\n");
    let _ = fs::remove_dir_all(&dir);
}
