//! Placeholder: filled in by the cookie work.
