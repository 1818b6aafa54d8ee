//! Intel's SGX extension for the dev PCK certificate, in just enough hand-written DER
//! (short OID arcs, small integers); dcap-qvl reads FMSPC, CPUSVN, PCESVN, PCEID, PPID,
//! SGX type and the platform flags from it.

use rcgen::CustomExtension;

use super::pki::labelled_hash;
use super::platform;
use super::x509::{seq, tlv};

/// The extension (OID 1.2.840.113741.1.13.1) describing the dev platform, with the
/// configuration flags (dynamic platform, cached keys, SMT) false so strict policies pass.
pub(super) fn sgx_extension(seed: &[u8; 32]) -> CustomExtension {
    let entry = |arcs: &[u8], value: Vec<u8>| seq(&[sgx_oid(arcs), value]);
    let mut tcb: Vec<Vec<u8>> =
        (1u8..).zip(platform::CPU_SVN).map(|(i, svn)| entry(&[2, i], integer(svn.into()))).collect();
    tcb.push(entry(&[2, 17], integer(platform::PCE_SVN)));
    tcb.push(entry(&[2, 18], tlv(0x04, &platform::CPU_SVN)));
    let flag_false = || tlv(0x01, &[0]);
    let content = seq(&[
        entry(&[1], tlv(0x04, &labelled_hash(seed, "ppid", 0)[..16])),
        entry(&[2], seq(&tcb)),
        entry(&[3], tlv(0x04, &platform::PCE_ID)),
        entry(&[4], tlv(0x04, &platform::FMSPC)),
        entry(&[5], tlv(0x0A, &[1])), // SGX type: Scalable, as on TDX platforms
        entry(&[6], tlv(0x04, &labelled_hash(seed, "platform instance id", 0)[..16])),
        entry(&[7], seq(&[entry(&[7, 1], flag_false()), entry(&[7, 2], flag_false()), entry(&[7, 3], flag_false())])),
    ]);
    CustomExtension::from_oid_content(&[1, 2, 840, 113_741, 1, 13, 1], content)
}

/// 1.2.840.113741.1.13.1.<arcs>, every arc below 128.
fn sgx_oid(arcs: &[u8]) -> Vec<u8> {
    const SGX: [u8; 9] = [0x2A, 0x86, 0x48, 0x86, 0xF8, 0x4D, 0x01, 0x0D, 0x01];
    tlv(0x06, &[&SGX[..], arcs].concat())
}

/// A non-negative INTEGER in its minimal encoding.
fn integer(value: u16) -> Vec<u8> {
    // A leading zero keeps it positive; drop the zeros that are not needed for that.
    let mut body = [&[0u8][..], &value.to_be_bytes()].concat();
    while body.len() > 1 && body[0] == 0 && body[1] < 0x80 {
        body.remove(0);
    }
    tlv(0x02, &body)
}
