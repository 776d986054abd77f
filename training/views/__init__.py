"""The training floor's pages, one module per subject."""
