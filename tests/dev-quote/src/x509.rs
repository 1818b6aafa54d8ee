//! Building the development PKIs' certificates (this crate's and `dev-gpu`'s): rcgen
//! parameters with fixed serials and dates, PEM as the vendors write it, and the two DER
//! elements every hand-built extension needs.

use std::time::Duration;

use base64::Engine;
use rcgen::{CertificateParams, DistinguishedName, DnType, IsCa, KeyUsagePurpose, SerialNumber};

/// One element: tag, minimal definite length, body.
pub fn tlv(tag: u8, body: &[u8]) -> Vec<u8> {
    let mut out = vec![tag];
    let len = body.len();
    if len < 0x80 {
        out.push(len as u8);
    } else {
        let bytes = len.to_be_bytes();
        let skip = bytes.iter().take_while(|&&b| b == 0).count();
        out.push(0x80 | (bytes.len() - skip) as u8);
        out.extend_from_slice(&bytes[skip..]);
    }
    out.extend_from_slice(body);
    out
}

pub fn seq(items: &[Vec<u8>]) -> Vec<u8> {
    tlv(0x30, &items.concat())
}

/// PEM, 64-column base64, LF: as Intel's chains are written and as NVML hands NVIDIA's out.
pub fn pem(der: &[u8]) -> String {
    let b64 = base64::engine::general_purpose::STANDARD.encode(der);
    let mut out = String::from("-----BEGIN CERTIFICATE-----\n");
    for line in b64.as_bytes().chunks(64) {
        out.push_str(&String::from_utf8_lossy(line));
        out.push('\n');
    }
    out.push_str("-----END CERTIFICATE-----\n");
    out
}

/// The DER of a certificate made from fixed parameters.
pub fn certified(cert: Result<rcgen::Certificate, rcgen::Error>) -> Vec<u8> {
    // Only fixed, valid parameters reach rcgen, and the dev keys never fail to sign.
    cert.expect("dev certificate parameters are valid").der().to_vec()
}

/// A certificate's parameters: `cn` of `organization` (every development subject says whose
/// it is not), serial `serial`, valid between the Unix times `validity` (capped at 9999-12-31).
pub fn params(
    organization: &str,
    cn: &str,
    serial: u8,
    validity: (u64, u64),
    is_ca: IsCa,
    key_usages: Vec<KeyUsagePurpose>,
) -> CertificateParams {
    let utc = |unix: u64| rcgen::date_time_ymd(1970, 1, 1) + Duration::from_secs(u64::min(unix, 253_402_300_799));
    let mut params = CertificateParams::default();
    let mut name = DistinguishedName::new();
    name.push(DnType::CommonName, cn);
    name.push(DnType::OrganizationName, organization);
    params.distinguished_name = name;
    params.serial_number = Some(SerialNumber::from_slice(&[serial]));
    params.not_before = utc(validity.0);
    params.not_after = utc(validity.1);
    params.is_ca = is_ca;
    params.key_usages = key_usages;
    params
}
