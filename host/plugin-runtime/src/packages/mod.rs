//! Packages: discovery, manifests, the operator's admission rules and pins,
//! reading a package's files, and checking what a plugin registers.

pub(crate) mod admission;
pub(crate) mod manifest;
pub(crate) mod package_files;
pub(crate) mod registration;
pub(crate) mod signed;
