//! What the GPU sample tests share: where NVIDIA's real evidence is
//! (`../shared/test-vectors/nvidia-gpu-samples`, README there) and how its multi-GPU sets are
//! read.

pub const SAMPLES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../shared/test-vectors/nvidia-gpu-samples");

/// A sample file, by its path under [`SAMPLES`].
pub fn read(path: &str) -> Vec<u8> {
    std::fs::read(format!("{SAMPLES}/{path}")).unwrap()
}

/// The base64 values after each `key` in a jsonpickle'd Python object (the multi-GPU sets keep
/// reports as `{'py/b64': '…'}` and chains as lists of `{'pem': '<base64 PEM>'}`, some of them
/// inside strings of Python's repr).
#[cfg(feature = "gpu-ppcie")]
pub fn pickled(item: &serde_json::Value, key: &str) -> Vec<Vec<u8>> {
    let text = item.to_string();
    let mut out = Vec::new();
    let mut rest = text.as_str();
    while let Some(at) = rest.find(key) {
        rest = rest[at + key.len()..].trim_start_matches(['"', '\'', ':', ' ', '\\']);
        let end = rest.find(|c: char| !(c.is_ascii_alphanumeric() || "+/=".contains(c))).unwrap_or(rest.len());
        out.push(shared::b64::decode(&rest[..end]).unwrap());
        rest = &rest[end..];
    }
    out
}
