//! The bpftrace script: which probes exist on this kernel, and the program text whose
//! `printf`s are exactly the event lines of [`super::format`].
//!
//! Following the process tree: a map `@f` holds the followed thread-group ids (the roots
//! are put there in `BEGIN`, which bpftrace runs after every probe is attached);
//! `sched_process_fork` in a followed process adds the child's id (a new thread's id is
//! added too; it is removed again when that thread exits), so every thread and every
//! descendant is followed from its first instruction. Each syscall probe is filtered on
//! `@f[pid]` (`pid` is the thread-group id in bpftrace).
//!
//! The kernel's own key: `get_futex_key()` (`kernel/futex/core.c`) fills `union futex_key
//! *key` (its third argument) and returns 0; `kprobe` stashes the pointer per thread and
//! `kretprobe` reads `both.ptr` (offset 0), `both.word` (8) and `both.offset` (16). This
//! needs `kprobe_events` in tracefs (CONFIG_KPROBE_EVENTS) and a traceable, not inlined
//! `get_futex_key`.

use super::format::{Syscall, WAITV_MAX};
use std::path::{Path, PathBuf};

/// How the events are collected.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProbePath {
    /// Syscall tracepoints only: arguments and `mm`; shared keys modelled as anonymous.
    Tracepoint,
    /// Tracepoints plus kprobe/kretprobe on `get_futex_key()`: the kernel's own keys.
    Kprobe,
}

impl ProbePath {
    /// The header's `probe=` value.
    pub fn as_str(self) -> &'static str {
        match self {
            ProbePath::Tracepoint => "tracepoint",
            ProbePath::Kprobe => "kprobe",
        }
    }
}

/// What this kernel offers, as far as the capture needs it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KernelFeatures {
    /// The tracefs events directory that was found.
    pub events_dir: PathBuf,
    /// The futex syscalls that have a `sys_enter_` tracepoint.
    pub syscalls: Vec<Syscall>,
    /// `sched_process_fork`/`sched_process_exit` exist.
    pub sched: bool,
    /// Why the kernel-key path cannot be used (`None`: it can be tried).
    pub no_kernel_key: Option<String>,
}

/// Where tracefs may be mounted.
pub const TRACEFS_DIRS: [&str; 2] = ["/sys/kernel/tracing", "/sys/kernel/debug/tracing"];

/// Looks at tracefs and kallsyms (no BPF involved). `Err` says what is missing.
pub fn detect_features() -> Result<KernelFeatures, String> {
    let dirs: Vec<&Path> = TRACEFS_DIRS.iter().map(Path::new).collect();
    detect_features_in(&dirs, Path::new("/proc/kallsyms"))
}

/// [`detect_features`] with the tracefs candidates and the kallsyms file given.
pub fn detect_features_in(tracefs: &[&Path], kallsyms: &Path) -> Result<KernelFeatures, String> {
    let root = tracefs
        .iter()
        .copied()
        .find(|d| d.join("events").is_dir())
        .ok_or_else(|| {
            "tracefs is not mounted (no /sys/kernel/tracing/events): bpftrace needs it for \
             tracepoints; mount it with: mount -t tracefs nodev /sys/kernel/tracing"
                .to_string()
        })?;
    let events = root.join("events");
    let syscalls: Vec<Syscall> = Syscall::ALL
        .into_iter()
        .filter(|s| {
            events
                .join("syscalls")
                .join(format!("sys_enter_{}", s.name()))
                .is_dir()
        })
        .collect();
    if !syscalls.contains(&Syscall::Futex) {
        return Err(
            "this kernel has no tracepoint syscalls:sys_enter_futex (needs CONFIG_FTRACE_SYSCALLS)"
                .into(),
        );
    }
    let sched = ["sched_process_fork", "sched_process_exit"]
        .iter()
        .all(|e| events.join("sched").join(e).is_dir());
    if !sched {
        return Err(
            "this kernel has no tracepoints sched:sched_process_fork/exit, needed to follow the process tree"
                .into(),
        );
    }
    let no_kernel_key = if !root.join("kprobe_events").exists() {
        Some("no kprobe_events in tracefs (CONFIG_KPROBE_EVENTS)".to_string())
    } else {
        match std::fs::read_to_string(kallsyms) {
            Ok(s) if s.lines().any(|l| l.ends_with(" get_futex_key")) => None,
            Ok(_) => Some("get_futex_key is not in /proc/kallsyms (inlined?)".into()),
            Err(e) => Some(format!("cannot read {}: {e}", kallsyms.display())),
        }
    };
    Ok(KernelFeatures {
        events_dir: events,
        syscalls,
        sched,
        no_kernel_key,
    })
}

/// The common prefix of every event line: `KIND T_NS TGID TID MM`.
const PREFIX: &str = "%lu %d %d 0x%lx";
const PREFIX_ARGS: &str = "nsecs, pid, tid, (uint64)curtask->mm";

/// The bpftrace program for `syscalls` (those present), following `roots` and their
/// descendants, with the kernel-key probes when `path` is [`ProbePath::Kprobe`]. It prints
/// `# ready` once everything is attached.
pub fn generate(syscalls: &[Syscall], roots: &[u32], path: ProbePath) -> String {
    let mut s = String::from("// generated by futexhash capture; format: docs/capture.md\n");
    s.push_str("BEGIN {\n");
    for r in roots {
        s.push_str(&format!("  @f[{r}] = 1;\n"));
    }
    s.push_str("  printf(\"# ready\\n\");\n}\n");
    s.push_str(&format!(
        "tracepoint:sched:sched_process_fork /@f[pid]/ {{\n  @f[args->child_pid] = 1;\n  printf(\"fork {PREFIX} %d\\n\", {PREFIX_ARGS}, args->child_pid);\n}}\n"
    ));
    s.push_str(&format!(
        "tracepoint:sched:sched_process_exit /@f[pid]/ {{\n  printf(\"exit {PREFIX}\\n\", {PREFIX_ARGS});\n  if (tid != pid) {{ delete(@f[tid]); }}\n}}\n"
    ));
    // A vector of struct futex_waitv { u64 val; u64 uaddr; u32 flags; u32 __reserved; }.
    let entries = |n: &str| {
        format!(
            "  $w = (uint64)args->waiters;\n  $n = (uint64){n};\n  $i = (uint64)0;\n  while ($i < $n && $i < {WAITV_MAX}) {{\n    $e = $w + $i * 24;\n    printf(\"v %lu %d %d 0x%lx %lu %u 0x%lx %lu\\n\", $t, pid, tid, (uint64)curtask->mm, $i, *(uint32 *)uptr($e + 16), *(uint64 *)uptr($e + 8), *(uint64 *)uptr($e));\n    $i++;\n  }}\n"
        )
    };
    for &sc in syscalls {
        let body = match sc {
            Syscall::Futex => format!(
                "  printf(\"futex {PREFIX} %d 0x%lx %u 0x%lx 0x%lx %u\\n\", {PREFIX_ARGS}, args->op, (uint64)args->uaddr, args->val, (uint64)args->utime, (uint64)args->uaddr2, args->val3);\n"
            ),
            Syscall::FutexWait => format!(
                "  printf(\"futex_wait {PREFIX} %u 0x%lx %lu 0x%lx\\n\", {PREFIX_ARGS}, args->flags, (uint64)args->uaddr, args->val, args->mask);\n"
            ),
            Syscall::FutexWake => format!(
                "  printf(\"futex_wake {PREFIX} %u 0x%lx 0x%lx %d\\n\", {PREFIX_ARGS}, args->flags, (uint64)args->uaddr, args->mask, args->nr);\n"
            ),
            Syscall::FutexWaitv => format!(
                "  $t = nsecs;\n  printf(\"futex_waitv %lu %d %d 0x%lx %u %u\\n\", $t, pid, tid, (uint64)curtask->mm, args->flags, args->nr_futexes);\n{}",
                entries("args->nr_futexes")
            ),
            Syscall::FutexRequeue => format!(
                "  $t = nsecs;\n  printf(\"futex_requeue %lu %d %d 0x%lx %u %d %d\\n\", $t, pid, tid, (uint64)curtask->mm, args->flags, args->nr_wake, args->nr_requeue);\n{}",
                entries("2")
            ),
        };
        s.push_str(&format!(
            "tracepoint:syscalls:sys_enter_{} /@f[pid]/ {{\n{body}}}\n",
            sc.name()
        ));
    }
    if path == ProbePath::Kprobe {
        s.push_str("kprobe:get_futex_key /@f[pid]/ {\n  @ku[tid] = arg0;\n  @kp[tid] = arg2;\n}\n");
        s.push_str(&format!(
            "kretprobe:get_futex_key /@f[pid] && @kp[tid]/ {{\n  $k = @kp[tid];\n  printf(\"key {PREFIX} 0x%lx 0x%lx 0x%lx %u %d\\n\", {PREFIX_ARGS}, @ku[tid], *(uint64 *)$k, *(uint64 *)($k + 8), *(uint32 *)($k + 16), (int32)retval);\n  delete(@kp[tid]);\n  delete(@ku[tid]);\n}}\n"
        ));
    }
    // Maps are printed at exit unless cleared.
    s.push_str("END {\n  clear(@f);\n");
    if path == ProbePath::Kprobe {
        s.push_str("  clear(@kp);\n  clear(@ku);\n");
    }
    s.push_str("}\n");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn features_are_read_from_tracefs_and_kallsyms() {
        let d = std::env::temp_dir().join(format!("futexhash-tracefs-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        let ks = d.join("kallsyms");
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(&ks, "ffffffff814494a0 T get_futex_key\n").unwrap();
        let e = detect_features_in(&[&d], &ks).unwrap_err();
        assert!(e.contains("tracefs is not mounted"), "{e}");
        let ev = d.join("events");
        std::fs::create_dir_all(ev.join("syscalls/sys_enter_futex_waitv")).unwrap();
        let e = detect_features_in(&[&d], &ks).unwrap_err();
        assert!(
            e.contains("sys_enter_futex") && e.contains("CONFIG_FTRACE_SYSCALLS"),
            "{e}"
        );
        std::fs::create_dir_all(ev.join("syscalls/sys_enter_futex")).unwrap();
        let e = detect_features_in(&[&d], &ks).unwrap_err();
        assert!(e.contains("sched_process_fork"), "{e}");
        std::fs::create_dir_all(ev.join("sched/sched_process_fork")).unwrap();
        std::fs::create_dir_all(ev.join("sched/sched_process_exit")).unwrap();
        let f = detect_features_in(&[&d], &ks).unwrap();
        assert_eq!(f.syscalls, vec![Syscall::Futex, Syscall::FutexWaitv]);
        assert!(f.no_kernel_key.unwrap().contains("kprobe_events"));
        std::fs::write(d.join("kprobe_events"), "").unwrap();
        assert_eq!(detect_features_in(&[&d], &ks).unwrap().no_kernel_key, None);
        std::fs::write(&ks, "ffffffff81000000 T other\n").unwrap();
        let f = detect_features_in(&[&d], &ks).unwrap();
        assert!(f.no_kernel_key.unwrap().contains("inlined"));
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn script_names_every_probe_and_root() {
        let s = generate(&Syscall::ALL, &[42, 43], ProbePath::Kprobe);
        for sc in Syscall::ALL {
            assert!(
                s.contains(&format!("sys_enter_{} /@f[pid]/", sc.name())),
                "{sc:?}"
            );
        }
        assert!(s.contains("@f[42] = 1;") && s.contains("@f[43] = 1;"));
        assert!(s.contains("kretprobe:get_futex_key"));
        let t = generate(&[Syscall::Futex], &[1], ProbePath::Tracepoint);
        assert!(!t.contains("get_futex_key") && !t.contains("futex_waitv"));
        // Braces balance (a cheap syntax check; the real one is the bpftrace test).
        assert_eq!(s.matches('{').count(), s.matches('}').count());
    }
}
