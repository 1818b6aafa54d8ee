use super::*;
use rand_core::OsRng;
use serde_json::json;

type Edit = Box<dyn FnOnce(&mut serde_json::Map<String, Value>)>;

fn valid() -> serde_json::Map<String, Value> {
    let Value::Object(m) = json!({
        "publicKey": b64::encode([9u8; 32]),
        "nonce": b64::encode([1u8; 16]),
        "ciphertext": b64::encode([2u8; 40]),
        "algorithm": ALGORITHM,
        "version": 1,
    }) else {
        unreachable!()
    };
    m
}

fn parse_with(edit: impl FnOnce(&mut serde_json::Map<String, Value>)) -> Result<Envelope, EnvelopeError> {
    let mut m = valid();
    edit(&mut m);
    Envelope::parse(&Value::Object(m).to_string())
}

#[test]
fn valid_envelope_parses_and_round_trips() {
    let env = parse_with(|_| {}).unwrap();
    assert_eq!(env.enc, [9; 32]);
    assert_eq!(env.nonce, [1; 16]);
    assert_eq!(env.ciphertext, vec![2; 40]);
    assert_eq!(env.key_id, None);
    assert_eq!(Envelope::parse(&env.to_json_string()).unwrap(), env);
}

#[test]
fn every_malformation_has_its_own_error() {
    use EnvelopeError::*;
    let cases: Vec<(Edit, EnvelopeError)> = vec![
        (
            Box::new(|m| {
                m.remove("publicKey");
            }),
            MissingField("publicKey"),
        ),
        (
            Box::new(|m| {
                m.remove("nonce");
            }),
            MissingField("nonce"),
        ),
        (
            Box::new(|m| {
                m.remove("ciphertext");
            }),
            MissingField("ciphertext"),
        ),
        (
            Box::new(|m| {
                m.remove("algorithm");
            }),
            MissingField("algorithm"),
        ),
        (
            Box::new(|m| {
                m.remove("version");
            }),
            MissingField("version"),
        ),
        (
            Box::new(|m| {
                m.insert("extra".into(), json!(1));
            }),
            UnknownField("extra".into()),
        ),
        (
            Box::new(|m| {
                m.insert("nonce".into(), json!(5));
            }),
            WrongType("nonce"),
        ),
        (
            Box::new(|m| {
                m.insert("version".into(), json!("1"));
            }),
            WrongType("version"),
        ),
        (
            Box::new(|m| {
                m.insert("version".into(), json!(2));
            }),
            UnsupportedVersion("2".into()),
        ),
        (
            Box::new(|m| {
                m.insert("version".into(), json!(1.5));
            }),
            UnsupportedVersion("1.5".into()),
        ),
        (
            Box::new(|m| {
                m.insert("algorithm".into(), json!("hpke-p256"));
            }),
            UnsupportedAlgorithm("hpke-p256".into()),
        ),
        (
            Box::new(|m| {
                m.insert("publicKey".into(), json!("!!notbase64"));
            }),
            BadBase64("publicKey"),
        ),
        // URL-safe alphabet is not the standard one.
        (
            Box::new(|m| {
                m.insert("ciphertext".into(), json!("-_-_"));
            }),
            BadBase64("ciphertext"),
        ),
        (
            Box::new(|m| {
                m.insert("publicKey".into(), json!(b64::encode([1u8; 31])));
            }),
            BadLength { field: "publicKey", expected: "32", got: 31 },
        ),
        (
            Box::new(|m| {
                m.insert("nonce".into(), json!(b64::encode([1u8; 17])));
            }),
            BadLength { field: "nonce", expected: "16", got: 17 },
        ),
        (
            Box::new(|m| {
                m.insert("ciphertext".into(), json!(b64::encode([1u8; 15])));
            }),
            BadLength { field: "ciphertext", expected: "16 to 1048576", got: 15 },
        ),
        (
            Box::new(|m| {
                m.insert("keyId".into(), json!("abc"));
            }),
            BadKeyId,
        ),
        (
            Box::new(|m| {
                m.insert("keyId".into(), json!("AB".repeat(32)));
            }),
            BadKeyId,
        ),
        (
            Box::new(|m| {
                m.insert("keyId".into(), json!(7));
            }),
            WrongType("keyId"),
        ),
    ];
    for (edit, want) in cases {
        assert_eq!(parse_with(edit), Err(want));
    }
    assert_eq!(Envelope::parse("[]"), Err(NotAnObject));
    assert_eq!(Envelope::parse("not json"), Err(NotAnObject));
    assert_eq!(Envelope::parse("\"a string\""), Err(NotAnObject));
    assert_eq!(Envelope::parse(&" ".repeat(MAX_ENVELOPE_JSON + 1)), Err(TooLarge));
}

#[test]
fn errors_never_echo_long_input() {
    let long = "x".repeat(10_000);
    let err = parse_with(|m| {
        m.insert("algorithm".into(), json!(long));
    })
    .unwrap_err();
    assert!(err.to_string().len() < 200);
    // An unknown member's name is echoed cut too (it was echoed whole, up to the size limit).
    let err = parse_with(|m| {
        m.insert("y".repeat(100_000), json!(1));
    })
    .unwrap_err();
    assert_eq!(err, EnvelopeError::UnknownField("y".repeat(64)));
    assert!(err.to_string().len() < 200);
}

#[test]
fn seal_then_open() {
    let (sk, pk) = hpke::generate_key_pair(&mut OsRng);
    let pt = serde_json::to_vec(&PromptPlaintext::from_prompt("hello", 1)).unwrap();
    let (env, _) = seal(&pk, &pt, &mut OsRng).unwrap();
    assert_eq!(env.key_id, Some(crate::sha256(&pk)));
    let parsed = Envelope::parse(&env.to_json_string()).unwrap();
    let (opened, _) = parsed.open(&sk, &pk).unwrap();
    assert_eq!(opened.as_slice(), pt.as_slice());
    let p = PromptPlaintext::parse(&opened).unwrap();
    assert_eq!(p.into_messages(), vec![Message { role: Role::User, content: "hello".into() }]);
}

#[test]
fn nonce_is_bound_into_info() {
    let (sk, pk) = hpke::generate_key_pair(&mut OsRng);
    let (mut env, _) = seal(&pk, b"{}", &mut OsRng).unwrap();
    env.nonce[0] ^= 1;
    assert!(env.open(&sk, &pk).is_err());
}

#[test]
fn wrong_key_or_tampered_ciphertext_fails() {
    let (_, pk) = hpke::generate_key_pair(&mut OsRng);
    let (other_sk, other_pk) = hpke::generate_key_pair(&mut OsRng);
    let (env, _) = seal(&pk, b"{}", &mut OsRng).unwrap();
    assert!(env.open(&other_sk, &other_pk).is_err());
}

#[test]
fn plaintext_rules() {
    assert!(PromptPlaintext::parse(br#"{"prompt":"a","timestamp":5}"#).is_ok());
    assert!(
        PromptPlaintext::parse(
            br#"{"messages":[{"role":"system","content":"s"},{"role":"user","content":"u"}],"maxTokens":8}"#
        )
        .is_ok()
    );
    assert_eq!(PromptPlaintext::parse(br#"{}"#), Err(PlaintextError::PromptOrMessages));
    assert_eq!(PromptPlaintext::parse(br#"{"prompt":"a","messages":[]}"#), Err(PlaintextError::PromptOrMessages));
    assert_eq!(PromptPlaintext::parse(br#"{"messages":[]}"#), Err(PlaintextError::EmptyMessages));
    assert_eq!(PromptPlaintext::parse(br#"{"prompt":"a","temperature":3}"#), Err(PlaintextError::BadTemperature));
    assert_eq!(PromptPlaintext::parse(br#"{"prompt":"a","extra":1}"#), Err(PlaintextError::NotJson));
    assert_eq!(
        PromptPlaintext::parse(br#"{"messages":[{"role":"tool","content":"x"}]}"#),
        Err(PlaintextError::NotJson)
    );
    assert_eq!(PromptPlaintext::parse(b"\xff"), Err(PlaintextError::NotJson));
}
