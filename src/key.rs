//! The futex key: what the kernel hashes to find a futex's bucket.
//!
//! Models `union futex_key` of `include/linux/futex.h` (Linux 6.16+, 64-bit) exactly as
//! docs/hashers.md §1 lays it out:
//!
//! | bytes  | field    | private       | shared anonymous        | shared inode (file/shmem) |
//! |--------|----------|---------------|-------------------------|---------------------------|
//! | 0..8   | `w0`     | `mm` pointer  | `mm` pointer            | `i_seq`                   |
//! | 8..16  | `w1`     | `uaddr & !0xfff` | `uaddr & !0xfff`     | `pgoff`                   |
//! | 16..20 | `offset` | `uaddr & 0xfff` | `(uaddr & 0xfff) \| 2` | `in_page_offset \| 1`     |
//! | 20..24 | `node`   | NUMA node or -1: carried, never hashed, never compared              |||
//!
//! The kind lives in the two low bits of `offset` (`FUT_OFF_INODE = 1`,
//! `FUT_OFF_MMSHARED = 2`, see `kernel/futex/futex.h`), which are free because futex words
//! are 4-byte aligned. Keys are equal when `w0`, `w1` and `offset` are (`futex_match()`).
//!
//! Two encodings: the 24-byte kernel image ([`FutexKey::to_bytes`]/[`FutexKey::from_bytes`])
//! and the text form used on the command line and in data files
//! (`private:MM:UADDR`, `anon:MM:UADDR`, `inode:ISEQ:PGOFF:OFFSET`).

use std::fmt;
use std::str::FromStr;

/// `PAGE_SIZE` of the modelled kernel (x86-64).
pub const PAGE_SIZE: u64 = 4096;
const PAGE_MASK: u64 = PAGE_SIZE - 1;
/// `FUT_OFF_INODE`: the key is for a file-backed (inode) shared mapping.
pub const FUT_OFF_INODE: u32 = 1;
/// `FUT_OFF_MMSHARED`: the key is for a shared anonymous mapping.
pub const FUT_OFF_MMSHARED: u32 = 2;
const KIND_BITS: u32 = 3;
/// `NUMA_NO_NODE`.
pub const NO_NODE: i32 = -1;
/// Size of the kernel's `union futex_key` on 64-bit.
pub const KEY_BYTES: usize = 24;

/// Which of the three key flavours a key is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum KeyKind {
    /// `FUTEX_PRIVATE_FLAG` futex: `(mm, address)`.
    Private,
    /// Shared futex in anonymous memory: `(mm, address)` with `FUT_OFF_MMSHARED`.
    SharedAnon,
    /// Shared futex in a file or shmem mapping: `(i_seq, pgoff)` with `FUT_OFF_INODE`.
    Inode,
}

impl KeyKind {
    /// The prefix of the text form.
    pub fn prefix(self) -> &'static str {
        match self {
            KeyKind::Private => "private",
            KeyKind::SharedAnon => "anon",
            KeyKind::Inode => "inode",
        }
    }

    fn kind_bits(self) -> u32 {
        match self {
            KeyKind::Private => 0,
            KeyKind::SharedAnon => FUT_OFF_MMSHARED,
            KeyKind::Inode => FUT_OFF_INODE,
        }
    }
}

/// Why a key could not be built or decoded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum KeyError {
    /// The kind bits of `offset` were 3, which no kernel key has.
    InvalidKindBits(u32),
    /// A futex address or in-page offset that is not 4-byte aligned.
    Misaligned(u64),
    /// The in-page offset is not below `PAGE_SIZE`.
    OffsetOutOfRange(u64),
    /// `w1` of a private or anon key must be a page-aligned address.
    UnalignedPage(u64),
    /// The byte image had the wrong length.
    WrongLength(usize),
    /// A field of the text form (`MM`, `UADDR`, `ISEQ`, `PGOFF`, `OFFSET`) that is not a
    /// 64-bit decimal or `0x`-hex number.
    NotANumber {
        /// The field's name in the text form.
        field: &'static str,
        /// What was given.
        text: String,
    },
    /// Text that is none of the three forms; holds the text.
    UnknownForm(String),
}

impl fmt::Display for KeyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            KeyError::InvalidKindBits(o) => {
                write!(f, "offset {o:#x} has kind bits 3, which do not exist")
            }
            KeyError::Misaligned(v) => write!(f, "{v:#x} is not 4-byte aligned"),
            KeyError::OffsetOutOfRange(v) => {
                write!(f, "in-page offset {v:#x} is not below the page size 4096")
            }
            KeyError::UnalignedPage(v) => write!(f, "address word {v:#x} is not page-aligned"),
            KeyError::WrongLength(n) => write!(f, "key image is {n} bytes, expected 24"),
            KeyError::NotANumber { field, text } => {
                write!(
                    f,
                    "{field} '{text}' is not a 64-bit decimal or 0x-hex number"
                )
            }
            KeyError::UnknownForm(text) => write!(
                f,
                "key '{text}': expected private:MM:UADDR, anon:MM:UADDR or inode:ISEQ:PGOFF:OFFSET"
            ),
        }
    }
}

impl std::error::Error for KeyError {}

/// A futex key with the kernel's 64-bit layout (see the module docs).
///
/// `node` is carried for per-node tables but ignored by `==`, `Hash` and every hasher.
#[derive(Clone, Copy, Debug)]
#[repr(C)]
pub struct FutexKey {
    w0: u64,
    w1: u64,
    offset: u32,
    node: i32,
}

// The byte image and the hashers rely on this layout.
const _: () = assert!(std::mem::size_of::<FutexKey>() == KEY_BYTES);
const _: () = assert!(std::mem::offset_of!(FutexKey, w1) == 8);
const _: () = assert!(std::mem::offset_of!(FutexKey, offset) == 16);
const _: () = assert!(std::mem::offset_of!(FutexKey, node) == 20);

impl PartialEq for FutexKey {
    fn eq(&self, other: &Self) -> bool {
        // futex_match(): node is deliberately not compared.
        self.w0 == other.w0 && self.w1 == other.w1 && self.offset == other.offset
    }
}
impl Eq for FutexKey {}

impl std::hash::Hash for FutexKey {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.w0.hash(state);
        self.w1.hash(state);
        self.offset.hash(state);
    }
}

fn check_word_aligned(v: u64) -> Result<(), KeyError> {
    if v & 3 != 0 {
        Err(KeyError::Misaligned(v))
    } else {
        Ok(())
    }
}

impl FutexKey {
    /// A private key (`FUTEX_PRIVATE_FLAG`) of the process whose `mm` is `mm`.
    pub fn private(mm: u64, uaddr: u64) -> Result<Self, KeyError> {
        Self::from_address(KeyKind::Private, mm, uaddr)
    }

    /// A shared key in anonymous memory of the process whose `mm` is `mm`.
    pub fn anon(mm: u64, uaddr: u64) -> Result<Self, KeyError> {
        Self::from_address(KeyKind::SharedAnon, mm, uaddr)
    }

    fn from_address(kind: KeyKind, mm: u64, uaddr: u64) -> Result<Self, KeyError> {
        check_word_aligned(uaddr)?;
        Ok(FutexKey {
            w0: mm,
            w1: uaddr & !PAGE_MASK,
            offset: (uaddr & PAGE_MASK) as u32 | kind.kind_bits(),
            node: NO_NODE,
        })
    }

    /// A shared key in a file or shmem mapping: inode sequence number, page index in the
    /// file and the 4-byte aligned offset of the futex word within that page.
    pub fn inode(i_seq: u64, pgoff: u64, in_page_offset: u64) -> Result<Self, KeyError> {
        check_word_aligned(in_page_offset)?;
        if in_page_offset >= PAGE_SIZE {
            return Err(KeyError::OffsetOutOfRange(in_page_offset));
        }
        Ok(FutexKey {
            w0: i_seq,
            w1: pgoff,
            offset: in_page_offset as u32 | FUT_OFF_INODE,
            node: NO_NODE,
        })
    }

    /// The same key with `node` set (FUTEX2_NUMA); does not change equality or hashes.
    pub fn with_node(mut self, node: i32) -> Self {
        self.node = node;
        self
    }

    /// Key flavour, from the kind bits of `offset`.
    pub fn kind(&self) -> KeyKind {
        match self.offset & KIND_BITS {
            0 => KeyKind::Private,
            FUT_OFF_MMSHARED => KeyKind::SharedAnon,
            _ => KeyKind::Inode,
        }
    }

    /// `both.ptr`: `mm` or `i_seq`.
    #[inline(always)]
    pub fn w0(&self) -> u64 {
        self.w0
    }
    /// `both.word`: page-aligned address or `pgoff`.
    #[inline(always)]
    pub fn w1(&self) -> u64 {
        self.w1
    }
    /// `both.offset`, kind bits included: the seed of every hasher.
    #[inline(always)]
    pub fn offset(&self) -> u32 {
        self.offset
    }
    /// NUMA node, or [`NO_NODE`].
    pub fn node(&self) -> i32 {
        self.node
    }
    /// The user address of a private or anon key (`w1 | in-page offset`); for an inode key
    /// the byte offset into the file (`pgoff * PAGE_SIZE + offset`).
    pub fn address(&self) -> u64 {
        let in_page = u64::from(self.offset & !KIND_BITS);
        match self.kind() {
            KeyKind::Inode => self.w1.wrapping_mul(PAGE_SIZE).wrapping_add(in_page),
            _ => self.w1 | in_page,
        }
    }

    /// Full scope input: `[lo(w0), hi(w0), lo(w1), hi(w1)]` (what the global hash hashes).
    #[inline(always)]
    pub fn full_words(&self) -> [u32; 4] {
        [
            self.w0 as u32,
            (self.w0 >> 32) as u32,
            self.w1 as u32,
            (self.w1 >> 32) as u32,
        ]
    }

    /// Addr scope input: `[lo(w1), hi(w1)]` (what the v6.16 private hash hashes).
    #[inline(always)]
    pub fn addr_words(&self) -> [u32; 2] {
        [self.w1 as u32, (self.w1 >> 32) as u32]
    }

    /// Full scope bytes: `LE64(w0) ‖ LE64(w1)`.
    #[inline(always)]
    pub fn full_bytes(&self) -> [u8; 16] {
        let mut b = [0u8; 16];
        b[..8].copy_from_slice(&self.w0.to_le_bytes());
        b[8..].copy_from_slice(&self.w1.to_le_bytes());
        b
    }

    /// Addr scope bytes: `LE64(w1)`.
    #[inline(always)]
    pub fn addr_bytes(&self) -> [u8; 8] {
        self.w1.to_le_bytes()
    }

    /// The 24-byte little-endian kernel image of the key.
    pub fn to_bytes(&self) -> [u8; KEY_BYTES] {
        let mut b = [0u8; KEY_BYTES];
        b[..8].copy_from_slice(&self.w0.to_le_bytes());
        b[8..16].copy_from_slice(&self.w1.to_le_bytes());
        b[16..20].copy_from_slice(&self.offset.to_le_bytes());
        b[20..24].copy_from_slice(&self.node.to_le_bytes());
        b
    }

    /// Decodes and validates a 24-byte kernel image.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, KeyError> {
        let b: &[u8; KEY_BYTES] = bytes
            .try_into()
            .map_err(|_| KeyError::WrongLength(bytes.len()))?;
        let le64 =
            |r: std::ops::Range<usize>| u64::from_le_bytes(b[r].try_into().expect("8-byte range"));
        let le32 =
            |r: std::ops::Range<usize>| u32::from_le_bytes(b[r].try_into().expect("4-byte range"));
        let w0 = le64(0..8);
        let w1 = le64(8..16);
        let offset = le32(16..20);
        let node = le32(20..24) as i32;
        if offset & KIND_BITS == KIND_BITS {
            return Err(KeyError::InvalidKindBits(offset));
        }
        if u64::from(offset) >= PAGE_SIZE {
            return Err(KeyError::OffsetOutOfRange(u64::from(offset & !KIND_BITS)));
        }
        let key = FutexKey {
            w0,
            w1,
            offset,
            node,
        };
        if key.kind() != KeyKind::Inode && w1 & PAGE_MASK != 0 {
            return Err(KeyError::UnalignedPage(w1));
        }
        Ok(key)
    }
}

/// Parses a number in decimal or `0x` hex (the CLI's convention).
pub fn parse_number(s: &str) -> Option<u64> {
    let s = s.trim();
    if let Some(hex) = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        if hex.is_empty() || hex.starts_with('+') {
            return None;
        }
        u64::from_str_radix(hex, 16).ok()
    } else {
        if s.starts_with('+') {
            return None;
        }
        s.parse().ok()
    }
}

impl FromStr for FutexKey {
    type Err = KeyError;

    fn from_str(s: &str) -> Result<Self, KeyError> {
        let parts: Vec<&str> = s.split(':').collect();
        let num = |i: usize, field: &'static str| -> Result<u64, KeyError> {
            parse_number(parts[i]).ok_or_else(|| KeyError::NotANumber {
                field,
                text: parts[i].to_string(),
            })
        };
        match parts[0] {
            "private" | "anon" if parts.len() == 3 => {
                let mm = num(1, "MM")?;
                let uaddr = num(2, "UADDR")?;
                if parts[0] == "private" {
                    FutexKey::private(mm, uaddr)
                } else {
                    FutexKey::anon(mm, uaddr)
                }
            }
            "inode" if parts.len() == 4 => {
                FutexKey::inode(num(1, "ISEQ")?, num(2, "PGOFF")?, num(3, "OFFSET")?)
            }
            _ => Err(KeyError::UnknownForm(s.to_string())),
        }
    }
}

impl fmt::Display for FutexKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let in_page = self.offset & !KIND_BITS;
        match self.kind() {
            KeyKind::Inode => write!(f, "inode:{}:{}:{:#x}", self.w0, self.w1, in_page),
            kind => write!(
                f,
                "{}:{:#x}:{:#x}",
                kind.prefix(),
                self.w0,
                self.w1 | u64::from(in_page)
            ),
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn layout_matches_spec_table() {
        let k = FutexKey::private(0xffff888012345600, 0x7f0000001010).unwrap();
        assert_eq!(k.w0(), 0xffff888012345600);
        assert_eq!(k.w1(), 0x7f0000001000);
        assert_eq!(k.offset(), 0x10);
        assert_eq!(k.kind(), KeyKind::Private);
        let a = FutexKey::anon(1, 0x7f0000000010).unwrap();
        assert_eq!(a.offset(), 0x12);
        assert_eq!(a.kind(), KeyKind::SharedAnon);
        let i = FutexKey::inode(1, 7, 0x10).unwrap();
        assert_eq!((i.w0(), i.w1(), i.offset()), (1, 7, 0x11));
        assert_eq!(i.kind(), KeyKind::Inode);
        let b = k.to_bytes();
        assert_eq!(&b[0..8], &0xffff888012345600u64.to_le_bytes());
        assert_eq!(&b[16..20], &0x10u32.to_le_bytes());
        assert_eq!(&b[20..24], &(-1i32).to_le_bytes());
    }

    #[test]
    fn node_is_neither_compared_nor_encoded_in_identity() {
        let k = FutexKey::private(5, 0x1000).unwrap();
        assert_eq!(k, k.with_node(3));
        assert_eq!(k.with_node(3).node(), 3);
    }

    #[test]
    fn decode_rejects_invalid_images() {
        let mut b = FutexKey::private(1, 0x2000).unwrap().to_bytes();
        b[16] = 3;
        assert_eq!(FutexKey::from_bytes(&b), Err(KeyError::InvalidKindBits(3)));
        b[16..20].copy_from_slice(&4096u32.to_le_bytes());
        assert!(matches!(
            FutexKey::from_bytes(&b),
            Err(KeyError::OffsetOutOfRange(_))
        ));
        let mut b = FutexKey::private(1, 0x2000).unwrap().to_bytes();
        b[8] = 4;
        assert_eq!(
            FutexKey::from_bytes(&b),
            Err(KeyError::UnalignedPage(0x2004))
        );
        assert_eq!(
            FutexKey::from_bytes(&b[..23]),
            Err(KeyError::WrongLength(23))
        );
    }

    #[test]
    fn text_rejects_bad_tokens() {
        assert!(matches!(
            "private:zz:1".parse::<FutexKey>(),
            Err(KeyError::NotANumber { field: "MM", .. })
        ));
        assert_eq!(
            "shared:1:2".parse::<FutexKey>(),
            Err(KeyError::UnknownForm("shared:1:2".into()))
        );
        assert_eq!(
            "inode:1:2:4096".parse::<FutexKey>(),
            Err(KeyError::OffsetOutOfRange(4096))
        );
        assert_eq!(
            "private:1:0x1002".parse::<FutexKey>(),
            Err(KeyError::Misaligned(0x1002))
        );
        assert!("private:1".parse::<FutexKey>().is_err());
        assert!("shared:1:2".parse::<FutexKey>().is_err());
        assert!("private:1:-4".parse::<FutexKey>().is_err());
        assert!("private:0x:4".parse::<FutexKey>().is_err());
        assert!("private:1:0x10000000000000000".parse::<FutexKey>().is_err());
    }

    pub(crate) fn any_key() -> impl Strategy<Value = FutexKey> {
        prop_oneof![
            (any::<u64>(), any::<u64>()).prop_map(|(mm, a)| FutexKey::private(mm, a & !3).unwrap()),
            (any::<u64>(), any::<u64>()).prop_map(|(mm, a)| FutexKey::anon(mm, a & !3).unwrap()),
            (any::<u64>(), any::<u64>(), 0u64..1024).prop_map(|(s, p, o)| FutexKey::inode(
                s,
                p,
                o * 4
            )
            .unwrap()),
        ]
    }

    proptest! {
        #[test]
        fn bytes_round_trip(k in any_key(), node in any::<i32>()) {
            let k = k.with_node(node);
            let back = FutexKey::from_bytes(&k.to_bytes()).unwrap();
            prop_assert_eq!(back, k);
            prop_assert_eq!(back.node(), node);
        }

        #[test]
        fn text_round_trip(k in any_key()) {
            let back: FutexKey = k.to_string().parse().unwrap();
            prop_assert_eq!(back, k);
        }

        #[test]
        fn decode_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..40)) {
            if let Ok(k) = FutexKey::from_bytes(&bytes) {
                prop_assert_eq!(&k.to_bytes()[..], &bytes[..]);
            }
        }
    }
}
