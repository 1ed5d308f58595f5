//! Output formats shared by every subcommand (docs/cli.md, "Conventions"):
//! `table` (the mailing-list `+-----+` table), `csv` and `json` (one array of flat records),
//! written to stdout or atomically to a file (a device or FIFO in place, never waiting
//! for a FIFO's reader; another process's `/proc/PID/fd/N` appended to; `/dev/stdout`
//! and this process's other descriptors through the descriptor itself; a symlink followed
//! and its target replaced, never the link; a replaced file keeps its mode; a read-only
//! or unwritable file is refused, never replaced).

use serde::Serialize;
use std::io::{self, Write};
use std::os::fd::{FromRawFd, OwnedFd, RawFd};
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// An output format (`--format`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Format {
    /// Human-readable table, pasteable into a mailing-list post.
    #[default]
    Table,
    /// One header row, then one row per record.
    Csv,
    /// One JSON array of flat objects.
    Json,
}

impl Format {
    /// Every format's name, in the order help text lists them.
    pub const NAMES: [&'static str; 3] = ["table", "csv", "json"];
}

impl std::str::FromStr for Format {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "table" => Ok(Format::Table),
            "csv" => Ok(Format::Csv),
            "json" => Ok(Format::Json),
            _ => Err(format!(
                "unknown format '{s}'; valid: {}",
                Format::NAMES.join(", ")
            )),
        }
    }
}

/// `text` broken at spaces into lines of at most `width` characters (a word longer than
/// `width` stands on a line of its own, whole). Empty text gives one empty line.
pub fn wrap_words(text: &str, width: usize) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    let mut cur = String::new();
    for word in text.split(' ').filter(|w| !w.is_empty()) {
        let len = cur.chars().count();
        if len > 0 && len + 1 + word.chars().count() > width {
            lines.push(std::mem::take(&mut cur));
        }
        if !cur.is_empty() {
            cur.push(' ');
        }
        cur.push_str(word);
    }
    lines.push(cur);
    lines
}

/// A `# ` comment line wrapped to `width` columns: continuation lines start `#   `.
pub fn wrap_comment(line: &str, width: usize) -> String {
    let body = line.strip_prefix("# ").unwrap_or(line);
    wrap_words(body, width.saturating_sub(4))
        .iter()
        .enumerate()
        .map(|(i, l)| {
            if i == 0 {
                format!("# {l}\n")
            } else {
                format!("#   {l}\n")
            }
        })
        .collect()
}

/// `text` with every line wider than `width` wrapped: a `# ` comment as
/// [`wrap_comment`] wraps it, any other line at spaces with continuation lines indented
/// two spaces. Table lines (starting `+` or `|`) are kept whole: their width is the
/// table's business ([`TextTable::render_within`]).
pub fn wrap_prose(text: &str, width: usize) -> String {
    let mut out = String::new();
    for line in text.split_inclusive('\n') {
        let body = line.strip_suffix('\n').unwrap_or(line);
        if body.chars().count() <= width || body.starts_with('+') || body.starts_with('|') {
            out.push_str(line);
            continue;
        }
        if body.starts_with("# ") {
            out.push_str(&wrap_comment(body, width));
        } else {
            for (i, l) in wrap_words(body, width.saturating_sub(2)).iter().enumerate() {
                out.push_str(if i == 0 { "" } else { "  " });
                out.push_str(l);
                out.push('\n');
            }
        }
        if !line.ends_with('\n') {
            out.pop();
        }
    }
    out
}

/// The widest line a table may have: a mail's 100 columns, so that output pastes into a
/// mailing-list post unwrapped ([`TextTable::render_within`] splits wider tables).
pub const MAIL_WIDTH: usize = 100;

/// A text table with right-aligned cells, drawn like the tables of the seed threads.
#[derive(Clone, Debug, Default)]
pub struct TextTable {
    /// Column headers.
    pub headers: Vec<String>,
    /// Rows of cells; every row has one cell per header.
    pub rows: Vec<Vec<String>>,
}

impl TextTable {
    /// An empty table with these headers.
    pub fn new<S: Into<String>>(headers: impl IntoIterator<Item = S>) -> Self {
        TextTable {
            headers: headers.into_iter().map(Into::into).collect(),
            rows: Vec::new(),
        }
    }

    /// Appends a row.
    pub fn push(&mut self, row: Vec<String>) {
        debug_assert_eq!(row.len(), self.headers.len());
        self.rows.push(row);
    }

    /// Renders with `+---+` rules above and below the header and at the end.
    pub fn render(&self) -> String {
        let widths: Vec<usize> = (0..self.headers.len())
            .map(|c| {
                self.rows
                    .iter()
                    .map(|r| r[c].chars().count())
                    .chain([self.headers[c].chars().count()])
                    .max()
                    .unwrap_or(0)
            })
            .collect();
        let rule: String = widths.iter().fold(String::from("+"), |mut s, w| {
            s.push_str(&"-".repeat(w + 2));
            s.push('+');
            s
        });
        // Numbers are right-aligned (as in the seed tables), words left-aligned.
        let numeric: Vec<bool> = (0..self.headers.len())
            .map(|c| self.rows.iter().all(|r| looks_numeric(&r[c])))
            .collect();
        let line = |cells: &[String]| {
            let mut s = String::from("|");
            for ((c, w), num) in cells.iter().zip(&widths).zip(&numeric) {
                if *num {
                    s.push_str(&format!(" {c:>w$} |"));
                } else {
                    s.push_str(&format!(" {c:<w$} |"));
                }
            }
            s
        };
        let mut out = vec![rule.clone(), line(&self.headers), rule.clone()];
        out.extend(self.rows.iter().map(|r| line(r)));
        out.push(rule);
        out.join("\n") + "\n"
    }

    /// Width in characters of [`render`](Self::render)'s lines.
    pub fn width(&self) -> usize {
        self.render()
            .lines()
            .next()
            .map_or(0, |l| l.chars().count())
    }

    /// Renders so that no line is wider than `max_width` (a mail's 100 columns): when the
    /// table is wider, its columns are split into consecutive tables that each repeat the
    /// first `key_columns` columns (the row labels), separated by a blank line. A single
    /// column wider than the limit is kept whole.
    pub fn render_within(&self, max_width: usize, key_columns: usize) -> String {
        if self.width() <= max_width || self.headers.len() <= key_columns + 1 {
            return self.render();
        }
        let keys = key_columns.min(self.headers.len());
        let col_width = |c: usize| {
            self.rows
                .iter()
                .map(|r| r[c].chars().count())
                .chain([self.headers[c].chars().count()])
                .max()
                .unwrap_or(0)
                + 3
        };
        let key_width: usize = 1 + (0..keys).map(col_width).sum::<usize>();
        let mut groups: Vec<Vec<usize>> = Vec::new();
        let mut current: Vec<usize> = Vec::new();
        let mut width = key_width;
        for c in keys..self.headers.len() {
            let w = col_width(c);
            if !current.is_empty() && width + w > max_width {
                groups.push(std::mem::take(&mut current));
                width = key_width;
            }
            current.push(c);
            width += w;
        }
        groups.push(current);
        let parts: Vec<String> = groups
            .iter()
            .map(|g| {
                let cols: Vec<usize> = (0..keys).chain(g.iter().copied()).collect();
                let mut t = TextTable::new(cols.iter().map(|&c| self.headers[c].clone()));
                for r in &self.rows {
                    t.push(cols.iter().map(|&c| r[c].clone()).collect());
                }
                t.render()
            })
            .collect();
        parts.join("\n")
    }

    /// The rows as records, for tables whose cells are too wide for columns: each row a
    /// block of `header  value` lines (values wrapped at spaces to stay within
    /// `max_width`), blocks separated by a blank line.
    pub fn render_records(&self, max_width: usize) -> String {
        let label = self
            .headers
            .iter()
            .map(|h| h.chars().count())
            .max()
            .unwrap_or(0);
        let room = max_width.saturating_sub(label + 4).max(20);
        let mut out = String::new();
        for (i, r) in self.rows.iter().enumerate() {
            if i > 0 {
                out.push('\n');
            }
            for (h, cell) in self.headers.iter().zip(r) {
                let mut lines: Vec<String> = vec![String::new()];
                for word in cell.split(' ') {
                    let last = lines.last_mut().expect("one line");
                    if !last.is_empty() && last.chars().count() + 1 + word.chars().count() > room {
                        lines.push(word.to_string());
                    } else {
                        if !last.is_empty() {
                            last.push(' ');
                        }
                        last.push_str(word);
                    }
                }
                for (k, l) in lines.iter().enumerate() {
                    let head = if k == 0 { h.as_str() } else { "" };
                    out.push_str(&format!("  {head:<label$}  {l}\n"));
                }
            }
        }
        out
    }
}

/// A cell that reads as a number: its first word is digits with separators, sign, point,
/// `%`, `x`, `e`, `±` (what follows, e.g. a flag naming a failed statistic, may be text).
fn looks_numeric(cell: &str) -> bool {
    let t = cell.trim();
    let first = t.split(' ').next().unwrap_or("");
    !first.is_empty()
        && first.chars().any(|c| c.is_ascii_digit())
        && first
            .chars()
            .all(|c| c.is_ascii_digit() || ",.+-%()xe*±".contains(c))
}

/// `1234567.25` with `decimals = 1` → `"1,234,567.3"`: thousands separators as in the seed
/// tables.
pub fn fmt_grouped(value: f64, decimals: usize) -> String {
    if !value.is_finite() {
        return value.to_string();
    }
    let s = format!("{:.*}", decimals, value.abs());
    let (int, frac) = match s.split_once('.') {
        Some((i, f)) => (i, Some(f)),
        None => (s.as_str(), None),
    };
    let mut grouped = String::new();
    for (i, ch) in int.chars().enumerate() {
        if i > 0 && (int.len() - i) % 3 == 0 {
            grouped.push(',');
        }
        grouped.push(ch);
    }
    let sign = if value < 0.0 && s.bytes().any(|b| b.is_ascii_digit() && b != b'0') {
        "-"
    } else {
        ""
    };
    match frac {
        Some(f) => format!("{sign}{grouped}.{f}"),
        None => format!("{sign}{grouped}"),
    }
}

/// Serializes records as a JSON array of flat objects.
pub fn to_json<T: Serialize>(records: &[T]) -> Result<String, serde_json::Error> {
    let mut s = serde_json::to_string_pretty(records)?;
    s.push('\n');
    Ok(s)
}

/// Serializes records as CSV with a header row.
pub fn to_csv<T: Serialize>(records: &[T]) -> Result<String, csv::Error> {
    let mut w = csv::Writer::from_writer(Vec::new());
    for r in records {
        w.serialize(r)?;
    }
    let bytes = w.into_inner().map_err(|e| e.into_error())?;
    Ok(String::from_utf8(bytes).expect("csv output is UTF-8"))
}

/// Where the bytes for an output path go, decided by what is there now
/// ([`resolve_output`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum OutputTarget {
    /// A regular file, or nothing yet: replaced whole through a temporary file beside
    /// this path (the end of any symlink chain, so the link itself stays a link).
    Replace(PathBuf),
    /// An existing file that is not a regular one (character device, FIFO, socket):
    /// opened for writing ([`prepare`]) and written in place. Renaming over it would put a
    /// regular file where the device or FIFO was: as root, `--output /dev/null` would
    /// replace the system's null device.
    InPlace(PathBuf),
    /// Another process's open file: `/proc/PID/fd/N` with a PID not ours (any link in a
    /// `/proc` directory names an open file rather than a path). Written in place like
    /// [`OutputTarget::InPlace`], but opened with `O_APPEND`: a new open of a regular file
    /// starts at offset 0, and would write over what that process had written; appended,
    /// what is there stays and the output follows it. (That process's own offset does not
    /// move, so what it writes next may still land over the output: that is its doing.)
    Foreign(PathBuf),
    /// One of this process's own open descriptors (`/dev/stdout`, `/dev/stderr`,
    /// `/dev/fd/N`, `/proc/self/fd/N`, `/proc/PID/fd/N` with our PID): written through
    /// that descriptor. Opening the path instead would make a new open file description
    /// at offset 0 without the shell's `O_APPEND`: `>> log` would be overwritten from its
    /// first byte, and `( echo a; futexhash ... ) > f` would write over the `a`.
    Descriptor {
        /// The path as it led here (for messages).
        path: PathBuf,
        /// The descriptor it names.
        fd: RawFd,
    },
}

impl OutputTarget {
    /// The path the bytes go to.
    pub fn path(&self) -> &Path {
        match self {
            OutputTarget::Replace(p)
            | OutputTarget::InPlace(p)
            | OutputTarget::Foreign(p)
            | OutputTarget::Descriptor { path: p, .. } => p,
        }
    }
}

/// The descriptor of this process that `path` names, if it names one: `/dev/stdin`,
/// `/dev/stdout`, `/dev/stderr`, or `N` in a directory that is this process's descriptor
/// table (`/dev/fd`, `/proc/self/fd`, `/proc/thread-self/fd`, `/proc/PID/fd` and
/// `/proc/PID/task/TID/fd` with our PID), compared as written and, for the directory,
/// after resolving its links (`/dev/fd` → `/proc/self/fd` → `/proc/PID/fd`). Paths
/// compare component by component, so `/dev//stdout` is `/dev/stdout`.
pub fn own_descriptor(path: &Path) -> Option<RawFd> {
    for (name, fd) in [("/dev/stdin", 0), ("/dev/stdout", 1), ("/dev/stderr", 2)] {
        if path == Path::new(name) {
            return Some(fd);
        }
    }
    let name = path.file_name()?.to_str()?;
    if name.is_empty() || !name.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let fd: RawFd = name.parse().ok()?;
    let dir = path.parent()?;
    if is_own_fd_dir(dir) || std::fs::canonicalize(dir).is_ok_and(|d| is_own_fd_dir(&d)) {
        Some(fd)
    } else {
        None
    }
}

/// Whether `dir` is (literally) a directory listing this process's descriptors.
fn is_own_fd_dir(dir: &Path) -> bool {
    let pid = std::process::id().to_string();
    let parts: Vec<&std::ffi::OsStr> = dir.components().map(|c| c.as_os_str()).collect();
    let is = |s: &std::ffi::OsStr, want: &str| s == std::ffi::OsStr::new(want);
    let digits =
        |s: &std::ffi::OsStr| !s.is_empty() && s.as_encoded_bytes().iter().all(u8::is_ascii_digit);
    match parts.as_slice() {
        [root, dev, fd] => is(root, "/") && is(dev, "dev") && is(fd, "fd"),
        [root, proc, who, fd] => {
            is(root, "/")
                && is(proc, "proc")
                && (is(who, "self") || is(who, "thread-self") || is(who, &pid))
                && is(fd, "fd")
        }
        // Every thread of the process shares its descriptor table.
        [root, proc, who, task, tid, fd] => {
            is(root, "/")
                && is(proc, "proc")
                && is(who, &pid)
                && is(task, "task")
                && digits(tid)
                && is(fd, "fd")
        }
        _ => false,
    }
}

/// Follows `path` through any symlinks (as open(2) would, at most 40 of them) to what
/// the output will be written into. A path that names one of this process's descriptors
/// ([`own_descriptor`]), as given or at any link of the chain, is that descriptor. Any
/// other link whose directory is in `/proc` (another process's `/proc/PID/fd/N`) names an
/// open file rather than a path and is appended to in place ([`OutputTarget::Foreign`]).
/// A directory is an `IsADirectory` error; an existing regular file the user may not
/// write (write bits all clear, or access(2) says no) a `PermissionDenied` one
/// ([`replaceable`]): it is never replaced.
pub fn resolve_output(path: &Path) -> io::Result<OutputTarget> {
    let mut p = path.to_path_buf();
    for _ in 0..40 {
        if let Some(fd) = own_descriptor(&p) {
            return Ok(OutputTarget::Descriptor { path: p, fd });
        }
        let meta = match std::fs::symlink_metadata(&p) {
            Ok(m) => m,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(OutputTarget::Replace(p)),
            Err(e) => return Err(e),
        };
        let ft = meta.file_type();
        if ft.is_symlink() {
            let dir = parent_dir(&p);
            if std::fs::canonicalize(dir).is_ok_and(|d| d.starts_with("/proc")) {
                return Ok(OutputTarget::Foreign(p));
            }
            let to = std::fs::read_link(&p)?;
            p = if to.is_absolute() { to } else { dir.join(to) };
        } else if ft.is_dir() {
            return Err(io::Error::new(
                io::ErrorKind::IsADirectory,
                format!("'{}' is a directory", p.display()),
            ));
        } else if ft.is_file() {
            replaceable(&p, &meta)?;
            return Ok(OutputTarget::Replace(p));
        } else {
            return Ok(OutputTarget::InPlace(p));
        }
    }
    Err(io::Error::from_raw_os_error(libc::ELOOP))
}

/// Whether the existing regular file `path` (its metadata `meta`) may be replaced: the
/// rename that replaces it needs only its directory to be writable, so without this check
/// a file the user may not write (`chmod 444`, or another user's) would be replaced all
/// the same. Refused (`PermissionDenied`, the message naming the file, its mode and
/// owner): a file whose write bits are all clear, even for root (it was made read-only on
/// purpose, and root's bypass of modes is no reason to undo that), and a file this
/// process's effective user and groups may not write (access(2), `AT_EACCESS`). Root may
/// replace any other file, as it could open and write it.
fn replaceable(path: &Path, meta: &std::fs::Metadata) -> io::Result<()> {
    let mode = meta.mode() & 0o7777;
    let refuse = |why: &str| {
        Err(io::Error::new(
            io::ErrorKind::PermissionDenied,
            format!(
                "'{}' {why} (mode {mode:04o}, owner uid {}); it is never replaced: make it \
                 writable (chmod u+w) or name another file",
                path.display(),
                meta.uid()
            ),
        ))
    };
    let Ok(c) = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()) else {
        return Ok(());
    };
    // A file of procfs or sysfs (`/proc/version`) is read-only because the file system
    // creates no files at all: say that, as the check of a new path in such a directory
    // does, rather than suggest a chmod that cannot help.
    // SAFETY: statfs reads the NUL-terminated path `c`, which lives for the call, and
    // writes only into `fs`, a zeroed statfs owned here.
    let mut fs: libc::statfs = unsafe { std::mem::zeroed() };
    // SAFETY: as above.
    if unsafe { libc::statfs(c.as_ptr(), &mut fs) } == 0 {
        const PROC_SUPER_MAGIC: i64 = 0x9fa0;
        const SYSFS_MAGIC: i64 = 0x6265_6572;
        if matches!(fs.f_type as i64, PROC_SUPER_MAGIC | SYSFS_MAGIC) {
            return Err(io::Error::new(
                io::ErrorKind::PermissionDenied,
                format!(
                    "'{}' is in a virtual file system such as /proc or /sys, which creates no files; name a file elsewhere",
                    path.display()
                ),
            ));
        }
    }
    if mode & 0o222 == 0 {
        return refuse("is read-only");
    }
    // SAFETY: faccessat reads the NUL-terminated path `c` lives for the call; it writes
    // no memory.
    let r = unsafe { libc::faccessat(libc::AT_FDCWD, c.as_ptr(), libc::W_OK, libc::AT_EACCESS) };
    if r != 0 {
        let e = io::Error::last_os_error();
        match e.raw_os_error() {
            Some(libc::EACCES) | Some(libc::EPERM) => {
                return refuse("is not writable by this user");
            }
            Some(libc::EROFS) => return refuse("is on a read-only file system"),
            _ => {}
        }
    }
    Ok(())
}

/// An in-place output opened before the work ([`prepare`]), held open until the process
/// ends, and found again by the file it is (device and inode number).
struct HeldOutput {
    dev: u64,
    ino: u64,
    file: std::fs::File,
}

/// Every in-place output [`prepare`] opened. Holding them open is what makes the early
/// open harmless: a FIFO's reader would take the close of a probe for the end of the data
/// (`cat FIFO` would end before a byte arrived), and a device whose close acts (a tape
/// that rewinds) would act twice. They close when the process exits.
static HELD: std::sync::Mutex<Vec<HeldOutput>> = std::sync::Mutex::new(Vec::new());

fn held() -> std::sync::MutexGuard<'static, Vec<HeldOutput>> {
    // A panic elsewhere while holding the lock leaves the list itself intact.
    HELD.lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// The device and inode number of what `path` leads to (following links, `/proc` ones
/// too).
fn file_id(path: &Path) -> Option<(u64, u64)> {
    std::fs::metadata(path).ok().map(|m| (m.dev(), m.ino()))
}

/// Opens the in-place output `path` for writing without ever waiting, and tells now
/// whether it takes bytes:
/// - `O_NONBLOCK` for the open only: a FIFO that no process has open for reading is
///   `ENXIO` at once (a blocking open would wait for a reader forever), said in words;
///   a device whose open waits (a serial line's carrier) does not wait. It is cleared
///   once open, so that the writes wait for a slow reader rather than fail with `EAGAIN`.
/// - `append` ([`OutputTarget::Foreign`]): `O_APPEND`.
/// - No `O_CREAT`: had the device or FIFO gone meanwhile, no regular file appears in its
///   place.
/// - Nothing is written: the full device (`/dev/full`, every write `ENOSPC`) is told by its
///   number ([`refuses_every_byte`]) and refused with `ENOSPC` now, before the work rather
///   than after it. A write of no bytes would tell it too, but is not nothing to every
///   file: `/dev/kmsg` logs an empty line for it, a datagram socket sends an empty
///   datagram.
fn open_in_place(path: &Path, append: bool) -> io::Result<std::fs::File> {
    use std::os::fd::AsRawFd;
    let file = match std::fs::OpenOptions::new()
        .write(true)
        .append(append)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
    {
        Ok(f) => f,
        Err(e)
            if e.raw_os_error() == Some(libc::ENXIO)
                && std::fs::metadata(path).is_ok_and(|m| m.file_type().is_fifo()) =>
        {
            return Err(io::Error::other(
                "no process has this FIFO open for reading (writing would wait for one \
                 forever); start its reader first",
            ));
        }
        Err(e) => return Err(e),
    };
    let fd = file.as_raw_fd();
    // SAFETY: F_GETFL/F_SETFL only read and set the status flags of `fd`, which `file`
    // owns and keeps open for these calls.
    let cleared = unsafe {
        let flags = libc::fcntl(fd, libc::F_GETFL);
        flags >= 0 && libc::fcntl(fd, libc::F_SETFL, flags & !libc::O_NONBLOCK) == 0
    };
    if !cleared {
        return Err(io::Error::last_os_error());
    }
    if refuses_every_byte(&file.metadata()?) {
        return Err(io::Error::from_raw_os_error(libc::ENOSPC));
    }
    Ok(file)
}

/// The full device's number (`/dev/full`: the memory devices' major 1, minor 7, in
/// Linux's `Documentation/admin-guide/devices.txt`), whatever name a node of it has.
const FULL_DEVICE: (u32, u32) = (1, 7);

/// Whether `meta` is the full device, whose every write fails with `ENOSPC`: the one
/// device known to take no bytes, told by its type and number alone, so nothing is
/// written to find out. (Any other device that refuses bytes is found when the output
/// is written.)
pub fn refuses_every_byte(meta: &std::fs::Metadata) -> bool {
    let rdev = meta.rdev();
    meta.file_type().is_char_device() && (libc::major(rdev), libc::minor(rdev)) == FULL_DEVICE
}

/// Whether this process's open descriptor `fd` leads to the full device
/// ([`refuses_every_byte`]); false when it is not open (the write says so).
fn descriptor_is_full_device(fd: RawFd) -> bool {
    let mut st = std::mem::MaybeUninit::<libc::stat>::uninit();
    // SAFETY: fstat writes a `struct stat` into `st`, which has its size and alignment;
    // a descriptor that is not open is an EBADF return, and `st` is then not read.
    if unsafe { libc::fstat(fd, st.as_mut_ptr()) } != 0 {
        return false;
    }
    // SAFETY: fstat returned 0, so it filled `st` in.
    let st = unsafe { st.assume_init() };
    st.st_mode & libc::S_IFMT == libc::S_IFCHR
        && (libc::major(st.st_rdev), libc::minor(st.st_rdev)) == FULL_DEVICE
}

/// Whether the output can go to this process's stdout, told before the work and without
/// writing: not when it is the full device (`> /dev/full`), in words. Whatever else is
/// wrong with it (closed, a reader gone) is found when the output is written.
pub fn stdout_takes_bytes() -> Result<(), String> {
    if descriptor_is_full_device(1) {
        return Err(format!(
            "stdout is the full device (/dev/full), which takes no bytes: {}",
            io::Error::from_raw_os_error(libc::ENOSPC)
        ));
    }
    Ok(())
}

/// Opens an in-place output ([`OutputTarget::InPlace`], [`OutputTarget::Foreign`]) before
/// the work, so that what would make the write fail or wait (a FIFO without a reader, a
/// device that takes no bytes, no permission) is told up front, and keeps it open for
/// [`write_atomic`] ([`open_in_place`], [`HELD`]). Other targets: nothing to open.
pub fn prepare(target: &OutputTarget) -> io::Result<()> {
    let (path, append) = match target {
        OutputTarget::InPlace(p) => (p, false),
        OutputTarget::Foreign(p) => (p, true),
        OutputTarget::Replace(_) | OutputTarget::Descriptor { .. } => return Ok(()),
    };
    let mut list = held();
    if file_id(path).is_some_and(|id| list.iter().any(|h| (h.dev, h.ino) == id)) {
        return Ok(());
    }
    let file = open_in_place(path, append)?;
    let m = file.metadata()?;
    list.push(HeldOutput {
        dev: m.dev(),
        ino: m.ino(),
        file,
    });
    Ok(())
}

/// Writes `content` in place into `path`: through the file [`prepare`] opened for it, or
/// else opened now ([`open_in_place`]).
fn write_in_place(path: &Path, append: bool, content: &[u8]) -> io::Result<()> {
    {
        let list = held();
        if let Some(id) = file_id(path)
            && let Some(h) = list.iter().find(|h| (h.dev, h.ino) == id)
        {
            let mut f = &h.file;
            return ignore_closed_reader(f.write_all(content).and_then(|_| f.flush()));
        }
    }
    let mut f = open_in_place(path, append)?;
    ignore_closed_reader(f.write_all(content).and_then(|_| f.flush()))
}

/// Whether this process's descriptor `fd` is open for writing and does not lead to the
/// full device ([`refuses_every_byte`]: `--output /dev/stdout > /dev/full`); the reason it
/// is not, in words.
pub fn descriptor_writable(fd: RawFd) -> Result<(), String> {
    // SAFETY: F_GETFL only reads the descriptor's status flags; a descriptor that is not
    // open is an EBADF return, not undefined behaviour.
    let flags = unsafe { libc::fcntl(fd, libc::F_GETFL) };
    if flags < 0 {
        return Err(format!("descriptor {fd} is not open"));
    }
    if flags & libc::O_PATH != 0 || flags & libc::O_ACCMODE == libc::O_RDONLY {
        return Err(format!("descriptor {fd} is open for reading only"));
    }
    if descriptor_is_full_device(fd) {
        return Err(format!(
            "descriptor {fd} is the full device (/dev/full), which takes no bytes: {}",
            io::Error::from_raw_os_error(libc::ENOSPC)
        ));
    }
    Ok(())
}

/// Writes `content` through this process's open descriptor `fd` at its current offset
/// (and with its `O_APPEND`, if the shell opened it so). Stdout and stderr go through
/// Rust's own handles, so the bytes keep their order with anything else printed there.
fn write_descriptor(fd: RawFd, content: &[u8]) -> io::Result<()> {
    match fd {
        1 => {
            let mut out = io::stdout().lock();
            ignore_closed_reader(out.write_all(content).and_then(|_| out.flush()))
        }
        2 => {
            let mut err = io::stderr().lock();
            ignore_closed_reader(err.write_all(content).and_then(|_| err.flush()))
        }
        _ => {
            // A duplicate, owned here and closed when written: the original stays open for
            // whoever else holds it (the shell's redirection), and closing ours cannot
            // close theirs. F_DUPFD_CLOEXEC fails with EBADF on a descriptor that is not
            // open, so no unowned number is ever wrapped.
            // SAFETY: fcntl with F_DUPFD_CLOEXEC reads no memory; it returns a new
            // descriptor or -1.
            let dup = unsafe { libc::fcntl(fd, libc::F_DUPFD_CLOEXEC, 0) };
            if dup < 0 {
                return Err(io::Error::last_os_error());
            }
            // SAFETY: `dup` was just returned by fcntl, is open, and nothing else owns it.
            let owned = unsafe { OwnedFd::from_raw_fd(dup) };
            let mut f = std::fs::File::from(owned);
            ignore_closed_reader(f.write_all(content).and_then(|_| f.flush()))
        }
    }
}

/// The directory a path's file lives in (`.` for a bare name).
pub fn parent_dir(path: &Path) -> &Path {
    match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    }
}

/// Writes `content` to `path` whole or not at all, the one way every user-named output is
/// written ([`resolve_output`]): a regular file (or a symlink's regular target) is
/// replaced by a temporary file beside it, flushed and synced, then renamed over it; a
/// device or FIFO is opened (or was, by [`prepare`]) and written in place, another
/// process's descriptor appended to in place, and one of this process's own descriptors
/// (`/dev/stdout`) written through, never replaced. Opening never waits: a FIFO without
/// a reader is an error at once ([`open_in_place`]).
/// `None` writes to stdout.
///
/// A replaced file keeps its permission bits (and, where the process may, its owner and
/// group): `chmod 600 secret.csv` stays private. A new file gets the default mode (the
/// umask's).
pub fn write_atomic(path: Option<&Path>, content: &[u8]) -> io::Result<()> {
    let Some(path) = path else {
        return write_descriptor(1, content);
    };
    let target = match resolve_output(path)? {
        OutputTarget::Descriptor { fd, .. } => return write_descriptor(fd, content),
        // No fsync: devices and FIFOs refuse it (EINVAL).
        OutputTarget::InPlace(p) => return write_in_place(&p, false, content),
        OutputTarget::Foreign(p) => return write_in_place(&p, true, content),
        OutputTarget::Replace(p) => p,
    };
    let dir = parent_dir(&target);
    let name = target.file_name().ok_or_else(|| {
        io::Error::new(io::ErrorKind::InvalidInput, "output path has no file name")
    })?;
    let tmp = dir.join(format!(
        ".{}.tmp{}",
        name.to_string_lossy(),
        std::process::id()
    ));
    // The file being replaced, if there is one (the end of the link chain, so its own
    // mode, not a link's).
    let existing = std::fs::symlink_metadata(&target)
        .ok()
        .filter(|m| m.is_file());
    let result = (|| {
        let mut f = create_temp(&tmp, existing.is_some())?;
        f.write_all(content)?;
        if let Some(old) = &existing {
            keep_owner_and_mode(&f, old)?;
        }
        f.sync_all()?;
        std::fs::rename(&tmp, &target)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

/// Creates the temporary file `tmp` afresh. `O_EXCL` (`create_new`): an existing name
/// there is never opened, so a link planted at the temporary name (in a shared directory
/// such as /tmp) cannot redirect the write; a leftover of a killed run with the same pid
/// is removed first (unlinking a link removes the link, not what it points to). When it
/// will replace a file, it starts as 0600 and gets that file's mode once written
/// ([`keep_owner_and_mode`]), so the content is never readable by more users than the old
/// file's was.
fn create_temp(tmp: &Path, replaces: bool) -> io::Result<std::fs::File> {
    let _ = std::fs::remove_file(tmp);
    std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(if replaces { 0o600 } else { 0o666 })
        .open(tmp)
}

/// Gives the temporary file `f` the owner, group and permission bits of the file `old` it
/// replaces. Only root may give a file to another user and only a member may give it to a
/// group, so a failed chown is not an error; but when the group could not be kept, the
/// group gets only what the old group and the others both had, since its bits now grant
/// access to a different group. Set-id and sticky bits are not carried over: new content under an
/// old set-user-ID bit would run with that user's rights.
fn keep_owner_and_mode(f: &std::fs::File, old: &std::fs::Metadata) -> io::Result<()> {
    let now = f.metadata()?;
    let mut group_kept = now.gid() == old.gid();
    if now.uid() != old.uid() || !group_kept {
        if std::os::unix::fs::fchown(f, Some(old.uid()), Some(old.gid())).is_err() {
            let _ = std::os::unix::fs::fchown(f, None, Some(old.gid()));
        }
        group_kept = f.metadata()?.gid() == old.gid();
    }
    f.set_permissions(std::fs::Permissions::from_mode(kept_mode(
        old.mode(),
        group_kept,
    )))
}

/// The permission bits a replacement gets from the replaced file's `mode`
/// ([`keep_owner_and_mode`]).
fn kept_mode(mode: u32, group_kept: bool) -> u32 {
    let mode = mode & 0o777;
    if group_kept {
        mode
    } else {
        (mode & !0o070) | (mode & 0o070 & ((mode & 0o007) << 3))
    }
}

/// A closed pipe (`| head`) is the reader's choice, not an error of ours.
fn ignore_closed_reader(r: io::Result<()>) -> io::Result<()> {
    match r {
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => Ok(()),
        r => r,
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn long_prose_lines_wrap_and_tables_stay_whole() {
        let table = format!("+{}+\n", "-".repeat(120));
        let text = format!(
            "short\n# {}\n{}\n{table}",
            "word ".repeat(30).trim_end(),
            "prose ".repeat(30).trim_end()
        );
        let out = wrap_prose(&text, 40);
        assert!(out.starts_with("short\n# word"), "{out}");
        // Every line within 40 but the table's; comments continue with `#   `, prose with
        // two spaces; no word lost.
        for l in out.lines().filter(|l| !l.starts_with('+')) {
            assert!(l.chars().count() <= 40, "{l}");
        }
        assert!(out.contains(&table), "{out}");
        assert!(out.lines().any(|l| l.starts_with("#   word")), "{out}");
        assert!(out.lines().any(|l| l.starts_with("  prose")), "{out}");
        assert_eq!(out.matches("word").count(), 30);
        assert_eq!(out.matches("prose").count(), 30);
    }

    #[test]
    fn words_wrap_within_the_width_and_keep_long_words_whole() {
        assert_eq!(wrap_words("aa bb cc", 5), ["aa bb", "cc"]);
        assert_eq!(wrap_words("aa bb cc", 8), ["aa bb cc"]);
        assert_eq!(wrap_words("abcdefgh x", 4), ["abcdefgh", "x"]);
        assert_eq!(wrap_words("", 4), [""]);
        assert_eq!(wrap_comment("# aa bb cc", 9), "# aa bb\n#   cc\n");
    }

    use super::*;

    #[test]
    fn grouped_numbers() {
        assert_eq!(fmt_grouped(9172.4, 1), "9,172.4");
        assert_eq!(fmt_grouped(2023509.44, 1), "2,023,509.4");
        assert_eq!(fmt_grouped(512.0, 0), "512");
        assert_eq!(fmt_grouped(100.0, 0), "100");
        assert_eq!(fmt_grouped(-1234.0, 0), "-1,234");
        assert_eq!(fmt_grouped(-0.01, 1), "0.0");
    }

    #[test]
    fn table_matches_seed_layout() {
        let mut t = TextTable::new(["buckets", "xxhash"]);
        t.push(vec!["2".into(), "9,116.4".into()]);
        let want = "+---------+---------+\n\
                    | buckets |  xxhash |\n\
                    +---------+---------+\n\
                    |       2 | 9,116.4 |\n\
                    +---------+---------+\n";
        assert_eq!(t.render(), want);
    }

    #[test]
    fn wide_tables_split_into_parts_that_repeat_the_row_labels() {
        let mut t = TextTable::new(
            std::iter::once("buckets".to_string()).chain((0..12).map(|i| format!("column{i:02}"))),
        );
        t.push(
            std::iter::once("16".to_string())
                .chain((0..12).map(|i| format!("{},000", i + 1)))
                .collect(),
        );
        // Each column is 8 wide + 3 = 11; 1 + 10 for "buckets": 12 columns need 143.
        assert_eq!(t.width(), 1 + 10 + 12 * 11);
        let out = t.render_within(100, 1);
        assert!(out.lines().all(|l| l.chars().count() <= 100), "{out}");
        // 11 + 8 × 11 = 99 fits eight columns per part: two parts.
        assert_eq!(out.matches("| buckets |").count(), 2, "{out}");
        assert!(out.contains("column07 |\n") && out.contains("| column08"));
        for i in 0..12 {
            assert_eq!(out.matches(&format!("column{i:02}")).count(), 1);
        }
        // A table that fits is unchanged.
        let mut small = TextTable::new(["a", "b"]);
        small.push(vec!["1".into(), "2".into()]);
        assert_eq!(small.render_within(100, 1), small.render());
    }

    #[test]
    fn records_wrap_long_cells_within_the_width() {
        let mut t = TextTable::new(["figure", "what"]);
        let long = "word ".repeat(40);
        t.push(vec!["model_vs_kernel".into(), long.trim().into()]);
        t.push(vec!["b".into(), "short".into()]);
        let out = t.render_records(60);
        assert!(out.lines().all(|l| l.chars().count() <= 60), "{out}");
        assert_eq!(out.matches("word").count(), 40);
        assert!(out.contains("  figure  model_vs_kernel\n"));
        assert!(out.contains("\n\n  figure  b\n"));
    }

    #[test]
    fn numbers_with_a_flag_stay_right_aligned() {
        assert!(looks_numeric("1.35 F:max-load"));
        assert!(looks_numeric("1,234 ±12"));
        assert!(!looks_numeric("jhash2"));
    }

    #[test]
    fn atomic_write_replaces_whole_and_leaves_no_temp() {
        let dir = std::env::temp_dir().join(format!("fh-atomic-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("out.json");
        write_atomic(Some(&p), b"first").unwrap();
        write_atomic(Some(&p), b"second").unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"second");
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 1);
        assert!(write_atomic(Some(&dir.join("missing/x.json")), b"x").is_err());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// A fresh temporary directory for one test.
    fn scratch(tag: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("fh-output-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn own_descriptors_are_told_from_other_paths() {
        let pid = std::process::id();
        for (p, fd) in [
            ("/dev/stdin".to_string(), 0),
            ("/dev/stdout".to_string(), 1),
            ("/dev//stdout".to_string(), 1),
            ("/dev/stderr".to_string(), 2),
            ("/dev/fd/5".to_string(), 5),
            ("/proc/self/fd/1".to_string(), 1),
            ("/proc/thread-self/fd/12".to_string(), 12),
            (format!("/proc/{pid}/fd/3"), 3),
            (format!("/proc/{pid}/task/{pid}/fd/4"), 4),
        ] {
            assert_eq!(own_descriptor(Path::new(&p)), Some(fd), "{p}");
        }
        // Another process's descriptors, and names that only look like one.
        let other = if pid == 1 { 2 } else { 1 };
        for p in [
            format!("/proc/{other}/fd/1"),
            "/dev/fd/x".to_string(),
            "/dev/fd/+1".to_string(),
            "/dev/stdout/1".to_string(),
            "fd/1".to_string(),
            "/tmp/1".to_string(),
        ] {
            assert_eq!(own_descriptor(Path::new(&p)), None, "{p}");
        }
        // A directory that leads to our descriptor table through a link is one too.
        let d = scratch("fdlink");
        std::os::unix::fs::symlink("/proc/self/fd", d.join("fds")).unwrap();
        assert_eq!(own_descriptor(&d.join("fds/7")), Some(7));
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn an_own_descriptor_is_written_through_at_its_offset() {
        // A file opened for append holding a first line, as `>> log` opens it: the output
        // follows the line (opening the path anew would write from offset 0 over it).
        let d = scratch("fdwrite");
        let p = d.join("log");
        std::fs::write(&p, "first\n").unwrap();
        let f = std::fs::OpenOptions::new().append(true).open(&p).unwrap();
        let fd = std::os::fd::AsRawFd::as_raw_fd(&f);
        for via in [format!("/dev/fd/{fd}"), format!("/proc/self/fd/{fd}")] {
            assert_eq!(
                resolve_output(Path::new(&via)).unwrap(),
                OutputTarget::Descriptor {
                    path: PathBuf::from(&via),
                    fd
                }
            );
            write_atomic(Some(Path::new(&via)), b"x\n").unwrap();
        }
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "first\nx\nx\n");
        // The descriptor is still ours and open: only a duplicate was closed.
        assert!(descriptor_writable(fd).is_ok());
        drop(f);
        // Read-only and closed descriptors are refused in words.
        let r = std::fs::File::open(&p).unwrap();
        let rfd = std::os::fd::AsRawFd::as_raw_fd(&r);
        assert!(
            descriptor_writable(rfd)
                .unwrap_err()
                .contains("reading only")
        );
        drop(r);
        assert!(descriptor_writable(rfd).unwrap_err().contains("not open"));
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn a_replaced_file_keeps_its_mode_and_a_new_one_gets_the_default() {
        let d = scratch("mode");
        let secret = d.join("secret.csv");
        std::fs::write(&secret, "old").unwrap();
        std::fs::set_permissions(&secret, std::fs::Permissions::from_mode(0o600)).unwrap();
        write_atomic(Some(&secret), b"new").unwrap();
        assert_eq!(std::fs::read(&secret).unwrap(), b"new");
        let mode = |p: &Path| std::fs::metadata(p).unwrap().mode() & 0o7777;
        assert_eq!(mode(&secret), 0o600);
        // Through a link: the file at its end keeps its mode, the link stays a link.
        let shared = d.join("shared.csv");
        std::fs::write(&shared, "old").unwrap();
        std::fs::set_permissions(&shared, std::fs::Permissions::from_mode(0o640)).unwrap();
        let link = d.join("link.csv");
        std::os::unix::fs::symlink("shared.csv", &link).unwrap();
        write_atomic(Some(&link), b"new").unwrap();
        assert!(std::fs::symlink_metadata(&link).unwrap().is_symlink());
        assert_eq!(mode(&shared), 0o640);
        // A new file: what creating one gives here (0666 less the umask).
        let fresh = d.join("fresh.csv");
        write_atomic(Some(&fresh), b"new").unwrap();
        let reference = d.join("reference");
        std::fs::File::create(&reference).unwrap();
        assert_eq!(mode(&fresh), mode(&reference));
        // As root, the owner and group are kept too.
        // SAFETY: geteuid(2) reads no memory and cannot fail.
        if unsafe { libc::geteuid() } == 0 {
            let theirs = d.join("theirs.csv");
            std::fs::write(&theirs, "old").unwrap();
            std::os::unix::fs::chown(&theirs, Some(4242), Some(4343)).unwrap();
            write_atomic(Some(&theirs), b"new").unwrap();
            let m = std::fs::metadata(&theirs).unwrap();
            assert_eq!((m.uid(), m.gid()), (4242, 4343));
        }
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn a_group_that_cannot_be_kept_gets_no_more_than_the_others() {
        assert_eq!(kept_mode(0o640, true), 0o640);
        assert_eq!(kept_mode(0o640, false), 0o600);
        assert_eq!(kept_mode(0o664, false), 0o644);
        assert_eq!(kept_mode(0o604, false), 0o604);
        assert_eq!(kept_mode(0o4755, true), 0o755, "no set-id bit carried over");
    }

    #[test]
    fn a_link_planted_at_the_temporary_name_is_not_followed() {
        let d = scratch("planted");
        let victim = d.join("victim");
        std::fs::write(&victim, "keep").unwrap();
        let out = d.join("out.csv");
        let tmp = d.join(format!(".out.csv.tmp{}", std::process::id()));
        std::os::unix::fs::symlink(&victim, &tmp).unwrap();
        write_atomic(Some(&out), b"new").unwrap();
        assert_eq!(std::fs::read(&victim).unwrap(), b"keep");
        assert_eq!(std::fs::read(&out).unwrap(), b"new");
        assert!(!tmp.exists() && std::fs::symlink_metadata(&tmp).is_err());
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn csv_and_json_records() {
        #[derive(Serialize)]
        struct R {
            algo: &'static str,
            hash: u32,
        }
        let rs = [R { algo: "a", hash: 1 }, R { algo: "b", hash: 2 }];
        assert_eq!(to_csv(&rs).unwrap(), "algo,hash\na,1\nb,2\n");
        let v: serde_json::Value = serde_json::from_str(&to_json(&rs).unwrap()).unwrap();
        assert_eq!(v[1]["hash"], 2);
    }
}
