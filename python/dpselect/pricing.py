"""TODO(issue 18): the pricing part of the Python API."""

__all__: list[str] = []
