"""The ground floor's reads: the audit log's search and who holds a row."""
