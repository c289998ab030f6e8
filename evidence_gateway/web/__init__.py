"""The HTTP platform every request passes through around a transport: CORS, request ids,
headers, body reading, JSON, rate limits, observability and serving."""
