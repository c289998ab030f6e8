"""Evidence Gateway: one API (GraphQL + REST) over shared resolvers."""

__version__ = "0.2.0"
