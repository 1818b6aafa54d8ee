use super::*;
use x509_cert::der::{Decode, Encode, Tagged};

const SAMPLES: &str =
    concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/test-vectors/nvidia-gpu-samples/go-nvattest-tools");

fn real_chain() -> Vec<Certificate> {
    let pem = std::fs::read(format!("{SAMPLES}/test_gpu_attestation_certificate_chain.dat")).unwrap();
    Certificate::load_pem_chain(&pem).unwrap()
}

fn real_answers() -> Vec<Vec<u8>> {
    ["l2", "l3", "l4"]
        .iter()
        .map(|l| {
            let text = std::fs::read_to_string(format!(
                "{SAMPLES}/ocsp/test_gpu_certificate_{l}_base64encoded_ocsp_response.dat"
            ))
            .unwrap();
            shared::b64::decode(text.trim()).unwrap()
        })
        .collect()
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

/// Known answer: the certificate ids we ask for are the ones NVIDIA's responder answered for,
/// byte for byte, one real answer each for the BROM, the provisioner ICA and the identity CA.
#[test]
fn we_ask_for_the_certificates_nvidias_real_answers_name() {
    let chain = real_chain();
    assert_eq!(chain.len(), 5);
    let answers = real_answers();
    let mut answered = Vec::new();
    for pair in chain[1..].windows(2) {
        let id = cert_id(&pair[0], &pair[1]).unwrap().to_der().unwrap();
        let matching: Vec<usize> = (0..answers.len()).filter(|&i| contains(&answers[i], &id)).collect();
        assert_eq!(matching.len(), 1, "one real answer names {}", hex::encode(&id));
        answered.push(matching[0]);
    }
    answered.sort();
    assert_eq!(answered, [0, 1, 2]);
    // The leaf's id (issued by the BROM) is in none: NVIDIA does not serve the leaf.
    let leaf = cert_id(&chain[0], &chain[1]).unwrap().to_der().unwrap();
    assert!(answers.iter().all(|a| !contains(a, &leaf)));
}

#[test]
fn a_request_is_one_der_request_for_one_certificate() {
    let chain = real_chain();
    let id = cert_id(&chain[1], &chain[2]).unwrap().to_der().unwrap();
    let request = request(&chain[1], &chain[2]).unwrap();
    // SEQUENCE { SEQUENCE { SEQUENCE { SEQUENCE { CertID } } } }: each wrapper is one element
    // with nothing after it, holding the next.
    let mut rest = request.clone();
    for _ in 0..4 {
        let any = x509_cert::der::asn1::Any::from_der(&rest).unwrap();
        assert_eq!(any.tag(), x509_cert::der::Tag::Sequence);
        assert_eq!(any.to_der().unwrap(), rest, "one element, nothing after it");
        rest = any.value().to_vec();
    }
    assert_eq!(rest, id);
    // sha384 with NULL parameters, two 48-byte hashes, the serial.
    assert_eq!(&id[2..17], &[0x30, 0x0d, 0x06, 0x09, 0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x02, 0x02, 0x05, 0x00]);
    assert_eq!((id[17], id[18]), (0x04, 48));
}

fn chain_pem() -> String {
    std::fs::read_to_string(format!("{SAMPLES}/test_gpu_attestation_certificate_chain.dat")).unwrap()
}

#[tokio::test]
async fn answers_are_fetched_once_kept_and_reused_when_the_responder_is_down() {
    let (responder, recorder) = standins::nvidia_ocsp::start(real_answers()).await;
    let stapler = Stapler::new(&format!("{}/", responder.base_url), Duration::from_secs(3600));
    let stapled = stapler.staple(&chain_pem()).await;
    let mut want = real_answers();
    want.sort();
    let mut got = stapled.clone();
    got.sort();
    assert_eq!(got, want, "one real answer per certificate between leaf and root");
    let asked = recorder.requests();
    assert_eq!(asked.len(), 3);
    let chain = real_chain();
    assert_eq!(asked[0], request(&chain[1], &chain[2]).unwrap());

    // Fresh answers are kept: no new request.
    assert_eq!(stapler.staple(&chain_pem()).await, stapled);
    assert_eq!(recorder.requests().len(), 3);

    // Past `refresh`, asked again; with the responder down, the kept answers still go out.
    let stale = Stapler::new(&format!("{}/", responder.base_url), Duration::ZERO);
    assert_eq!(stale.staple(&chain_pem()).await, stapled);
    recorder.fail_with(Some(standins::nvidia_ocsp::Failure::Status(503)));
    assert_eq!(stale.staple(&chain_pem()).await, stapled);
    recorder.fail_with(Some(standins::nvidia_ocsp::Failure::Garbage));
    assert_eq!(stale.staple(&chain_pem()).await, stapled);
    assert_eq!(recorder.requests().len(), 3 + 3 + 3 + 3);

    // Nothing kept and the responder down: nothing stapled (the enclave refuses the GPU).
    let fresh = Stapler::new(&format!("{}/", responder.base_url), Duration::from_secs(3600));
    assert!(fresh.staple(&chain_pem()).await.is_empty());
}

#[tokio::test]
async fn a_chain_that_is_not_pem_or_too_short_staples_nothing() {
    let stapler = Stapler::new("http://127.0.0.1:9/", Duration::from_secs(60));
    assert!(stapler.staple("not pem").await.is_empty());
    let two: String = chain_pem().split_inclusive("-----END CERTIFICATE-----").take(2).collect();
    assert!(stapler.staple(&two).await.is_empty());
}
