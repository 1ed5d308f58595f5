//! A pseudo-terminal for a child's stderr, so that a test sees what a user at a terminal
//! sees (progress lines are drawn only there).
#![allow(dead_code)] // each test crate uses a different subset

use std::fs::File;
use std::io::Read;
use std::os::fd::FromRawFd;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

/// What a child wrote to its terminal so far, read by a thread until the last writer
/// closes it.
#[derive(Clone)]
pub struct Screen(Arc<(Mutex<Vec<u8>>, AtomicBool)>);

impl Screen {
    /// Everything written so far, as text.
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.0.0.lock().unwrap()).into_owned()
    }

    /// The last line a user sees, once every writer has closed the terminal: the text
    /// after the last line break and after the last carriage return in that line (what
    /// overwrote a progress line drawn in place), without escape sequences.
    pub fn last_line(&self) -> String {
        let text = self.closed_text();
        let line = text
            .split('\n')
            .map(|l| l.trim_end_matches('\r'))
            .rfind(|l| !l.is_empty())
            .unwrap_or("");
        let shown = line.rsplit('\r').next().unwrap_or("");
        let mut out = String::new();
        let mut chars = shown.chars();
        while let Some(c) = chars.next() {
            if c != '\x1b' {
                out.push(c);
                continue;
            }
            // ESC [ parameters, then a byte in '@'..='~' (clear line, colours, cursor);
            // ESC and one byte for the other escapes.
            if chars.next() == Some('[') {
                for d in chars.by_ref() {
                    if ('@'..='~').contains(&d) {
                        break;
                    }
                }
            }
        }
        out
    }

    /// Everything written, once every writer has closed the terminal (the child has
    /// exited); panics if that takes over a minute.
    pub fn closed_text(&self) -> String {
        let t0 = std::time::Instant::now();
        // The reader sets the flag after its last append; the text is then read under
        // the mutex every append took, so it holds them all (SeqCst: simplest to argue).
        while !self.0.1.load(Ordering::SeqCst) {
            assert!(
                t0.elapsed() < std::time::Duration::from_secs(60),
                "the terminal is still open"
            );
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        self.text()
    }
}

/// A new pseudo-terminal: the `Stdio` of its terminal side for a child, and the
/// [`Screen`] its output lands on. Drop the `Command` holding the `Stdio` after spawning,
/// so that the child's exit ends the reading.
pub fn terminal() -> (Stdio, Screen) {
    // SAFETY: posix_openpt/grantpt/unlockpt/ptsname_r on a descriptor we just opened and
    // own; `name` is a writable buffer of the length given; `open` gets the
    // NUL-terminated name ptsname_r wrote. Each descriptor is owned by one File.
    let (master, slave) = unsafe {
        let m = libc::posix_openpt(libc::O_RDWR | libc::O_NOCTTY | libc::O_CLOEXEC);
        assert!(m >= 0, "posix_openpt");
        assert_eq!(libc::grantpt(m), 0, "grantpt");
        assert_eq!(libc::unlockpt(m), 0, "unlockpt");
        let mut name = [0 as libc::c_char; 256];
        assert_eq!(libc::ptsname_r(m, name.as_mut_ptr(), name.len()), 0);
        let s = libc::open(
            name.as_ptr(),
            libc::O_RDWR | libc::O_NOCTTY | libc::O_CLOEXEC,
        );
        assert!(s >= 0, "open the terminal side");
        (File::from_raw_fd(m), File::from_raw_fd(s))
    };
    let screen = Screen(Arc::new((Mutex::new(Vec::new()), AtomicBool::new(false))));
    let sink = screen.clone();
    std::thread::spawn(move || {
        let mut master = master;
        let mut buf = [0u8; 4096];
        // Ends with EIO once no process has the terminal side open.
        while let Ok(n) = master.read(&mut buf) {
            if n == 0 {
                break;
            }
            sink.0.0.lock().unwrap().extend_from_slice(&buf[..n]);
        }
        sink.0.1.store(true, Ordering::SeqCst);
    });
    (Stdio::from(slave), screen)
}

/// Starts `futexhash ARGS` from the source tree with stdin empty, stdout piped and stderr
/// on a new terminal: the child and the [`Screen`] its stderr lands on.
pub fn spawn_on_terminal(args: &[&str]) -> (Child, Screen) {
    let (tty, screen) = terminal();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_futexhash"));
    cmd.args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(tty);
    let child = cmd.spawn().expect("start futexhash");
    // The `Command` holds the terminal side too: dropped, the child's exit closes it.
    drop(cmd);
    (child, screen)
}
