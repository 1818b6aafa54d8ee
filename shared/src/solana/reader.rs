//! A bounds-checked cursor over input bytes: every read returns `Truncated` instead of panicking.

use super::{SolanaError, shortvec};

pub(super) struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    pub(super) fn new(bytes: &'a [u8]) -> Self {
        Reader { bytes, at: 0 }
    }

    /// What `read` reads from `bytes`, which must be all of them.
    pub(super) fn whole<T>(
        bytes: &'a [u8],
        read: impl FnOnce(&mut Reader<'a>) -> Result<T, SolanaError>,
    ) -> Result<T, SolanaError> {
        let mut r = Reader::new(bytes);
        let value = read(&mut r)?;
        r.finish()?;
        Ok(value)
    }

    pub(super) fn rest(&self) -> &'a [u8] {
        self.bytes.get(self.at..).unwrap_or_default()
    }

    pub(super) fn take(&mut self, n: usize) -> Result<&'a [u8], SolanaError> {
        let end = self.at.checked_add(n).ok_or(SolanaError::Truncated)?;
        let out = self.bytes.get(self.at..end).ok_or(SolanaError::Truncated)?;
        self.at = end;
        Ok(out)
    }

    pub(super) fn byte(&mut self) -> Result<u8, SolanaError> {
        Ok(self.take(1)?[0])
    }

    pub(super) fn array<const N: usize>(&mut self) -> Result<[u8; N], SolanaError> {
        self.take(N)?.try_into().map_err(|_| SolanaError::Truncated)
    }

    pub(super) fn len(&mut self) -> Result<usize, SolanaError> {
        let (value, used) = shortvec::decode(self.rest())?;
        self.at += used;
        Ok(usize::from(value))
    }

    /// A compact-u16 length followed by that many bytes.
    pub(super) fn bytes_vec(&mut self) -> Result<Vec<u8>, SolanaError> {
        let n = self.len()?;
        Ok(self.take(n)?.to_vec())
    }

    pub(super) fn finish(&self) -> Result<(), SolanaError> {
        if self.at == self.bytes.len() { Ok(()) } else { Err(SolanaError::TrailingBytes) }
    }
}
