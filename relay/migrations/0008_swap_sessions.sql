-- Swap sessions (DESIGN §11, docs/swaps.md): durable state machines, each step recorded before
-- it acts. A transaction the enclave signed is stored (pending_tx) before it is sent, so a relay
-- killed in between sends the same bytes again when it comes back. A worker holds a session
-- while lease_until is in the future and saves only while lease_owner is still its token;
-- lease_until also delays a retry (backoff).
CREATE TABLE swap_sessions (
    id                   TEXT   PRIMARY KEY,
    mode                 TEXT   NOT NULL,
    state                TEXT   NOT NULL,
    wallet_id            TEXT,
    owner                TEXT,
    payer                TEXT   NOT NULL,
    from_mint            TEXT   NOT NULL,
    to_mint              TEXT   NOT NULL,
    amount               TEXT   NOT NULL,
    destination          TEXT   NOT NULL,
    slippage_bps         BIGINT NOT NULL,
    expected_out         TEXT   NOT NULL,
    min_out              TEXT   NOT NULL,
    expires_at           BIGINT NOT NULL,
    ephemeral            TEXT   NOT NULL,
    object_id            TEXT   NOT NULL,
    commitment_json      TEXT   NOT NULL,
    bucketed             BIGINT NOT NULL,
    bucket_label         TEXT,
    funding_valid_height BIGINT NOT NULL,
    funding_tx_sig       TEXT   UNIQUE,
    swap_tx_sig          TEXT,
    final_tx_sig         TEXT,
    refund_tx_sig        TEXT,
    actual_out           TEXT,
    pending_kind         TEXT,
    pending_tx           TEXT,
    pending_sig          TEXT,
    pending_valid_height BIGINT,
    reason               TEXT,
    attempts             BIGINT NOT NULL,
    receipt_json         TEXT,
    attestation_address  TEXT,
    attestation_tx_sig   TEXT,
    funded_at            BIGINT,
    lease_until          BIGINT NOT NULL,
    lease_owner          TEXT,
    created_at           BIGINT NOT NULL,
    updated_at           BIGINT NOT NULL
);

CREATE INDEX swap_sessions_work ON swap_sessions (state, lease_until);

CREATE INDEX swap_sessions_fundings ON swap_sessions (from_mint, amount, funded_at);
