"""placeholder: filled by the ops work."""
OPS = ()
