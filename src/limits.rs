//! This machine's and this process's resource limits, read before a run so that a request
//! too big for them is refused up front (one line naming the limit) instead of dying
//! half-way in an allocation abort: `vm.max_map_count`, `kernel.threads-max`, the cgroup v2
//! `pids.max` and `memory.max`, `MemAvailable` (/proc/meminfo), `RLIMIT_AS` and
//! `RLIMIT_NPROC` (getrlimit(2)). `bench` checks its threads, mappings and memory against
//! them (`bench::limits`); `dist` and `keys` their key sets ([`Limits::check_memory`]).

/// The machine's limits (None: no limit found).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Limits {
    /// `vm.max_map_count` minus the mappings this process has now.
    pub free_maps: Option<u64>,
    /// Threads that may still be created: `threads-max`, cgroup `pids.max`, `RLIMIT_NPROC`.
    pub threads: Option<(u64, &'static str)>,
    /// Memory that may still be used: `MemAvailable`, and for this cgroup and each one
    /// above it `memory.max` − (`memory.current` − its inactive page cache).
    pub memory: Option<(u64, &'static str)>,
    /// `RLIMIT_AS`.
    pub address_space: Option<u64>,
    /// Address space this process maps already (`VmSize` of /proc/self/status): what a run
    /// may still map is `RLIMIT_AS` minus this.
    pub address_space_used: u64,
}

fn read_u64(path: &str) -> Option<u64> {
    std::fs::read_to_string(path).ok()?.trim().parse().ok()
}

/// This process's cgroup v2 directory (`/proc/self/cgroup`: `0::/path`).
fn cgroup_dir() -> Option<String> {
    let s = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    let path = s.lines().find_map(|l| l.strip_prefix("0::"))?;
    Some(format!("/sys/fs/cgroup{}", path.trim_end_matches('/')))
}

/// `dir` and every cgroup above it, up to (not including) the cgroup v2 root, whose
/// `memory.max` does not exist: a limit on any ancestor binds this process too.
fn cgroup_ancestry(dir: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut d = dir.trim_end_matches('/').to_string();
    while d.len() > "/sys/fs/cgroup".len() && d.starts_with("/sys/fs/cgroup/") {
        out.push(d.clone());
        d.truncate(d.rfind('/').unwrap_or(0));
    }
    out
}

/// One cgroup's memory figures (bytes; `None` where the file is missing or says `max`).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct CgroupMemory {
    max: Option<u64>,
    current: Option<u64>,
    inactive_file: Option<u64>,
}

impl CgroupMemory {
    fn read(dir: &str) -> Self {
        let inactive_file = std::fs::read_to_string(format!("{dir}/memory.stat"))
            .ok()
            .and_then(|s| {
                s.lines()
                    .find_map(|l| l.strip_prefix("inactive_file "))
                    .and_then(|v| v.trim().parse().ok())
            });
        CgroupMemory {
            max: read_u64(&format!("{dir}/memory.max")),
            current: read_u64(&format!("{dir}/memory.current")),
            inactive_file,
        }
    }
}

/// The memory a run may still take under the tightest `memory.max` of the hierarchy.
/// `memory.current` counts the page cache too, which the kernel reclaims before it
/// OOM-kills; its inactive file pages are subtracted as the reclaimable part (the same
/// estimate `MemAvailable` makes system-wide, mm/show_mem.c `si_mem_available()`).
fn cgroup_memory_headroom(levels: &[CgroupMemory]) -> Option<u64> {
    levels
        .iter()
        .filter_map(|l| {
            let (max, cur) = (l.max?, l.current?);
            let used = cur.saturating_sub(l.inactive_file.unwrap_or(0));
            Some(max.saturating_sub(used))
        })
        .min()
}

fn rlimit(resource: libc::__rlimit_resource_t) -> Option<u64> {
    let mut r = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: `r` is a valid, writable rlimit for the duration of the call.
    let rc = unsafe { libc::getrlimit(resource, &mut r) };
    (rc == 0 && r.rlim_cur != libc::RLIM_INFINITY).then_some(r.rlim_cur)
}

fn min_limit(
    a: Option<(u64, &'static str)>,
    b: Option<(u64, &'static str)>,
) -> Option<(u64, &'static str)> {
    match (a, b) {
        (Some(x), Some(y)) => Some(if y.0 < x.0 { y } else { x }),
        (x, None) => x,
        (None, y) => y,
    }
}

impl Limits {
    /// Reads this machine's and this process's limits.
    pub fn current() -> Self {
        let maps_now = std::fs::read_to_string("/proc/self/maps")
            .map(|s| s.lines().count() as u64)
            .unwrap_or(0);
        let free_maps = read_u64("/proc/sys/vm/max_map_count").map(|m| m.saturating_sub(maps_now));
        let cg = cgroup_dir();
        let cg_u64 = |f: &str| cg.as_ref().and_then(|d| read_u64(&format!("{d}/{f}")));
        let mut threads =
            read_u64("/proc/sys/kernel/threads-max").map(|t| (t, "kernel.threads-max"));
        if let (Some(max), Some(cur)) = (cg_u64("pids.max"), cg_u64("pids.current")) {
            threads = min_limit(
                threads,
                Some((max.saturating_sub(cur), "the cgroup's pids.max")),
            );
        }
        threads = min_limit(
            threads,
            rlimit(libc::RLIMIT_NPROC).map(|n| (n, "RLIMIT_NPROC (ulimit -u)")),
        );
        let available = std::fs::read_to_string("/proc/meminfo").ok().and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("MemAvailable:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
                .map(|kb| kb * 1024)
        });
        let mut memory = available.map(|b| (b, "MemAvailable"));
        let levels: Vec<CgroupMemory> = cg
            .as_deref()
            .map(cgroup_ancestry)
            .unwrap_or_default()
            .iter()
            .map(|d| CgroupMemory::read(d))
            .collect();
        if let Some(room) = cgroup_memory_headroom(&levels) {
            memory = min_limit(memory, Some((room, "the cgroup's memory.max")));
        }
        let address_space_used = std::fs::read_to_string("/proc/self/status")
            .ok()
            .and_then(|s| {
                s.lines()
                    .find_map(|l| l.strip_prefix("VmSize:"))
                    .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
            })
            .map_or(0, |kb| kb * 1024);
        Limits {
            free_maps,
            threads,
            memory,
            address_space: rlimit(libc::RLIMIT_AS),
            address_space_used,
        }
    }

    /// Refuses a run that holds about `bytes` in memory (and as much address space, on top
    /// of what the process maps now), `what` saying where the figure comes from
    /// ("134217728 keys x 80 bytes"): the reason in one line naming the limit.
    pub fn check_memory(&self, bytes: u64, what: &str) -> Result<(), String> {
        if let Some((max, name)) = self.memory
            && bytes > max
        {
            return Err(format!(
                "{what} needs about {} of memory but {name} allows {}",
                human(bytes),
                human(max)
            ));
        }
        if let Some(max) = self.address_space
            && bytes.saturating_add(self.address_space_used) > max
        {
            return Err(format!(
                "{what} needs about {} of address space but RLIMIT_AS (ulimit -v) is {} \
                 and {} of it is mapped already",
                human(bytes),
                human(max),
                human(self.address_space_used)
            ));
        }
        Ok(())
    }
}

/// Bytes in KiB/MiB/GiB/TiB, one decimal.
pub fn human(b: u64) -> String {
    const UNITS: [&str; 5] = ["bytes", "KiB", "MiB", "GiB", "TiB"];
    let mut v = b as f64;
    let mut u = 0;
    while v >= 1024.0 && u + 1 < UNITS.len() {
        v /= 1024.0;
        u += 1;
    }
    if u == 0 {
        format!("{b} bytes")
    } else {
        format!("{v:.1} {}", UNITS[u])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cgroup_headroom_is_the_tightest_level_less_its_reclaimable_cache() {
        let gib = 1u64 << 30;
        let leaf = CgroupMemory {
            max: None,
            current: Some(3 * gib),
            inactive_file: Some(gib),
        };
        // A parent limit of 4 GiB with 3 GiB charged of which 2 GiB is inactive cache:
        // 4 − (3 − 2) = 3 GiB left; a grandparent of 8 GiB with 6 GiB charged, no cache: 2.
        let parent = CgroupMemory {
            max: Some(4 * gib),
            current: Some(3 * gib),
            inactive_file: Some(2 * gib),
        };
        let top = CgroupMemory {
            max: Some(8 * gib),
            current: Some(6 * gib),
            inactive_file: None,
        };
        assert_eq!(cgroup_memory_headroom(&[leaf, parent]), Some(3 * gib));
        assert_eq!(cgroup_memory_headroom(&[leaf, parent, top]), Some(2 * gib));
        assert_eq!(cgroup_memory_headroom(&[leaf]), None);
    }

    #[test]
    fn the_ancestry_walks_up_to_the_cgroup_root() {
        assert_eq!(
            cgroup_ancestry("/sys/fs/cgroup/a/b.slice"),
            vec!["/sys/fs/cgroup/a/b.slice", "/sys/fs/cgroup/a"]
        );
        assert!(cgroup_ancestry("/sys/fs/cgroup").is_empty());
    }

    #[test]
    fn memory_and_address_space_refuse_naming_the_limit() {
        let mem = Limits {
            memory: Some((1 << 30, "MemAvailable")),
            ..Limits::default()
        };
        let e = mem
            .check_memory(10 << 30, "--keys 134217728 (80 bytes a key)")
            .unwrap_err();
        assert_eq!(
            e,
            "--keys 134217728 (80 bytes a key) needs about 10.0 GiB of memory but MemAvailable allows 1.0 GiB"
        );
        assert!(mem.check_memory(1 << 29, "x").is_ok());
        let asp = Limits {
            address_space: Some(512 << 20),
            ..Limits::default()
        };
        assert!(
            asp.check_memory(1 << 30, "k")
                .unwrap_err()
                .contains("RLIMIT_AS (ulimit -v) is 512.0 MiB")
        );
        // What is mapped already counts against RLIMIT_AS: 400 MiB + 200 MiB > 512 MiB.
        let used = Limits {
            address_space_used: 400 << 20,
            ..asp
        };
        assert!(asp.check_memory(200 << 20, "k").is_ok());
        assert!(used.check_memory(200 << 20, "k").is_err());
        assert!(Limits::default().check_memory(u64::MAX, "k").is_ok());
    }
}
