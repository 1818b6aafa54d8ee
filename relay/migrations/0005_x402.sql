-- x402 payments (docs/billing.md, "x402"): each payment is used once (contract §5.2). The key is
-- the hex sha256 of the payment transaction's message (the bytes its signatures sign), so a
-- payment is reserved once across every relay sharing the database, whatever bytes fill the
-- fee payer's empty signature slot.
-- status: reserved (verified, the work runs) | settled | failed (settlement refused; kept so
-- the payment is not used again). A reservation whose work failed is deleted.
CREATE TABLE x402_payments (
    payment_hash TEXT   PRIMARY KEY,
    resource     TEXT   NOT NULL,
    amount       BIGINT NOT NULL,
    network      TEXT   NOT NULL,
    status       TEXT   NOT NULL,
    payer        TEXT,
    tx_signature TEXT,
    created_at   BIGINT NOT NULL,
    updated_at   BIGINT NOT NULL
);
