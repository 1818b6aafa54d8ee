//! The enclave image's initramfs: a newc cpio archive built so that the same inputs always
//! give the same bytes (sorted entries, uid/gid 0, fixed inode numbers, one mtime).

pub mod cpio;
