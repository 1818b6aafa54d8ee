//! Just enough DER to walk the structures x509-cert has no type for (the DICE firmware id, OCSP):
//! one tag-length-value at a time, definite lengths up to 64 KiB, nothing else.

/// One element: its tag, its value, the whole element (tag and length included), and the bytes
/// after it.
pub(super) struct Tlv<'a> {
    pub tag: u8,
    pub value: &'a [u8],
    pub whole: &'a [u8],
    pub rest: &'a [u8],
}

pub(super) fn tlv(bytes: &[u8]) -> Option<Tlv<'_>> {
    let (&tag, after_tag) = bytes.split_first()?;
    let (&first, after_len) = after_tag.split_first()?;
    let (len, body) = match first {
        n if n < 0x80 => (usize::from(n), after_len),
        0x81 => (usize::from(*after_len.first()?), after_len.get(1..)?),
        0x82 => (usize::from(u16::from_be_bytes([*after_len.first()?, *after_len.get(1)?])), after_len.get(2..)?),
        _ => return None,
    };
    let header = bytes.len() - body.len();
    (body.len() >= len).then(|| Tlv { tag, value: &body[..len], whole: &bytes[..header + len], rest: &body[len..] })
}

/// The elements of a constructed value, up to the first that does not parse.
pub(super) fn elements(mut bytes: &[u8]) -> impl Iterator<Item = Tlv<'_>> {
    std::iter::from_fn(move || {
        let t = tlv(bytes)?;
        bytes = t.rest;
        Some(t)
    })
}

/// Exactly one element of `tag` filling `bytes`.
pub(super) fn only(bytes: &[u8], tag: u8) -> Option<&[u8]> {
    let t = tlv(bytes)?;
    (t.tag == tag && t.rest.is_empty()).then_some(t.value)
}
