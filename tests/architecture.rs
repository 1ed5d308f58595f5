//! The crate's layering, checked from the sources: data flows one way (workload → key →
//! hasher → bucket → table/stats → bench/sim → report → cli), and a module may use only
//! modules of a strictly lower layer. A `crate::NAME` path in a module's files is a use of
//! NAME; `crate::with_builtin`/`with_hasher` (macros of `hashers`) count as `hashers`.

use std::collections::BTreeMap;
use std::path::Path;

/// Layer of every top-level module; a new module must be added here.
const LAYERS: &[(&str, u32)] = &[
    ("assets", 0),
    ("key", 0),
    ("rng", 0),
    ("render", 0),
    ("reduce", 0),
    ("machine", 0),
    ("hashers", 1),
    ("workload", 1),
    ("table", 2),
    ("stats", 2),
    ("throughput", 2),
    ("check", 3),
    ("bench", 3),
    ("sim", 3),
    ("attack", 4),
    ("capture", 2),
    ("report", 5),
    ("cli", 6),
    // Test support: the fuzz targets' bodies, compiled into the library so that the fuzz
    // crate and the seed replay test share them.
    ("fuzz_targets", 6),
];

/// The module a `crate::NAME` path belongs to: macros and the crate root's re-exports
/// (src/lib.rs) count as the module they come from.
fn owner(name: &str) -> &str {
    match name {
        "with_builtin" | "with_hasher" | "KeyHasher" | "Scope" | "Builtin" | "HashKey"
        | "SharedHasher" => "hashers",
        "FutexKey" | "KeyError" | "KeyKind" => "key",
        n => n,
    }
}

fn layer(name: &str) -> Option<u32> {
    LAYERS.iter().find(|(n, _)| *n == name).map(|&(_, l)| l)
}

fn sources(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            sources(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// `crate::NAME` occurrences in `text` outside line comments.
fn uses(text: &str) -> Vec<String> {
    let mut v = Vec::new();
    for line in text.lines() {
        let code = line.split("//").next().unwrap_or("");
        let mut rest = code;
        while let Some(i) = rest.find("crate::") {
            let tail = &rest[i + 7..];
            let name: String = tail
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            if !name.is_empty() {
                v.push(name);
            }
            rest = tail;
        }
    }
    v
}

#[test]
fn every_module_uses_only_lower_layers() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut graph: BTreeMap<String, BTreeMap<String, String>> = BTreeMap::new();
    for entry in std::fs::read_dir(&src).unwrap() {
        let p = entry.unwrap().path();
        let module = p.file_stem().unwrap().to_string_lossy().to_string();
        if module == "main" || module == "lib" {
            continue;
        }
        let mut files = Vec::new();
        if p.is_dir() {
            sources(&p, &mut files);
        } else {
            files.push(p.clone());
        }
        for f in files {
            let text = std::fs::read_to_string(&f).unwrap();
            for used in uses(&text) {
                let used = owner(&used).to_string();
                if used != module {
                    graph
                        .entry(module.clone())
                        .or_default()
                        .entry(used)
                        .or_insert_with(|| f.display().to_string());
                }
            }
        }
        graph.entry(module).or_default();
    }
    let mut bad = Vec::new();
    for (module, deps) in &graph {
        let Some(own) = layer(module) else {
            bad.push(format!(
                "module '{module}' has no layer in tests/architecture.rs"
            ));
            continue;
        };
        for (dep, file) in deps {
            match layer(dep) {
                Some(l) if l < own => {}
                Some(l) => bad.push(format!(
                    "{module} (layer {own}) uses {dep} (layer {l}) in {file}"
                )),
                None => bad.push(format!("{module} uses unknown module '{dep}' in {file}")),
            }
        }
    }
    assert!(bad.is_empty(), "layering violations:\n{}", bad.join("\n"));
}

#[test]
fn the_checker_sees_a_use_and_ignores_comments() {
    assert_eq!(
        uses("use crate::bench::x; // crate::sim\nlet a = crate::table::T;"),
        ["bench", "table"]
    );
}
