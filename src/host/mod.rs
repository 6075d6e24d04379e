//! The Core endpoint: the side that starts an extension and calls its tools.
