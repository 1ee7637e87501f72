//! `SharedStr`: a string that is a slice of a shared buffer.
//!
//! The parser keeps the names of each computation in one buffer and each
//! distinct attribute text once per module, and hands them out as slices,
//! so a million names cost one allocation per computation. A string made
//! later (by a pass) gets a buffer of its own. Either way it derefs to
//! `&str` and is 16 bytes.

use std::borrow::Borrow;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::ops::Deref;
use std::sync::{Arc, LazyLock};

/// The buffer of every empty string, so that making one allocates nothing.
static EMPTY: LazyLock<Arc<String>> = LazyLock::new(|| Arc::new(String::new()));

#[derive(Clone)]
pub struct SharedStr {
    buf: Arc<String>,
    start: u32,
    len: u32,
}

impl SharedStr {
    /// A slice of a shared buffer. `None` if the range is out of bounds,
    /// not on char boundaries, or past 4 GiB.
    pub fn slice(buf: &Arc<String>, start: usize, end: usize) -> Option<SharedStr> {
        buf.get(start..end)?;
        Some(SharedStr {
            buf: Arc::clone(buf),
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
            buf: Arc::clone(&self.buf),
            start: self.start + start as u32,
            len: (end - start) as u32,
        }
    }

    /// Where this string starts in `buf`, if it is a slice of it.
    pub fn offset_in(&self, buf: &Arc<String>) -> Option<usize> {
        Arc::ptr_eq(&self.buf, buf).then_some(self.start as usize)
    }

    pub fn as_str(&self) -> &str {
        let start = self.start as usize;
        &self.buf[start..start + self.len as usize]
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
        let len = u32::try_from(s.len()).expect("strings are shorter than 4 GiB");
        SharedStr {
            buf: Arc::new(s),
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

impl Default for SharedStr {
    fn default() -> SharedStr {
        SharedStr {
            buf: Arc::clone(&EMPTY),
            start: 0,
            len: 0,
        }
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
}
