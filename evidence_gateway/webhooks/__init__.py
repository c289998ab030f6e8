"""Outgoing webhooks: Standard Webhooks signing, the SSRF guard and the httpx sender."""
