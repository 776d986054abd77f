"""Candidates, trial runs, reviews and the rest arrive with the issues that need them."""
