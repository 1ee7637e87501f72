//! Passes: the interface, the registry, and the pipeline that runs them.
