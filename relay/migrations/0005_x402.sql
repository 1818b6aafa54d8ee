-- x402 payments: each payment is accepted once (contract §5.2).
CREATE TABLE x402_payments (
    payment_hash TEXT   PRIMARY KEY,
    resource     TEXT   NOT NULL,
    amount       BIGINT NOT NULL,
    status       TEXT   NOT NULL,
    payer        TEXT,
    transaction  TEXT,
    created_at   BIGINT NOT NULL
);
