"""The pack pipeline: what a pack shows (snapshot), its files (render, rows), the bytes in the
database (store, sqlite_blobs), and who may read them (lookup, download).

The operations that drive it (generate, fail, approve, read) are resolvers/packs.py and
resolvers/approvals.py; they call in here, and nothing here calls back.
"""
