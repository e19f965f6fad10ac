"""Servers the product starts for itself when none is configured (redis, kubesim)."""
