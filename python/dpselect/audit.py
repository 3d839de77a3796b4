"""TODO(issue 18): the audit part of the Python API."""

__all__: list[str] = []
