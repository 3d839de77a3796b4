"""TODO(issue 18): the accounting part of the Python API."""

__all__: list[str] = []
