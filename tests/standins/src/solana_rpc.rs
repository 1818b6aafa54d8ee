//! Stand-in: to be written.
