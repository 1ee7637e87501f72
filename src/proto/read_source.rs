//! Where the encoded module is read from: memory, or a file read one
//! computation at a time, so that a large proto is never held whole beside
//! the IR it becomes (the IR is about twice its size).

use super::ProtoError;

/// An encoded `HloModuleProto`, read by byte range.
pub(crate) trait Source: Sync {
    fn len(&self) -> usize;

    /// The bytes `at..at + len` (in bounds): borrowed, or read into `buf`.
    fn read<'b>(
        &'b self,
        at: usize,
        len: usize,
        buf: &'b mut Vec<u8>,
    ) -> Result<&'b [u8], ProtoError>;
}

impl Source for [u8] {
    fn len(&self) -> usize {
        <[u8]>::len(self)
    }

    fn read<'b>(
        &'b self,
        at: usize,
        len: usize,
        _: &'b mut Vec<u8>,
    ) -> Result<&'b [u8], ProtoError> {
        Ok(&self[at..at + len])
    }
}

/// A regular file, read with positioned reads (`pread`), so that threads
/// share it without a cursor.
#[cfg(unix)]
pub(crate) struct FileSource<'f> {
    file: &'f std::fs::File,
    len: usize,
}

#[cfg(unix)]
impl<'f> FileSource<'f> {
    pub(crate) fn new(file: &'f std::fs::File) -> std::io::Result<FileSource<'f>> {
        let len = usize::try_from(file.metadata()?.len()).map_err(std::io::Error::other)?;
        Ok(FileSource { file, len })
    }
}

#[cfg(unix)]
impl Source for FileSource<'_> {
    fn len(&self) -> usize {
        self.len
    }

    fn read<'b>(
        &'b self,
        at: usize,
        len: usize,
        buf: &'b mut Vec<u8>,
    ) -> Result<&'b [u8], ProtoError> {
        use std::os::unix::fs::FileExt;
        // Only the growth is zeroed: the read overwrites the rest, and
        // zeroing the whole buffer each time was an eighth of the reads'
        // cost (the module is read twice, computation by computation).
        if buf.len() < len {
            buf.resize(len, 0);
        }
        let bytes = &mut buf[..len];
        self.file
            .read_exact_at(bytes, at as u64)
            .map_err(|e| ProtoError::new(format!("reading bytes {at}..{}: {e}", at + len)))?;
        Ok(bytes)
    }
}
