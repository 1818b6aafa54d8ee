-- Sealed objects (DESIGN §10): the enclave's secrets that outlive its boots, as blobs only an
-- enclave holding the KEK opens. The relay stores them and hands them back; it cannot read them.
CREATE TABLE sealed_objects (
    id         TEXT   PRIMARY KEY,
    kind       TEXT   NOT NULL,
    version    BIGINT NOT NULL,
    blob       TEXT   NOT NULL,
    public_key TEXT,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
);
