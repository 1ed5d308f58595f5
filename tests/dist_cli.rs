//! `futexhash dist` end to end: the spec's JSON fields, table/plot output, bad input → 2.

use std::process::{Command, Output};

fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_futexhash"))
        .args(args)
        .output()
        .expect("run futexhash")
}

const FIELDS: [&str; 14] = [
    "algo",
    "workload",
    "keys",
    "buckets",
    "reduce",
    "chi2",
    "p_value",
    "empty",
    "empty_expected",
    "collisions",
    "collisions_expected",
    "max_load",
    "max_load_expected",
    "verdict",
];

#[test]
fn json_has_every_spec_field_for_every_algo_and_size() {
    let out = run(&[
        "dist",
        "--algo",
        "all",
        "--buckets",
        "2..131072",
        "--workload",
        "perf",
        "--keys",
        "20000",
        "--format",
        "json",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let recs = v.as_array().unwrap();
    assert_eq!(recs.len(), 22 * 17);
    for r in recs {
        for f in FIELDS {
            assert!(r.get(f).is_some(), "missing {f} in {r}");
        }
        assert_eq!(r["workload"], "perf");
        assert_eq!(r["keys"], 20000);
        assert_eq!(r["reduce"], "mask");
        assert!(["pass", "warn", "fail"].contains(&r["verdict"].as_str().unwrap()));
        let (n, m) = (20000.0f64, r["buckets"].as_f64().unwrap());
        // Independent check of the expectations: E[empty] = m(1-1/m)^n.
        let e = m * (1.0 - 1.0 / m).powf(n);
        let got = r["empty_expected"].as_f64().unwrap();
        assert!(
            (got - e).abs() <= 1e-9 * e.max(1e-300) + 1e-300,
            "{got} vs {e}"
        );
        let c = r["collisions_expected"].as_f64().unwrap();
        assert!((c - (n - m + e)).abs() <= 1e-6 * c.max(1.0), "{c}");
        // collisions = keys - occupied = keys - (buckets - empty)
        let occupied = m - r["empty"].as_f64().unwrap();
        assert_eq!(r["collisions"].as_f64().unwrap(), n - occupied);
    }
    let names: std::collections::BTreeSet<_> =
        recs.iter().map(|r| r["algo"].as_str().unwrap()).collect();
    assert!(names.contains("hash_long_old-addr") && names.contains("siphash"));
}

#[test]
fn table_csv_plot_and_diagnostics() {
    let dir = std::env::temp_dir().join(format!("futexhash-dist-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let svg = dir.join("c.svg");
    let out = run(&[
        "dist",
        "--workload",
        "pages",
        "--keys",
        "4096",
        "--buckets",
        "16..4096",
        "--algo",
        "hash_long,hash_long_old",
        "--reduce",
        "high",
        "--stat",
        "verdict",
        "--plot",
        svg.to_str().unwrap(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("+----"), "{text}");
    assert!(
        text.contains("| buckets (high) | hash_long | hash_long_old |"),
        "{text}"
    );
    assert!(
        text.contains("fail"),
        "hash_long_old on pages must fail: {text}"
    );
    assert!(
        std::fs::read_to_string(&svg)
            .unwrap()
            .contains("hash_long_old")
    );

    let out = run(&[
        "dist",
        "--keys",
        "1000",
        "--buckets",
        "64",
        "--format",
        "csv",
    ]);
    let csv = String::from_utf8(out.stdout).unwrap();
    assert!(
        csv.starts_with("algo,workload,keys,buckets,reduce,chi2,p_value,"),
        "{csv}"
    );
    assert_eq!(csv.lines().count(), 1 + 8);

    let out = run(&[
        "dist",
        "--diagnostics",
        "--algo",
        "crc32,siphash",
        "--samples",
        "256",
        "--format",
        "json",
    ]);
    assert!(out.status.success());
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v[0]["diff_flagged"], true);
    assert_eq!(v[1]["diff_flagged"], false);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn traces_in_the_repository_load() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/data/traces");
    for f in std::fs::read_dir(dir).unwrap() {
        let p = f.unwrap().path();
        if p.extension().is_some_and(|e| e == "strace") {
            let w = format!("trace:{}", p.display());
            let out = run(&[
                "dist",
                "--workload",
                &w,
                "--buckets",
                "16",
                "--format",
                "json",
            ]);
            assert!(
                out.status.success(),
                "{w}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            let err = String::from_utf8_lossy(&out.stderr);
            assert!(err.contains("distinct keys"), "{err}");
        }
    }
}

#[test]
fn bad_input_exits_2_with_one_line() {
    let dir = std::env::temp_dir().join(format!("futexhash-distbad-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let nofutex = dir.join("nofutex.strace");
    std::fs::write(&nofutex, "12 +++ exited with 0 +++\n").unwrap();
    let nofutex = format!("trace:{}", nofutex.display());
    let cases: Vec<Vec<&str>> = vec![
        vec!["dist", "--algo", "nope"],
        vec!["dist", "--buckets", "3"],
        vec!["dist", "--buckets", "2..1073741824"],
        vec!["dist", "--workload", "bogus"],
        vec!["dist", "--workload", "stride:6"],
        vec!["dist", "--workload", "trace:/no/such/file"],
        vec!["dist", "--workload", &nofutex],
        vec!["dist", "--keys", "0"],
        vec!["dist", "--keys", "12x"],
        vec!["dist", "--reduce", "low"],
        vec!["dist", "--keys", "100", "--output", "/no/such/dir/out.json"],
        vec!["dist", "--keys", "100", "--plot", "/no/such/dir/p.svg"],
    ];
    for c in &cases {
        let out = run(c);
        assert_eq!(out.status.code(), Some(2), "{c:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(err.trim_end().lines().count(), 1, "{c:?}: {err}");
        assert!(!err.contains("panicked"), "{c:?}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `--diagnostics` has nothing to plot (numbers per hasher, no table size to draw them
/// against): `--plot` with it is refused before any work, one line naming both flags, and
/// no SVG appears. It used to exit 0 without the plot and without a word.
#[test]
fn diagnostics_with_plot_is_refused_before_any_work() {
    let dir = std::env::temp_dir().join(format!("futexhash-distdiag-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let svg = dir.join("d.svg");
    for args in [
        ["dist", "--diagnostics", "--samples", "64", "--plot"],
        ["dist", "--samples", "64", "--diagnostics", "--plot"],
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_futexhash"))
            .args(args)
            .arg(&svg)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{err}");
        assert!(
            err.contains("--diagnostics") && err.contains("--plot"),
            "{err}"
        );
        assert!(out.stdout.is_empty(), "{args:?}: work was done");
        assert!(!svg.exists());
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The y tick labels of an SVG the plot code drew (the text of each `<text>` element).
fn svg_texts(svg: &str) -> Vec<String> {
    svg.split("<text")
        .skip(1)
        .filter_map(|t| {
            let body = &t[t.find('>')? + 1..];
            Some(body[..body.find("</text>")?].trim().to_string())
        })
        .collect()
}

/// A verdict is a category: `--stat verdict --plot` labels the y axis pass, warn, fail
/// at 0, 1, 2, and draws no number ticks between them (it drew 0.0, 0.5, … 2.0 and no
/// names).
#[test]
fn a_verdict_plot_labels_its_axis_with_the_verdicts() {
    let dir = std::env::temp_dir().join(format!("futexhash-distverdict-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let svg = dir.join("v.svg");
    let out = Command::new(env!("CARGO_BIN_EXE_futexhash"))
        .args(["dist", "--algo", "jhash2,crc32", "--keys", "512"])
        .args([
            "--buckets",
            "16..256",
            "--stat",
            "verdict",
            "--format",
            "csv",
        ])
        .arg("--plot")
        .arg(&svg)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let texts = svg_texts(&std::fs::read_to_string(&svg).unwrap());
    for name in ["pass", "warn", "fail"] {
        assert_eq!(
            texts.iter().filter(|t| *t == name).count(),
            1,
            "{name}: {texts:?}"
        );
    }
    for number in ["0.0", "0.5", "1.0", "1.5", "2.0", "0", "1", "2"] {
        assert!(!texts.iter().any(|t| t == number), "{number}: {texts:?}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `--diagnostics` judges the 32-bit hash of random private keys, per hasher: no table
/// size, reduction, statistic or workload enters it. Each of those flags, given with it,
/// is refused before any work with one line naming the flag, also when its value is the
/// default (`--stat collisions`, `--buckets 2..131072`, `--reduce mask`); they used to be
/// accepted and silently ignored (exit 0, the diagnostics table).
#[test]
fn diagnostics_refuses_the_flags_it_has_no_use_for() {
    let cases: [(&str, &str); 11] = [
        ("--stat", "collisions"),
        ("--stat", "chi2"),
        ("--buckets", "2..131072"),
        ("--buckets", "16"),
        ("--reduce", "mask"),
        ("--reduce", "high"),
        ("--workload", "perf"),
        ("--keys", "100"),
        ("--processes", "4"),
        ("--weight", "keys"),
        // A bad value is refused for the flag, not for its value.
        ("--buckets", "7"),
    ];
    for (flag, value) in cases {
        let args = [
            "dist",
            "--diagnostics",
            "--algo",
            "jhash2",
            "--samples",
            "64",
            flag,
            value,
        ];
        let out = run(&args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err}");
        assert!(
            err.contains(&format!("{flag} does not apply to --diagnostics")),
            "{args:?}: {err}"
        );
        assert!(out.stdout.is_empty(), "{args:?}: work was done");
    }
    // The flags it does use still work (--hash-key with a keyed hasher to use it).
    let out = run(&[
        "dist",
        "--diagnostics",
        "--algo",
        "siphash",
        "--samples",
        "64",
        "--seed",
        "1",
        "--hash-key",
        "000102030405060708090a0b0c0d0e0f",
        "--format",
        "json",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v.as_array().unwrap().len(), 1);
}

/// `--samples` is read by `--diagnostics` only: without it (the distribution sweep, or
/// `--hashes`) it is refused, also at its default 4096; it used to be ignored.
#[test]
fn samples_without_diagnostics_is_refused() {
    for value in ["4096", "64"] {
        let args = [
            "dist",
            "--algo",
            "jhash2",
            "--keys",
            "100",
            "--samples",
            value,
        ];
        let out = run(&args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err}");
        assert!(
            err.contains("--samples") && err.contains("--diagnostics"),
            "{args:?}: {err}"
        );
        assert!(out.stdout.is_empty(), "{args:?}: work was done");
    }
}

/// Runs `args`, expects exit 2 with one line on stderr containing `needle`, no output.
fn refused(args: &[&str], needle: &str) {
    let out = run(args);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err}");
    assert!(err.contains(needle), "{args:?}: {err}");
    assert!(out.stdout.is_empty(), "{args:?}: work was done");
}

/// A flag the workload does not read is refused when given, whatever its value: `--seed`
/// with a trace (its keys are read, not drawn), `--processes` with `fork:N` (which says the
/// count already; `--processes` silently replaced it). A list naming an item twice is
/// refused naming it, as in `attack` (both used to be run, the repeat dropped).
#[test]
fn unused_flags_and_repeated_list_items_are_refused() {
    let trace = concat!(
        "trace:",
        env!("CARGO_MANIFEST_DIR"),
        "/data/traces/multi-process.strace"
    );
    let small = ["dist", "--keys", "1000", "--buckets", "64"];
    let with = |more: &[&'static str]| {
        let mut v = small.to_vec();
        v.extend_from_slice(more);
        v
    };
    refused(
        &with(&["--workload", "fork:4", "--processes", "8"]),
        "--processes '8'",
    );
    refused(
        &with(&["--workload", "fork:4", "--processes", "4"]),
        "fork:4",
    );
    refused(&with(&["--workload", trace, "--seed", "1"]), "--seed '1'");
    refused(
        &with(&["--algo", "jhash2,jhash2"]),
        "'jhash2' is listed twice",
    );
    refused(&with(&["--algo", "seed,crc32"]), "'crc32' is listed twice");
    refused(
        &["dist", "--keys", "1000", "--buckets", "2..1024,0x100"],
        "bucket count 256 is listed twice",
    );
    // --hash-key with no keyed hasher to use it, also at its default value, also for the
    // diagnostics, and with --hashes (no hasher at all): it used to be dropped silently.
    let key = "000102030405060708090a0b0c0d0e0f";
    let hashes = std::env::temp_dir().join(format!("fh-dist-hk-{}.csv", std::process::id()));
    std::fs::write(&hashes, "w0,w1,offset,hash\n0x1,0x1000,0,0x5\n").unwrap();
    for args in [
        with(&["--algo", "jhash2,xxh3", "--hash-key", key]),
        with(&[
            "--algo",
            "jhash2",
            "--hash-key",
            "ffffffffffffffffffffffffffffffff",
        ]),
        with(&["--hash-key", key, "--algo", "c:/nonexistent/h.c"]),
        vec![
            "dist",
            "--diagnostics",
            "--algo",
            "crc32",
            "--hash-key",
            key,
        ],
    ] {
        refused(&args, "--hash-key is for keyed hashers and --algo '");
        let out = run(&args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("siphash, hsiphash, hsiphash32"), "{err}");
    }
    refused(
        &[
            "dist",
            "--hashes",
            hashes.to_str().unwrap(),
            "--buckets",
            "16",
            "--hash-key",
            key,
        ],
        "--hash-key keys the hashers of --algo; --hashes",
    );
    std::fs::remove_file(&hashes).unwrap();
    // The flags where they are read still work.
    for ok in [
        with(&["--algo", "jhash2,siphash-addr", "--hash-key", key]),
        with(&["--workload", "fork", "--processes", "8"]),
        with(&["--workload", "fork:4"]),
        vec!["dist", "--workload", trace, "--buckets", "64"],
    ] {
        let out = run(&ok);
        assert!(
            out.status.success(),
            "{ok:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

/// The text output fits 100 columns: the list of flagged cells was one line of about a
/// thousand characters for a hasher failing a whole sweep; it is now one line per hasher
/// and reduction, wrapped. jhash2-addr leaves out mm, so on the fork workload (the same
/// addresses in every process) it fails every size (docs/dist.md, "fork").
#[test]
fn text_output_fits_100_columns_with_one_flagged_line_per_hasher() {
    let out = run(&[
        "dist",
        "--algo",
        "jhash2-addr,jhash2",
        "--workload",
        "fork",
        "--reduce",
        "both",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    let wide: Vec<&str> = text.lines().filter(|l| l.chars().count() > 100).collect();
    assert!(wide.is_empty(), "{wide:?}");
    let flagged = text
        .split("flagged (buckets by verdict):\n")
        .nth(1)
        .expect(&text);
    assert!(
        flagged.contains("  jhash2-addr (mask): fail at 2, 4,"),
        "{flagged}"
    );
    assert!(
        flagged.contains("  jhash2-addr (high): fail at "),
        "{flagged}"
    );
}
