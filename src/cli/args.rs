//! Argument parsers shared by the subcommands: numbers in decimal or `0x` hex, lists
//! (`a,b,c`), power-of-two ranges (`2..131072`), algorithm lists (`all`), and the
//! `--format`/`--output` pair with atomic output.

use super::CliError;
use crate::hashers::{HashKey, HasherSpec, SharedHasher, parse_list};
use crate::key::parse_number;
use crate::render::output::{self, OutputTarget};
use crate::render::{Format, write_atomic};
use std::path::{Path, PathBuf};

/// `--format` and `--output`, common to every subcommand.
#[derive(Debug, Clone, clap::Args)]
pub struct OutputArgs {
    /// Output format.
    #[arg(long, default_value = "table", value_parser = clap::builder::TypedValueParser::map(clap::builder::PossibleValuesParser::new(Format::NAMES), |s| s.parse::<Format>().expect("a listed format")))]
    pub format: Format,
    /// Write to FILE (atomically: whole or not at all) instead of stdout.
    #[arg(long, value_name = "FILE")]
    pub output: Option<PathBuf>,
}

/// The flags the user gave on the command line, by clap id (the field's name, e.g.
/// `ops`, `hash_key`): filled from clap's matches after parsing ([`super::run`]), so that a
/// run with no use for a flag can refuse it when it was given, an explicit value equal to
/// the default included, and not when the default merely applies.
#[derive(Clone, Debug, Default)]
pub struct Given(Vec<String>);

impl Given {
    /// The arguments of `m` whose value came from the command line (`ValueSource::CommandLine`).
    pub fn of(m: &clap::ArgMatches) -> Given {
        Given(
            m.ids()
                .filter(|id| {
                    m.value_source(id.as_str()) == Some(clap::parser::ValueSource::CommandLine)
                })
                .map(|id| id.as_str().to_string())
                .collect(),
        )
    }

    /// Whether the argument with clap id `id` was given on the command line.
    pub fn has(&self, id: &str) -> bool {
        self.0.iter().any(|g| g == id)
    }
}

impl OutputArgs {
    /// [`check_output_path`] for `--output`, to be called before the work starts; without
    /// it, that stdout is not the full device (`> /dev/full`, found by its number, nothing
    /// written: [`output::stdout_takes_bytes`]).
    pub fn check(&self) -> Result<(), CliError> {
        match &self.output {
            Some(p) => check_output_path(p, "output"),
            None => output::stdout_takes_bytes().map_err(|reason| {
                CliError::Usage(format!("cannot write output 'stdout': {reason}"))
            }),
        }
    }

    /// Writes the rendered output where the user asked.
    pub fn emit(&self, content: &str) -> Result<(), CliError> {
        write_atomic(self.output.as_deref(), content.as_bytes()).map_err(|e| {
            let target = self
                .output
                .as_ref()
                .map_or("stdout".to_string(), |p| p.display().to_string());
            CliError::Usage(format!("cannot write output '{target}': {e}"))
        })
    }
}

/// Checks, before any work is done, that `path` can be written as a file: it is not a
/// directory, its directory exists, and a file can really be created there (a probe file
/// is created and removed: only that tells a read-only or virtual file system such as
/// `/proc` from a writable one). Symlinks are followed first, so the probe is made beside
/// the file that will be replaced; an existing device or FIFO, or another process's
/// `/proc/PID/fd/N` (written in place, see [`crate::render::output::resolve_output`]), is
/// opened now and held open for the write ([`crate::render::output::prepare`]): a FIFO
/// without a reader, the full device (`/dev/full`, told by its number, nothing written to
/// it) or one this user may not write is refused here, before the work, and never
/// replaced; this process's own descriptor (`/dev/stdout`) must be open for writing and
/// not the full device. `what` names the flag in
/// the message; for `"plot"` the name must also say SVG ([`check_plot_name`]).
pub fn check_output_path(path: &Path, what: &str) -> Result<(), CliError> {
    if what == "plot" {
        check_plot_name(path)?;
    }
    let fail = |reason: String| {
        CliError::Usage(format!(
            "cannot write {what} '{}': {reason}",
            path.display()
        ))
    };
    let target = match output::resolve_output(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::IsADirectory => {
            return Err(fail("it is a directory".to_string()));
        }
        Err(e) => return Err(fail(e.to_string())),
    };
    let file = match target {
        // Not opened or probed: it is written through as it is ([`write_atomic`]); only
        // whether it takes writes can be told without writing.
        OutputTarget::Descriptor { fd, .. } => {
            return output::descriptor_writable(fd).map_err(fail);
        }
        // Opened now and held open for the write ([`output::prepare`]): a FIFO nobody
        // reads, the full device (`/dev/full`) or one this user may not write is refused
        // before the work, and nothing waits.
        OutputTarget::InPlace(_) | OutputTarget::Foreign(_) => {
            return output::prepare(&target).map_err(|e| match e.kind() {
                std::io::ErrorKind::PermissionDenied => fail(format!(
                    "no permission to write '{}': {e}",
                    target.path().display()
                )),
                _ => fail(e.to_string()),
            });
        }
        OutputTarget::Replace(p) => p,
    };
    usable_dir(output::parent_dir(&file), "").map_err(fail)
}

/// Refuses, before any work, `--output` and `--plot` that name one file (through `./`,
/// `..` or links alike): both are written whole, one after the other, so the second would
/// replace the first and one of them would be lost without a word. Regular files are
/// compared by their canonical paths (for a file not there yet, its directory's canonical
/// path and its name; the literal path when the directory is missing too). A device, FIFO
/// or descriptor (`/dev/null`, `/dev/stdout`) is written into, not replaced, so both
/// outputs arrive there one after the other and naming it twice is allowed.
pub fn check_distinct_outputs(output: &Path, plot: &Path) -> Result<(), CliError> {
    match (replaced_file(output), replaced_file(plot)) {
        (Some(a), Some(b)) if a == b => Err(CliError::Usage(format!(
            "--output '{}' and --plot '{}' are the same file ('{}'): the one written second \
             would replace the first; give each its own file",
            output.display(),
            plot.display(),
            a.display()
        ))),
        _ => Ok(()),
    }
}

/// The file an output path will replace, as a canonical path ([`check_distinct_outputs`]);
/// `None` for what is written in place, and for a path [`check_output_path`] will refuse.
fn replaced_file(path: &Path) -> Option<PathBuf> {
    let OutputTarget::Replace(file) = output::resolve_output(path).ok()? else {
        return None;
    };
    if let Ok(c) = std::fs::canonicalize(&file) {
        return Some(c);
    }
    match (
        std::fs::canonicalize(output::parent_dir(&file)),
        file.file_name(),
    ) {
        (Ok(dir), Some(name)) => Some(dir.join(name)),
        _ => Some(file),
    }
}

/// `--plot` writes SVG only: a name with another extension (`x.png`, `x.pdf`) would hold
/// SVG under a name that promises something else, so it is refused. A name without an
/// extension is accepted (`/dev/stdout`, a FIFO, `plot`), and so is an existing device or
/// FIFO of any name, which is written into as it is (docs/cli.md).
pub fn check_plot_name(path: &Path) -> Result<(), CliError> {
    let Some(ext) = path.extension() else {
        return Ok(());
    };
    if ext.eq_ignore_ascii_case("svg") {
        return Ok(());
    }
    let special = std::fs::metadata(path).is_ok_and(|m| !m.is_file() && !m.is_dir());
    if special {
        return Ok(());
    }
    Err(CliError::Usage(format!(
        "--plot '{}': plots are written as SVG only; give a name ending in .svg",
        path.display()
    )))
}

/// Checks, before any work, that `dir` can be used as an output directory, which is built
/// beside it (a temporary directory in its parent) and renamed into place: its parent must
/// exist, be a directory and take new files, and `dir`, if it exists, must be a directory
/// that takes new files too (the old contents are removed from it). Only `dir` itself is
/// ever created, never a missing directory above it (as `--output` needs its file's
/// directory), so a missing parent is refused, naming it. A symlink is followed, as the
/// writer follows it.
pub fn check_output_dir(dir: &Path, what: &str) -> Result<(), CliError> {
    let fail = |reason: String| {
        CliError::Usage(format!("cannot write {what} '{}': {reason}", dir.display()))
    };
    let resolved;
    let target = if dir.is_symlink() {
        resolved = std::fs::canonicalize(dir).map_err(|e| {
            fail(format!(
                "it is a symbolic link that cannot be followed: {e}"
            ))
        })?;
        resolved.as_path()
    } else {
        dir
    };
    if target.exists() {
        if !target.is_dir() {
            return Err(fail("it exists and is not a directory".to_string()));
        }
        probe_dir(target).map_err(fail)?;
    }
    let parent = match target.parent() {
        Some(p) if p.as_os_str().is_empty() => Path::new("."),
        Some(p) => p,
        // `/`: nothing above it to build it in.
        None => {
            return Err(fail(
                "it has no parent directory to be built in".to_string(),
            ));
        }
    };
    usable_dir(parent, " (only the last component is created)").map_err(fail)
}

/// Whether an output can be built in `dir`: it exists (else the reason, with `missing_note`
/// after it), is a directory and takes new files ([`probe_dir`]).
fn usable_dir(dir: &Path, missing_note: &str) -> Result<(), String> {
    if !dir.exists() {
        return Err(format!(
            "directory '{}' does not exist{missing_note}",
            dir.display()
        ));
    }
    if !dir.is_dir() {
        return Err(format!("'{}' is not a directory", dir.display()));
    }
    probe_dir(dir)
}

/// Creates and removes a probe file in `dir`; the reason it cannot, in words.
fn probe_dir(dir: &Path) -> Result<(), String> {
    let probe = dir.join(format!(".futexhash-probe-{}", std::process::id()));
    match std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&probe)
    {
        Ok(f) => {
            drop(f);
            let _ = std::fs::remove_file(&probe);
            Ok(())
        }
        Err(e) => Err(match e.raw_os_error() {
            Some(libc::EACCES) | Some(libc::EPERM) => {
                format!("no permission to create files in '{}'", dir.display())
            }
            Some(libc::EROFS) => format!("'{}' is on a read-only file system", dir.display()),
            Some(libc::ENOSPC) | Some(libc::EDQUOT) => {
                format!("no space left to create files in '{}'", dir.display())
            }
            // The directory exists, so "no such file" means the file system does not let
            // files be created at all (procfs, sysfs).
            Some(libc::ENOENT) | Some(libc::EOPNOTSUPP) => format!(
                "cannot create files in '{}' (a virtual file system such as /proc or /sys)",
                dir.display()
            ),
            _ => format!("cannot create files in '{}': {e}", dir.display()),
        }),
    }
}

/// Peak memory per distinct key, measured (peak RSS slope between 1 M and 4 M keys, Linux
/// 6.18 x86-64, release build): `dist` and `check` hold the key set, its dedup set and one
/// hash column (50-75 bytes a key, 80 with margin); `keys` also holds the text records
/// (CSV 205, JSON 265 bytes a key).
pub const DIST_BYTES_PER_KEY: u64 = 80;
/// See [`DIST_BYTES_PER_KEY`].
pub const KEYS_CSV_BYTES_PER_KEY: u64 = 216;
/// See [`DIST_BYTES_PER_KEY`].
pub const KEYS_JSON_BYTES_PER_KEY: u64 = 272;

/// Refuses `--keys N` before any work when N keys of `bytes_per_key` exceed the memory
/// or address space this process may still use (an allocation failure would otherwise
/// abort the run half-way with SIGABRT).
pub fn check_key_memory(keys: u64, bytes_per_key: u64) -> Result<(), CliError> {
    crate::limits::Limits::current()
        .check_memory(
            keys.saturating_mul(bytes_per_key),
            &format!("--keys {keys} ({bytes_per_key} bytes a key)"),
        )
        .map_err(|e| CliError::Usage(format!("{e}; ask for fewer keys")))
}

/// clap value parser: a `u64` in decimal or `0x` hex. A well-formed number beyond 64 bits
/// is named as too large, with the most there is, rather than as not a number.
pub fn number(s: &str) -> Result<u64, String> {
    parse_number(s).ok_or_else(|| {
        let t = s.trim();
        let digits = match t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
            Some(hex) => !hex.is_empty() && hex.chars().all(|c| c.is_ascii_hexdigit()),
            None => !t.is_empty() && t.chars().all(|c| c.is_ascii_digit()),
        };
        if digits {
            format!("'{s}' is too large: at most {} (2^64 - 1)", u64::MAX)
        } else {
            format!("'{s}' is not a decimal or 0x-hex number")
        }
    })
}

/// clap value parser for `--hash-key`: 32 hex digits.
pub fn hash_key(s: &str) -> Result<HashKey, String> {
    HashKey::parse_hex(s).ok_or_else(|| {
        format!("'{s}' is not 32 hex digits (the 16 key bytes in order, e.g. 000102…0f)")
    })
}

/// A comma-separated list of numbers, or a power-of-two range `A..B` (every power of two
/// from A to B inclusive; both ends must be powers of two). With `allow_zero`, 0 may
/// appear in a list (the `bench` convention for "global hash").
pub fn pow2_list(s: &str, what: &str, allow_zero: bool) -> Result<Vec<u64>, CliError> {
    pow2_list_max(s, what, allow_zero, 1 << 63)
}

/// [`pow2_list`] with an upper bound: a value above `max`, or too large for a 64-bit
/// number at all, is refused as too large, naming `max` (not as "not a power of two").
pub fn pow2_list_max(
    s: &str,
    what: &str,
    allow_zero: bool,
    max: u64,
) -> Result<Vec<u64>, CliError> {
    let bad = |v: &str| {
        CliError::Usage(format!(
            "{what} '{v}' is not a power of two{}; use a list like 2,16,1024 or a range like 2..131072",
            if allow_zero { " or 0" } else { "" }
        ))
    };
    let too_large = |v: &str| {
        CliError::Usage(format!(
            "{what} '{v}' is too large; at most {max}{}",
            if max.is_power_of_two() {
                format!(" (2^{})", max.trailing_zeros())
            } else {
                String::new()
            }
        ))
    };
    let check = |v: &str| -> Result<u64, CliError> {
        let t = v.trim();
        // Digits that overflow u64 are a number, only too large for one.
        let digits = match t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
            Some(h) => !h.is_empty() && h.bytes().all(|c| c.is_ascii_hexdigit()),
            None => !t.is_empty() && t.bytes().all(|c| c.is_ascii_digit()),
        };
        let n = match parse_number(v) {
            Some(n) => n,
            None if digits => return Err(too_large(v)),
            None => return Err(bad(v)),
        };
        if n > max {
            return Err(too_large(v));
        }
        if n.is_power_of_two() || (allow_zero && n == 0) {
            Ok(n)
        } else {
            Err(bad(v))
        }
    };
    let mut out = Vec::new();
    for part in s.split(',') {
        if let Some((lo, hi)) = part.split_once("..") {
            let (lo_n, hi_n) = (check(lo)?, check(hi)?);
            if lo_n == 0 || hi_n < lo_n {
                return Err(CliError::Usage(format!(
                    "{what} range '{part}' must go from a power of two up to a larger one"
                )));
            }
            let mut n = lo_n;
            while n <= hi_n {
                out.push(n);
                n = match n.checked_mul(2) {
                    Some(m) => m,
                    None => break,
                };
            }
        } else {
            out.push(check(part)?);
        }
    }
    Ok(out)
}

/// A comma-separated list of hashers: built-in names, `all` (every built-in), `seed` (the
/// eight of the seed thread), `so:PATH[:SYMBOL]` and `c:FILE.c[:SYMBOL]` with an optional
/// `LABEL=`. A hasher named twice is refused ([`no_repeated_hashers`]): every command that
/// takes a list comes through here, so none can drop the repeat silently. C hashers are
/// compiled and loaded here, before any work, and after the whole list is known to be good.
pub fn algo_list(s: &str, key: HashKey) -> Result<Vec<SharedHasher>, CliError> {
    let specs = checked_algo_list(s, key)?;
    specs.iter().map(load_hasher).collect()
}

/// [`algo_list`]'s checks without loading anything: for a command that must refuse a bad
/// list before work of its own that comes before the loading.
pub fn checked_algo_list(s: &str, key: HashKey) -> Result<Vec<HasherSpec>, CliError> {
    // Parsed first, so an unknown name is refused as unknown even when it repeats.
    let specs = parse_list(s, key).map_err(CliError::usage)?;
    no_repeated_hashers(s)?;
    Ok(specs)
}

/// Refuses, before any work, a `--hash-key` the user gave when no hasher of `list` uses a
/// key: only the keyed built-ins do (a C hasher takes none), so the key would be dropped
/// without a word. One line naming the flag and the hashers that use a key. A list that
/// does not parse passes here, to be refused by [`algo_list`] or [`one_algo`] with the
/// reason.
pub fn no_key_without_keyed(list: &str, flag: &str) -> Result<(), CliError> {
    use crate::hashers::KeyHasher;
    let Ok(specs) = parse_list(list, HashKey::DEFAULT) else {
        return Ok(());
    };
    if specs.iter().any(|s| s.builtin().is_some_and(|b| b.keyed())) {
        return Ok(());
    }
    let keyed: Vec<&str> = crate::hashers::all_builtins(HashKey::DEFAULT)
        .into_iter()
        .filter(|b| b.keyed() && b.scope() == crate::hashers::Scope::Full)
        .map(|b| b.static_name())
        .collect();
    Err(CliError::Usage(format!(
        "{flag} is for keyed hashers and --algo '{}' has none (keyed: {} and their -addr \
         forms); drop {flag}",
        list.trim(),
        keyed.join(", ")
    )))
}

/// One hasher name (as [`algo_list`], but exactly one). The lists `all` and `seed` and a
/// comma list are refused with a message saying so, and an unknown name's message lists
/// only what one name may be.
pub fn one_algo(s: &str, key: HashKey) -> Result<SharedHasher, CliError> {
    let t = s.trim();
    if t == "all" || t == "seed" || t.contains(',') {
        return Err(CliError::Usage(format!(
            "--algo '{t}' is a list ({}); this takes one hasher: a name of `futexhash list`, so:PATH[:SYMBOL] or c:FILE.c[:SYMBOL]",
            match t {
                "all" => "every built-in",
                "seed" => "the seed thread's eight",
                _ => "several hashers",
            }
        )));
    }
    let spec = HasherSpec::parse(s, key).map_err(|e| match e {
        crate::hashers::HasherError::Unknown(u) => CliError::Usage(format!(
            "unknown algorithm '{}'; valid: {}, so:PATH[:SYMBOL], c:FILE.c[:SYMBOL]",
            u.0,
            crate::hashers::all_names().join(", ")
        )),
        e => CliError::usage(e),
    })?;
    load_hasher(&spec)
}

fn load_hasher(spec: &HasherSpec) -> Result<SharedHasher, CliError> {
    // SAFETY: the user named this shared object or C file on the command line to have it
    // run as a hasher; the ABI and its thread-safety requirement are documented in
    // `futexhash --help`, docs/hashers.md and `hashers::external`. A hash that breaks the
    // contract can crash the run, which is documented too.
    unsafe { spec.load() }.map_err(CliError::usage)
}

/// A `--profile` argument: an existing file, else the machine profile of that name built
/// into the binary ([`crate::assets`]), so a copied binary finds the shipped profiles.
pub fn machine_profile(arg: &str) -> Result<crate::sim::profile::MachineProfile, CliError> {
    use crate::sim::profile::MachineProfile;
    let direct = PathBuf::from(arg);
    if direct.is_file() {
        return MachineProfile::load(&direct).map_err(CliError::from);
    }
    match crate::assets::profile_path(arg) {
        // No cache directory to unpack it into is the environment's to fix (the message
        // names the directories tried and the variable that chooses one): exit 2.
        Some(p) => MachineProfile::load(&p.map_err(|e| CliError::Usage(e.to_string()))?)
            .map_err(CliError::from),
        None => Err(CliError::Usage(format!(
            "profile '{arg}' is neither a file nor a built-in profile ({})",
            crate::assets::profile_names().join(", ")
        ))),
    }
}

/// The one line for clap's "invalid UTF-8" error, which names neither the argument nor
/// the flag: the first argument of `argv` (program name first) that is not UTF-8, shown
/// lossily (U+FFFD for each bad sequence), with the flag or positional argument of `cmd`
/// (descending into the subcommands named before it) that it was given to. `None` when
/// every argument is UTF-8.
pub fn non_utf8_message(mut cmd: clap::Command, argv: &[std::ffi::OsString]) -> Option<String> {
    let bad = argv.iter().skip(1).position(|a| a.to_str().is_none())? + 1;
    let shown = argv[bad].to_string_lossy();
    // Built, as for parsing: an argument's display (`--algo <LIST>`) needs its value count.
    cmd.build();
    let mut cmd = &cmd;
    // The flag whose value the next argument is, if it takes one.
    let mut pending: Option<&clap::Arg> = None;
    let takes_value = |a: &clap::Arg| a.get_action().takes_values();
    for a in &argv[1..bad] {
        let Some(a) = a.to_str() else {
            continue;
        };
        if pending.take().is_some() {
            continue;
        }
        if a == "--" {
            break;
        }
        if let Some(long) = a.strip_prefix("--") {
            if !long.contains('=') {
                pending = cmd
                    .get_arguments()
                    .find(|x| x.get_long() == Some(long))
                    .filter(|x| takes_value(x));
            }
        } else if let Some(short) = a.strip_prefix('-').filter(|s| s.chars().count() == 1) {
            let c = short.chars().next();
            pending = cmd
                .get_arguments()
                .find(|x| x.get_short() == c)
                .filter(|x| takes_value(x));
        } else if let Some(sub) = cmd.find_subcommand(a) {
            cmd = sub;
        }
    }
    let what = |arg: &clap::Arg| format!("'{arg}'");
    let bad_text = argv[bad].as_encoded_bytes();
    let unexpected = || {
        Some(format!(
            "unexpected argument '{shown}': it is not UTF-8 text"
        ))
    };
    let mut shown = shown.to_string();
    let target = if let Some(flag) = pending {
        what(flag)
    } else if bad_text.starts_with(b"--") {
        // `--flag=VALUE`: the flag is the text before the first '='.
        let Some(eq) = bad_text.iter().position(|&b| b == b'=') else {
            return unexpected();
        };
        let name = std::str::from_utf8(&bad_text[2..eq]).ok();
        match name.and_then(|n| cmd.get_arguments().find(|x| x.get_long() == Some(n))) {
            Some(flag) => {
                shown = String::from_utf8_lossy(&bad_text[eq + 1..]).into_owned();
                what(flag)
            }
            None => return unexpected(),
        }
    } else if bad_text.first() == Some(&b'-') && bad_text.len() > 1 {
        // `-tVALUE`: a short flag with its value attached.
        let c = char::from(bad_text[1]);
        match cmd.get_arguments().find(|x| x.get_short() == Some(c)) {
            Some(flag) => {
                let value = bad_text[2..].strip_prefix(b"=").unwrap_or(&bad_text[2..]);
                shown = String::from_utf8_lossy(value).into_owned();
                what(flag)
            }
            None => return unexpected(),
        }
    } else {
        match cmd.get_positionals().next() {
            Some(p) => what(p),
            None => return unexpected(),
        }
    };
    Some(format!(
        "invalid value '{shown}' for {target}: it is not UTF-8 text (every argument must be; \
         \u{FFFD} marks what is not)"
    ))
}

/// Refuses, before any work, a comma list that names one item twice (`--table
/// global,global`): one line naming the item, as `sim --kernel` does.
pub(super) fn no_repeats(flag: &str, list: &str) -> Result<(), CliError> {
    let items: Vec<&str> = list.split(',').map(str::trim).collect();
    for (i, item) in items.iter().enumerate() {
        if !item.is_empty() && items[..i].contains(item) {
            return Err(CliError::Usage(format!(
                "--{flag} '{item}' is listed twice in '{list}'"
            )));
        }
    }
    Ok(())
}

/// As [`no_repeats`] for an `--algo` list, whose `all` and `seed` stand for the built-ins
/// they include (`seed,jhash2` names jhash2 twice), and whose C hashers may be spelled
/// several ways: the same file and symbol under two labels, with the default symbol
/// written out or left implicit, or through another path to the same file, is one hasher
/// named twice. Items that do not parse are left to [`parse_list`] to refuse.
/// [`algo_list`] calls this; a command may call it earlier to refuse before other checks.
pub(super) fn no_repeated_hashers(list: &str) -> Result<(), CliError> {
    no_repeats("algo", list)?;
    // Per hasher seen: the name it was given by, the item that gave it, what it is.
    let mut seen: Vec<(&str, &str, HasherIdentity)> = Vec::new();
    for item in list.split(',').map(str::trim) {
        let names: Vec<&str> = match item {
            "all" => crate::hashers::all_names(),
            "seed" => crate::hashers::SEED_EIGHT.to_vec(),
            _ => vec![item],
        };
        for n in names {
            let Some(id) = HasherIdentity::of(n) else {
                continue;
            };
            if let Some((first, by, _)) = seen.iter().find(|(_, _, s)| *s == id) {
                if *first != n {
                    // Two spellings of one C hasher (built-ins have one name each).
                    return Err(CliError::Usage(format!(
                        "--algo '{n}' is listed twice in '{list}': it is the same hasher as \
                         '{first}' ({id}); name it once"
                    )));
                }
                // Literal repeats were refused above: at least one of the two is a group.
                let groups: Vec<&str> = [*by, item].into_iter().filter(|x| *x != n).collect();
                let why = match groups[..] {
                    [g] => format!("{g} includes it"),
                    _ => format!("{} both include it", groups.join(" and ")),
                };
                return Err(CliError::Usage(format!(
                    "--algo '{n}' is listed twice in '{list}' ({why})"
                )));
            }
            seen.push((n, item, id));
        }
    }
    Ok(())
}

/// What a hasher name denotes, whatever its spelling: a built-in by its registry name, a
/// C hasher by its file (one file however reached, [`crate::hashers::same_file`]: `so:x.so`,
/// `so:./x.so` and a hard link to it are one), symbol and kind (`so:` or `c:`); the label
/// is only a name and does not count.
#[derive(Debug)]
enum HasherIdentity {
    Builtin(&'static str),
    External {
        path: PathBuf,
        symbol: String,
        compile: bool,
    },
}

impl HasherIdentity {
    /// `None` when `name` does not parse (refused elsewhere, with the reason).
    fn of(name: &str) -> Option<HasherIdentity> {
        Some(match HasherSpec::parse(name, HashKey::DEFAULT).ok()? {
            HasherSpec::Builtin(b) => HasherIdentity::Builtin(b.static_name()),
            HasherSpec::External {
                path,
                symbol,
                compile,
                ..
            } => HasherIdentity::External {
                path: std::fs::canonicalize(&path).unwrap_or(path),
                symbol,
                compile,
            },
        })
    }
}

impl PartialEq for HasherIdentity {
    fn eq(&self, other: &HasherIdentity) -> bool {
        match (self, other) {
            (HasherIdentity::Builtin(a), HasherIdentity::Builtin(b)) => a == b,
            (
                HasherIdentity::External {
                    path: pa,
                    symbol: sa,
                    compile: ca,
                },
                HasherIdentity::External {
                    path: pb,
                    symbol: sb,
                    compile: cb,
                },
            ) => sa == sb && ca == cb && crate::hashers::same_file(pa, pb),
            _ => false,
        }
    }
}

impl std::fmt::Display for HasherIdentity {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            HasherIdentity::Builtin(n) => f.write_str(n),
            HasherIdentity::External { path, symbol, .. } => {
                write!(f, "symbol {symbol} of '{}'", path.display())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::KeyHasher;

    #[test]
    fn ranges_and_lists() {
        assert_eq!(pow2_list("2..16", "buckets", false).unwrap(), [2, 4, 8, 16]);
        assert_eq!(pow2_list("2,0x10,1024", "b", false).unwrap(), [2, 16, 1024]);
        assert_eq!(pow2_list("2,16,0", "b", true).unwrap(), [2, 16, 0]);
        assert_eq!(pow2_list("2..131072", "b", false).unwrap().len(), 17);
        assert!(pow2_list("3", "b", false).is_err());
        assert!(pow2_list("0", "b", false).is_err());
        assert!(pow2_list("16..2", "b", false).is_err());
        assert!(pow2_list("", "b", false).is_err());
        // Beyond the bound or beyond u64: too large, with the bound named.
        for big in [
            "99999999999999999999",
            "0x100000000000000000",
            "33554432",
            "33554433",
        ] {
            let e = pow2_list_max(big, "bucket count", true, 1 << 24)
                .unwrap_err()
                .to_string();
            assert!(
                e.contains(&format!("'{big}' is too large; at most 16777216 (2^24)")),
                "{e}"
            );
        }
        let e = pow2_list("99999999999999999999", "b", false)
            .unwrap_err()
            .to_string();
        assert!(e.contains("too large"), "{e}");
        assert!(pow2_list_max("2..33554432", "b", false, 1 << 24).is_err());
    }

    #[test]
    fn output_paths_are_checked_before_work() {
        let dir = std::env::temp_dir();
        assert!(
            check_output_path(&dir, "output")
                .unwrap_err()
                .to_string()
                .contains("directory")
        );
        assert!(check_output_path(&dir.join("no-such-dir-fh/x.csv"), "plot").is_err());
        assert!(check_output_path(&dir.join("fh-new-file.csv"), "output").is_ok());
        assert!(check_output_path(Path::new("relative.csv"), "output").is_ok());
        // /proc exists, but no file can be created in it: only a real probe tells.
        let e = check_output_path(Path::new("/proc/x"), "output").unwrap_err();
        assert!(
            e.to_string().contains("cannot create files in '/proc'"),
            "{e}"
        );
        assert!(check_output_dir(Path::new("/proc/x"), "report directory").is_err());
    }

    /// An output directory is created, but never the directories above it: a missing parent
    /// is refused naming it (the check walked up to the nearest existing ancestor and
    /// passed `new/sub` when `new` was missing). What exists must be directories that take
    /// files.
    #[test]
    fn output_dirs_need_their_parent() {
        let base = std::env::temp_dir().join(format!("fh-out-dir-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&base);
        std::fs::create_dir_all(base.join("there")).unwrap();
        std::fs::write(base.join("file"), "x").unwrap();
        let check = |p: &Path| check_output_dir(p, "report directory").map_err(|e| e.to_string());
        // New under an existing directory, or there already: accepted.
        assert_eq!(check(&base.join("new")), Ok(()));
        assert_eq!(check(&base.join("there")), Ok(()));
        // New under a missing directory: refused, naming the missing one; nothing created.
        let e = check(&base.join("missing/sub")).unwrap_err();
        assert!(
            e.contains(&format!(
                "directory '{}' does not exist",
                base.join("missing").display()
            )),
            "{e}"
        );
        assert!(check(&base.join("missing/deeper/sub")).is_err());
        assert!(!base.join("missing").exists());
        // A file where the directory or its parent should be.
        let e = check(&base.join("file")).unwrap_err();
        assert!(e.contains("not a directory"), "{e}");
        let e = check(&base.join("file/sub")).unwrap_err();
        assert!(e.contains("is not a directory"), "{e}");
        // Where no file can be created: in the parent, or in the directory itself.
        assert!(check(Path::new("/proc/x")).is_err());
        assert!(check(Path::new("/proc/self")).is_err());
        std::fs::remove_dir_all(&base).unwrap();
    }

    #[test]
    fn output_and_plot_must_not_name_one_file() {
        let d = std::env::temp_dir().join(format!("fh-distinct-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(d.join("sub")).unwrap();
        let same = |a: &Path, b: &Path| check_distinct_outputs(a, b).is_err();
        // Not there yet: the same name, also spelled through `.` and `..`.
        let f = d.join("same.svg");
        assert!(same(&f, &f));
        assert!(same(&f, &d.join("sub/../same.svg")));
        assert!(same(&d.join("./same.svg"), &f));
        assert!(!same(&f, &d.join("other.svg")));
        // There, and a link to it.
        std::fs::write(&f, "x").unwrap();
        std::os::unix::fs::symlink("same.svg", d.join("link.svg")).unwrap();
        assert!(same(&d.join("link.svg"), &f));
        // A missing directory: compared as written.
        let m = d.join("missing/p.svg");
        assert!(same(&m, &m));
        assert!(!same(&m, &d.join("missing/q.svg")));
        // Written into, not replaced: both arrive.
        for dev in ["/dev/null", "/dev/stdout"] {
            assert!(!same(Path::new(dev), Path::new(dev)), "{dev}");
        }
        let e = check_distinct_outputs(&f, &f).unwrap_err().to_string();
        assert!(e.contains("--output") && e.contains("--plot"), "{e}");
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn plot_names_must_say_svg() {
        for ok in [
            "p.svg",
            "P.SVG",
            "dir.png/p.Svg",
            "plot",
            "/dev/stdout",
            "/dev/null",
        ] {
            assert!(check_plot_name(Path::new(ok)).is_ok(), "{ok}");
        }
        for bad in ["p.png", "p.PNG", "p.svg.gz", "p.pdf"] {
            let e = check_plot_name(Path::new(bad)).unwrap_err().to_string();
            assert!(e.contains(&format!("'{bad}'")) && e.contains(".svg"), "{e}");
            assert!(check_output_path(Path::new(bad), "plot").is_err(), "{bad}");
        }
    }

    #[test]
    fn algo_lists() {
        let all = algo_list("all", HashKey::DEFAULT).unwrap();
        assert_eq!(all.len(), 2 * crate::hashers::ALGORITHMS.len());
        let seed = algo_list("seed", HashKey::DEFAULT).unwrap();
        assert_eq!(seed[1].name(), "jhash2-addr");
        let e = algo_list("jhash2,nope", HashKey::DEFAULT).unwrap_err();
        assert!(e.to_string().contains("'nope'"));
        // Where one hasher is wanted, the lists are refused as lists, and an unknown
        // name's message does not offer them.
        for list in ["all", "seed", "jhash2,xxh3"] {
            let e = one_algo(list, HashKey::DEFAULT).unwrap_err().to_string();
            assert!(e.contains(&format!("'{list}' is a list")), "{e}");
        }
        let e = one_algo("nope", HashKey::DEFAULT).unwrap_err().to_string();
        assert!(e.contains("'nope'") && !e.contains("seed"), "{e}");
    }

    /// A hasher named twice in one list is refused by `algo_list` itself, so every command
    /// taking a list refuses it (bench, sim, hash, report kept the first and ran on), in one
    /// line naming it: written twice, included by `seed`/`all`, or one C hasher spelled two
    /// ways. Nothing is loaded: the files need not exist, or be shared objects.
    #[test]
    fn algo_lists_refuse_a_hasher_named_twice() {
        let refused = |list: &str, needles: &[&str]| {
            let e = match algo_list(list, HashKey::DEFAULT) {
                Err(CliError::Usage(e)) => e,
                other => panic!("{list}: {:?}", other.map(|v| v.len())),
            };
            assert_eq!(e.lines().count(), 1, "{e}");
            for n in needles {
                assert!(e.contains(n), "{list}: {e}");
            }
        };
        refused("jhash2,jhash2", &["--algo 'jhash2' is listed twice"]);
        refused(" xxh3 ,crc32, xxh3", &["'xxh3' is listed twice"]);
        refused(
            "seed,crc32",
            &["'crc32' is listed twice", "seed includes it"],
        );
        refused("jhash2-addr,seed", &["'jhash2-addr'", "seed includes it"]);
        refused("all,seed", &["'jhash2'", "all and seed both include it"]);
        refused(
            "so:/nonexistent/h.so,so:/nonexistent/h.so",
            &["listed twice"],
        );
        // One file and symbol under two labels, or with the default symbol spelled out.
        refused(
            "a=so:/nonexistent/h.so,b=so:/nonexistent/h.so",
            &["'b=so:/nonexistent/h.so' is listed twice", "'a=so:"],
        );
        refused(
            "c:/nonexistent/h.c,c:/nonexistent/h.c:futex_hash",
            &["same hasher as 'c:/nonexistent/h.c'"],
        );
        // One existing file through two paths.
        let d = std::env::temp_dir().join(format!("fh-algo-twice-{}", std::process::id()));
        std::fs::create_dir_all(d.join("sub")).unwrap();
        std::fs::write(d.join("h.so"), "not loaded").unwrap();
        let (a, b) = (d.join("h.so"), d.join("sub/../h.so"));
        refused(
            &format!("so:{},so:{}", a.display(), b.display()),
            &["listed twice", "same hasher"],
        );
        // A hard link is the same file under another name; one label for two spellings
        // of one file is a repeat too, not "two different hashers".
        let hard = d.join("hard.so");
        std::fs::hard_link(&a, &hard).unwrap();
        refused(
            &format!("so:{},so:{}", a.display(), hard.display()),
            &["listed twice", "same hasher"],
        );
        refused(
            &format!("l=so:{},l=so:{}", a.display(), b.display()),
            &["listed twice", "same hasher"],
        );
        std::fs::write(d.join("other.so"), "not loaded").unwrap();
        let e = no_repeated_hashers(&format!("so:{},so:{}/other.so", a.display(), d.display()));
        assert!(e.is_ok(), "two files: {e:?}");
        std::fs::remove_dir_all(&d).unwrap();
        // Distinct hashers, and names that only look alike, are not repeats.
        for ok in ["jhash2,jhash2-addr", "seed,xxh3", "all"] {
            assert!(algo_list(ok, HashKey::DEFAULT).is_ok(), "{ok}");
        }
        let e = no_repeated_hashers("so:/x/h.so,so:/x/h.so:other,c:/x/h.c,so:/y/h.so");
        assert!(e.is_ok(), "{e:?}");
        // An unknown name is refused as unknown, also when it repeats.
        let e = algo_list("nope,nope", HashKey::DEFAULT)
            .unwrap_err()
            .to_string();
        assert!(e.contains("unknown algorithm 'nope'"), "{e}");
    }
}
