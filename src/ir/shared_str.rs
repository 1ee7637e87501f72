//! `SharedStr`: a string that is a slice of a shared buffer.
//!
//! The parser keeps the names of each computation in one buffer and each
//! distinct attribute text once per module, and hands them out as slices,
//! so a million names cost one allocation per computation. A string made
//! later (by a pass) gets a buffer of its own. The empty string and the
//! attribute keys XLA knows have no buffer: they are slices of a static
//! text, so making, cloning and dropping them touches no reference count
//! (the parser makes a million keys). Either way it derefs to `&str` and
//! is 16 bytes.

use std::borrow::Borrow;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::ops::Deref;
use std::sync::Arc;

use super::instruction::KNOWN_KEY_TEXT;

/// The default is the empty string (no buffer).
#[derive(Clone, Default)]
pub struct SharedStr {
    /// `None`: a slice of `KNOWN_KEY_TEXT` (the empty string is one).
    buf: Option<Arc<String>>,
    start: u32,
    len: u32,
}

impl SharedStr {
    /// A slice of a shared buffer. `None` if the range is out of bounds,
    /// not on char boundaries, or past 4 GiB.
    pub fn slice(buf: &Arc<String>, start: usize, end: usize) -> Option<SharedStr> {
        buf.get(start..end)?;
        Some(SharedStr {
            buf: Some(Arc::clone(buf)),
            start: u32::try_from(start).ok()?,
            len: u32::try_from(end - start).ok()?,
        })
    }

    /// The part `start..end` of this string (byte offsets into it), sharing
    /// its buffer; an empty string if the range is not one of it.
    pub fn sub(&self, start: usize, end: usize) -> SharedStr {
        if start > end || self.as_str().get(start..end).is_none() {
            return SharedStr::default();
        }
        SharedStr {
            buf: self.buf.clone(),
            start: self.start + start as u32,
            len: (end - start) as u32,
        }
    }

    /// Where this string starts in `buf`, if it is a slice of it.
    pub fn offset_in(&self, buf: &Arc<String>) -> Option<usize> {
        let own = self.buf.as_ref()?;
        Arc::ptr_eq(own, buf).then_some(self.start as usize)
    }

    /// The known attribute key at `start..start + len` of `KNOWN_KEY_TEXT`
    /// (see [`super::instruction::attr_key`]).
    pub(crate) fn known_key(start: u32, len: u32) -> SharedStr {
        debug_assert!(KNOWN_KEY_TEXT
            .get(start as usize..(start + len) as usize)
            .is_some());
        SharedStr {
            buf: None,
            start,
            len,
        }
    }

    pub fn as_str(&self) -> &str {
        let start = self.start as usize;
        let end = start + self.len as usize;
        match &self.buf {
            Some(buf) => &buf[start..end],
            None => &KNOWN_KEY_TEXT[start..end],
        }
    }
}

impl Deref for SharedStr {
    type Target = str;
    fn deref(&self) -> &str {
        self.as_str()
    }
}

impl From<String> for SharedStr {
    fn from(s: String) -> SharedStr {
        if s.is_empty() {
            return SharedStr::default();
        }
        let len = u32::try_from(s.len()).expect("strings are shorter than 4 GiB");
        SharedStr {
            buf: Some(Arc::new(s)),
            start: 0,
            len,
        }
    }
}

impl From<&str> for SharedStr {
    fn from(s: &str) -> SharedStr {
        SharedStr::from(s.to_string())
    }
}

impl From<Box<str>> for SharedStr {
    fn from(s: Box<str>) -> SharedStr {
        SharedStr::from(String::from(s))
    }
}

/// Lets a set of `SharedStr` be searched by `&str` (the hash is the
/// `str`'s, see `Hash` below).
impl Borrow<str> for SharedStr {
    fn borrow(&self) -> &str {
        self.as_str()
    }
}

impl PartialEq for SharedStr {
    fn eq(&self, other: &SharedStr) -> bool {
        self.as_str() == other.as_str()
    }
}

impl Eq for SharedStr {}

impl PartialEq<str> for SharedStr {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

impl PartialEq<&str> for SharedStr {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl Hash for SharedStr {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.as_str().hash(state);
    }
}

impl fmt::Debug for SharedStr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

impl fmt::Display for SharedStr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slices_share_the_buffer() {
        let buf = Arc::new("hello world".to_string());
        let a = SharedStr::slice(&buf, 6, 11).unwrap();
        assert_eq!(&*a, "world");
        assert_eq!(Arc::strong_count(&buf), 2);
        assert!(SharedStr::slice(&buf, 6, 12).is_none());
        assert_eq!(SharedStr::from("x"), SharedStr::from("x".to_string()));
        assert_eq!(std::mem::size_of::<SharedStr>(), 16);
    }

    #[test]
    fn known_keys_and_the_empty_string_have_no_buffer() {
        let key = crate::ir::instruction::attr_key("dimensions");
        assert_eq!(&*key, "dimensions");
        assert!(key.buf.is_none());
        assert_eq!(key, SharedStr::from("dimensions"));
        assert_eq!(&*key.sub(1, 4), "ime");
        let own = crate::ir::instruction::attr_key("not_a_known_key");
        assert_eq!(&*own, "not_a_known_key");
        assert!(own.buf.is_some());
        assert_eq!(&*SharedStr::default(), "");
        assert!(SharedStr::default().buf.is_none());
    }
}
