//! Bodies of the cargo-fuzz targets in `fuzz/`, kept in the library so that `cargo test`
//! replays the committed seed corpus (`fuzz/seeds/<target>/`) through exactly the code the
//! fuzzer runs (`tests/fuzz_seeds.rs`). Each function panics on a violated property, which
//! is what the fuzzer reports as a crash.

use crate::hashers::{AnyHasher, HashKey, KeyHasher, all_hashers};
use crate::key::FutexKey;

/// Names of the targets, as directories under `fuzz/seeds/` and binaries in `fuzz/`.
pub const TARGETS: &[&str] = &["key_bytes", "key_text", "hashers", "trace_line"];

/// Runs the target `name` on `data`; `false` if no such target.
pub fn run(name: &str, data: &[u8]) -> bool {
    match name {
        "key_bytes" => key_bytes(data),
        "key_text" => key_text(data),
        "hashers" => hashers(data),
        "trace_line" => trace_line(data),
        _ => return false,
    }
    true
}

/// 24-byte decoding: a decoded key re-encodes to the same bytes, survives the text form,
/// and never panics on any input.
pub fn key_bytes(data: &[u8]) {
    let Ok(key) = FutexKey::from_bytes(data) else {
        return;
    };
    assert_eq!(&key.to_bytes()[..], data, "decode/encode round trip");
    let text = key.to_string();
    let back: FutexKey = text.parse().expect("display output must parse");
    assert_eq!(back, key, "text round trip of {text}");
}

/// Text parsing: never panics; a parsed key displays to a canonical form that parses to
/// the same key and is a fixed point.
pub fn key_text(data: &[u8]) {
    let Ok(s) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(key) = s.parse::<FutexKey>() else {
        return;
    };
    let canon = key.to_string();
    let again: FutexKey = canon.parse().expect("canonical form must parse");
    assert_eq!(again, key);
    assert_eq!(again.to_string(), canon, "canonical form is a fixed point");
    assert_eq!(FutexKey::from_bytes(&key.to_bytes()), Ok(key));
}

/// Every hasher on an arbitrary key (and an arbitrary hash key): no panic, deterministic,
/// `hash_many` agrees with `hash`, and the addr scope ignores `w0`.
pub fn hashers(data: &[u8]) {
    if data.len() < 40 {
        return;
    }
    let Ok(key) = FutexKey::from_bytes(&data[..24]) else {
        return;
    };
    let hk = HashKey::from_bytes(data[24..40].try_into().expect("16 bytes"));
    let mut other_w0 = key.to_bytes();
    other_w0[..8].iter_mut().for_each(|b| *b = !*b);
    let other = FutexKey::from_bytes(&other_w0).expect("w0 does not affect validity");
    for h in all_hashers(hk) {
        let v = h.hash(&key);
        assert_eq!(v, h.hash(&key), "{} deterministic", h.name());
        let mut out = [0u32; 1];
        h.hash_many(&[key], &mut out);
        assert_eq!(out[0], v, "{} hash_many", h.name());
        if h.scope() == crate::Scope::Addr {
            assert_eq!(h.hash(&other), v, "{} must ignore w0", h.name());
        }
        let again = AnyHasher::by_name(h.name(), hk).expect("registry name");
        assert_eq!(again.hash(&key), v);
    }
}

/// The strace line parser and the whole-trace key extraction: never panic on any text; a
/// parsed futex call on an aligned address gives a key, and a trace is deterministic.
pub fn trace_line(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    for line in text.lines() {
        if let Ok(Some(ev)) = crate::workload::parse_strace_line(line) {
            if let crate::workload::TraceAction::Futex { uaddr, private, .. } = ev.action {
                let key = if private {
                    FutexKey::private(1, uaddr)
                } else {
                    FutexKey::anon(1, uaddr)
                };
                assert_eq!(key.is_ok(), uaddr % 4 == 0, "uaddr {uaddr:#x}");
            }
        }
    }
    let a = crate::workload::trace::keys_from_strace(&text);
    let b = crate::workload::trace::keys_from_strace(&text);
    assert_eq!(
        format!("{a:?}"),
        format!("{b:?}"),
        "trace import is deterministic"
    );
}
