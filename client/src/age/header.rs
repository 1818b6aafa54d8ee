//! The binary header: the version line, recipient stanzas, and the `---` MAC line. Parsing is
//! strict (canonical unpadded base64, one space between arguments, LF only), so the bytes the
//! MAC covers are exactly the ones read.

use base64::Engine;
use base64::engine::general_purpose::STANDARD_NO_PAD;

use super::AgeError;

const VERSION_LINE: &[u8] = b"age-encryption.org/v1";
const BYTES_PER_LINE: usize = 48;

/// One recipient stanza: `-> type args…` and its base64 body.
pub(super) struct Stanza<'a> {
    pub kind: &'a str,
    pub args: Vec<&'a str>,
    pub body: Vec<u8>,
}

pub(super) struct Header<'a> {
    pub stanzas: Vec<Stanza<'a>>,
    pub mac: Vec<u8>,
    /// The header up to and including `---`: what the MAC covers.
    pub mac_input: &'a [u8],
    /// What follows the MAC line: the nonce and the STREAM chunks.
    pub payload: &'a [u8],
}

/// The spec's base64: standard alphabet, no padding, zero trailing bits.
pub(super) fn base64(text: &[u8]) -> Option<Vec<u8>> {
    STANDARD_NO_PAD.decode(text).ok()
}

pub(super) fn parse(file: &[u8]) -> Result<Header<'_>, AgeError> {
    let malformed = AgeError::Header;
    let (version, mut rest) = split_line(file).ok_or(malformed("no version line"))?;
    if version != VERSION_LINE {
        return Err(malformed("not an age v1 file"));
    }
    let mut stanzas = Vec::new();
    loop {
        if rest.starts_with(b"---") {
            let (line, payload) = split_line(rest).ok_or(malformed("unterminated MAC line"))?;
            let mac = line.strip_prefix(b"--- ").and_then(base64).filter(|mac| mac.len() == 32);
            let mac = mac.ok_or(malformed("the MAC line is not `--- ` and 32 bytes of base64"))?;
            let mac_input = &file[..file.len() - rest.len() + 3];
            return Ok(Header { stanzas, mac, mac_input, payload });
        }
        let (line, after) = split_line(rest).ok_or(malformed("unterminated header"))?;
        rest = after;
        let args = line.strip_prefix(b"-> ").ok_or(malformed("expected a stanza or the MAC line"))?;
        let args: Option<Vec<&str>> = args.split(|&b| b == b' ').map(argument).collect();
        let mut args = args.ok_or(malformed("a stanza argument is empty or not printable ASCII"))?;
        let kind = args.remove(0);
        let mut body = Vec::new();
        loop {
            let (line, after) = split_line(rest).ok_or(malformed("unterminated stanza body"))?;
            rest = after;
            let bytes = base64(line).ok_or(malformed("a stanza body line is not canonical base64"))?;
            if bytes.len() > BYTES_PER_LINE {
                return Err(malformed("a stanza body line is longer than 64 columns"));
            }
            body.extend_from_slice(&bytes);
            if bytes.len() < BYTES_PER_LINE {
                break;
            }
        }
        stanzas.push(Stanza { kind, args, body });
    }
}

/// A stanza argument: one or more printable ASCII characters.
fn argument(arg: &[u8]) -> Option<&str> {
    let printable = !arg.is_empty() && arg.iter().all(|b| (33..=126).contains(b));
    printable.then(|| std::str::from_utf8(arg).ok()).flatten()
}

/// The line before the next LF, and what follows it.
fn split_line(text: &[u8]) -> Option<(&[u8], &[u8])> {
    let end = text.iter().position(|&b| b == b'\n')?;
    Some((&text[..end], &text[end + 1..]))
}
