"""TODO(issue 18): the sparse_vector part of the Python API."""

__all__: list[str] = []
