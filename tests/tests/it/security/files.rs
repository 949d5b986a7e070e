//! The data directory's files (third review): who may read them, and what `gable
//! restore` accepts.
