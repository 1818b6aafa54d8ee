//! A GPU's or an NVSwitch's attestation report: the SPDM 1.1 `GET_MEASUREMENTS` request it
//! answered ‖ its response (notes/gpu.md §1.2), parsed by structure, never by offsets from the
//! end; the opaque data in [`super::opaque`]. The signature covers the request (so the
//! requester's nonce) and the response up to the signature; nothing may follow the signature.

use super::GpuError;
pub use super::opaque::{NVDEC0_DISABLED, Opaque, Pdi, SwitchFields};

/// A measurement value the report carries, by block index (SHA-384 on NVIDIA GPUs and switches).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Measurement {
    pub index: u8,
    pub value: Vec<u8>,
}

/// A parsed report; borrows the bytes it was parsed from.
#[derive(Debug, Clone)]
pub struct Report<'a> {
    /// The requester's nonce, from the signed request.
    pub nonce: [u8; 32],
    pub measurements: Vec<Measurement>,
    pub opaque: Opaque,
    /// What the signature covers: request ‖ response without the signature.
    pub signed: &'a [u8],
    /// ECDSA P-384, raw `r ‖ s`.
    pub signature: [u8; 96],
}

const SPDM_1_1: u8 = 0x11;
const GET_MEASUREMENTS: u8 = 0xE0;
const MEASUREMENTS: u8 = 0x60;
/// Request: version, code, param1 (bit 0: signature requested), param2, nonce, slot id.
const REQUEST_LEN: usize = 4 + 32 + 1;
const SIGNATURE_LEN: usize = 96;
/// A measurement block in the DMTF format.
const DMTF: u8 = 1;

/// Reads a byte string front to back.
pub(super) struct Reader<'a> {
    pub(super) bytes: &'a [u8],
    pub(super) at: usize,
}

impl<'a> Reader<'a> {
    pub(super) fn take(&mut self, n: usize, what: &'static str) -> Result<&'a [u8], GpuError> {
        let end = self.at.checked_add(n).filter(|end| *end <= self.bytes.len()).ok_or(GpuError::Malformed(what))?;
        let out = &self.bytes[self.at..end];
        self.at = end;
        Ok(out)
    }

    fn u8(&mut self, what: &'static str) -> Result<u8, GpuError> {
        Ok(self.take(1, what)?[0])
    }

    pub(super) fn u16(&mut self, what: &'static str) -> Result<u16, GpuError> {
        let b = self.take(2, what)?;
        Ok(u16::from_le_bytes([b[0], b[1]]))
    }
}

impl<'a> Report<'a> {
    /// Parses request ‖ response exactly; anything left over is refused.
    pub fn parse(bytes: &'a [u8]) -> Result<Self, GpuError> {
        let mut r = Reader { bytes, at: 0 };
        let request = r.take(REQUEST_LEN, "request")?;
        if request[0] != SPDM_1_1 || request[1] != GET_MEASUREMENTS || request[2] & 1 == 0 {
            return Err(GpuError::Malformed("not an SPDM 1.1 GET_MEASUREMENTS request for a signature"));
        }
        let nonce = request[4..36].try_into().map_err(|_| GpuError::Malformed("request nonce"))?;
        let header = r.take(4, "response header")?;
        if header[0] != SPDM_1_1 || header[1] != MEASUREMENTS {
            return Err(GpuError::Malformed("not an SPDM 1.1 MEASUREMENTS response"));
        }
        let blocks = r.u8("number of blocks")?;
        let length = r.take(3, "record length")?;
        let length = usize::from(length[0]) | usize::from(length[1]) << 8 | usize::from(length[2]) << 16;
        let measurements = parse_records(r.take(length, "measurement record")?, blocks)?;
        r.take(32, "responder nonce")?;
        let opaque_len = r.u16("opaque length")?;
        let opaque = super::opaque::parse(r.take(usize::from(opaque_len), "opaque data")?)?;
        let signed = &bytes[..r.at];
        let signature = r.take(SIGNATURE_LEN, "signature")?.try_into().map_err(|_| GpuError::Malformed("signature"))?;
        if r.at != bytes.len() {
            return Err(GpuError::Malformed("bytes after the signature"));
        }
        Ok(Report { nonce, measurements, opaque, signed, signature })
    }
}

/// `blocks` measurement blocks `{index, spec, size u16, {type, value size u16, value}}`, each
/// index once.
fn parse_records(record: &[u8], blocks: u8) -> Result<Vec<Measurement>, GpuError> {
    let mut r = Reader { bytes: record, at: 0 };
    let mut out: Vec<Measurement> = Vec::with_capacity(usize::from(blocks));
    while r.at < record.len() {
        let index = r.u8("block index")?;
        if r.u8("block spec")? != DMTF {
            return Err(GpuError::Malformed("a measurement block not in the DMTF format"));
        }
        let size = r.u16("block size")?;
        let mut block = Reader { bytes: r.take(usize::from(size), "block")?, at: 0 };
        block.u8("value type")?;
        let value_len = block.u16("value size")?;
        let value = block.take(usize::from(value_len), "value")?.to_vec();
        if block.at != block.bytes.len() {
            return Err(GpuError::Malformed("a block longer than its value"));
        }
        if out.iter().any(|m| m.index == index) {
            return Err(GpuError::Malformed("a measurement index twice"));
        }
        out.push(Measurement { index, value });
    }
    if out.len() != usize::from(blocks) {
        return Err(GpuError::Malformed("the number of blocks differs from the header"));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A report of `blocks` (index, value) and opaque TLVs `(type, value)`, signature zeroed.
    fn report(blocks: &[(u8, &[u8])], declared: u8, opaque: &[(u16, &[u8])]) -> Vec<u8> {
        let mut r = vec![SPDM_1_1, GET_MEASUREMENTS, 1, 0xff];
        r.extend_from_slice(&[7; 32]);
        r.push(0);
        let mut record = Vec::new();
        for (index, value) in blocks {
            record.extend_from_slice(&[*index, DMTF]);
            record.extend_from_slice(&(3 + value.len() as u16).to_le_bytes());
            record.push(1);
            record.extend_from_slice(&(value.len() as u16).to_le_bytes());
            record.extend_from_slice(value);
        }
        r.extend_from_slice(&[SPDM_1_1, MEASUREMENTS, 0, 0, declared]);
        r.extend_from_slice(&(record.len() as u32).to_le_bytes()[..3]);
        r.extend_from_slice(&record);
        r.extend_from_slice(&[9; 32]);
        let mut tlvs = Vec::new();
        for (kind, value) in opaque {
            tlvs.extend_from_slice(&kind.to_le_bytes());
            tlvs.extend_from_slice(&(value.len() as u16).to_le_bytes());
            tlvs.extend_from_slice(value);
        }
        r.extend_from_slice(&(tlvs.len() as u16).to_le_bytes());
        r.extend_from_slice(&tlvs);
        r.extend_from_slice(&[0; SIGNATURE_LEN]);
        r
    }

    #[test]
    fn a_report_parses_by_structure() {
        let vbios = [0x00, 0x9f, 0x00, 0x96, 0x01, 0, 0, 0];
        let bytes = report(&[(1, &[1; 48]), (2, &[2; 48])], 2, &[(3, b"550.90.07\0"), (6, &vbios), (11, &[0x55])]);
        let r = Report::parse(&bytes).unwrap();
        assert_eq!(r.nonce, [7; 32]);
        assert_eq!(
            r.measurements,
            vec![Measurement { index: 1, value: vec![1; 48] }, Measurement { index: 2, value: vec![2; 48] }]
        );
        assert_eq!((r.opaque.driver.as_str(), r.opaque.vbios.as_str()), ("550.90.07", "96.00.9F.00.01"));
        assert_eq!(r.opaque.nvdec0_status, Some(NVDEC0_DISABLED));
        assert_eq!(r.signed, &bytes[..bytes.len() - SIGNATURE_LEN]);
    }

    #[test]
    fn every_structural_fault_is_refused() {
        let fault = |bytes: &[u8]| match Report::parse(bytes) {
            Err(GpuError::Malformed(why)) => why,
            other => panic!("{other:?}"),
        };
        assert_eq!(fault(&report(&[(1, &[1; 48])], 2, &[])), "the number of blocks differs from the header");
        assert_eq!(fault(&report(&[(1, &[1; 48]), (1, &[2; 48])], 2, &[])), "a measurement index twice");
        assert_eq!(fault(&report(&[], 0, &[(3, b"a"), (3, b"b")])), "an opaque field twice");
        assert_eq!(fault(&report(&[], 0, &[(3, b"\x01")])), "an opaque text field that is not ASCII");
        let mut trailing = report(&[], 0, &[]);
        trailing.push(0);
        assert_eq!(fault(&trailing), "bytes after the signature");
        let mut not_dmtf = report(&[(1, &[1; 48])], 1, &[]);
        not_dmtf[37 + 9] = 2;
        assert_eq!(fault(&not_dmtf), "a measurement block not in the DMTF format");
        let mut unsigned = report(&[], 0, &[]);
        unsigned[2] = 0;
        assert_eq!(fault(&unsigned), "not an SPDM 1.1 GET_MEASUREMENTS request for a signature");
        let whole = report(&[(1, &[1; 48])], 1, &[]);
        for cut in [10, 40, 60, whole.len() - 1] {
            assert!(Report::parse(&whole[..cut]).is_err(), "cut at {cut}");
        }
    }
}
