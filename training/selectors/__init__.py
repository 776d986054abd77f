"""Reads of the training floor that are more than a filter, one module per subject."""
