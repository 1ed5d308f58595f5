//! Output formats shared by every subcommand (`shared/spec/cli.md`, "Conventions"):
//! `table` (the mailing-list `+-----+` table), `csv` and `json` (one array of flat records),
//! written to stdout or atomically to a file.

use serde::Serialize;
use std::io::{self, Write};
use std::path::Path;

/// An output format (`--format`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Format {
    /// Human-readable table, pasteable into a mailing-list post.
    #[default]
    Table,
    /// One header row, then one row per record.
    Csv,
    /// One JSON array of flat objects.
    Json,
}

impl Format {
    /// Every format's name, in the order help text lists them.
    pub const NAMES: [&'static str; 3] = ["table", "csv", "json"];
}

impl std::str::FromStr for Format {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "table" => Ok(Format::Table),
            "csv" => Ok(Format::Csv),
            "json" => Ok(Format::Json),
            _ => Err(format!(
                "unknown format '{s}'; valid: {}",
                Format::NAMES.join(", ")
            )),
        }
    }
}

/// A text table with right-aligned cells, drawn like the tables of the seed threads.
#[derive(Clone, Debug, Default)]
pub struct TextTable {
    /// Column headers.
    pub headers: Vec<String>,
    /// Rows of cells; every row has one cell per header.
    pub rows: Vec<Vec<String>>,
}

impl TextTable {
    /// An empty table with these headers.
    pub fn new<S: Into<String>>(headers: impl IntoIterator<Item = S>) -> Self {
        TextTable {
            headers: headers.into_iter().map(Into::into).collect(),
            rows: Vec::new(),
        }
    }

    /// Appends a row.
    pub fn push(&mut self, row: Vec<String>) {
        debug_assert_eq!(row.len(), self.headers.len());
        self.rows.push(row);
    }

    /// Renders with `+---+` rules above and below the header and at the end.
    pub fn render(&self) -> String {
        let widths: Vec<usize> = (0..self.headers.len())
            .map(|c| {
                self.rows
                    .iter()
                    .map(|r| r[c].chars().count())
                    .chain([self.headers[c].chars().count()])
                    .max()
                    .unwrap_or(0)
            })
            .collect();
        let rule: String = widths.iter().fold(String::from("+"), |mut s, w| {
            s.push_str(&"-".repeat(w + 2));
            s.push('+');
            s
        });
        // Numbers are right-aligned (as in the seed tables), words left-aligned.
        let numeric: Vec<bool> = (0..self.headers.len())
            .map(|c| self.rows.iter().all(|r| looks_numeric(&r[c])))
            .collect();
        let line = |cells: &[String]| {
            let mut s = String::from("|");
            for ((c, w), num) in cells.iter().zip(&widths).zip(&numeric) {
                if *num {
                    s.push_str(&format!(" {c:>w$} |"));
                } else {
                    s.push_str(&format!(" {c:<w$} |"));
                }
            }
            s
        };
        let mut out = vec![rule.clone(), line(&self.headers), rule.clone()];
        out.extend(self.rows.iter().map(|r| line(r)));
        out.push(rule);
        out.join("\n") + "\n"
    }
}

/// A cell that reads as a number: digits with separators, sign, point, `%`, `x`, `e`.
fn looks_numeric(cell: &str) -> bool {
    let t = cell.trim();
    !t.is_empty()
        && t.chars().any(|c| c.is_ascii_digit())
        && t.chars()
            .all(|c| c.is_ascii_digit() || ",.+-%()xe *Fw".contains(c))
}

/// `1234567.25` with `decimals = 1` → `"1,234,567.3"`: thousands separators as in the seed
/// tables.
pub fn fmt_grouped(value: f64, decimals: usize) -> String {
    if !value.is_finite() {
        return value.to_string();
    }
    let s = format!("{:.*}", decimals, value.abs());
    let (int, frac) = match s.split_once('.') {
        Some((i, f)) => (i, Some(f)),
        None => (s.as_str(), None),
    };
    let mut grouped = String::new();
    for (i, ch) in int.chars().enumerate() {
        if i > 0 && (int.len() - i) % 3 == 0 {
            grouped.push(',');
        }
        grouped.push(ch);
    }
    let sign = if value < 0.0 && s.bytes().any(|b| b.is_ascii_digit() && b != b'0') {
        "-"
    } else {
        ""
    };
    match frac {
        Some(f) => format!("{sign}{grouped}.{f}"),
        None => format!("{sign}{grouped}"),
    }
}

/// Serializes records as a JSON array of flat objects.
pub fn to_json<T: Serialize>(records: &[T]) -> Result<String, serde_json::Error> {
    let mut s = serde_json::to_string_pretty(records)?;
    s.push('\n');
    Ok(s)
}

/// Serializes records as CSV with a header row.
pub fn to_csv<T: Serialize>(records: &[T]) -> Result<String, csv::Error> {
    let mut w = csv::Writer::from_writer(Vec::new());
    for r in records {
        w.serialize(r)?;
    }
    let bytes = w.into_inner().map_err(|e| e.into_error())?;
    Ok(String::from_utf8(bytes).expect("csv output is UTF-8"))
}

/// Writes `content` to `path` whole or not at all: a temporary file beside it, flushed and
/// synced, then renamed over the target. `None` writes to stdout.
pub fn write_atomic(path: Option<&Path>, content: &[u8]) -> io::Result<()> {
    let Some(path) = path else {
        let mut out = io::stdout().lock();
        return match out.write_all(content).and_then(|_| out.flush()) {
            // A closed pipe (`| head`) is the reader's choice, not an error of ours.
            Err(e) if e.kind() == io::ErrorKind::BrokenPipe => Ok(()),
            r => r,
        };
    };
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let name = path.file_name().ok_or_else(|| {
        io::Error::new(io::ErrorKind::InvalidInput, "output path has no file name")
    })?;
    let tmp = dir.join(format!(
        ".{}.tmp{}",
        name.to_string_lossy(),
        std::process::id()
    ));
    let result = (|| {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(content)?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grouped_numbers() {
        assert_eq!(fmt_grouped(9172.4, 1), "9,172.4");
        assert_eq!(fmt_grouped(2023509.44, 1), "2,023,509.4");
        assert_eq!(fmt_grouped(512.0, 0), "512");
        assert_eq!(fmt_grouped(100.0, 0), "100");
        assert_eq!(fmt_grouped(-1234.0, 0), "-1,234");
        assert_eq!(fmt_grouped(-0.01, 1), "0.0");
    }

    #[test]
    fn table_matches_seed_layout() {
        let mut t = TextTable::new(["buckets", "xxhash"]);
        t.push(vec!["2".into(), "9,116.4".into()]);
        let want = "+---------+---------+\n\
                    | buckets |  xxhash |\n\
                    +---------+---------+\n\
                    |       2 | 9,116.4 |\n\
                    +---------+---------+\n";
        assert_eq!(t.render(), want);
    }

    #[test]
    fn atomic_write_replaces_whole_and_leaves_no_temp() {
        let dir = std::env::temp_dir().join(format!("fh-atomic-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("out.json");
        write_atomic(Some(&p), b"first").unwrap();
        write_atomic(Some(&p), b"second").unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"second");
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 1);
        assert!(write_atomic(Some(&dir.join("missing/x.json")), b"x").is_err());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn csv_and_json_records() {
        #[derive(Serialize)]
        struct R {
            algo: &'static str,
            hash: u32,
        }
        let rs = [R { algo: "a", hash: 1 }, R { algo: "b", hash: 2 }];
        assert_eq!(to_csv(&rs).unwrap(), "algo,hash\na,1\nb,2\n");
        let v: serde_json::Value = serde_json::from_str(&to_json(&rs).unwrap()).unwrap();
        assert_eq!(v[1]["hash"], 2);
    }
}
