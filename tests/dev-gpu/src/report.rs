//! Re-issuing a real report (notes/gpu.md §1.2): the template is walked by structure, the way
//! `shared::gpu::evidence` parses it, to find the requester nonce, the measurement values and
//! the opaque firmware id; those are replaced and the rest is kept byte for byte, then the
//! request ‖ response is signed again.

use std::ops::Range;

const SPDM_1_1: u8 = 0x11;
const GET_MEASUREMENTS: u8 = 0xE0;
const MEASUREMENTS: u8 = 0x60;
/// Request: version, code, param1 (bit 0: signature requested), param2, nonce, slot id.
const REQUEST_LEN: usize = 4 + 32 + 1;
const NONCE: Range<usize> = 4..36;
const SIGNATURE_LEN: usize = 96;
/// A measurement block in the DMTF format.
const DMTF: u8 = 1;
/// Opaque type 20: the firmware id.
const OPAQUE_FWID: u16 = 20;

/// Where the parts a dev device changes sit in a template.
struct Layout {
    /// (SPDM block index, the value's bytes).
    measurements: Vec<(u8, Range<usize>)>,
    fwid: Range<usize>,
    /// Everything before it is signed.
    signature_at: usize,
}

/// Reads a byte string front to back; every read past the end is the error `what`.
struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl Reader<'_> {
    fn take(&mut self, n: usize, what: &'static str) -> Result<Range<usize>, &'static str> {
        let end = self.at.checked_add(n).filter(|end| *end <= self.bytes.len()).ok_or(what)?;
        let range = self.at..end;
        self.at = end;
        Ok(range)
    }

    fn u8(&mut self, what: &'static str) -> Result<u8, &'static str> {
        Ok(self.bytes[self.take(1, what)?.start])
    }

    fn u16(&mut self, what: &'static str) -> Result<u16, &'static str> {
        let r = self.take(2, what)?;
        Ok(u16::from_le_bytes([self.bytes[r.start], self.bytes[r.start + 1]]))
    }

    /// A u16 length, then that many bytes.
    fn counted(&mut self, what: &'static str) -> Result<Range<usize>, &'static str> {
        let len = self.u16(what)?;
        self.take(usize::from(len), what)
    }
}

fn layout(report: &[u8]) -> Result<Layout, &'static str> {
    let mut r = Reader { bytes: report, at: 0 };
    let request = &report[r.take(REQUEST_LEN, "template: request cut short")?];
    if request[0] != SPDM_1_1 || request[1] != GET_MEASUREMENTS || request[2] & 1 == 0 {
        return Err("template: not an SPDM 1.1 GET_MEASUREMENTS request for a signature");
    }
    let header = &report[r.take(4, "template: response header cut short")?];
    if header[0] != SPDM_1_1 || header[1] != MEASUREMENTS {
        return Err("template: not an SPDM 1.1 MEASUREMENTS response");
    }
    let blocks = r.u8("template: number of blocks cut short")?;
    let length = &report[r.take(3, "template: record length cut short")?];
    let length = usize::from(length[0]) | usize::from(length[1]) << 8 | usize::from(length[2]) << 16;
    // The record and the opaque data are walked by readers that end where they end.
    let record = r.take(length, "template: measurement record cut short")?;
    let mut m = Reader { bytes: &report[..record.end], at: record.start };
    let mut measurements: Vec<(u8, Range<usize>)> = Vec::new();
    while m.at < record.end {
        let index = m.u8("template: block index")?;
        if m.u8("template: block spec")? != DMTF {
            return Err("template: a measurement block not in the DMTF format");
        }
        let size = usize::from(m.u16("template: block size")?);
        let block = m.take(size, "template: block cut short")?;
        let mut b = Reader { bytes: &report[..block.end], at: block.start };
        b.u8("template: value type")?;
        let value = b.counted("template: measurement value")?;
        if value.end != block.end {
            return Err("template: a block longer than its value");
        }
        if measurements.iter().any(|(i, _)| *i == index) {
            return Err("template: a measurement index twice");
        }
        measurements.push((index, value));
    }
    if measurements.len() != usize::from(blocks) {
        return Err("template: the number of blocks differs from the header");
    }
    r.take(32, "template: responder nonce cut short")?;
    let opaque = r.counted("template: opaque data")?;
    let mut o = Reader { bytes: &report[..opaque.end], at: opaque.start };
    let mut fwid = None;
    while o.at < opaque.end {
        let kind = o.u16("template: opaque type")?;
        let value = o.counted("template: opaque value")?;
        if kind == OPAQUE_FWID {
            if fwid.is_some() || value.len() != 48 {
                return Err("template: not one 48-byte firmware id");
            }
            fwid = Some(value);
        }
    }
    let fwid = fwid.ok_or("template: no firmware id (opaque type 20)")?;
    let signature_at = r.take(SIGNATURE_LEN, "template: signature cut short")?.start;
    if r.at != report.len() {
        return Err("template: bytes after the signature");
    }
    Ok(Layout { measurements, fwid, signature_at })
}

/// The template with `nonce`, `fwid` and (if asked) one measurement's last byte flipped,
/// signed again by `sign` (raw r ‖ s over request ‖ response without the signature).
pub(crate) fn reissue(
    template: &[u8],
    nonce: &[u8; 32],
    fwid: &[u8; 48],
    flip_measurement: Option<u8>,
    sign: impl Fn(&[u8]) -> [u8; SIGNATURE_LEN],
) -> Result<Vec<u8>, &'static str> {
    let layout = layout(template)?;
    let mut report = template[..layout.signature_at].to_vec();
    report[NONCE].copy_from_slice(nonce);
    report[layout.fwid].copy_from_slice(fwid);
    if let Some(index) = flip_measurement {
        let (_, value) = layout
            .measurements
            .iter()
            .find(|(i, _)| *i == index)
            .ok_or("the measurement to flip is not in the template")?;
        if value.is_empty() {
            return Err("the measurement to flip is empty");
        }
        // Every bit of the value's last byte: a value that can no longer equal a golden one.
        report[value.end - 1] ^= 0xff;
    }
    let signature = sign(&report);
    report.extend_from_slice(&signature);
    Ok(report)
}
