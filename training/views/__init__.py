"""The training floor's pages, one module per subject; `access` holds what they share."""
