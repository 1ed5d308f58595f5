//! The machine a measurement ran on: CPU model, physical cores and hardware threads (from
//! `/proc/cpuinfo`), the CPUs this process may run on, the kernel release, whether it has
//! the private futex hash (`PR_FUTEX_HASH`, Linux 6.16+, probed with a harmless
//! `PR_FUTEX_HASH_GET_SLOTS`), the futexhash version and the UTC date. The report's first
//! table and `report.json`'s `machine` object show all of it; every `bench` record carries
//! [`MachineInfo::one_line`] in its `machine` field, so a CSV pasted next to another's says
//! which box each row came from.

use serde::Serialize;
use std::sync::OnceLock;

/// `PR_FUTEX_HASH` (include/uapi/linux/prctl.h).
pub const PR_FUTEX_HASH: libc::c_int = 78;
/// Set the number of private hash slots (0 = global hash).
pub const PR_FUTEX_HASH_SET_SLOTS: libc::c_ulong = 1;
/// Read the number of private hash slots (0 = global hash).
pub const PR_FUTEX_HASH_GET_SLOTS: libc::c_ulong = 2;

/// Environment variable that makes [`private_hash_supported`] answer "no", so the
/// fallback for kernels without `PR_FUTEX_HASH` (global hash only) can be tested on a
/// kernel that has it.
pub const ASSUME_NO_PRIVATE_HASH_ENV: &str = "FUTEXHASH_ASSUME_NO_PRIVATE_HASH";

/// `prctl(PR_FUTEX_HASH, PR_FUTEX_HASH_GET_SLOTS)`: the current number of private hash
/// slots (0 = global hash), or the errno (EINVAL: the kernel has no private futex hash).
pub fn get_slots() -> Result<u64, i32> {
    // SAFETY: prctl with integer arguments only; no memory is passed to the kernel.
    let rc = unsafe { libc::prctl(PR_FUTEX_HASH, PR_FUTEX_HASH_GET_SLOTS, 0, 0, 0) };
    if rc < 0 {
        Err(std::io::Error::last_os_error().raw_os_error().unwrap_or(0))
    } else {
        Ok(rc as u64)
    }
}

/// Whether this kernel has the private futex hash (`PR_FUTEX_HASH`). Reading the slot
/// count changes nothing, so this is safe to call in any process.
pub fn private_hash_supported() -> bool {
    if std::env::var_os(ASSUME_NO_PRIVATE_HASH_ENV).is_some_and(|v| v == "1") {
        return false;
    }
    get_slots().is_ok()
}

/// [`MachineInfo::record_field`] of this machine, read once per process (records of one
/// run all name the same machine).
pub fn this_machine_line() -> &'static str {
    static LINE: OnceLock<String> = OnceLock::new();
    LINE.get_or_init(|| MachineInfo::this_machine().record_field())
}

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
            private_hash: private_hash_supported(),
            futexhash: env!("CARGO_PKG_VERSION").to_string(),
            date: utc_iso8601(secs),
        }
    }

    /// The machine as one CSV-safe field: [`MachineInfo::one_line`] with `;` for its
    /// commas, so a record's `machine` column needs no quoting and a script splitting on
    /// commas still finds every column: "Intel(R) Xeon(R) Processor; 2 core(s) / 2
    /// thread(s); Linux 6.18.0".
    pub fn record_field(&self) -> String {
        self.one_line().replace(',', ";")
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
    fn the_record_field_has_no_comma() {
        let m = MachineInfo {
            cpu_model: "Vendor CPU, rev 2".into(),
            cores: 4,
            threads: 8,
            cpus_allowed: 8,
            kernel: "6.18.0".into(),
            private_hash: true,
            futexhash: "0.1.0".into(),
            date: "2026-12-01T00:00:00Z".into(),
        };
        assert_eq!(
            m.record_field(),
            "Vendor CPU; rev 2; 4 core(s) / 8 thread(s); Linux 6.18.0"
        );
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
