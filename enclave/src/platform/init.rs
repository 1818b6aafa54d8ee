//! PID 1 duties before the enclave serves: mounts, kernel modules, network. The network comes
//! from the kernel command line, which the EFI stub measures into RTMR2, so the address the
//! enclave listens on is part of what a client verifies.
//!
//! Command line keys: `svc.if=<iface>` (default `eth0`), `svc.ip=<a.b.c.d/prefix>`,
//! `svc.gw=<a.b.c.d>` (optional).

use std::net::Ipv4Addr;
use std::path::Path;

use crate::platform::boot;

/// Where the measured configuration lives in the initramfs.
pub const CONFIG_PATH: &str = "/etc/enclave.json";
const MODULES: &str = "/lib/modules";

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NetConfig {
    pub iface: String,
    pub address: Ipv4Addr,
    pub prefix: u8,
    pub gateway: Option<Ipv4Addr>,
}

/// Reads `svc.*` keys from a kernel command line.
pub fn net_from_cmdline(cmdline: &str) -> Result<Option<NetConfig>, String> {
    let get = |key: &str| cmdline.split_whitespace().find_map(|w| w.strip_prefix(key)?.strip_prefix('='));
    let Some(ip) = get("svc.ip") else { return Ok(None) };
    let (addr, prefix) = ip.split_once('/').ok_or("svc.ip must be a.b.c.d/prefix")?;
    let address = addr.parse().map_err(|_| format!("svc.ip address `{addr}` is not IPv4"))?;
    let prefix: u8 = prefix.parse().ok().filter(|p| *p <= 32).ok_or("svc.ip prefix must be 0..=32")?;
    let gateway = get("svc.gw").map(|g| g.parse().map_err(|_| format!("svc.gw `{g}` is not IPv4"))).transpose()?;
    let iface = get("svc.if").unwrap_or("eth0").to_string();
    Ok(Some(NetConfig { iface, address, prefix, gateway }))
}

/// Mounts, loads modules in `modules.order`, configures the network. A module that fails
/// (e.g. `tdx-guest` outside a TD) is reported, not fatal: without it the enclave says
/// `tdx_quote_unavailable` and keeps serving its key.
pub fn setup() -> Result<(), String> {
    boot::mount("proc", "/proc", "proc").map_err(|e| format!("mount /proc: {e}"))?;
    boot::mount("sysfs", "/sys", "sysfs").map_err(|e| format!("mount /sys: {e}"))?;
    boot::mount("devtmpfs", "/dev", "devtmpfs").map_err(|e| format!("mount /dev: {e}"))?;
    let order = std::fs::read_to_string(Path::new(MODULES).join("modules.order")).unwrap_or_default();
    for name in order.lines().map(str::trim).filter(|l| !l.is_empty()) {
        match boot::load_module(&Path::new(MODULES).join(name)) {
            Ok(()) => eprintln!("init: loaded {name}"),
            Err(e) => eprintln!("init: module {name} not loaded: {e}"),
        }
    }
    boot::mount("configfs", "/sys/kernel/config", "configfs").map_err(|e| format!("mount configfs: {e}"))?;
    let cmdline = std::fs::read_to_string("/proc/cmdline").map_err(|e| format!("/proc/cmdline: {e}"))?;
    // Auditors (and the boot test) compare this with the string RTMR2 hashes.
    eprintln!("init: /proc/cmdline=[{}]", cmdline.trim_end_matches('\n'));
    match net_from_cmdline(&cmdline)? {
        Some(n) => {
            boot::configure_ipv4(&n.iface, n.address, n.prefix, n.gateway)
                .map_err(|e| format!("network {}: {e}", n.iface))?;
            eprintln!("init: {} is {}/{}", n.iface, n.address, n.prefix);
        }
        None => return Err("no svc.ip= on the kernel command line: the enclave would be unreachable".into()),
    }
    Ok(())
}

/// Writes the measured configuration's resolvers to `/etc/resolv.conf`, so the tools reach
/// their upstreams by name; the host's DHCP (there is none) cannot choose them.
pub fn write_resolv_conf(servers: &[std::net::IpAddr]) -> Result<(), String> {
    std::fs::write("/etc/resolv.conf", resolv_conf(servers)).map_err(|e| format!("/etc/resolv.conf: {e}"))
}

fn resolv_conf(servers: &[std::net::IpAddr]) -> String {
    servers.iter().map(|s| format!("nameserver {s}\n")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cmdline_network() {
        let n = net_from_cmdline("console=ttyS0 svc.ip=10.0.2.15/24 svc.gw=10.0.2.2 initrd=initrd").unwrap().unwrap();
        assert_eq!(
            n,
            NetConfig {
                iface: "eth0".into(),
                address: [10, 0, 2, 15].into(),
                prefix: 24,
                gateway: Some([10, 0, 2, 2].into())
            }
        );
        let n = net_from_cmdline("svc.if=enp0s2 svc.ip=192.168.1.5/32").unwrap().unwrap();
        assert_eq!((n.iface.as_str(), n.gateway), ("enp0s2", None));
        assert_eq!(net_from_cmdline("console=ttyS0").unwrap(), None);
        assert!(net_from_cmdline("svc.ip=10.0.2.15").is_err());
        assert!(net_from_cmdline("svc.ip=10.0.2.15/33").is_err());
        assert!(net_from_cmdline("svc.ip=10.0.2/24").is_err());
        assert!(net_from_cmdline("svc.ip=10.0.2.15/24 svc.gw=x").is_err());
        // A key must match whole: `xsvc.ip=` is not `svc.ip=`.
        assert_eq!(net_from_cmdline("xsvc.ip=1.2.3.4/8").unwrap(), None);
    }

    #[test]
    fn resolvers_in_resolv_conf_format() {
        let servers = ["10.0.2.3".parse().unwrap(), "2606:4700:4700::1111".parse().unwrap()];
        assert_eq!(resolv_conf(&servers), "nameserver 10.0.2.3\nnameserver 2606:4700:4700::1111\n");
    }
}
