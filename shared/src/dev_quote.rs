//! Development quote provider (feature `dev-quotes`). Being written.
