//! Just enough DER for the structures rcgen does not build (the DICE firmware id, OCSP) and
//! for reading three fields back out of a certificate (serial, subject, public key): definite
//! lengths, single-byte tags, nothing else.

/// id-sha384 (2.16.840.1.101.3.4.2.2), the OID's content octets.
pub(crate) const SHA384: [u8; 9] = [0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x02, 0x02];
/// ecdsa-with-SHA384 (1.2.840.10045.4.3.3).
pub(crate) const ECDSA_WITH_SHA384: [u8; 8] = [0x2a, 0x86, 0x48, 0xce, 0x3d, 0x04, 0x03, 0x03];
/// id-pkix-ocsp-basic (1.3.6.1.5.5.7.48.1.1).
pub(crate) const OCSP_BASIC: [u8; 9] = [0x2b, 0x06, 0x01, 0x05, 0x05, 0x07, 0x30, 0x01, 0x01];

pub(crate) use dev_quote::x509::{seq, tlv};

pub(crate) fn oid(content: &[u8]) -> Vec<u8> {
    tlv(0x06, content)
}

pub(crate) fn octets(bytes: &[u8]) -> Vec<u8> {
    tlv(0x04, bytes)
}

/// A BIT STRING of whole bytes (no unused bits).
pub(crate) fn bits(bytes: &[u8]) -> Vec<u8> {
    tlv(0x03, &[&[0u8][..], bytes].concat())
}

/// `[n] EXPLICIT inner`.
pub(crate) fn explicit(n: u8, inner: &[u8]) -> Vec<u8> {
    tlv(0xa0 | n, inner)
}

/// GeneralizedTime `YYYYMMDDHHMMSSZ` for Unix seconds, clamped to 9999-12-31T23:59:59Z (the
/// last instant it can encode).
pub(crate) fn generalized_time(unix: u64) -> Vec<u8> {
    let unix = unix.min(253_402_300_799);
    let (days, secs) = (unix / 86_400, unix % 86_400);
    // Civil date from days since 1970-01-01 (H. Hinnant's `civil_from_days`, non-negative days).
    let z = days + 719_468;
    let era = z / 146_097;
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + u64::from(month <= 2);
    let text = format!("{year:04}{month:02}{day:02}{:02}{:02}{:02}Z", secs / 3600, secs % 3600 / 60, secs % 60);
    tlv(0x18, text.as_bytes())
}

/// A parsed element: its tag, its body, and the bytes after it.
pub(crate) struct Element<'a> {
    pub tag: u8,
    pub value: &'a [u8],
    /// Tag, length and body.
    pub whole: &'a [u8],
    pub rest: &'a [u8],
}

/// The element at the start of `bytes` (definite lengths of up to four length bytes).
pub(crate) fn read(bytes: &[u8]) -> Option<Element<'_>> {
    let (&tag, after_tag) = bytes.split_first()?;
    let (&first, after_len) = after_tag.split_first()?;
    let (len, body) = match first {
        n if n < 0x80 => (usize::from(n), after_len),
        n @ 0x81..=0x84 => {
            let count = usize::from(n & 0x7f);
            let len = after_len.get(..count)?.iter().fold(0usize, |acc, b| acc << 8 | usize::from(*b));
            (len, &after_len[count..])
        }
        _ => return None,
    };
    let header = bytes.len() - body.len();
    (body.len() >= len).then(|| Element { tag, value: &body[..len], whole: &bytes[..header + len], rest: &body[len..] })
}

/// What OCSP and the root pin need from a certificate: its serial (INTEGER content), its
/// subject (whole DER Name), its SubjectPublicKeyInfo (whole) and its public key (BIT STRING
/// content without the unused-bits byte).
pub(crate) struct CertFields<'a> {
    pub serial: &'a [u8],
    pub subject: &'a [u8],
    pub spki: &'a [u8],
    pub public_key: &'a [u8],
}

/// Reads [`CertFields`] from a DER certificate; `None` if it is not one.
pub(crate) fn cert_fields(der: &[u8]) -> Option<CertFields<'_>> {
    let tbs = read(read(der)?.value)?;
    let mut at = read(tbs.value)?;
    if at.tag == 0xa0 {
        at = read(at.rest)?; // the version
    }
    let serial = at.value;
    let signature_algorithm = read(at.rest)?;
    let issuer = read(signature_algorithm.rest)?;
    let validity = read(issuer.rest)?;
    let subject = read(validity.rest)?;
    let spki = read(subject.rest)?;
    let key = read(read(spki.value)?.rest)?;
    let (&unused, public_key) = key.value.split_first()?;
    (!serial.is_empty() && subject.tag == 0x30 && key.tag == 0x03 && unused == 0).then_some(CertFields {
        serial,
        subject: subject.whole,
        spki: spki.whole,
        public_key,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_and_lengths_encode_as_der() {
        assert_eq!(generalized_time(0), tlv(0x18, b"19700101000000Z"));
        // 2025-01-01T00:00:00Z, 2024-02-29T12:34:56Z, 2100-01-01T00:00:00Z.
        assert_eq!(generalized_time(1_735_689_600), tlv(0x18, b"20250101000000Z"));
        assert_eq!(generalized_time(1_709_210_096), tlv(0x18, b"20240229123456Z"));
        assert_eq!(generalized_time(4_102_444_800), tlv(0x18, b"21000101000000Z"));
        assert_eq!(generalized_time(u64::MAX), tlv(0x18, b"99991231235959Z"));
        assert_eq!(&tlv(4, &[0; 0x7f])[..2], [4, 0x7f]);
        assert_eq!(&tlv(4, &[0; 0x80])[..3], [4, 0x81, 0x80]);
        assert_eq!(&tlv(4, &[0; 0x100])[..4], [4, 0x82, 1, 0]);
        let long = tlv(0x30, &[7; 300]);
        let e = read(&long).unwrap();
        assert_eq!((e.tag, e.value.len(), e.whole.len(), e.rest.len()), (0x30, 300, 304, 0));
    }
}
