//! The on-disk profile store (placeholder: filled in by the profile work).
