//! The command of `capture -- CMD`, forked and held at the door: the child blocks reading a
//! pipe until bpftrace is attached, then `execv`s the command (see [`super::run`]'s module
//! docs for the order of events), and is waited for, signalled and reaped from here.

use super::error::CaptureError;
use std::ffi::{CString, OsStr, OsString};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::thread;
use std::time::{Duration, Instant};

/// How long a started command may take to exit after SIGTERM.
pub const TARGET_EXIT_TIMEOUT: Duration = Duration::from_secs(1);

/// A command forked and held before `execv` until [`HeldChild::release`].
pub(super) struct HeldChild {
    pub(super) pid: libc::pid_t,
    go: libc::c_int,
    exec_status: libc::c_int,
    reaped: Option<i32>,
}

fn pipe_cloexec() -> Result<[libc::c_int; 2], CaptureError> {
    let mut fds = [0 as libc::c_int; 2];
    // SAFETY: `fds` is a valid two-element array for pipe2 to fill.
    let r = unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) };
    if r != 0 {
        return Err(CaptureError::Runtime(format!(
            "pipe: {}",
            std::io::Error::last_os_error()
        )));
    }
    Ok(fds)
}

impl HeldChild {
    pub(super) fn spawn(prog: &Path, argv: &[OsString]) -> Result<HeldChild, CaptureError> {
        let cstr = |s: &OsStr| {
            CString::new(s.as_bytes()).map_err(|_| {
                CaptureError::Target(format!(
                    "argument '{}' contains a NUL byte",
                    s.to_string_lossy()
                ))
            })
        };
        let prog_c = cstr(prog.as_os_str())?;
        let args_c: Vec<CString> = argv.iter().map(|a| cstr(a)).collect::<Result<_, _>>()?;
        let mut argv_p: Vec<*const libc::c_char> = args_c.iter().map(|a| a.as_ptr()).collect();
        argv_p.push(std::ptr::null());
        let [go_r, go_w] = pipe_cloexec()?;
        let [st_r, st_w] = pipe_cloexec()?;
        // SAFETY: getpid has no preconditions.
        let parent = unsafe { libc::getpid() };
        // SAFETY: fork is called with everything the child needs already allocated; the
        // child only calls async-signal-safe functions (close, prctl, getppid, read, execv,
        // write, _exit) on memory prepared before the fork, so the state of other threads'
        // locks (e.g. malloc's) does not matter.
        let pid = unsafe { libc::fork() };
        if pid < 0 {
            return Err(CaptureError::Runtime(format!(
                "fork: {}",
                std::io::Error::last_os_error()
            )));
        }
        if pid == 0 {
            // SAFETY: in the child: only async-signal-safe calls on pre-fork memory (see
            // above); every path ends in execv or _exit, never returning into Rust code.
            unsafe {
                libc::close(go_w);
                libc::close(st_r);
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM);
                if libc::getppid() != parent {
                    libc::_exit(127);
                }
                let mut b = 0u8;
                loop {
                    let n = libc::read(go_r, (&mut b as *mut u8).cast(), 1);
                    if n == 1 {
                        break;
                    }
                    if n < 0 && *libc::__errno_location() == libc::EINTR {
                        continue;
                    }
                    libc::_exit(127); // the capture gave up: never run the command
                }
                libc::execv(prog_c.as_ptr(), argv_p.as_ptr());
                let e = *libc::__errno_location();
                libc::write(st_w, (&e as *const libc::c_int).cast(), 4);
                libc::_exit(127);
            }
        }
        // SAFETY: closing the child's ends of our own pipes in the parent.
        unsafe {
            libc::close(go_r);
            libc::close(st_w);
        }
        Ok(HeldChild {
            pid,
            go: go_w,
            exec_status: st_r,
            reaped: None,
        })
    }

    /// Lets the child exec; `Err` if the exec failed.
    pub(super) fn release(&mut self, prog: &Path) -> Result<(), CaptureError> {
        let b = 1u8;
        // SAFETY: writing one byte from a valid buffer to our own pipe, then closing it.
        unsafe {
            libc::write(self.go, (&b as *const u8).cast(), 1);
            libc::close(self.go);
        }
        self.go = -1;
        let mut e: libc::c_int = 0;
        // SAFETY: reading at most 4 bytes into a 4-byte integer; EOF (0) means the exec
        // succeeded (the pipe is close-on-exec).
        let n = unsafe { libc::read(self.exec_status, (&mut e as *mut libc::c_int).cast(), 4) };
        // SAFETY: closing our own descriptor once.
        unsafe { libc::close(self.exec_status) };
        self.exec_status = -1;
        if n == 4 {
            self.wait(true);
            return Err(CaptureError::Target(format!(
                "cannot run '{}': {}",
                prog.display(),
                std::io::Error::from_raw_os_error(e)
            )));
        }
        Ok(())
    }

    /// Reaps the child (blocking or not); `true` once it has exited.
    pub(super) fn wait(&mut self, block: bool) -> bool {
        if self.reaped.is_some() {
            return true;
        }
        let mut status = 0;
        // SAFETY: waitpid on our own child with a valid status pointer.
        let r =
            unsafe { libc::waitpid(self.pid, &mut status, if block { 0 } else { libc::WNOHANG }) };
        if r == self.pid {
            self.reaped = Some(status);
            true
        } else {
            r < 0 // ECHILD: nothing left to wait for
        }
    }

    pub(super) fn signal(&self, sig: libc::c_int) {
        if self.reaped.is_none() {
            // SAFETY: signalling our own, not yet reaped child (its pid cannot be reused).
            unsafe { libc::kill(self.pid, sig) };
        }
    }

    /// Ends the child if it still runs: SIGTERM, then SIGKILL after `TARGET_EXIT_TIMEOUT`.
    pub(super) fn terminate(&mut self) {
        self.terminate_by(Instant::now() + TARGET_EXIT_TIMEOUT);
    }

    /// Ends the child if it still runs: SIGTERM, then SIGKILL at `kill_at`.
    pub(super) fn terminate_by(&mut self, kill_at: Instant) {
        if self.wait(false) {
            return;
        }
        self.signal(libc::SIGTERM);
        while !self.wait(false) {
            if Instant::now() >= kill_at {
                self.signal(libc::SIGKILL);
                self.wait(true);
                break;
            }
            thread::sleep(Duration::from_millis(20));
        }
    }

    pub(super) fn exit_code(&self) -> Option<i32> {
        let s = self.reaped?;
        libc::WIFEXITED(s).then(|| libc::WEXITSTATUS(s))
    }
}

impl Drop for HeldChild {
    fn drop(&mut self) {
        for fd in [self.go, self.exec_status] {
            if fd >= 0 {
                // SAFETY: closing our own descriptor that has not been closed yet.
                unsafe { libc::close(fd) };
            }
        }
        self.terminate();
    }
}
