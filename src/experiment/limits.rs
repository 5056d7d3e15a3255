//! Bounds on what an experiment file can make ibench build: the file and its config fragments
//! are read up to a size, `extends` chains up to a depth, and the plan's cells up to a count
//! ([`super::plan::MAX_CELLS`]) and a memory size, each checked *before* the memory is taken,
//! so that no value in a file (`repeats = 4294967295`, a thousand targets times a thousand
//! setups, `file = "/dev/zero"`) can exhaust memory instead of being reported.

/// Largest experiment file or config fragment file ibench reads.
pub const MAX_FILE_BYTES: u64 = 1 << 20;
/// Longest `extends` chain.
pub const MAX_EXTENDS: usize = 16;
/// Largest text (fragments along `extends`) one config may resolve to.
pub const MAX_CONFIG_TEXT: usize = 1 << 20;
/// Largest memory the planned cells may take (each cell holds its own copy of its settings).
pub const MAX_PLAN_BYTES: usize = 256 << 20;

/// The problem when the cells of one repeat take `once` bytes and there are `repeats`
/// repeats, if that is more than [`MAX_PLAN_BYTES`].
pub fn too_large(once: usize, repeats: u32) -> Option<String> {
    let total = once.saturating_mul(repeats.max(1) as usize);
    (total > MAX_PLAN_BYTES).then(|| {
        format!(
            "the cells' settings (configs' text and options, steps, pragmas) take more than {} \
             MiB{}: use fewer or smaller configs, setups or repeats",
            MAX_PLAN_BYTES >> 20,
            if repeats > 1 {
                format!(" over {repeats} repeats")
            } else {
                String::new()
            }
        )
    })
}
