"""Evidence Gateway: one API (GraphQL + REST) over shared resolvers."""

__version__ = "0.1.0"
