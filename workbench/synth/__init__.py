"""Synthetic continuities: generator, text pools, and the planting library (secrets, facts)."""
