//! What an unauthenticated client can do to a listener (third review): slow readers,
//! made-up methods in metric labels, unbounded bodies, the public readiness check.
