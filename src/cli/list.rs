//! `futexhash list`: the hasher registry.

use super::{CliError, OutputArgs};
use crate::hashers::{HashKey, KeyHasher, all_hashers};
use crate::report::{Format, TextTable, output};
use serde::Serialize;

#[derive(Debug, clap::Args)]
pub(super) struct ListArgs {
    #[command(flatten)]
    out: OutputArgs,
}

#[derive(Serialize)]
struct ListRecord {
    name: &'static str,
    algorithm: &'static str,
    scope: &'static str,
    keyed: bool,
    source: &'static str,
    description: &'static str,
}

pub(super) fn run(args: ListArgs) -> Result<(), CliError> {
    let records: Vec<ListRecord> = all_hashers(HashKey::DEFAULT)
        .iter()
        .map(|h| ListRecord {
            name: h.name(),
            algorithm: h.algorithm(),
            scope: h.scope().as_str(),
            keyed: h.keyed(),
            source: h.source(),
            description: h.description(),
        })
        .collect();
    let text = match args.out.format {
        Format::Json => output::to_json(&records).map_err(|e| CliError::Runtime(e.to_string()))?,
        Format::Csv => output::to_csv(&records).map_err(|e| CliError::Runtime(e.to_string()))?,
        Format::Table => {
            let mut t = TextTable::new(["name", "algorithm", "scope", "keyed", "source"]);
            for r in &records {
                t.push(vec![
                    r.name.into(),
                    r.algorithm.into(),
                    r.scope.into(),
                    if r.keyed { "yes" } else { "no" }.into(),
                    r.source.into(),
                ]);
            }
            t.render()
        }
    };
    args.out.emit(&text)
}
