//! Machine profiles (`data/machines/*.toml`): the topology and the cost parameters of the
//! simulator, either fitted by `futexhash sim calibrate` or written by hand.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;

/// Largest CPU count a profile may have.
pub const MAX_CPUS: u32 = 65536;
/// Largest cost, in ns, of any one step of an operation.
pub const MAX_COST_NS: f64 = 1e9;

/// Topology and costs of one machine. Costs are nanoseconds per operation.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MachineProfile {
    /// Free text: which machine, how it was calibrated.
    pub name: String,
    /// Online CPUs.
    pub cpus: u32,
    /// NUMA nodes; CPUs are split evenly, node `n` holding CPUs `n·C/N .. (n+1)·C/N`.
    pub nodes: u32,
    /// Work outside the bucket lock: syscall entry/exit, `get_futex_key()`, the loop.
    pub outside_ns: f64,
    /// Bucket lock hold time: compare the futex word, unlock.
    pub hold_ns: f64,
    /// Lock hand-off when the lock's cache line moves to another CPU of the same node.
    pub handoff_local_ns: f64,
    /// Lock hand-off across nodes.
    pub handoff_remote_ns: f64,
    /// Cache-line migration of an uncontended bucket last locked by another CPU of the same
    /// node (across nodes: times `handoff_remote_ns / handoff_local_ns`). Not fitted.
    #[serde(default)]
    pub line_miss_ns: f64,
    /// Cost of one hash per hasher name (from `cargo bench`); missing names use `default`.
    #[serde(default)]
    pub hash_ns: BTreeMap<String, f64>,
}

impl MachineProfile {
    /// The hash cost of `hasher` on this machine (0 when the profile has no figure).
    pub fn hash_cost(&self, hasher: &str) -> f64 {
        self.hash_ns
            .get(hasher)
            .or_else(|| self.hash_ns.get("default"))
            .copied()
            .unwrap_or(0.0)
    }

    /// `handoff_remote_ns / handoff_local_ns` (1 when the local cost is 0).
    pub fn remote_ratio(&self) -> f64 {
        if self.handoff_local_ns > 0.0 {
            self.handoff_remote_ns / self.handoff_local_ns
        } else {
            1.0
        }
    }

    /// The CPUs of node `node`.
    pub fn node_cpus(&self, node: u32) -> Vec<u32> {
        let per = self.cpus / self.nodes.max(1);
        (node * per..(node + 1) * per).collect()
    }

    /// Checks that the numbers make sense; the error names the bad field.
    pub fn validate(&self) -> Result<(), String> {
        if self.cpus == 0 || self.nodes == 0 || self.cpus % self.nodes != 0 || self.cpus > MAX_CPUS
        {
            return Err(format!(
                "cpus ({}) must be a positive multiple of nodes ({}), at most {MAX_CPUS}",
                self.cpus, self.nodes
            ));
        }
        let costs = [
            ("outside_ns", self.outside_ns),
            ("hold_ns", self.hold_ns),
            ("handoff_local_ns", self.handoff_local_ns),
            ("handoff_remote_ns", self.handoff_remote_ns),
            ("line_miss_ns", self.line_miss_ns),
        ];
        let hashes = self.hash_ns.iter().map(|(k, v)| (k.as_str(), *v));
        for (what, v) in costs.into_iter().chain(hashes) {
            // Costs are summed in picoseconds in u64; one second per operation is far
            // beyond any machine and keeps every sum far from overflow.
            if !(v.is_finite() && (0.0..=MAX_COST_NS).contains(&v)) {
                return Err(format!(
                    "{what} = {v} must be a number of nanoseconds from 0 to {MAX_COST_NS:e}"
                ));
            }
        }
        Ok(())
    }

    /// Reads and validates a profile file.
    pub fn load(path: &Path) -> Result<Self, String> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("cannot read profile '{}': {e}", path.display()))?;
        let p: MachineProfile = toml::from_str(&text).map_err(|e| {
            // The message names the field ("missing field `cpus`"); the span says where.
            let at = e.span().map_or(String::new(), |sp| {
                let start = sp.start.min(text.len());
                let line = text[..start].matches('\n').count() + 1;
                // The key of that line, when the error is in its value.
                let key = text.lines().nth(line - 1).and_then(|l| l.split_once('='));
                match key.map(|(k, _)| k.trim()).filter(|k| !k.is_empty()) {
                    Some(k) if !e.message().contains('`') => format!(" (field `{k}`, line {line})"),
                    _ => format!(" (line {line})"),
                }
            });
            format!(
                "profile '{}' is not valid: {}{at}",
                path.display(),
                e.message().trim()
            )
        })?;
        p.validate()
            .map_err(|e| format!("profile '{}': {e}", path.display()))?;
        Ok(p)
    }

    /// The profile as TOML text.
    pub fn to_toml(&self) -> String {
        toml::to_string_pretty(self).expect("profile serialises")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn toml_round_trip_and_validation() {
        let p = MachineProfile {
            name: "x".into(),
            cpus: 4,
            nodes: 2,
            outside_ns: 1.0,
            hold_ns: 2.0,
            handoff_local_ns: 3.0,
            handoff_remote_ns: 4.0,
            line_miss_ns: 0.5,
            hash_ns: [("jhash2".to_string(), 5.0)].into(),
        };
        let back: MachineProfile = toml::from_str(&p.to_toml()).unwrap();
        assert_eq!(back, p);
        assert_eq!(p.hash_cost("jhash2"), 5.0);
        assert_eq!(p.hash_cost("crc32"), 0.0);
        assert_eq!(p.node_cpus(1), vec![2, 3]);
        let mut bad = p.clone();
        bad.cpus = 3;
        assert!(bad.validate().unwrap_err().contains("cpus"));
        bad.cpus = 1 << 20;
        assert!(bad.validate().unwrap_err().contains("cpus"));
        bad = p.clone();
        bad.hold_ns = f64::NAN;
        assert!(bad.validate().unwrap_err().contains("hold_ns"));
        bad.hold_ns = 1e300;
        assert!(bad.validate().unwrap_err().contains("hold_ns"));
        bad = p;
        bad.hash_ns.insert("crc32".into(), f64::NAN);
        assert!(bad.validate().unwrap_err().contains("crc32"));
        assert!(toml::from_str::<MachineProfile>("name='a'\ncpus=1").is_err());
    }
}
