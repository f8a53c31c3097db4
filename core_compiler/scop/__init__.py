"""SCoP detection and the polyhedral model."""
