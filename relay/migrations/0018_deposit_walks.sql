-- A deposit scan that walks back to its cursor through more signatures than one scan reads
-- (a flooded deposit address): the walk's newest signature (the cursor once the walk reaches
-- the old one) and the oldest signature it has handled so far, saved after every page, so the
-- next scan carries on from there and no signature in between is skipped.
CREATE TABLE deposit_walks (
    address          TEXT   PRIMARY KEY,
    top_signature    TEXT   NOT NULL,
    below_signature  TEXT   NOT NULL,
    updated_at       BIGINT NOT NULL
);
