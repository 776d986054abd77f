"""The ground floor's writes: the audit trail and holds."""
