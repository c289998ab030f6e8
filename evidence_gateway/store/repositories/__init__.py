"""The repositories, one per resource (store/repository.py)."""
