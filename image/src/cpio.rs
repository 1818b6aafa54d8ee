//! A deterministic newc ("070701") cpio writer: what the kernel unpacks as initramfs.

use std::collections::BTreeMap;

/// What one archive entry is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Entry {
    Dir {
        mode: u32,
    },
    File {
        mode: u32,
        data: Vec<u8>,
    },
    /// A character device node, e.g. `/dev/console` (5, 1) which the kernel opens for init.
    CharDev {
        mode: u32,
        major: u32,
        minor: u32,
    },
}

const S_IFDIR: u32 = 0o040000;
const S_IFREG: u32 = 0o100000;
const S_IFCHR: u32 = 0o020000;

/// Entries by path (without a leading `/`); the map keeps them sorted.
#[derive(Debug, Default)]
pub struct Archive {
    entries: BTreeMap<String, Entry>,
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum CpioError {
    #[error("path `{0}` is not a plain relative path")]
    BadPath(String),
    #[error("`{0}` is added twice")]
    Duplicate(String),
    #[error("`{0}` has no parent directory in the archive")]
    NoParent(String),
    #[error("`{0}` is larger than newc's 4 GiB limit")]
    TooLarge(String),
}

impl Archive {
    pub fn add(&mut self, path: &str, entry: Entry) -> Result<(), CpioError> {
        let path = path.trim_start_matches('/');
        let ok =
            !path.is_empty() && path.split('/').all(|c| !c.is_empty() && c != "." && c != "..") && !path.contains('\0');
        if !ok {
            return Err(CpioError::BadPath(path.into()));
        }
        if let Entry::File { data, .. } = &entry
            && u32::try_from(data.len()).is_err()
        {
            return Err(CpioError::TooLarge(path.into()));
        }
        if self.entries.insert(path.to_string(), entry).is_some() {
            return Err(CpioError::Duplicate(path.into()));
        }
        Ok(())
    }

    /// The archive bytes. Every entry's parent must be in the archive too.
    pub fn write(&self, mtime: u32) -> Result<Vec<u8>, CpioError> {
        let mut out = Vec::new();
        for (ino, (path, entry)) in self.entries.iter().enumerate() {
            if let Some((parent, _)) = path.rsplit_once('/')
                && !matches!(self.entries.get(parent), Some(Entry::Dir { .. }))
            {
                return Err(CpioError::NoParent(path.clone()));
            }
            let (mode, nlink, data, rdev): (u32, u32, &[u8], (u32, u32)) = match entry {
                Entry::Dir { mode } => (S_IFDIR | mode, 2, &[], (0, 0)),
                Entry::File { mode, data } => (S_IFREG | mode, 1, data, (0, 0)),
                Entry::CharDev { mode, major, minor } => (S_IFCHR | mode, 1, &[], (*major, *minor)),
            };
            header(&mut out, ino as u32 + 1, mode, nlink, mtime, data.len() as u32, rdev, path);
            out.extend_from_slice(data);
            pad4(&mut out);
        }
        header(&mut out, 0, 0, 1, 0, 0, (0, 0), "TRAILER!!!");
        // The kernel reads the archive in 512-byte blocks; pad like cpio(1) does.
        out.resize(out.len().div_ceil(512) * 512, 0);
        Ok(out)
    }
}

#[allow(clippy::too_many_arguments)]
fn header(out: &mut Vec<u8>, ino: u32, mode: u32, nlink: u32, mtime: u32, size: u32, rdev: (u32, u32), name: &str) {
    let namesize = name.len() as u32 + 1;
    out.extend_from_slice(b"070701");
    // ino mode uid gid nlink mtime filesize devmajor devminor rdevmajor rdevminor namesize check
    for field in [ino, mode, 0, 0, nlink, mtime, size, 0, 0, rdev.0, rdev.1, namesize, 0] {
        out.extend_from_slice(format!("{field:08x}").as_bytes());
    }
    out.extend_from_slice(name.as_bytes());
    out.push(0);
    pad4(out);
}

fn pad4(out: &mut Vec<u8>) {
    out.resize(out.len().div_ceil(4) * 4, 0);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Archive {
        let mut a = Archive::default();
        a.add("dev", Entry::Dir { mode: 0o755 }).unwrap();
        a.add("/dev/console", Entry::CharDev { mode: 0o600, major: 5, minor: 1 }).unwrap();
        a.add("init", Entry::File { mode: 0o755, data: b"#!binary".to_vec() }).unwrap();
        a.add("etc", Entry::Dir { mode: 0o755 }).unwrap();
        a.add("etc/enclave.json", Entry::File { mode: 0o644, data: b"{}".to_vec() }).unwrap();
        a
    }

    #[test]
    fn deterministic_and_sorted() {
        let a = sample().write(1_700_000_000).unwrap();
        assert_eq!(a, sample().write(1_700_000_000).unwrap());
        assert_ne!(a, sample().write(1).unwrap(), "mtime is recorded");
        assert_eq!(a.len() % 512, 0);
        let names: Vec<&str> = ["dev", "dev/console", "etc", "etc/enclave.json", "init", "TRAILER!!!"].to_vec();
        let mut at = 0;
        for (i, want) in names.iter().enumerate() {
            assert_eq!(&a[at..at + 6], b"070701");
            let field = |n: usize| {
                u32::from_str_radix(std::str::from_utf8(&a[at + 6 + 8 * n..at + 14 + 8 * n]).unwrap(), 16).unwrap()
            };
            let namesize = field(11) as usize;
            let name = std::str::from_utf8(&a[at + 110..at + 110 + namesize - 1]).unwrap();
            assert_eq!(name, *want);
            if *want != "TRAILER!!!" {
                assert_eq!(field(0), i as u32 + 1, "inode numbers are sequential");
                assert_eq!((field(2), field(3)), (0, 0), "uid/gid 0");
                assert_eq!(field(5), 1_700_000_000);
            }
            if *want == "dev/console" {
                assert_eq!((field(1), field(9), field(10)), (0o020600, 5, 1));
            }
            let size = field(6) as usize;
            at = (at + 110 + namesize).div_ceil(4) * 4;
            at = (at + size).div_ceil(4) * 4;
        }
    }

    #[test]
    fn refusals() {
        let mut a = Archive::default();
        assert_eq!(a.add("../x", Entry::Dir { mode: 0 }), Err(CpioError::BadPath("../x".into())));
        assert_eq!(a.add("a//b", Entry::Dir { mode: 0 }), Err(CpioError::BadPath("a//b".into())));
        assert_eq!(a.add("", Entry::Dir { mode: 0 }), Err(CpioError::BadPath("".into())));
        a.add("x", Entry::Dir { mode: 0 }).unwrap();
        assert_eq!(a.add("/x", Entry::Dir { mode: 0 }), Err(CpioError::Duplicate("x".into())));
        a.add("y/z", Entry::File { mode: 0, data: vec![] }).unwrap();
        assert_eq!(a.write(0), Err(CpioError::NoParent("y/z".into())));
    }
}
