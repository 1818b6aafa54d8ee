//! The four 32-byte values that receipts and key bindings name, each its own type so one can
//! never be passed where another is meant (the receipt message puts three of them side by side).

macro_rules! bytes32 {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub struct $name(pub [u8; 32]);

        impl $name {
            pub fn as_bytes(&self) -> &[u8; 32] {
                &self.0
            }
        }

        impl std::fmt::Debug for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                write!(f, concat!(stringify!($name), "({})"), hex::encode(self.0))
            }
        }

        impl AsRef<[u8]> for $name {
            fn as_ref(&self) -> &[u8] {
                &self.0
            }
        }
    };
}

bytes32!(
    /// The enclave's X25519 public key (`teePubkey`): what envelopes are sealed to.
    TeeKey
);
bytes32!(
    /// The enclave's ed25519 public key (`enclavePubkey`): what signs receipts.
    EnclaveKey
);
bytes32!(
    /// HPKE `enc` of an envelope (`clientPubkey`): the client's ephemeral X25519 key.
    ClientKey
);
bytes32!(
    /// sha256 of an envelope's decoded ciphertext (`encryptedPromptHash`).
    PromptHash
);
