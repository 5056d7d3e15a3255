//! See the module list in tests/hostile/mod.rs.
