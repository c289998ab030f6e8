"""The operations both transports call: plain async functions (ctx, input) -> model."""
