//! The strict ASCII armor: a BEGIN line, padded base64 in 64-column lines ending with one
//! shorter line (or a full one), an END line; LF or CRLF; whitespace only around the whole.

use base64::Engine;
use base64::engine::general_purpose::STANDARD;

use super::AgeError;

const BEGIN: &[u8] = b"-----BEGIN AGE ENCRYPTED FILE-----";
const END: &[u8] = b"-----END AGE ENCRYPTED FILE-----";
const COLUMNS: usize = 64;
const BYTES_PER_LINE: usize = COLUMNS / 4 * 3;
/// Like the reference, at most this much whitespace before or after the armor.
const MAX_WHITESPACE: usize = 1024;

/// Whether `file` is to be read as armor: anything but an empty file or a binary header is.
pub(super) fn is_armored(file: &[u8]) -> bool {
    !file.is_empty() && !file.starts_with(b"age-encryption.org/")
}

/// The binary age file inside the armor.
pub(super) fn decode(text: &[u8]) -> Result<Vec<u8>, AgeError> {
    let mut rest = text;
    let mut skipped = 0;
    let first = loop {
        let line = next_line(&mut rest).ok_or(AgeError::Armor("no BEGIN line"))?;
        if !line.iter().all(u8::is_ascii_whitespace) {
            break line;
        }
        skipped += line.len() + 1;
        if skipped > MAX_WHITESPACE {
            return Err(AgeError::Armor("too much leading whitespace"));
        }
    };
    if first != BEGIN {
        return Err(AgeError::Armor("not an age file: neither a binary header nor the armor's BEGIN line"));
    }
    let mut out = Vec::new();
    loop {
        let line = next_line(&mut rest).ok_or(AgeError::Armor("no END line"))?;
        if line == END {
            break;
        }
        if line.is_empty() {
            return Err(AgeError::Armor("empty line"));
        }
        if line.len() > COLUMNS {
            return Err(AgeError::Armor("line longer than 64 columns"));
        }
        let bytes = STANDARD.decode(line).map_err(|_| AgeError::Armor("invalid or non-canonical base64"))?;
        out.extend_from_slice(&bytes);
        if bytes.len() < BYTES_PER_LINE {
            if next_line(&mut rest) != Some(END) {
                return Err(AgeError::Armor("a short line is not followed by the END line"));
            }
            break;
        }
    }
    if rest.len() >= MAX_WHITESPACE || !rest.iter().all(u8::is_ascii_whitespace) {
        return Err(AgeError::Armor("data after the END line"));
    }
    Ok(out)
}

/// The next line without its LF or CRLF; `None` at the end of the input.
fn next_line<'a>(rest: &mut &'a [u8]) -> Option<&'a [u8]> {
    if rest.is_empty() {
        return None;
    }
    let (line, after) = match rest.iter().position(|&b| b == b'\n') {
        Some(i) => (&rest[..i], &rest[i + 1..]),
        None => (*rest, &rest[rest.len()..]),
    };
    *rest = after;
    Some(line.strip_suffix(b"\r").unwrap_or(line))
}
