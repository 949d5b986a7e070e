//! Test harness (filled in below).
