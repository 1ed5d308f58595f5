//! Issue 12 item 1: a copy of the binary works away from its source tree ("build here,
//! copy to the NUMA box"). The binary is copied into an empty temporary directory and run
//! from there with an empty environment (`env -i`: no CARGO_MANIFEST_DIR, no HOME), so
//! neither `data/` under the current directory nor the source tree's path can help it.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

struct Copy {
    dir: PathBuf,
    exe: PathBuf,
}

impl Copy {
    fn new(tag: &str) -> Self {
        let dir = std::env::temp_dir().join(format!("fh-copied-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("work")).unwrap();
        let exe = dir.join("futexhash");
        // Copied by `cp`, not std::fs::copy: a write descriptor held by this test process
        // would leak into children other tests fork at the same moment, and executing the
        // copy would then fail with ETXTBSY ("text file busy").
        let ok = Command::new("cp")
            .arg(env!("CARGO_BIN_EXE_futexhash"))
            .arg(&exe)
            .status()
            .expect("run cp")
            .success();
        assert!(ok, "cp of the binary failed");
        Copy { dir, exe }
    }

    fn run(&self, args: &[&str]) -> Output {
        Command::new(&self.exe)
            .args(args)
            .current_dir(self.dir.join("work"))
            .env_clear()
            .env("XDG_CACHE_HOME", self.dir.join("cache"))
            .output()
            .expect("run the copied futexhash")
    }
}

impl Drop for Copy {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

#[test]
fn the_binary_does_not_name_its_data_directory() {
    // A compiled-in path to the source tree's data would only work next to it.
    let bin = std::fs::read(env!("CARGO_BIN_EXE_futexhash")).unwrap();
    let needle = Path::new(env!("CARGO_MANIFEST_DIR")).join("data");
    let needle = needle.to_str().unwrap().as_bytes();
    assert!(
        !bin.windows(needle.len()).any(|w| w == needle),
        "the binary contains {}",
        String::from_utf8_lossy(needle)
    );
}

#[test]
fn sim_with_a_built_in_profile_and_sim_validate_run_from_a_copy() {
    let c = Copy::new("sim");
    let o = c.run(&[
        "sim",
        "--profile",
        "seed-256cpu",
        "-t",
        "4",
        "-b",
        "16",
        "--format",
        "json",
    ]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(v[0]["ops_per_sec"].as_f64().unwrap() > 0.0);

    let o = c.run(&[
        "sim", "validate", "--ops", "100", "--warmup", "20", "--format", "json",
    ]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(!v.as_array().unwrap().is_empty());

    // An unknown profile lists the names that do exist, without contradicting itself.
    let o = c.run(&["sim", "--profile", "no-such-box"]);
    assert_eq!(o.status.code(), Some(2));
    let e = text(&o.stderr);
    assert!(
        e.contains("'no-such-box'") && e.contains("seed-256cpu") && e.contains("this-vm"),
        "{e}"
    );
    assert_eq!(e.trim_end().lines().count(), 1, "{e}");
}

#[test]
fn a_quick_report_runs_from_a_copy() {
    let c = Copy::new("report");
    let out = c.dir.join("rep");
    let o = c.run(&["report", "--quick", "--out", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(
        md.contains("## Prediction: the seed thread's 256-CPU box"),
        "{md}"
    );
}
