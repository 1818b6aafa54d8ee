//! Boot as PID 1 inside the TD: load the kernel modules, mount the pseudo-filesystems, bring
//! up the network from the (measured) kernel command line, and power off on a fatal error.
//!
//! This is the enclave's only `unsafe` code: each block is one Linux syscall through `libc`
//! on arguments built right above it (NUL-terminated C strings, zeroed C structs). Nothing
//! here touches prompt data or keys.
#![allow(unsafe_code)]

use std::ffi::CString;
use std::io;
use std::net::Ipv4Addr;
use std::os::fd::AsRawFd;
use std::path::Path;

/// `finit_module` flag: the kernel decompresses `.ko.xz` itself (CONFIG_MODULE_DECOMPRESS).
const MODULE_INIT_COMPRESSED_FILE: libc::c_uint = 4;

fn cstr(s: &str) -> io::Result<CString> {
    CString::new(s).map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "NUL in argument"))
}

fn check(ret: libc::c_int) -> io::Result<()> {
    if ret < 0 { Err(io::Error::last_os_error()) } else { Ok(()) }
}

/// Loads one module file. `EEXIST` (already loaded or built in) is fine.
pub fn load_module(path: &Path) -> io::Result<()> {
    let file = std::fs::File::open(path)?;
    let params = cstr("")?;
    // SAFETY: fd is open for the call's duration; params is a valid empty C string.
    let ret = unsafe {
        libc::syscall(libc::SYS_finit_module, file.as_raw_fd(), params.as_ptr(), MODULE_INIT_COMPRESSED_FILE)
    };
    match ret {
        r if r >= 0 => Ok(()),
        _ => match io::Error::last_os_error() {
            e if e.raw_os_error() == Some(libc::EEXIST) => Ok(()),
            e => Err(e),
        },
    }
}

/// `mount(source, target, fstype)`, creating the target directory; `EBUSY` (already
/// mounted) is fine.
pub fn mount(source: &str, target: &str, fstype: &str) -> io::Result<()> {
    std::fs::create_dir_all(target)?;
    let (s, t, f) = (cstr(source)?, cstr(target)?, cstr(fstype)?);
    // SAFETY: all three are valid C strings; no data argument.
    let ret = unsafe { libc::mount(s.as_ptr(), t.as_ptr(), f.as_ptr(), 0, std::ptr::null()) };
    match check(ret) {
        Err(e) if e.raw_os_error() == Some(libc::EBUSY) => Ok(()),
        other => other,
    }
}

fn ifreq(name: &str) -> io::Result<libc::ifreq> {
    // SAFETY: ifreq is a plain C struct for which all-zero is a valid value.
    let mut req: libc::ifreq = unsafe { std::mem::zeroed() };
    if name.is_empty() || name.len() >= req.ifr_name.len() {
        return Err(io::Error::new(io::ErrorKind::InvalidInput, "bad interface name"));
    }
    for (d, s) in req.ifr_name.iter_mut().zip(name.bytes()) {
        *d = s as libc::c_char;
    }
    Ok(req)
}

fn sockaddr_in(addr: Ipv4Addr) -> libc::sockaddr {
    let sin = libc::sockaddr_in {
        sin_family: libc::AF_INET as libc::sa_family_t,
        sin_port: 0,
        sin_addr: libc::in_addr { s_addr: u32::from_ne_bytes(addr.octets()) },
        sin_zero: [0; 8],
    };
    // SAFETY: sockaddr_in and sockaddr have the same size; this is the documented way to
    // pass an IPv4 address through the generic sockaddr of the interface ioctls.
    unsafe { std::mem::transmute::<libc::sockaddr_in, libc::sockaddr>(sin) }
}

struct Socket(libc::c_int);

impl Socket {
    fn inet() -> io::Result<Self> {
        // SAFETY: plain socket(2) call.
        let fd = unsafe { libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0) };
        check(fd).map(|()| Socket(fd))
    }

    /// `request` is one of the `SIOC*` constants (`c_ulong`); musl's `ioctl` takes a `c_int`
    /// where glibc's takes a `c_ulong`, hence the one cast. The values fit in 16 bits.
    #[allow(clippy::unnecessary_cast)]
    fn ioctl<T>(&self, request: libc::c_ulong, arg: &mut T) -> io::Result<()> {
        // SAFETY: arg is a live, correctly typed struct for `request` (ifreq or rtentry).
        check(unsafe { libc::ioctl(self.0, request as libc::Ioctl, arg as *mut T) })
    }
}

impl Drop for Socket {
    fn drop(&mut self) {
        // SAFETY: we own the descriptor.
        unsafe { libc::close(self.0) };
    }
}

/// Sets `address/prefix` on `iface` and brings it (and `lo`) up; adds a default route via
/// `gateway` when given.
pub fn configure_ipv4(iface: &str, address: Ipv4Addr, prefix: u8, gateway: Option<Ipv4Addr>) -> io::Result<()> {
    let sock = Socket::inet()?;
    for name in ["lo", iface] {
        let mut req = ifreq(name)?;
        sock.ioctl(libc::SIOCGIFFLAGS, &mut req)?;
        // SAFETY: SIOCGIFFLAGS filled the flags member of the union.
        unsafe { req.ifr_ifru.ifru_flags |= (libc::IFF_UP | libc::IFF_RUNNING) as libc::c_short };
        sock.ioctl(libc::SIOCSIFFLAGS, &mut req)?;
    }
    let mut req = ifreq(iface)?;
    req.ifr_ifru.ifru_addr = sockaddr_in(address);
    sock.ioctl(libc::SIOCSIFADDR, &mut req)?;
    let mask = if prefix == 0 { 0 } else { u32::MAX << (32 - u32::from(prefix.min(32))) };
    let mut req = ifreq(iface)?;
    req.ifr_ifru.ifru_netmask = sockaddr_in(Ipv4Addr::from(mask));
    sock.ioctl(libc::SIOCSIFNETMASK, &mut req)?;
    if let Some(gw) = gateway {
        // SAFETY: rtentry is a plain C struct for which all-zero is a valid value.
        let mut rt: libc::rtentry = unsafe { std::mem::zeroed() };
        rt.rt_dst = sockaddr_in(Ipv4Addr::UNSPECIFIED);
        rt.rt_genmask = sockaddr_in(Ipv4Addr::UNSPECIFIED);
        rt.rt_gateway = sockaddr_in(gw);
        rt.rt_flags = (libc::RTF_UP | libc::RTF_GATEWAY) as libc::c_ushort;
        sock.ioctl(libc::SIOCADDRT, &mut rt)?;
    }
    Ok(())
}

/// Flushes and powers the TD off. Never returns.
pub fn power_off() -> ! {
    // SAFETY: sync and reboot(RB_POWER_OFF) take no pointers; as PID 1 this ends the TD.
    unsafe {
        libc::sync();
        libc::reboot(libc::RB_POWER_OFF);
    }
    // reboot only returns on failure (not PID 1 or no privilege): nothing left to do.
    std::process::exit(1)
}
