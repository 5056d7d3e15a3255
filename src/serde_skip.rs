//! The one `skip_serializing_if` helper the results and request documents share: a field at its
//! default (a zero count) is left out of the document, so documents without it read the same.

/// Whether `v` is its type's default (0 for the counts it is used on).
pub fn is_zero<T: Default + PartialEq>(v: &T) -> bool {
    *v == T::default()
}

#[cfg(test)]
mod tests {
    #[test]
    fn zero_is_skipped_and_others_kept() {
        assert!(super::is_zero(&0u64));
        assert!(super::is_zero(&0usize));
        assert!(!super::is_zero(&1u64));
    }
}
