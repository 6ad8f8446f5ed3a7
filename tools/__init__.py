"""Build tools of the repository (not shipped in the package): the stub generator."""
