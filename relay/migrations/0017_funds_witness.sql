-- Funds against a hostile host (DESIGN §13, docs/wallets.md).
--
-- Each book step the enclave proposed: the sealed successor (digest = sha256 of its blob), the
-- enclave's append request to the freshness witness, the witness's answer once it came, and
-- what the relay does with the step's outputs (intent), all stored before the request leaves,
-- so a relay that restarts finishes the step. state: witnessing, then done (the book became
-- the mint's head and the intent was carried out, in one database transaction) or refused
-- (the witness kept another head; nothing of the step was given out).
CREATE TABLE privacy_book_steps (
    digest      TEXT   PRIMARY KEY,
    mint        TEXT   NOT NULL,
    version     BIGINT NOT NULL,
    blob        TEXT   NOT NULL,
    append_json TEXT   NOT NULL,
    answer_json TEXT,
    intent_json TEXT   NOT NULL,
    state       TEXT   NOT NULL,
    created_at  BIGINT NOT NULL,
    updated_at  BIGINT NOT NULL
);

CREATE INDEX privacy_book_steps_open ON privacy_book_steps (state, created_at);

-- Owner requests by their idempotency key (the owner's nonce), with the answer given, written
-- in the database transaction of the order or session they started: a retry of the same
-- signed request gets the same answer; the same nonce over another body is refused.
CREATE TABLE wallet_requests (
    wallet_id   TEXT   NOT NULL REFERENCES wallets (id),
    nonce       TEXT   NOT NULL,
    operation   TEXT   NOT NULL,
    body_sha256 TEXT   NOT NULL,
    request_id  TEXT   NOT NULL,
    answer_json TEXT   NOT NULL,
    created_at  BIGINT NOT NULL,
    PRIMARY KEY (wallet_id, nonce)
);
