//! An in-memory configfs-tsm that follows the kernel's rules (tdx.md §2.2):
//! `mkdir` is ENXIO without a provider; `inblob` writes over 64 bytes fail with EFBIG at
//! write time, and a write is committed on close, bumping `generation`, with commit errors
//! silently dropped; reading `outblob` with an inblob that is not 64 bytes is EINVAL, while a
//! request is in flight EBUSY, and otherwise regenerates when the input changed.

use std::collections::HashMap;
use std::io;
use std::sync::Mutex;

use super::TsmFs;

pub type QuoteFn = Box<dyn Fn(&[u8]) -> Vec<u8> + Send + Sync>;

#[derive(Default)]
pub struct Item {
    pub write_gen: u64,
    pub read_gen: u64,
    pub inblob: Vec<u8>,
    pub outblob: Vec<u8>,
}

pub struct FakeTsm {
    pub provider: Option<String>,
    pub quote: QuoteFn,
    pub items: Mutex<HashMap<String, Item>>,
    /// Names ever created and removed, in order, to check the client cleans up.
    pub log: Mutex<Vec<String>>,
    /// The next N `outblob` reads answer EBUSY (another quote in flight).
    pub busy_reads: Mutex<u32>,
    /// The next N `inblob` commits fail silently on close (e.g. generation overflow).
    pub lost_commits: Mutex<u32>,
    /// Another writer touches the item's inblob between our write and our read.
    pub interloper: bool,
}

fn err(code: i32) -> io::Error {
    io::Error::from_raw_os_error(code)
}

impl FakeTsm {
    pub fn new(quote: QuoteFn) -> Self {
        FakeTsm {
            provider: Some("tdx_guest".into()),
            quote,
            items: Mutex::default(),
            log: Mutex::default(),
            busy_reads: Mutex::new(0),
            lost_commits: Mutex::new(0),
            interloper: false,
        }
    }

    fn commit(item: &mut Item, data: &[u8]) {
        item.inblob = data.to_vec();
        item.write_gen += 1;
    }
}

impl TsmFs for FakeTsm {
    fn mkdir(&self, name: &str) -> io::Result<()> {
        if self.provider.is_none() {
            return Err(err(6)); // ENXIO
        }
        let mut items = self.items.lock().unwrap();
        if items.contains_key(name) {
            return Err(err(17)); // EEXIST
        }
        items.insert(name.into(), Item::default());
        self.log.lock().unwrap().push(format!("mkdir {name}"));
        Ok(())
    }

    fn rmdir(&self, name: &str) -> io::Result<()> {
        self.items.lock().unwrap().remove(name).ok_or_else(|| err(2))?;
        self.log.lock().unwrap().push(format!("rmdir {name}"));
        Ok(())
    }

    fn read(&self, name: &str, attr: &str) -> io::Result<Vec<u8>> {
        let mut items = self.items.lock().unwrap();
        let item = items.get_mut(name).ok_or_else(|| err(2))?;
        match attr {
            "provider" => Ok(format!("{}\n", self.provider.as_deref().unwrap_or_default()).into_bytes()),
            "generation" => Ok(format!("{}\n", item.write_gen).into_bytes()),
            "outblob" => {
                if item.inblob.len() != 64 {
                    return Err(err(22)); // EINVAL
                }
                let mut busy = self.busy_reads.lock().unwrap();
                if *busy > 0 {
                    *busy -= 1;
                    return Err(err(16)); // EBUSY
                }
                if item.read_gen != item.write_gen {
                    item.outblob = (self.quote)(&item.inblob);
                    item.read_gen = item.write_gen;
                }
                Ok(item.outblob.clone())
            }
            // TDX hides the SEV-only attributes.
            _ => Err(err(2)),
        }
    }

    fn write(&self, name: &str, attr: &str, data: &[u8]) -> io::Result<()> {
        if attr != "inblob" {
            return Err(err(2));
        }
        if data.len() > 64 {
            return Err(err(27)); // EFBIG, at write()
        }
        let mut items = self.items.lock().unwrap();
        let item = items.get_mut(name).ok_or_else(|| err(2))?;
        let mut lost = self.lost_commits.lock().unwrap();
        if *lost > 0 {
            // The close() error is ignored by configfs: the write "succeeds".
            *lost -= 1;
            return Ok(());
        }
        Self::commit(item, data);
        if self.interloper {
            Self::commit(item, &[0xEE; 64]);
        }
        Ok(())
    }
}

/// A v4 TDX quote-shaped buffer echoing `report_data` where a real quote carries it.
pub fn echo_quote(report_data: &[u8]) -> Vec<u8> {
    let mut q = vec![0u8; 48 + 584 + 64];
    q[0..2].copy_from_slice(&4u16.to_le_bytes());
    q[4..8].copy_from_slice(&0x81u32.to_le_bytes());
    q[48 + 520..48 + 584].copy_from_slice(report_data);
    q
}
