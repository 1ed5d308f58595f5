//! `futexhash list`: the hasher registry.

use super::{CliError, OutputArgs};
use crate::hashers::{HashKey, KeyHasher, all_builtins};
use crate::render::{Format, MAIL_WIDTH, TextTable, output};
use serde::Serialize;

#[derive(Debug, clap::Args)]
pub(super) struct ListArgs {
    #[command(flatten)]
    out: OutputArgs,
}

#[derive(Serialize)]
struct ListRecord<'a> {
    name: &'a str,
    algorithm: &'a str,
    scope: &'a str,
    keyed: bool,
    source: &'a str,
    description: &'a str,
}

pub(super) fn run(args: ListArgs) -> Result<(), CliError> {
    // As every subcommand: an unwritable --output is named with its reason (a virtual file
    // system, a missing directory) before anything is rendered.
    args.out.check()?;
    let builtins = all_builtins(HashKey::DEFAULT);
    let records: Vec<ListRecord> = builtins
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
            t.render_within(MAIL_WIDTH, 1)
        }
    };
    args.out.emit(&text)
}
