"""Scripts and the reference code they share, beside the package and not part of it."""
