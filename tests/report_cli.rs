//! `futexhash report --quick`, the README's main job, end to end on this machine.

mod common;
use common::futexhash;

#[test]
fn quick_report_writes_markdown_and_every_plot_it_refers_to() {
    let dir = std::env::temp_dir().join(format!("fh-report-{}", std::process::id()));
    let o = futexhash(&["report", "--quick", "--out", dir.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let md = std::fs::read_to_string(dir.join("report.md")).unwrap();
    for heading in [
        "## Machine",
        "## Hash cost",
        "## Distribution quality",
        "## Throughput on this machine: model table and real kernel",
        "## Prediction: the seed thread's 256-CPU box",
    ] {
        assert!(md.contains(heading), "missing {heading}");
    }
    let mut plots = 0;
    for line in md.lines().filter(|l| l.starts_with("![")) {
        let file = line.rsplit_once('(').unwrap().1.trim_end_matches(')');
        let svg = std::fs::read_to_string(dir.join(file)).unwrap();
        assert!(svg.contains("<svg"), "{file} is not an SVG");
        plots += 1;
    }
    assert!(plots >= 6, "{plots} plots");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn unwritable_output_directory_is_exit_2() {
    let o = futexhash(&["report", "--quick", "--out", "/proc/futexhash-nope"]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&o.stderr)
            .trim_end()
            .lines()
            .count(),
        1
    );
}

#[test]
fn bad_published_data_is_exit_2_and_writes_nothing() {
    let base = std::env::temp_dir().join(format!("fh-report-bad-{}", std::process::id()));
    let data = base.join("data");
    std::fs::create_dir_all(&data).unwrap();
    for f in [
        "buckets-240threads-256cpu.csv",
        "algos-240threads-256cpu.csv",
        "buckets-110threads-node1-256cpu.csv",
    ] {
        std::fs::write(data.join(f), "garbage\n").unwrap();
    }
    let out = base.join("out");
    let o = futexhash(&[
        "report",
        "--quick",
        "--data",
        data.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(!out.exists(), "nothing may be written on bad input");
    std::fs::remove_dir_all(&base).unwrap();
}
