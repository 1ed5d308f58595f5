//! Replays the committed fuzz seed corpus (`fuzz/seeds/<target>/*`) through the same target
//! bodies the fuzzer runs, so every crash ever found and fixed stays fixed.

use std::path::Path;

#[test]
fn replay_committed_seed_corpus() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/seeds");
    let mut total = 0;
    for target in futexhash::fuzz_targets::TARGETS {
        let dir = root.join(target);
        let entries: Vec<_> = std::fs::read_dir(&dir)
            .unwrap_or_else(|e| panic!("seed dir {} missing: {e}", dir.display()))
            .map(|e| e.unwrap().path())
            .collect();
        assert!(!entries.is_empty(), "no seeds for target {target}");
        for path in entries {
            let data = std::fs::read(&path).unwrap();
            // Names the seed in the output if the target panics on it.
            eprintln!("replaying {}", path.display());
            assert!(
                futexhash::fuzz_targets::run(target, &data),
                "unknown target {target}"
            );
            total += 1;
        }
    }
    assert!(total > 0);
}
