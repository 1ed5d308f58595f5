//! The machine a report ran on, as the report's first table and `report.json`'s `machine`
//! object: CPU model, physical cores and hardware threads (from `/proc/cpuinfo`), the CPUs
//! this process may run on, the kernel release, whether it has the private futex hash
//! (`PR_FUTEX_HASH`, Linux 6.16+), the futexhash version and the UTC date.

use serde::Serialize;

/// What a reader needs to know to compare this report's measured figures with another's.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct MachineInfo {
    /// `model name` of the first CPU in `/proc/cpuinfo` ("unknown" if absent).
    pub cpu_model: String,
    /// Distinct `(physical id, core id)` pairs; the logical CPU count if those are absent.
    pub cores: usize,
    /// Logical CPUs (`processor` entries).
    pub threads: usize,
    /// CPUs this process may run on (its affinity mask), which the measurements use.
    pub cpus_allowed: usize,
    /// `/proc/sys/kernel/osrelease`.
    pub kernel: String,
    /// The kernel answers `prctl(PR_FUTEX_HASH)`.
    pub private_hash: bool,
    /// This crate's version.
    pub futexhash: String,
    /// UTC date and time of the run, ISO 8601.
    pub date: String,
}

impl MachineInfo {
    /// Reads this machine.
    pub fn this_machine() -> Self {
        let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
        let (cpu_model, cores, threads) = parse_cpuinfo(&cpuinfo);
        let allowed = std::thread::available_parallelism().map_or(1, |n| n.get());
        let secs = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        MachineInfo {
            cpu_model,
            cores: if cores == 0 {
                threads.max(allowed)
            } else {
                cores
            },
            threads: if threads == 0 { allowed } else { threads },
            cpus_allowed: allowed,
            kernel: std::fs::read_to_string("/proc/sys/kernel/osrelease")
                .map(|s| s.trim().to_string())
                .unwrap_or_else(|_| "unknown".into()),
            private_hash: crate::bench::kernel::private_hash_supported(),
            futexhash: env!("CARGO_PKG_VERSION").to_string(),
            date: utc_iso8601(secs),
        }
    }

    /// One line naming the machine, for table headers: "Intel(R) … , 2 cores / 2 threads,
    /// Linux 6.18.0".
    pub fn one_line(&self) -> String {
        format!(
            "{}, {} core(s) / {} thread(s), Linux {}",
            self.cpu_model, self.cores, self.threads, self.kernel
        )
    }
}

/// `(model name, physical cores, logical CPUs)` from `/proc/cpuinfo` text; cores is 0 when
/// the file has no `physical id`/`core id` lines (some VMs, non-x86).
pub fn parse_cpuinfo(text: &str) -> (String, usize, usize) {
    let mut model = None;
    let mut threads = 0usize;
    let mut cores = std::collections::BTreeSet::new();
    let mut physical = None;
    for line in text.lines() {
        let Some((k, v)) = line.split_once(':') else {
            continue;
        };
        let (k, v) = (k.trim(), v.trim());
        match k {
            "processor" => threads += 1,
            "model name" | "Model" if model.is_none() => model = Some(v.to_string()),
            "physical id" => physical = Some(v.to_string()),
            "core id" => {
                cores.insert((physical.clone().unwrap_or_default(), v.to_string()));
            }
            _ => {}
        }
    }
    (
        model.unwrap_or_else(|| "unknown".into()),
        cores.len(),
        threads,
    )
}

/// Seconds since the Unix epoch as `YYYY-MM-DDTHH:MM:SSZ` (proleptic Gregorian; the
/// days-to-civil conversion of H. Hinnant, "chrono-Compatible Low-Level Date Algorithms").
pub fn utc_iso8601(secs: u64) -> String {
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_match_the_calendar() {
        // Reference values: `date -u -d @N` (GNU coreutils).
        assert_eq!(utc_iso8601(0), "1970-01-01T00:00:00Z");
        assert_eq!(utc_iso8601(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(utc_iso8601(1_764_591_045), "2025-12-01T12:10:45Z");
        assert_eq!(utc_iso8601(4_107_542_399), "2100-02-28T23:59:59Z");
    }

    #[test]
    fn cpuinfo_counts_cores_and_threads() {
        let text = "processor\t: 0\nmodel name\t: Test CPU @ 2.0GHz\nphysical id\t: 0\n\
                    core id\t: 0\n\nprocessor\t: 1\nmodel name\t: Test CPU @ 2.0GHz\n\
                    physical id\t: 0\ncore id\t: 0\n\nprocessor\t: 2\nphysical id\t: 0\n\
                    core id\t: 1\n";
        assert_eq!(parse_cpuinfo(text), ("Test CPU @ 2.0GHz".into(), 2, 3));
        assert_eq!(parse_cpuinfo("processor : 0\n"), ("unknown".into(), 0, 1));
    }
}
