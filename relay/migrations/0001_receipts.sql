-- Portable between SQLite and PostgreSQL: TEXT and BIGINT only.
CREATE TABLE ledger_commits (
    seq        BIGINT PRIMARY KEY,
    signature  TEXT   NOT NULL UNIQUE,
    tx_base64  TEXT   NOT NULL,
    created_at BIGINT NOT NULL
);

CREATE TABLE receipts (
    address      TEXT   PRIMARY KEY,
    prompt_hash  TEXT   NOT NULL UNIQUE,
    tx_signature TEXT   NOT NULL UNIQUE REFERENCES ledger_commits (signature),
    receipt_json TEXT   NOT NULL,
    created_at   BIGINT NOT NULL
);
